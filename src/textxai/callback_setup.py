"""What :class:`textxai.integrations.TextxaiCallback` runs on: its modules and their options, its data (raw texts and
the columns beside them, checked), the training preset, and the flat scalars it logs -- everything about the callback
that needs no ``transformers`` (the Trainer's side, when and how the modules run, is ``textxai.integrations``).

The public names are re-exported by ``textxai.integrations``, where users import them.
"""
from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from textxai import registry
from textxai.module_base import accepted_arguments as _accepted
from textxai.validation import check_same_length, check_texts, short_repr

_SET_BY_CALLBACK = ("model", "tokenizer")


def flat_scalars(results: Mapping, prefix: str) -> dict[str, float]:
    """The numbers of a module's result as flat ``{prefix}_{key}`` scalars (nested dicts joined by ``_``).

    Lists (per-example values), strings and booleans are left out; ``None`` (an undefined number: module
    results say ``null`` for NaN) becomes NaN, so a key ``metric_for_best_model`` names is always there.
    ``@`` becomes ``_at_`` and any other character TensorBoard does not accept in a tag becomes ``_``.

    >>> flat_scalars({"inc@1": 0.5, "summary": {"mean": 2, "n": 3}, "difficulty": [1.0], "rate": None}, "eval_x")
    {'eval_x_inc_at_1': 0.5, 'eval_x_summary_mean': 2.0, 'eval_x_summary_n': 3.0, 'eval_x_rate': nan}
    """
    out = {}
    for key, value in results.items():
        name = f"{prefix}_{re.sub(r'[^0-9A-Za-z_.-]', '_', str(key).replace('@', '_at_'))}"
        if isinstance(value, Mapping):
            out.update(flat_scalars(value, name))
        elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
            out[name] = float(value)
        elif value is None:
            out[name] = float("nan")
    return out


@contextmanager
def rng_untouched():
    """Restore the Python, NumPy and torch (CPU and initialised CUDA) random states on exit."""
    python_state, numpy_state = random.getstate(), np.random.get_state()
    cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=cuda):
        try:
            yield
        finally:
            random.setstate(python_state)
            np.random.set_state(numpy_state)


def _module_specs(modules) -> list[tuple[str, object, dict]]:
    """(name, loaded module, options) of every module given as a name, a loaded module or a mapping to options."""
    from textxai import modules as _modules

    if isinstance(modules, (str, Mapping)) or hasattr(modules, "compute"):
        modules = [modules]
    if not isinstance(modules, Sequence) or not modules:
        raise TypeError(f"modules={short_repr(modules)}: expected a module name, a loaded module, a list of "
                        "them, or a dict {name or module: options}")
    items = []
    for entry in modules:
        if isinstance(entry, Mapping):
            items.extend(entry.items())
        elif isinstance(entry, tuple) and len(entry) == 2:
            items.append(entry)
        else:
            items.append((entry, None))
    specs = []
    for module, options in items:
        if isinstance(module, str):
            name = module.split("/", 1)[1] if module.startswith("textxai/") else module
            if name not in registry.names():
                raise ValueError(f"modules: {module!r} is not a textxai module; expected one of "
                                 f"{sorted(registry.names())} or a loaded evaluate module")
            module = _modules.load(name)
        elif not callable(getattr(module, "compute", None)):
            raise TypeError(f"modules: {short_repr(module)} is neither a module name nor a loaded evaluate module")
        name = str(getattr(module, "name", type(module).__name__))
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise TypeError(f"modules[{name!r}]={short_repr(options)}: expected a dict of compute options")
        accepted, takes_more = _accepted(module)
        for key in options:
            if key in _SET_BY_CALLBACK:
                raise ValueError(f"modules[{name!r}] option {key!r}: the callback passes the model being trained "
                                 "and its tokenizer; leave it out")
            if not takes_more and key not in accepted:
                raise ValueError(f"modules[{name!r}] option {key!r}: not an argument of {name}.compute; expected one "
                                 f"of {sorted(k for k in accepted if k not in _SET_BY_CALLBACK)}")
        if any(name == other for other, _, _ in specs):
            raise ValueError(f"modules: {name!r} is given twice; its scalars would overwrite each other")
        specs.append((name, module, dict(options)))
    return specs


