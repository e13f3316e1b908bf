"""Inconsistency of counterfactual editors: feed an editor its own output (Filandrianos et al., 2023).

Paper: "Counterfactuals of Counterfactuals: a back-translation-inspired approach to analyse counterfactual
editors", Findings of ACL 2023 (code: https://github.com/geofila/Counterfactuals-of-Counterfactuals).

A *chain* for one input is ``[x_0, x_1, x_2, ...]``: the original text, the editor's counterfactual of it,
the editor's counterfactual of that, and so on. With ``d`` the word-level Levenshtein distance:

- minimality at step ``i >= 1`` is ``d(x_{i-1}, x_i)``;
- inc at step ``i >= 1`` is ``relu(d(x_i, x_{i+1}) - d(x_{i-1}, x_i))`` (eq. 1): when positive, the editor
  missed a smaller edit that provably exists (the previous text);
- inc@n of one chain is the mean of inc at steps ``1..n`` (eq. 2; it needs ``x_{n+1}``).

A trailing ``None`` or empty string ends a chain (the editor failed); every ``@n`` reports how many chains
contributed.

>>> chain = ["the film was good", "the film was bad", "a film that was good and fun"]
>>> step_distances(chain).tolist()
[1, 5]
>>> step_inconsistency(chain).tolist()
[4]
>>> r = compute([chain, ["nice", "not nice", "nice"]], n=[1])
>>> r["inc@1"], r["inc@1_chains"], r["minimality@1"]
(2.0, 2, 1.0)
"""
from __future__ import annotations

import math
import os
import warnings
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from textxai import parallel
from textxai.progress import progress_bar
from textxai.validation import call_user, short_repr, check_choice, check_positive_int, check_texts
from textxai.words import WORD_TOKENIZERS, tokenize, word_distance, tokenize_many

DEFAULT_N = (1, 2, 3, 5, 9)
POOLINGS = ("pooled", "per_chain")
SELECTIONS = ("flip_then_min_distance", "min_distance", "first")

__all__ = [
    "DEFAULT_N",
    "POOLINGS",
    "SELECTIONS",
    "FeedbackChains",
    "unchanged",
    "check_chain",
    "check_chains",
    "check_n",
    "step_distances",
    "step_inconsistency",
    "chain_inc_at",
    "inc_at",
    "minimality_at",
    "flip_rate_at",
    "compute",
    "inconsistency",
    "feedback_chains",
    "compare_editors",
    "plot_steps",
]


# ---------------------------------------------------------------------------------------------- checks


def unchanged(before: str, after: str) -> bool:
    """An "edit" that returns its input (up to whitespace): a failed step, never a perfect one.

    >>> unchanged("a  film", "a film "), unchanged("a film", "A film")
    (True, False)
    """
    return " ".join(before.split()) == " ".join(after.split())


def check_chain(chain, name: str = "chain") -> list[str]:
    """The texts of a chain, without the trailing ``None`` / ``""`` that marks a failed step. A step that returns
    its input unchanged (:func:`unchanged`) is a failed step too: the chain ends before it (an editor that
    answers with its input would otherwise score the best inc@n and minimality 0).

    >>> check_chain(["a", "b", None])
    ['a', 'b']
    >>> check_chain(["a", "b", "b", "c"])
    ['a', 'b']
    >>> check_chain(["a"])
    Traceback (most recent call last):
    ...
    ValueError: chain=['a'] has 1 item: expected the original text and at least one edit
    """
    if isinstance(chain, str) or not isinstance(chain, Sequence) and not hasattr(chain, "__array__"):
        raise TypeError(f"{name}={short_repr(chain)}: expected a list of texts [original, edit 1, edit 2, ...]")
    chain = list(chain)
    if len(chain) < 2:
        raise ValueError(
            f"{name}={short_repr(chain)} has {len(chain)} item{'s' * (len(chain) != 1)}: "
            "expected the original text and at least one edit"
        )
    texts: list[str] = []
    ended_at = None
    for i, item in enumerate(chain):
        if item is not None and not isinstance(item, str):
            raise TypeError(
                f"{name}[{i}]={short_repr(item)} ({type(item).__name__}): expected a string "
                "(or a trailing None / empty string when the editor failed)"
            )
        empty = item is None or item == ""
        if i == 0 and empty:
            raise ValueError(f"{name}[0]={item!r}: expected the original text (a non-empty string)")
        if ended_at is not None:
            if not empty and not (chain[ended_at] is not None and chain[ended_at] != ""):
                raise ValueError(
                    f"{name}[{i}]={short_repr(item)} follows {name}[{ended_at}]={chain[ended_at]!r}: a None or empty "
                    "string ends a chain, so only None / empty strings may follow it"
                )
            continue
        if empty or texts and unchanged(texts[-1], item):
            ended_at = i
        else:
            texts.append(item)
    return texts


