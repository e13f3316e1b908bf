"""Explanation metrics alongside training: a 🤗 transformers ``TrainerCallback``.

``TextxaiCallback`` runs textxai modules on the model being trained at every evaluation (or every N-th)
and logs their scalar results with the evaluation's prefix (``eval_naopc_comprehensiveness``, ...):
they go to ``trainer.state.log_history`` and to every reporting integration (TensorBoard, W&B, ...)
through ``Trainer.log``, and into the dict that ``trainer.evaluate()`` returns (so
``metric_for_best_model`` and early stopping can use them).

The texts are given raw to the callback: ``EvalPrediction`` carries no texts, and texts decoded from
token ids lose words (``"boring"`` -> ``[UNK]``). Each module gets the inputs it needs from the data
given here (its descriptor's ``inputs``, :func:`module_inputs`); its options are its ``compute`` keyword arguments.

The model comes back as it was: its train/eval mode, ``requires_grad`` flags and ``.grad`` fields are
untouched (``textxai.classifier.frozen_eval``), and so are the random number generators (Python,
NumPy, torch), so a run with the callback trains exactly like one without it.

>>> from transformers import TrainerState, TrainerControl, TrainingArguments
>>> from textxai.classifier import as_classifier
>>> demo = as_classifier("textxai/demo-sentiment")
>>> callback = TextxaiCallback({"fim_difficulty": {}}, texts=["a wonderful film", "a dull film"])
>>> metrics = {"eval_loss": 0.1}
>>> _ = callback.on_evaluate(TrainingArguments("out", report_to=[]), TrainerState(), TrainerControl(),
...                          metrics=metrics, model=demo.model, processing_class=demo.tokenizer)
>>> sorted(k for k in metrics if k.startswith("eval_fim"))[:3]
['eval_fim_difficulty_summary_max', 'eval_fim_difficulty_summary_mean', 'eval_fim_difficulty_summary_median']
"""
from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields

import numpy as np
import torch
from transformers import TrainerCallback

from textxai import registry
from textxai.module_base import accepted_arguments as _accepted
from textxai.options import apply_keywords
from textxai.validation import check_positive_int, check_same_length, check_texts, short_repr

logger = logging.getLogger(__name__)

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
# evaluations; FIM's exact top eigenvalue, one forward pass per text (plus its backward passes); TOKI with gradient
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
#: the most model evaluations the preset asks of a module per callback evaluation (NAOPC: 2^5 subsets and one
#: gradient pass per text; FIM: one pass per text; ceval: each original and counterfactual)
TRAINING_BOUNDS = {"naopc": TRAINING_TEXTS * (2 ** TRAINING_WORDS["naopc"] + 1), "fim_difficulty": TRAINING_TEXTS,
                   "ceval": 2 * TRAINING_TEXTS}
PRESETS = ("training",)