@dataclass(frozen=True)
class CallbackInputs:
    """The data the modules read besides the model (see :func:`module_inputs`).

    texts: the raw evaluation texts (naopc, fim_difficulty, toki_trust; ceval's originals).
    text_pairs: their second texts, for sentence-pair models.
    labels: their true classes (toki_trust's ``references``).
    counterfactuals, counterfactual_pairs: ceval's ``predictions`` / ``prediction_pairs`` (the pairs default
        to ``text_pairs``: the hypothesis unchanged).
    edits: inconsistency's chains ``[original, edit 1, ...]``.
    """

    texts: Sequence[str] | None = None
    text_pairs: Sequence[str] | None = None
    labels: Sequence | None = None
    counterfactuals: Sequence | None = None
    counterfactual_pairs: Sequence | None = None
    edits: Sequence | None = None


@dataclass(frozen=True)
class CallbackOptions:
    """How the modules run and how their scalars are named.

    tokenizer: the model's tokenizer; default the Trainer's ``processing_class``.
    batch_size: passed to modules that take one; default ``args.per_device_eval_batch_size``.
    progress: progress bars of the modules (default off).
    prefix: key prefix (default ``"eval"``, as ``compute_metrics`` results).
    """

    tokenizer: object = None
    batch_size: int | None = None
    progress: bool = False
    prefix: str = "eval"


# A cheap training-time preset per module (``preset="training"``): options under the user's own, on the first
# TRAINING_TEXTS texts, NAOPC's cut to their first TRAINING_WORDS words. What each computes and costs
# (docs/guides/training.md; measured in tests/test_integrations.py against examples/trainer_callback.py, whose
# Trainer evaluates 90 rows): NAOPC with gradient attributions (one backward pass per text) and its exact limits
# (2^5 subsets: the true best and worst orders, no approximation), at most TRAINING_BOUNDS["naopc"] model
# evaluations; FIM's exact top eigenvalue, one forward and C - 1 backward passes per text; TOKI with gradient
# explanations and the classifier's own embeddings (no attack); ceval and inconsistency without a language model.
TRAINING_PRESETS: dict[str, dict] = {
    "naopc": {"attribution_method": "gradient", "normalization": "exact"},
    "fim_difficulty": {},
    "toki_trust": {"explainer": "gradient", "embedders": ["classifier"]},
    "ceval": {},            # its language model (perplexity) is off unless lm= is given
    "inconsistency": {},    # likewise
}
TRAINING_TEXTS = 2
#: words NAOPC keeps of each preset text (a sentence pair: split between its two texts, the first text first)
TRAINING_WORDS = {"naopc": 5}
#: the most model evaluations the preset asks of a module per callback evaluation of a two-class model (NAOPC: 2^5
#: subsets and one gradient pass per text; FIM: a forward and a backward pass per text, C passes for C classes;
#: ceval: each original and counterfactual)
TRAINING_BOUNDS = {"naopc": TRAINING_TEXTS * (2 ** TRAINING_WORDS["naopc"] + 1), "fim_difficulty": 2 * TRAINING_TEXTS,
                   "ceval": 2 * TRAINING_TEXTS}
PRESETS = ("training",)


def check_data(**data) -> dict:
    """The callback's data checked: raw texts (a dataset is refused naming its text column), every column beside them
    one item per text, ``counterfactual_pairs`` defaulting to ``text_pairs``, ``edits`` a list of chains."""
    texts = data["texts"]
    columns = getattr(texts, "column_names", None)
    if isinstance(columns, list):   # a datasets.Dataset (e.g. the Trainer's eval_dataset), not its texts
        strings = [c for c in columns if getattr(texts.features.get(c), "dtype", None) in ("string", "large_string")]
        raise TypeError(f"texts=a dataset of {len(texts)} rows with columns {columns}: expected a list of raw "
                        "texts, " + (f"e.g. texts=dataset[{strings[0]!r}]" if strings else
                                     "and it has no text column (a tokenized dataset lost its words: pass the raw "
                                     "texts it was made from)"))
    if texts is not None:
        data["texts"] = texts = check_texts(texts)
    for field in ("text_pairs", "counterfactuals", "counterfactual_pairs", "labels"):
        value = data[field]
        if value is None:
            continue
        if texts is None:
            raise ValueError(f"{field} given without texts: expected texts=... as well")
        if field in ("text_pairs", "counterfactual_pairs"):
            value = check_texts(value, field)
        elif isinstance(value, str) or not isinstance(value, Sequence) and not hasattr(value, "__array__"):
            raise TypeError(f"{field}={short_repr(value)}: expected a list with one item per text")
        data[field] = list(value)
        check_same_length(texts, data[field], "texts", field)
    if data["counterfactual_pairs"] is None and data["counterfactuals"] is not None:
        data["counterfactual_pairs"] = data["text_pairs"]
    if data["edits"] is not None:
        if isinstance(data["edits"], str) or not isinstance(data["edits"], Sequence) or not data["edits"]:
            raise TypeError(f"edits={short_repr(data['edits'])}: expected a list of chains [original, edit 1, ...]")
        data["edits"] = [list(chain) for chain in data["edits"]]
    return data