def check_chains(chains, name: str = "chains") -> list[list[str]]:
    """A non-empty list of chains (see :func:`check_chain`)."""
    if isinstance(chains, str) or not isinstance(chains, Sequence) and not hasattr(chains, "__array__"):
        raise TypeError(f"{name}={short_repr(chains)}: expected a list of chains (each a list of texts)")
    chains = list(chains)
    if not chains:
        raise ValueError(f"{name}=[]: expected at least one chain")
    return [check_chain(chain, f"{name}[{i}]") for i, chain in enumerate(chains)]


def check_n(n, name: str = "n") -> list[int]:
    """``n`` as a list of distinct positive integers (an int is one value).

    >>> check_n([1, 3, 3])
    [1, 3]
    """
    values = [n] if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else n
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name}={short_repr(n)}: expected a positive integer or a non-empty list of them")
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={short_repr(n)}: {v!r} is not a positive integer; expected every n >= 1")
        if int(v) not in out:
            out.append(int(v))
    return out


def _check_word_tokenizer(word_tokenizer) -> str:
    return check_choice(word_tokenizer, "word_tokenizer", WORD_TOKENIZERS)


def _check_pooling(pooling) -> str:
    return check_choice(pooling, "pooling", POOLINGS)


# ---------------------------------------------------------------------------------------------- distances


def step_distances(chain, word_tokenizer: str = "spacy") -> np.ndarray:
    """``[d(x_0, x_1), d(x_1, x_2), ...]``: the minimality of every step of one chain (int array).

    >>> step_distances(["a b c", "a x c", "a x", None]).tolist()
    [1, 1]
    """
    _check_word_tokenizer(word_tokenizer)
    texts = check_chain(chain)
    words = tokenize_many(texts, word_tokenizer)
    return np.array([word_distance(words[i - 1], words[i]) for i in range(1, len(words))], dtype=np.int64)


def _inc_from_distances(d: np.ndarray) -> np.ndarray:
    return np.maximum(np.diff(d), 0) if len(d) > 1 else np.zeros(0, dtype=np.int64)


def step_inconsistency(chain, word_tokenizer: str = "spacy") -> np.ndarray:
    """``[inc_1, inc_2, ...]`` with ``inc_i = relu(d(x_i, x_{i+1}) - d(x_{i-1}, x_i))`` (eq. 1).

    >>> step_inconsistency(["a b c", "a x c", "y z w", "y z w v"]).tolist()
    [2, 0]
    """
    return _inc_from_distances(step_distances(chain, word_tokenizer))


def chain_inc_at(chain, n: int, word_tokenizer: str = "spacy") -> float:
    """inc@n of one chain: the mean of inc at steps 1..n (eq. 2); ``nan`` if the chain lacks ``x_{n+1}``.

    >>> chain_inc_at(["a b c", "a x c", "y z w", "y z w v"], 2)
    1.0
    """
    check_positive_int(int(n) if isinstance(n, np.integer) else n, "n")
    inc = step_inconsistency(chain, word_tokenizer)
    return float(inc[:n].mean()) if len(inc) >= n else float("nan")


def _all_distances(texts_per_chain: list[list[str]], word_tokenizer: str, progress: bool = False) -> list[np.ndarray]:
    flat = [t for texts in texts_per_chain for t in texts]
    words = tokenize_many(flat, word_tokenizer)
    out, pos = [], 0
    for texts in progress_bar(texts_per_chain, progress, "inconsistency: distances", unit="chain"):
        w = words[pos : pos + len(texts)]
        pos += len(texts)
        out.append(np.array([word_distance(w[i - 1], w[i]) for i in range(1, len(w))], dtype=np.int64))
    return out


def _warn_empty(metric: str, n: int) -> None:
    warnings.warn(f"{metric}@{n}: no chain reaches step {n}; the value is NaN (0 contributing chains)", stacklevel=3)


def _inc_stats(distances: list[np.ndarray], n: int, pooling: str) -> tuple[float, int, int]:
    """(inc@n, contributing chains, contributing (chain, step) pairs)."""
    incs = [_inc_from_distances(d) for d in distances]
    if pooling == "pooled":
        parts = [inc[:n] for inc in incs if len(inc) > 0]
        steps = sum(len(p) for p in parts)
        value = float(np.concatenate(parts).mean()) if steps else float("nan")
        return value, len(parts), steps
    means = [float(inc[:n].mean()) for inc in incs if len(inc) >= n]
    value = float(np.mean(means)) if means else float("nan")
    return value, len(means), len(means) * n


