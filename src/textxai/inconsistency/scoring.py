"""The staged :func:`compute`: every metric of the paper on a dataset of chains (the ``inconsistency`` module's numbers)."""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from textxai import parallel
from textxai.inconsistency.checks import (DEFAULT_N, _check_flag, _check_labels, _check_pooling, _check_word_tokenizer,
                                          check_chains, check_n)
from textxai.inconsistency.metrics import (_all_distances, _flip_stats, _inc_from_distances, _inc_stats,
                                           _minimality_stats)
from textxai.validation import check_positive_int


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
    bad = int((~np.isfinite(proba.astype(np.float64))).any(axis=1).sum())
    if bad:  # argmax would read a NaN row as class 0
        raise ValueError(f"model.predict_proba returned non-finite probabilities for {bad} of {len(texts)} texts: "
                         "expected finite probabilities (a diverged model?)")
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
        vals = [p[k] for p in perplexities if k in p and not np.isnan(p[k])]  # NaN: no token to score (textxai.lm)
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

    Every argument is checked before any model runs. ``textxai.inconsistency.inconsistency`` is its deprecated former
    name (:mod:`textxai.deprecation`).

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