class TextxaiCallback(TrainerCallback):
    """Run textxai modules on the model being trained at evaluations and log their scalars.

    ``TextxaiCallback("naopc", eval_texts, every=2)`` is the common case; the rest are option groups whose
    fields are also accepted as plain keywords (``labels=...``, ``batch_size=8``; see ``textxai.options``).

    Args:
        modules: a module name (``"naopc"``), a loaded module (``textxai.load("naopc")``), a list of them,
            or a dict ``{name or module: options}`` where options are the module's ``compute`` keyword
            arguments, e.g. ``{"naopc": {"attribution_method": "gradient", "normalization": "beam"}}``.
            ``model`` / ``tokenizer`` are set by the callback.
        texts: the raw evaluation texts (a shortcut for ``inputs.texts``).
        trainer: the ``Trainer``; the callback adds itself and logs through ``trainer.log``, so the scalars
            reach every reporting integration. Without it (``Trainer(callbacks=[callback])``) they go
            into the evaluation's own ``log_history`` entry and ``evaluate()``'s result only. Given, every
            module is dry-run on one text (the one with the most words) with ``trainer.model`` here, so a bad
            option fails now, not after an hour of training; without it the dry run comes at ``on_train_begin``.
        every: run at the 1st, (1+every)-th, (1+2*every)-th ... evaluation (default every evaluation).
        time_budget: seconds per evaluation; a module is skipped, with a logged note, once the budget is
            spent or when its previous run would not fit in what is left (``None``: no limit). Neither
            ``every`` nor the budget applies to the module whose scalar ``metric_for_best_model`` names: it runs
            at every evaluation (a value carried from an older model would make the Trainer keep the wrong
            checkpoint), with a logged note when it overruns the budget.
        strict: a module that fails during training raises (stopping ``trainer.train()``); default False: the
            failure is logged, counted in ``{prefix}_textxai_failed`` and training continues (the failed
            module's scalars are NaN when ``metric_for_best_model`` names it, so that model is never the best).
        preset: ``"training"``: each module's cheap options (:data:`TRAINING_PRESETS`, under the options given)
            on the first :data:`TRAINING_TEXTS` texts, NAOPC's cut to their first :data:`TRAINING_WORDS` words
            (exact limits): at most :data:`TRAINING_BOUNDS` model evaluations (docs/guides/training.md).
        inputs: :class:`CallbackInputs` (text_pairs, labels, counterfactuals, counterfactual_pairs, edits).
        options: :class:`CallbackOptions` (tokenizer, batch_size, progress, prefix).
        **keywords: any field of the two groups; it overrides the same field of a group given beside it.

    Every evaluation logs its cost: ``{prefix}_textxai_evaluations`` (model evaluations: input rows through
    the networks) and ``{prefix}_textxai_runtime`` (seconds), and a logged line beside the Trainer's own.
    """

    def __init__(self, modules, texts=None, *, trainer=None, every: int = 1, time_budget: float | None = None,
                 strict: bool = False, preset: str | None = None, inputs: CallbackInputs | None = None,
                 options: CallbackOptions | None = None, **keywords):
        if texts is not None:
            keywords["texts"] = texts
        groups = apply_keywords("TextxaiCallback", keywords, inputs=(CallbackInputs, inputs),
                                options=(CallbackOptions, options))
        inputs, options = groups["inputs"], groups["options"]
        if preset is not None and preset not in PRESETS:
            raise ValueError(f"preset={short_repr(preset)}: expected one of {list(PRESETS)} or None")
        if not isinstance(strict, bool):
            raise TypeError(f"strict={short_repr(strict)}: expected True or False")
        self.strict, self.preset = strict, preset
        self.specs = _module_specs(modules)
        if preset == "training":
            self.specs = [(name, module, {**_preset_options(name, module), **module_options})
                          for name, module, module_options in self.specs]
        self.data = self._check_data(**{f.name: getattr(inputs, f.name) for f in fields(inputs)})
        if preset == "training":
            self.data = _first_rows(self.data, TRAINING_TEXTS)
        #: the data each module runs on (the preset's NAOPC: its texts cut to TRAINING_WORDS words)
        self.module_data = {name: _first_words(self.data, TRAINING_WORDS[name])
                            if preset == "training" and name in TRAINING_WORDS else self.data
                            for name, _, _ in self.specs}
        for name, _, module_options in self.specs:
            missing = [field for field in _required(name)
                       if self.data[field] is None and _compute_argument(name, field) not in module_options]
            if missing:
                raise ValueError(f"modules: {name} needs {' and '.join(missing)}; pass {missing[0]}=... to the callback")
        self.every = check_positive_int(every, "every")
        if time_budget is not None and (isinstance(time_budget, bool) or not isinstance(time_budget, (int, float))
                                        or not time_budget >= 0):
            raise ValueError(f"time_budget={short_repr(time_budget)}: expected seconds >= 0 or None")
        self.time_budget = time_budget
        self.batch_size = None if options.batch_size is None else check_positive_int(options.batch_size, "batch_size")
        self.progress = bool(options.progress)
        if not isinstance(options.prefix, str) or not options.prefix:
            raise ValueError(f"prefix={short_repr(options.prefix)}: expected a non-empty string such as 'eval'")
        self.prefix = options.prefix
        self.tokenizer = options.tokenizer
        self.trainer = trainer
        self.durations: dict[str, float] = {}  # seconds of each module's last run
        self.evaluations: dict[str, int] = {}  # model evaluations of each module's last run
        self.skipped: list[tuple[int, str]] = []  # (global step, module) of every skipped run
        self.failures: list[tuple[int, str, str]] = []  # (global step, module, error) of every failed run
        self.keys: dict[str, list[str]] = {}  # module -> its scalar keys (from the dry run)
        self._rounds = 0
        self._last: tuple[int, dict] | None = None
        self.last_values: dict[str, tuple[int | None, dict]] = {}  # module -> (step, its scalars) of its last run
        self._needed: str | None = None  # the module metric_for_best_model names
        self._warned_no_trainer = False
        self._clock = time.perf_counter
        if trainer is not None:
            model = getattr(trainer, "model", None)
            tokenizer = self.tokenizer if self.tokenizer is not None else getattr(trainer, "processing_class", None)
            if model is not None and tokenizer is not None:
                self.dry_run(model, tokenizer, getattr(trainer.args, "per_device_eval_batch_size", None))
            self._needed = self._check_metric(getattr(trainer.args, "metric_for_best_model", None))
            if self not in trainer.callback_handler.callbacks:
                trainer.add_callback(self)

    @staticmethod
    def _check_data(**data) -> dict:
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

    # --------------------------------------------------------------- checks at build
    def dry_run(self, model, tokenizer, batch_size: int | None = None) -> dict[str, list[str]]:
        """Run every module once on one text (the one with the most words; chain 1 of ``edits``): a bad option,
        a missing input or a text past a module's limit fails here, naming the module, before any training
        step. Returns (and keeps in :attr:`keys`) each module's scalar keys."""
        from textxai.estimates import approx_words

        with rng_untouched():
            for name, module, options in self.specs:
                texts = self.module_data[name]["texts"]
                row = max(range(len(texts)), key=lambda i: approx_words(texts[i])) if texts else 0
                one = _rows(self.module_data[name], [row])
                kwargs = self._compute_kwargs(name, module, options, model, tokenizer, batch_size, one)
                try:
                    results = module.compute(**kwargs)
                except Exception as exc:
                    where = f"text {row} ({short_repr(texts[row])})" if texts else "the first edit chain"
                    raise ValueError(f"modules[{name!r}]: the dry run on {where} failed, so it would fail during "
                                     f"training: {type(exc).__name__}: {exc}") from exc
                self.keys[name] = sorted(flat_scalars(results, f"{self.prefix}_{name}"))
        return self.keys

    def _check_metric(self, metric: str | None) -> str | None:
        """The module ``metric_for_best_model`` names; a textxai key no module gives is refused, naming those
        it gives; the raw AOPC keys (not comparable across models) get a warning naming the normalised one."""
        name = self._needed_module(metric)
        if name is None:
            return None
        key = metric if metric.startswith("eval_") else f"eval_{metric}"
        if name in self.keys and key not in self.keys[name]:
            raise ValueError(f"metric_for_best_model={metric!r}: {name} gives no scalar {key!r}; expected one of "
                             f"{self.keys[name]}")
        raw = {f"{self.prefix}_naopc_comprehensiveness": "naopc_naopc_comprehensiveness",
               f"{self.prefix}_naopc_sufficiency": "naopc_naopc_sufficiency"}
        if name == "naopc" and key in raw:
            logger.warning("textxai: metric_for_best_model=%r is the raw AOPC, which depends on how confident each "
                           "checkpoint is and is not comparable across models; name the normalised one, "
                           "metric_for_best_model=%r", metric, raw[key])
        return name

    # --------------------------------------------------------------- running
    def evaluate(self, model, tokenizer=None, batch_size: int | None = None, step: int | None = None,
                 needed: str | None = None, only_needed: bool = False) -> dict[str, float]:
        """Run every module on ``model`` now and return their flat ``{prefix}_{module}_{key}`` scalars.

        Usable from a plain PyTorch loop as well, and with a black-box function texts -> class probabilities as
        ``model`` (no tokenizer; a module that needs gradients fails naming why). Adds ``{prefix}_textxai_runtime`` (seconds),
        ``{prefix}_textxai_evaluations`` (model evaluations), ``{prefix}_textxai_skipped`` (modules skipped by the
        time budget) and ``{prefix}_textxai_failed`` (modules that failed, ``strict=False``). ``needed``: a
        module that runs whatever the budget (``metric_for_best_model``'s); ``only_needed``: run it alone (a
        round ``every`` skips).
        """
        tokenizer = tokenizer if tokenizer is not None else self.tokenizer
        if tokenizer is None and not _black_box(model):
            shown = type(model).__name__ if isinstance(model, torch.nn.Module) else short_repr(model)
            raise ValueError(f"tokenizer=None: the callback needs the tokenizer of model={shown}; pass "
                             "tokenizer=... or give the Trainer a processing_class (a black-box function texts -> "
                             "class probabilities needs none)")
        from textxai.batching import work_budget

        scalars: dict[str, float] = {}
        start = self._clock()
        n_skipped = n_failed = n_evaluations = 0
        with rng_untouched():
            for name, module, options in self.specs:
                if only_needed and name != needed:
                    continue
                reason = self._over_budget(name, self._clock() - start)
                if reason and name == needed:
                    logger.warning("textxai: %s runs at step %s although %s: metric_for_best_model names it",
                                   name, step, reason)
                elif reason:
                    n_skipped += 1
                    self.skipped.append((step, name))
                    logger.warning("textxai: %s skipped at step %s: %s", name, step, reason)
                    continue
                kwargs = self._compute_kwargs(name, module, options, model, tokenizer, batch_size)
                began = self._clock()
                try:
                    with work_budget(what=f"textxai callback, {name}") as budget:
                        results = module.compute(**kwargs)
                except Exception as exc:
                    if self.strict:
                        raise
                    n_failed += 1
                    self.failures.append((step, name, f"{type(exc).__name__}: {exc}"))
                    logger.warning("textxai: %s failed at step %s and is left out (strict=False; training goes on): "
                                   "%s: %s", name, step, type(exc).__name__, exc)
                    if name == needed:  # the Trainer must find the key; NaN is never the best
                        keys = self.keys.get(name) or sorted(self.last_values.get(name, (None, {}))[1])
                        scalars.update(dict.fromkeys(keys, float("nan")))
                    continue
                self.durations[name] = self._clock() - began
                self.evaluations[name] = budget.used
                n_evaluations += budget.used
                self.last_values[name] = (step, flat_scalars(results, f"{self.prefix}_{name}"))
                scalars.update(self.last_values[name][1])
        runtime = round(self._clock() - start, 4)
        scalars[f"{self.prefix}_textxai_runtime"] = runtime
        scalars[f"{self.prefix}_textxai_evaluations"] = float(n_evaluations)
        scalars[f"{self.prefix}_textxai_skipped"] = float(n_skipped)
        scalars[f"{self.prefix}_textxai_failed"] = float(n_failed)
        return scalars

    def _over_budget(self, name: str, elapsed: float) -> str | None:
        if self.time_budget is None:
            return None
        if elapsed >= self.time_budget:
            return f"the time budget of {self.time_budget} s is spent ({elapsed:.1f} s)"
        previous = self.durations.get(name)
        if previous is not None and elapsed + previous > self.time_budget:
            return (f"its last run took {previous:.1f} s, more than the {self.time_budget - elapsed:.1f} s left "
                    f"of the time budget of {self.time_budget} s")
        return None

    def _compute_kwargs(self, name, module, options, model, tokenizer, batch_size, data=None) -> dict:
        data = self.module_data[name] if data is None else data
        accepted, _ = _accepted(module)
        kwargs = {argument: data[field] for argument, field in module_inputs(name).items()
                  if data[field] is not None}
        if "model" in accepted:
            kwargs["model"] = model if tokenizer is None and _black_box(model) else (model, tokenizer)
        if "batch_size" in accepted and (batch_size or self.batch_size):
            kwargs["batch_size"] = self.batch_size or batch_size
        if "progress" in accepted:
            kwargs["progress"] = self.progress
        kwargs.update(options)
        return kwargs

    # ------------------------------------------------------------- callbacks
    def on_train_begin(self, args, state, control, model=None, processing_class=None, **kwargs):
        tokenizer = self.tokenizer if self.tokenizer is not None else processing_class
        if not self.keys and model is not None and tokenizer is not None:
            self.dry_run(model, tokenizer, args.per_device_eval_batch_size)
        self._needed = self._check_metric(getattr(args, "metric_for_best_model", None))

    def on_train_end(self, args, state, control, **kwargs):
        # load_best_model_at_end has put another model in place at the same global_step: nothing cached holds
        self._last = None

    def _needed_module(self, metric: str | None) -> str | None:
        """The module whose scalar ``metric`` (``metric_for_best_model``) names, or None (not a textxai key)."""
        if not metric:
            return None
        key = metric if metric.startswith("eval_") else f"eval_{metric}"  # the Trainer's rule
        names = [name for name, _, _ in self.specs if key.startswith(f"{self.prefix}_{name}_")]
        return max(names, key=len) if names else None

    def on_evaluate(self, args, state, control, metrics=None, model=None, processing_class=None, **kwargs):
        if metrics is None or model is None:
            return
        keys_logged = set(metrics)
        if self._last is not None and self._last[0] == state.global_step:
            # another evaluation of the same weights (a second eval dataset) during training
            metrics.update(self._last[1])
            return
        if self._needed is None:
            self._needed = self._needed_module(getattr(args, "metric_for_best_model", None))
        self._rounds += 1
        skipped_round = bool((self._rounds - 1) % self.every)
        if skipped_round and self._needed is None:
            return
        scalars = self.evaluate(model, self.tokenizer if self.tokenizer is not None else processing_class,
                                args.per_device_eval_batch_size, step=state.global_step, needed=self._needed,
                                only_needed=skipped_round)
        own = metrics.get("eval_runtime")
        logger.info("textxai at step %s: %d model evaluations in %.2f s (%s)%s", state.global_step,
                    scalars[f"{self.prefix}_textxai_evaluations"], scalars[f"{self.prefix}_textxai_runtime"],
                    ", ".join(f"{n} {self.evaluations.get(n, 0)}" for n, _, _ in self.specs),
                    "" if own is None else f"; the Trainer's own evaluation took {own:.2f} s")
        self._last = (state.global_step, scalars)
        metrics.update(scalars)
        self._log(scalars, state, keys_logged)

    def _log(self, scalars: dict, state, keys_logged: set) -> None:
        """Through ``trainer.log`` (every reporting integration), else into the evaluation's log_history entry."""
        if self.trainer is not None:
            self.trainer.log(dict(scalars))
            return
        entry = next((e for e in reversed(state.log_history)
                      if e.get("step") == state.global_step and keys_logged <= set(e)), None)
        if entry is not None:
            entry.update(scalars)
        if not self._warned_no_trainer:
            self._warned_no_trainer = True
            logger.warning("textxai: TextxaiCallback without trainer=...: its scalars are in log_history and in "
                           "evaluate()'s result, but reporting integrations (TensorBoard, W&B) do not see them; "
                           "pass trainer=trainer to log them through Trainer.log")


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


__all__ = ["TextxaiCallback", "TRAINING_PRESETS", "TRAINING_TEXTS", "TRAINING_WORDS", "TRAINING_BOUNDS", "CallbackInputs", "CallbackOptions", "flat_scalars", "rng_untouched", "module_inputs"]