def inc_at(chains, n=DEFAULT_N, pooling: str = "pooled", word_tokenizer: str = "spacy") -> dict[int, dict]:
    """inc@n over a dataset of chains, for every ``n``: ``{n: {"value", "chains", "steps"}}``.

    ``pooling="pooled"`` (the authors' table): mean of inc over every available (chain, step <= n) pair;
    ``"per_chain"``: mean of the per-chain inc@n over the chains that reach step ``n`` (have ``x_{n+1}``).
    ``chains`` counts contributing chains, ``steps`` contributing (chain, step) pairs.

    >>> inc_at([["a", "b", "b c d"], ["a", "b c", "d"]], n=[1, 2])[1]
    {'value': 0.5, 'chains': 2, 'steps': 2}
    >>> inc_at([["a", "b", "b c d"], ["a", "b c", "d"]], n=[2], pooling="per_chain")[2]["chains"]
    0
    """
    n_values = check_n(n)
    _check_pooling(pooling)
    _check_word_tokenizer(word_tokenizer)
    distances = _all_distances(check_chains(chains), word_tokenizer)
    out = {}
    for k in n_values:
        value, count, steps = _inc_stats(distances, k, pooling)
        if count == 0:
            _warn_empty("inc", k)
        out[k] = {"value": value, "chains": count, "steps": steps}
    return out


def _minimality_stats(distances: list[np.ndarray], n: int) -> tuple[float, int]:
    vals = [float(d[n - 1]) for d in distances if len(d) >= n]
    return (float(np.mean(vals)) if vals else float("nan")), len(vals)


def minimality_at(chains, n=DEFAULT_N, word_tokenizer: str = "spacy") -> dict[int, dict]:
    """minimality@n: mean ``d(x_{n-1}, x_n)`` over the chains that have ``x_n``: ``{n: {"value", "chains"}}``.

    >>> minimality_at([["a", "b", "b c d"], ["a", "b c"]], n=[1, 2])
    {1: {'value': 1.5, 'chains': 2}, 2: {'value': 2.0, 'chains': 1}}
    """
    n_values = check_n(n)
    _check_word_tokenizer(word_tokenizer)
    distances = _all_distances(check_chains(chains), word_tokenizer)
    out = {}
    for k in n_values:
        value, count = _minimality_stats(distances, k)
        if count == 0:
            _warn_empty("minimality", k)
        out[k] = {"value": value, "chains": count}
    return out


def _check_labels(labels, texts_per_chain: list[list[str]], raw_lengths: list[int]) -> list[list[int]]:
    if isinstance(labels, str) or not isinstance(labels, Sequence) and not hasattr(labels, "__array__"):
        raise TypeError(f"labels={short_repr(labels)}: expected one list of integer labels per chain")
    labels = list(labels)
    if len(labels) != len(texts_per_chain):
        raise ValueError(
            f"labels has {len(labels)} lists but there are {len(texts_per_chain)} chains: expected one list per chain"
        )
    out = []
    for i, (lab, texts, raw) in enumerate(zip(labels, texts_per_chain, raw_lengths)):
        if isinstance(lab, str) or not isinstance(lab, Sequence) and not hasattr(lab, "__array__"):
            raise TypeError(f"labels[{i}]={short_repr(lab)}: expected a list of integer labels, one per text of the chain")
        lab = list(lab)
        if len(lab) not in (raw, len(texts)):
            raise ValueError(
                f"labels[{i}] has {len(lab)} labels but chain {i} has {raw} items ({len(texts)} texts): "
                "expected one label per item of the chain"
            )
        lab = lab[: len(texts)]
        for j, v in enumerate(lab):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"labels[{i}][{j}]={short_repr(v)} ({type(v).__name__}): expected an integer label")
        out.append([int(v) for v in lab])
    return out


def _flip_stats(labels: list[list[int]], failed: list[bool], n: int) -> tuple[float, int]:
    """Chains that attempted step n: they have x_n, or their editor failed exactly at step n."""
    attempted = flipped = 0
    for lab, fail in zip(labels, failed):
        if len(lab) > n:
            attempted += 1
            flipped += lab[n] != lab[n - 1]
        elif fail and len(lab) == n:
            attempted += 1
    return (flipped / attempted if attempted else float("nan")), attempted


def flip_rate_at(labels, n=DEFAULT_N) -> dict[int, dict]:
    """flip_rate@n from per-step labels (one list per chain, ``labels[c][i]`` = predicted label of ``x_i``).

    The fraction of chains whose label at step ``n`` differs from the label at step ``n - 1``, over the chains
    that attempted step ``n``: those that have ``x_n``, and those whose editor failed at step ``n`` (marked by a
    trailing ``None`` label, as a trailing ``None`` marks the chain), which count as not flipped. A chain that
    simply ends (no more feedback steps were run) does not take part.

    >>> flip_rate_at([[0, 1, 0], [0, 1, 1], [1, 1, None], [0, 1]], n=[1, 2])
    {1: {'value': 0.75, 'chains': 4}, 2: {'value': 0.3333333333333333, 'chains': 3}}
    """
    n_values = check_n(n)
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise TypeError(f"labels={short_repr(labels)}: expected one list of integer labels per chain")
    chains = []
    for i, lab in enumerate(labels):
        if isinstance(lab, str) or not isinstance(lab, Sequence) and not hasattr(lab, "__array__"):
            raise TypeError(f"labels[{i}]={short_repr(lab)}: expected a list of integer labels, one per text of the chain")
        lab = list(lab)
        k = len(lab)
        while k > 0 and lab[k - 1] is None:
            k -= 1
        chains.append((lab[:k], k < len(lab)))
    labs = _check_labels([c[0] for c in chains], [c[0] for c in chains], [len(c[0]) for c in chains])
    failed = [c[1] for c in chains]
    out = {}
    for k in n_values:
        value, count = _flip_stats(labs, failed, k)
        if count == 0:
            _warn_empty("flip_rate", k)
        out[k] = {"value": value, "chains": count}
    return out