def _black_box(model) -> bool:
    """A plain function texts -> class probabilities (``textxai.classifier.as_classifier``'s black-box form), which
    :meth:`TextxaiCallback.evaluate` takes without a tokenizer (the methods that need gradients refuse it, by name)."""
    return callable(model) and not isinstance(model, torch.nn.Module)


def _preset_options(name: str, module) -> dict:
    """The training preset's options of module ``name`` that its ``compute`` accepts."""
    accepted, takes_more = _accepted(module)
    return {k: v for k, v in TRAINING_PRESETS.get(name, {}).items() if takes_more or k in accepted}


def _rows(data: dict, rows: list[int]) -> dict:
    """The callback data restricted to ``rows`` of the texts (and of every column beside them; edits: chain 1)."""
    out = {}
    for field, value in data.items():
        if value is None:
            out[field] = None
        elif field == "edits":
            out[field] = value[:1]
        else:
            out[field] = [value[i] for i in rows]
    return out


def _first_rows(data: dict, n: int) -> dict:
    out = dict(data)
    for field, value in data.items():
        if value is not None:
            out[field] = list(value[:n])
    return out


def _first_words(data: dict, n: int) -> dict:
    """The callback data with every text (and its pair) cut after its first ``n`` words (``textxai.words``); a
    sentence pair keeps ``n`` words in all, the first text's first (at least ``n // 2`` for the pair when it has them).

    >>> _first_words({"texts": ["A preachy drama that lectures the audience.", "Fine."], "text_pairs": None}, 3)
    {'texts': ['A preachy drama', 'Fine.'], 'text_pairs': None}
    """
    from textxai.words import word_spans

    def cut(text, k):
        spans = word_spans(text)
        return text if len(spans) <= k else text[:spans[k - 1][2]] if k > 0 else ""

    out = dict(data)
    texts, pairs = data.get("texts"), data.get("text_pairs")
    if texts is None:
        return out
    if pairs is None:
        out["texts"] = [cut(t, n) for t in texts]
        return out
    out["texts"], out["text_pairs"] = [], []
    for text, pair in zip(texts, pairs):
        n_text, n_pair = len(word_spans(text)), len(word_spans(pair))
        keep = min(n_text, n - min(n_pair, n // 2))
        out["texts"].append(cut(text, keep))
        out["text_pairs"].append(cut(pair, n - keep))
    return out


def module_inputs(name: str) -> dict:
    """``{compute argument: callback data field}`` of module ``name`` (its descriptor's ``inputs``; ``{}`` for a
    module that is no registered method: it takes its data as options). A module also accepts its data as options.

    >>> module_inputs("toki_trust")
    {'texts': 'texts', 'text_pairs': 'text_pairs', 'references': 'labels'}
    """
    return dict(registry.get(name).inputs) if name in registry.names() else {}


def _required(name: str) -> tuple:
    """The callback data fields module ``name`` cannot run without (its descriptor's ``required``)."""
    return tuple(registry.get(name).required) if name in registry.names() else ()


def _compute_argument(name: str, field: str) -> str:
    """The compute argument of module ``name`` that the data field ``field`` fills."""
    return next((arg for arg, f in module_inputs(name).items() if f == field), field)


__all__ = ["CallbackInputs", "CallbackOptions", "PRESETS", "TRAINING_BOUNDS", "TRAINING_PRESETS", "TRAINING_TEXTS",
           "TRAINING_WORDS", "check_data", "flat_scalars", "module_inputs", "rng_untouched"]