# ---------------------------------------------------------------------------------------------- classifiers


def _resolve_classifier(model, device=None):
    """A TextClassifier, or any object with ``predict_proba(list[str]) -> [n, C]`` (used as is)."""
    if model is None:
        return None
    if hasattr(model, "predict_proba") and callable(model.predict_proba) and not isinstance(model, (str, os.PathLike)):
        if hasattr(model, "require_single_label"):  # a TextClassifier
            model.require_single_label(_SINGLE_LABEL)
        return model
    from textxai.classifier import as_classifier

    return as_classifier(model, device=device).require_single_label(_SINGLE_LABEL)


_SINGLE_LABEL = "the inconsistency (the predicted class of each step, one of exclusive classes)"


def _predict(classifier, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
    if not texts:
        return np.zeros(0, dtype=np.int64)
    try:
        proba = classifier.predict_proba(texts, batch_size=batch_size, progress=progress)
    except TypeError:
        proba = classifier.predict_proba(texts)
    proba = np.asarray(proba)
    if proba.ndim != 2 or proba.shape[0] != len(texts):
        raise ValueError(
            f"model.predict_proba returned shape {proba.shape} for {len(texts)} texts: expected [n_texts, n_classes]"
        )
    return proba.argmax(axis=1).astype(np.int64)


# ---------------------------------------------------------------------------------------------- all metrics
# compute() runs in four named stages: _validate (every check, models loaded but not run) -> _model_outputs
# (classifier labels, word distances, perplexities) -> one function per metric -> _reduce (warnings, per_example).


@dataclass
class _Request:
    """Everything :func:`compute` needs, checked."""

    texts_per_chain: list[list[str]]
    failed: list[bool]  # the chain ends with the editor's failure (a trailing None / "")
    n_values: list[int]
    labels: list[list[int]] | None
    classifier: object | None
    lm: object | None
    word_tokenizer: str
    pooling: str
    return_per_example: bool
    batch_size: int
    progress: bool


@dataclass
class _Outputs:
    distances: list[np.ndarray]
    labels: list[list[int]] | None
    perplexities: list[dict[int, float]] | None


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={short_repr(value)}: expected True or False")
    return bool(value)


def _validate(chains, n, labels, model, lm, word_tokenizer, pooling, return_per_example, batch_size, progress) -> _Request:
    """Stage 1: every check before any model call (the classifier and the LM are loaded here, not run)."""
    n_values = check_n(n)
    _check_word_tokenizer(word_tokenizer)
    _check_pooling(pooling)
    check_positive_int(batch_size, "batch_size")
    texts_per_chain = check_chains(chains)
    raw_lengths = [len(list(c)) for c in chains]
    failed = [raw_len > len(texts) for raw_len, texts in zip(raw_lengths, texts_per_chain)]
    checked_labels = None if labels is None else _check_labels(labels, texts_per_chain, raw_lengths)
    classifier = _resolve_classifier(model) if labels is None and model is not None else None
    resolved_lm = None
    if lm is not None:
        from textxai.lm import as_lm

        resolved_lm = as_lm(lm)
    return _Request(texts_per_chain, failed, n_values, checked_labels, classifier, resolved_lm, word_tokenizer, pooling,
                    _check_flag(return_per_example, "return_per_example"), batch_size, _check_flag(progress, "progress"))


def _model_outputs(request: _Request) -> _Outputs:
    """Stage 2: the classifier's label of every text (unless given), word distances, the LM's perplexities."""
    labels = request.labels
    if labels is None and request.classifier is not None:
        flat = [t for texts in request.texts_per_chain for t in texts]
        predict = parallel.split(_predict, over=("texts",))  # shared out under a multi-process textxai run
        pred = predict(request.classifier, flat, batch_size=request.batch_size, progress=request.progress).tolist()
        labels, pos = [], 0
        for texts in request.texts_per_chain:
            labels.append(pred[pos: pos + len(texts)])
            pos += len(texts)
    distances = _all_distances(request.texts_per_chain, request.word_tokenizer, progress=request.progress)
    perplexities = None
    if request.lm is not None:
        from textxai.lm import perplexity

        chains = request.texts_per_chain
        wanted = sorted({(c, k) for c, texts in enumerate(chains) for k in request.n_values if len(texts) > k})
        ppl = parallel.split(perplexity, over=("texts",))([chains[c][k] for c, k in wanted], request.lm,
                                                          batch_size=request.batch_size) if wanted else []
        perplexities = [dict() for _ in chains]
        for (c, k), v in zip(wanted, np.asarray(ppl, dtype=float).tolist()):
            perplexities[c][k] = v
    return _Outputs(distances, labels, perplexities)


def _inc_metrics(distances, n_values, pooling) -> dict:
    out = {}
    for k in n_values:
        out[f"inc@{k}"], out[f"inc@{k}_chains"], out[f"inc@{k}_steps"] = _inc_stats(distances, k, pooling)
    return out


def _minimality_metrics(distances, n_values) -> dict:
    out = {}
    for k in n_values:
        out[f"minimality@{k}"], out[f"minimality@{k}_chains"] = _minimality_stats(distances, k)
    return out


def _flip_rate_metrics(labels, failed, n_values) -> dict:
    out = {}
    for k in n_values:
        out[f"flip_rate@{k}"], out[f"flip_rate@{k}_chains"] = _flip_stats(labels, failed, k)
    return out


def _perplexity_metrics(perplexities, n_values) -> dict:
    out = {}
    for k in n_values:
        vals = [p[k] for p in perplexities if k in p]
        out[f"perplexity@{k}"] = float(np.mean(vals)) if vals else float("nan")
        out[f"perplexity@{k}_chains"] = len(vals)
    return out


def _per_example(request: _Request, outputs: _Outputs) -> dict:
    distances = outputs.distances
    per = {"minimality": [d.tolist() for d in distances], "inc": [_inc_from_distances(d).tolist() for d in distances]}
    for k in request.n_values:
        per[f"inc@{k}"] = [float(_inc_from_distances(d)[:k].mean()) if len(d) > k else float("nan") for d in distances]
    if outputs.labels is not None:
        per["labels"] = outputs.labels
        per["failed"] = request.failed  # the editor failed at the step after the last label (flip_rate's attempts)
    if outputs.perplexities is not None:
        per["perplexity"] = [{f"@{k}": v for k, v in p.items()} for p in outputs.perplexities]
    return per


def _reduce(request: _Request, outputs: _Outputs, metrics: dict) -> dict:
    """Stage 4: one warning for every metric no chain reaches, and ``per_example`` when asked."""
    out = dict(metrics)
    empty = sorted({key.rsplit("_", 1)[0] for key in out if key.endswith("_chains") and out[key] == 0})
    if empty:
        warnings.warn(
            f"no chain contributes to {', '.join(empty)}: those values are NaN (chains too short for that n)",
            stacklevel=3,
        )
    if request.return_per_example:
        out["per_example"] = _per_example(request, outputs)
    return out


def compute(
    chains,
    n=DEFAULT_N,
    labels=None,
    model=None,
    lm=None,
    word_tokenizer: str = "spacy",
    pooling: str = "pooled",
    return_per_example: bool = False,
    batch_size: int = 32,
    progress: bool = False,
) -> dict:
    """Every metric of the paper on a dataset of chains, as a flat dict (the ``inconsistency`` module's numbers).

    Keys, for every ``n``: ``inc@n``, ``inc@n_chains`` (contributing chains), ``inc@n_steps`` (contributing
    (chain, step) pairs), ``minimality@n`` and ``minimality@n_chains``; ``flip_rate@n`` and
    ``flip_rate@n_chains`` when ``labels`` (one list per chain) or ``model`` (a classifier) is given;
    ``perplexity@n``, ``perplexity@n_chains`` and ``perplexity_start_token`` (the token prepended to each text,
    :func:`textxai.lm.start_token`) when ``lm`` (a causal LM in any form :func:`textxai.lm.as_lm` takes; for
    another start token pass ``as_lm(lm, bos=...)``) is given.
    ``return_per_example=True`` adds ``per_example``: per chain the step minimalities, step inconsistencies,
    the per-chain inc@n (NaN where the chain is too short), labels and perplexities.

    Every argument is checked before any model runs. ``inconsistency(...)`` is the former name (an alias).

    >>> r = compute([["a b", "a c", "d e f"]], n=[1, 2], labels=[[0, 1, 0]])
    >>> r["inc@1"], r["inc@2"], r["inc@2_chains"], r["flip_rate@2"]
    (2.0, 2.0, 1, 1.0)
    """
    request = _validate(chains, n, labels, model, lm, word_tokenizer, pooling, return_per_example, batch_size, progress)
    outputs = _model_outputs(request)
    metrics = {**_inc_metrics(outputs.distances, request.n_values, request.pooling),
               **_minimality_metrics(outputs.distances, request.n_values)}
    if outputs.labels is not None:
        metrics.update(_flip_rate_metrics(outputs.labels, request.failed, request.n_values))
    if outputs.perplexities is not None:
        from textxai.lm import start_token

        metrics.update(_perplexity_metrics(outputs.perplexities, request.n_values))
        metrics["perplexity_start_token"] = start_token(request.lm)
    return _reduce(request, outputs, metrics)


#: The former name of :func:`compute` (kept for one release).
inconsistency = compute


# ---------------------------------------------------------------------------------------------- feedback


FeedbackChains = namedtuple("FeedbackChains", ["chains", "labels"])
FeedbackChains.__doc__ = """Result of :func:`feedback_chains`: ``chains[c]`` = [x_0, x_1, ...] (a chain stops early when
the editor returned no usable candidate), ``labels[c][i]`` = predicted label of ``chains[c][i]``."""


def _select(candidates: list[str], distances: list[int], flipped: list[bool], selection: str) -> int:
    if selection == "first":
        return 0
    order = range(len(candidates))
    if selection == "flip_then_min_distance" and any(flipped):
        order = [i for i in order if flipped[i]]
    return min(order, key=lambda i: (distances[i], i))  # ties: the editor's earlier candidate


def _candidates(outputs, n_texts: int, step: int) -> list[list[str]]:
    """The editor's output checked: one list of non-empty candidate strings per text (a string alone is a list)."""
    if isinstance(outputs, str) or not isinstance(outputs, Sequence) or len(outputs) != n_texts:
        raise ValueError(
            f"editor returned {short_repr(outputs)} for {n_texts} texts at step {step}: expected a list of "
            f"{n_texts} candidate lists"
        )
    cand_lists = []
    for j, cands in enumerate(outputs):
        if isinstance(cands, str):
            cands = [cands]
        if cands is None:
            cands = []
        if not isinstance(cands, Sequence):
            raise TypeError(f"editor output [{j}]={short_repr(cands)} at step {step}: expected a list of candidate strings")
        for k, cand in enumerate(cands):
            if cand is not None and not isinstance(cand, str):
                raise TypeError(
                    f"editor output [{j}][{k}]={short_repr(cand)} ({type(cand).__name__}) at step {step}: "
                    "expected a string"
                )
        cand_lists.append([cand for cand in cands if cand])
    return cand_lists


def _extend_chains(chains, labels, active, cand_lists, pred, selection, word_tokenizer) -> list[int]:
    """Append each active chain's chosen candidate (or the trailing None of a failed editor); the chains still active."""
    pos, still = 0, []
    for c, cands in zip(active, cand_lists):
        if not cands:  # the editor failed: a trailing None ends the chain
            chains[c].append(None)
            labels[c].append(None)
            continue
        cur_words = tokenize(chains[c][-1], word_tokenizer)
        dist = [word_distance(cur_words, tokenize(cand, word_tokenizer)) for cand in cands]
        labs = pred[pos: pos + len(cands)]
        pos += len(cands)
        flipped = [lab != labels[c][-1] for lab in labs]
        k = _select(cands, dist, flipped, selection)
        chains[c].append(cands[k])
        labels[c].append(int(labs[k]))
        still.append(c)
    return still


def feedback_chains(
    editor: Callable[[list[str]], list[list[str]]],
    texts,
    classifier,
    steps: int = 10,
    selection: str = "flip_then_min_distance",
    word_tokenizer: str = "spacy",
    batch_size: int = 32,
    progress: bool = True,
) -> FeedbackChains:
    """Feed an editor its own output ``steps`` times: ``x_{i+1}`` = the chosen candidate of ``editor([x_i])``.

    ``editor`` is any callable ``list[str] -> list[list[str]]`` (candidate edits per input). At every step,
    ``selection="flip_then_min_distance"`` (paper §4, App. B) takes the candidate with the lowest minimality
    among those that change the classifier's current prediction, else the lowest minimality overall
    (``"min_distance"``: lowest minimality regardless of the label; ``"first"``: the editor's first
    candidate); ties go to the editor's earlier candidate. Candidates that are ``None``, empty or the input
    itself (:func:`unchanged`) are dropped; a chain whose editor returns no candidate stops there, marked by a
    trailing ``None`` (label ``None``): a failed step.

    >>> editor = lambda xs: [[x.replace("good", "bad"), x + " not"] if "good" in x else [x.replace("bad", "good")] for x in xs]
    >>> class Clf:
    ...     def predict_proba(self, texts): return np.array([[0.0, 1.0] if "good" in t else [1.0, 0.0] for t in texts])
    >>> feedback_chains(editor, ["so good"], Clf(), steps=2, progress=False)
    FeedbackChains(chains=[['so good', 'so bad', 'so good']], labels=[[1, 0, 1]])
    """
    if not callable(editor):
        raise TypeError(f"editor={short_repr(editor)}: expected a callable list[str] -> list[list[str]]")
    texts = check_texts(texts)
    for i, t in enumerate(texts):
        if t == "":
            raise ValueError(f"texts[{i}]='': expected a non-empty text to edit")
    check_positive_int(steps, "steps")
    check_choice(selection, "selection", SELECTIONS)
    _check_word_tokenizer(word_tokenizer)
    check_positive_int(batch_size, "batch_size")
    if classifier is None:
        raise ValueError("classifier=None: expected a TextClassifier, model id, folder, model or pipeline")
    clf = _resolve_classifier(classifier)

    chains = [[t] for t in texts]
    labels = [[int(v)] for v in _predict(clf, texts, batch_size=batch_size)]
    active = list(range(len(texts)))
    bar = progress_bar(total=steps, enabled=progress, desc="feedback steps", unit="step")
    for step in range(1, steps + 1):
        if not active:
            break
        current = [chains[c][-1] for c in active]
        outputs = call_user(editor, "editor", f"step {step} of {steps}, texts {short_repr(current, 120)}", list(current))
        cand_lists = [[cand for cand in cands if not unchanged(text, cand)]  # a no-op is a failed step
                      for text, cands in zip(current, _candidates(outputs, len(current), step))]
        flat = [cand for cands in cand_lists for cand in cands]
        pred = _predict(clf, flat, batch_size=batch_size).tolist()
        active = _extend_chains(chains, labels, active, cand_lists, pred, selection, word_tokenizer)
        bar.update(1)
    bar.close()
    return FeedbackChains(chains, labels)


# ---------------------------------------------------------------------------------------------- comparison


def _same_originals(texts_a: list[list[str]], texts_b: list[list[str]]) -> bool:
    return len(texts_a) == len(texts_b) and all(a[0] == b[0] for a, b in zip(texts_a, texts_b))


def _welch(va: np.ndarray, vb: np.ndarray, k: int) -> tuple[float, float]:
    from scipy import stats as scipy_stats

    if len(va) < 2 or len(vb) < 2:
        warnings.warn(f"n={k}: chains_a has {len(va)} and chains_b has {len(vb)} chains reaching step {k}; a t-test "
                      "needs at least 2 on each side, p-value is NaN", stacklevel=3)
        return float("nan"), float("nan")
    if va.var() == 0 and vb.var() == 0:
        if va.mean() == vb.mean():
            return float("nan"), float("nan")
        return math.copysign(math.inf, va.mean() - vb.mean()), 0.0
    res = scipy_stats.ttest_ind(va, vb, equal_var=False)
    return float(res.statistic), float(res.pvalue)


def compare_editors(chains_a, chains_b, n_values=DEFAULT_N, word_tokenizer: str = "spacy", paired="auto",
                    confidence_level: float = 0.95, n_resamples: int = 9999, seed: int = 0) -> dict[int, dict]:
    """Compare the per-chain inc@n of two editors, for every n.

    Paired (``paired="auto"`` when chain ``i`` of both editors starts from the same original, or ``True``):
    :func:`textxai.stats.compare` over the chains that reach step ``n`` on both sides -- a paired bootstrap
    interval of mean(a) - mean(b) and the Wilcoxon signed-rank test of the per-chain differences. The same
    originals edited by two editors are paired data; a two-sample test would throw that pairing away.
    Unpaired (different originals, or ``paired=False``): Welch's t-test between the chains reaching step
    ``n`` on each side (the paper's App. E); the p-value is NaN (with a warning) under 2 chains a side.

    Returns ``{n: {"test", "statistic", "p_value", "mean_a", "mean_b", "difference", "ci_low", "ci_high",
    "chains_a", "chains_b"}}`` (``ci_low`` / ``ci_high`` NaN for Welch).

    >>> a = [["a", "b", "b c d e"], ["x", "b", "c d e f"], ["y", "b", "b c d"], ["z", "b c", "d e"]]
    >>> b = [["a", "c", "d"], ["x", "c", "d"], ["y", "c", "d"], ["z", "c", "d"]]
    >>> r = compare_editors(a, b, [1], n_resamples=999)[1]
    >>> r["test"], r["mean_a"], r["mean_b"], r["chains_a"], round(r["p_value"], 3)
    ('wilcoxon signed-rank', 1.5, 0.0, 4, 0.25)
    >>> compare_editors(a, b[:3], [1])[1]["test"]      # different originals: Welch (App. E)
    'welch t'
    """
    ns = check_n(n_values, "n_values")
    _check_word_tokenizer(word_tokenizer)
    ta, tb = check_chains(chains_a, "chains_a"), check_chains(chains_b, "chains_b")
    if paired not in ("auto", True, False):
        raise ValueError(f"paired={short_repr(paired)}: expected 'auto', True or False")
    same = _same_originals(ta, tb)
    if paired is True and not same:
        raise ValueError("paired=True: chains_a and chains_b must start from the same originals, in the same order "
                         f"({len(ta)} and {len(tb)} chains given)")
    if paired == "auto":
        paired = same
    if paired:
        from textxai import stats

        results = [compute(list(c), n=ns, word_tokenizer=word_tokenizer, pooling="per_chain", return_per_example=True)
                   for c in (chains_a, chains_b)]  # as given: a chain the editor ended at step 1 stays valid
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = stats.compare("inconsistency", *results, confidence_level=confidence_level,
                                  n_resamples=n_resamples, seed=seed, keys=[f"inc@{k}" for k in ns])
        return {k: {"test": table[f"inc@{k}"]["test"], "statistic": table[f"inc@{k}"]["statistic"],
                    "p_value": table[f"inc@{k}"]["p_value"], "mean_a": table[f"inc@{k}"]["a"],
                    "mean_b": table[f"inc@{k}"]["b"], "difference": table[f"inc@{k}"]["difference"],
                    "ci_low": table[f"inc@{k}"]["ci_low"], "ci_high": table[f"inc@{k}"]["ci_high"],
                    "chains_a": table[f"inc@{k}"]["n"], "chains_b": table[f"inc@{k}"]["n"]} for k in ns}
    da, db = _all_distances(ta, word_tokenizer), _all_distances(tb, word_tokenizer)
    out = {}
    for k in ns:
        va = np.array([_inc_from_distances(d)[:k].mean() for d in da if len(d) > k], dtype=float)
        vb = np.array([_inc_from_distances(d)[:k].mean() for d in db if len(d) > k], dtype=float)
        stat, p = _welch(va, vb, k)
        mean_a = float(va.mean()) if len(va) else float("nan")
        mean_b = float(vb.mean()) if len(vb) else float("nan")
        out[k] = {"test": "welch t", "statistic": stat, "p_value": p, "mean_a": mean_a, "mean_b": mean_b,
                  "difference": mean_a - mean_b, "ci_low": float("nan"), "ci_high": float("nan"),
                  "chains_a": int(len(va)), "chains_b": int(len(vb))}
    return out


# ---------------------------------------------------------------------------------------------- plot


def plot_steps(chains, word_tokenizer: str = "spacy", max_steps: int | None = None, title: str | None = None):
    """Box-plots of minimality and inc per feedback step (paper Fig. 3a-b), a matplotlib Figure.

    Boxes show quartiles and the median (black line); the white diamond is the mean (what inc@n averages).

    ``chains`` is a list of chains, or ``{editor name: list of chains}`` to compare editors side by side.

    >>> fig = plot_steps([["a", "b", "b c d"], ["a", "b c", "d"]])
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['minimality (words)', 'inc (words)']
    """
    from matplotlib.figure import Figure

    _check_word_tokenizer(word_tokenizer)
    groups = chains if isinstance(chains, dict) else {"": chains}
    if not groups:
        raise ValueError("chains={}: expected a list of chains or a non-empty {editor name: chains} dict")
    data = {}
    for name, cs in groups.items():
        label = f"chains[{name!r}]" if name else "chains"
        data[name] = _all_distances(check_chains(cs, label), word_tokenizer)
    longest = max((len(d) for ds in data.values() for d in ds), default=0)
    if max_steps is not None:
        check_positive_int(max_steps, "max_steps")
        longest = min(longest, max_steps)

    fig = Figure(figsize=(max(6.0, 0.9 * longest * max(1, len(data)) + 2), 6.5), layout="constrained")
    axes = fig.subplots(2, 1)
    width = 0.8 / len(data)
    colors = [f"C{i}" for i in range(len(data))]
    for panel, (ax, what) in enumerate(zip(axes, ("minimality", "inc"))):
        for g, (name, ds) in enumerate(data.items()):
            per_step, positions = [], []
            last = longest if what == "minimality" else longest - 1
            for step in range(1, last + 1):
                if what == "minimality":
                    vals = [d[step - 1] for d in ds if len(d) >= step]
                else:
                    vals = [_inc_from_distances(d)[step - 1] for d in ds if len(d) > step]
                if vals:
                    per_step.append(vals)
                    positions.append(step + (g - (len(data) - 1) / 2) * width)
            if per_step:
                bp = ax.boxplot(per_step, positions=positions, widths=width * 0.9, patch_artist=True, manage_ticks=False,
                                showmeans=True, medianprops={"color": "black"},
                                meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black",
                                           "markersize": 4})
                for box in bp["boxes"]:
                    box.set_facecolor(colors[g])
                    box.set_alpha(0.6)
                if name and panel == 0:
                    bp["boxes"][0].set_label(str(name))
        ax.set_xticks(range(1, max(longest, 1) + 1))
        ax.set_xlim(0.4, max(longest, 1) + 0.6)
        ax.set_xlabel("feedback step")
        ax.set_ylabel("minimality (words)" if what == "minimality" else "inc (words)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_title(title or "Minimality and inconsistency per feedback step")
    if len(data) > 1:
        axes[0].legend()
    return fig
