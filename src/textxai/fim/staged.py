"""The staged :func:`compute` of the FIM difficulty and its options (:class:`FIMOptions`).

compute() runs in four named stages: _validate (every check; the classifier is loaded, not run) ->
_model_outputs (difficulty, and the asked-for §4.3 / §4.4 experiments) -> _metrics (summaries,
correlations, accuracy by difficulty) -> _reduce (one flat dict).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from textxai.fim.eigen import _check_batch_size
from textxai.fim.experiments import difficulty_correlation
from textxai.fim.perturb import (_check_fraction, _check_seed, _check_strength, _check_vocabulary, min_flip_strength,
                                 random_substitution_flip_rate)
from textxai.fim.text import _label_ids, _prepare, difficulty, summarize


@dataclass(frozen=True)
class FIMOptions:
    """Options of :func:`compute` (each may also be given as a keyword of ``compute``).

    batch_size: texts per forward/backward batch. return_eigenvector / return_all_eigenvalues /
    keep_eigenvectors: as in :func:`difficulty`. min_flip (§4.3, with max_strength, tol): the smallest move
    along the top eigenvector that flips the prediction, see :func:`min_flip_strength`. random_flips (§4.3,
    Fig. 7; with fraction, trials, seed, vocabulary): see :func:`random_substitution_flip_rate`.
    progress: progress bars. shard: a wrapper put around :func:`difficulty` and :func:`min_flip_strength`
    before they run (e.g. ``textxai.parallel.sharded``: data-parallel under accelerate); None runs them as they are.
    """

    batch_size: int = 16
    return_eigenvector: bool = False
    return_all_eigenvalues: bool = False
    keep_eigenvectors: bool = False
    min_flip: bool = False
    max_strength: float = 6.0
    tol: float = 1e-3
    random_flips: bool = False
    fraction: float = 0.1
    trials: int = 20
    seed: int = 0
    vocabulary: tuple | None = None
    progress: bool = False
    shard: Callable | None = None


@dataclass
class _Request:
    texts: list[str]
    pairs: list[str] | None
    classifier: object
    labels: np.ndarray | None
    perturbed: list[str] | None
    perturbed_pairs: list[str] | None
    options: FIMOptions


def _options(options, kwargs) -> FIMOptions:
    from textxai.options import apply_keywords

    return apply_keywords("fim.compute", kwargs, options=(FIMOptions, options))["options"]


def _check_options(opts: FIMOptions) -> None:
    from textxai.validation import check_positive_int

    _check_batch_size(opts.batch_size)
    for name in ("return_eigenvector", "return_all_eigenvalues", "keep_eigenvectors", "min_flip", "random_flips", "progress"):
        if not isinstance(getattr(opts, name), (bool, np.bool_)):
            raise TypeError(f"{name}={getattr(opts, name)!r}: expected True or False")
    if opts.shard is not None and not callable(opts.shard):
        raise TypeError(f"shard={opts.shard!r:.80}: expected a callable fn -> fn, or None")
    if opts.min_flip:
        _check_strength(opts.max_strength, "max_strength")
        _check_strength(opts.tol, "tol")
    if opts.random_flips:
        _check_fraction(opts.fraction)
        check_positive_int(opts.trials, "trials")
        _check_seed(opts.seed)
        if opts.vocabulary is not None:
            _check_vocabulary(opts.vocabulary)


def _validate(texts, model, text_pairs, labels, perturbed, perturbed_pairs, tokenizer, device, opts) -> _Request:
    """Stage 1: every check before any model call."""
    from textxai.validation import check_same_length, check_texts

    _check_options(opts)
    texts, pairs, clf = _prepare(texts, model, text_pairs, opts.batch_size, tokenizer, device)
    label_ids = None if labels is None else _label_ids(labels, clf, len(texts))
    if perturbed is not None:
        perturbed = check_texts(perturbed, "perturbed")
        check_same_length(texts, perturbed, "texts", "perturbed")
        if (pairs is None) != (perturbed_pairs is None):
            raise ValueError("perturbed_pairs: expected text pairs for both texts and perturbed, or for neither")
        perturbed, perturbed_pairs, _ = _prepare(perturbed, clf, perturbed_pairs, opts.batch_size)
    elif perturbed_pairs is not None:
        raise ValueError("perturbed_pairs is given without perturbed: expected both or neither")
    return _Request(texts, pairs, clf, label_ids, perturbed, perturbed_pairs, opts)


def _model_outputs(request: _Request) -> dict:
    """Stage 2: lambda_max of every text, and the experiments the options ask for."""
    o, clf, texts, pairs = request.options, request.classifier, request.texts, request.pairs
    wrap = o.shard or (lambda fn: fn)
    out = {"fim": wrap(difficulty)(texts, clf, pairs, batch_size=o.batch_size, return_eigenvector=o.return_eigenvector,
                             return_all_eigenvalues=o.return_all_eigenvalues, progress=o.progress,
                             keep_eigenvectors=o.keep_eigenvectors)}
    if o.min_flip:
        out["min_flip_strength"] = wrap(min_flip_strength)(texts, clf, max_strength=o.max_strength, tol=o.tol,
                                                     text_pairs=pairs, batch_size=o.batch_size, progress=o.progress)
    if o.random_flips:
        vocabulary = None if o.vocabulary is None else list(o.vocabulary)
        out["random"] = random_substitution_flip_rate(texts, clf, fraction=o.fraction, trials=o.trials, seed=o.seed,
                                                      vocabulary=vocabulary, text_pairs=pairs, progress=o.progress)
    if request.perturbed is not None:
        out["perturbed"] = wrap(difficulty)(request.perturbed, clf, request.perturbed_pairs, batch_size=o.batch_size,
                                      progress=o.progress)["difficulty"]
    return out


def _accuracy_by_difficulty(d: np.ndarray, predictions: np.ndarray, labels: np.ndarray) -> dict:
    """Accuracy overall and on the easiest / hardest quarter of the texts (by lambda_max)."""
    correct = predictions == labels
    q = np.quantile(d, [0.25, 0.75])
    return {"all": float(correct.mean()), "easiest_quarter": float(correct[d <= q[0]].mean()),
            "hardest_quarter": float(correct[d >= q[1]].mean())}


def _shift_metrics(d: np.ndarray, d_perturbed: np.ndarray) -> dict:
    shift = d_perturbed - d
    return {"values": shift, "mean": float(shift.mean()), "std": float(shift.std()), "median": float(np.median(shift)),
            "fraction_increased": float((shift > 0).mean()), "difficulty_perturbed": summarize(d_perturbed)}


def _metrics(request: _Request, outputs: dict) -> dict:
    """Stage 3: one entry per metric."""
    d = outputs["fim"]["difficulty"]
    out = {"summary": summarize(d)}
    if request.labels is not None:
        out["accuracy"] = _accuracy_by_difficulty(d, outputs["fim"]["predictions"], request.labels)
    if "min_flip_strength" in outputs:
        s = outputs["min_flip_strength"]
        out.update(min_flip_correlation=difficulty_correlation(d, s), flipped_within_max_strength=float(np.isfinite(s).mean()))
    if "random" in outputs:
        out["random_flip_correlation"] = difficulty_correlation(d, outputs["random"]["flip_rate"])
    if "perturbed" in outputs:
        out["shift"] = _shift_metrics(d, outputs["perturbed"])
    return out


def _reduce(outputs: dict, metrics: dict) -> dict:
    """Stage 4: the per-text arrays and the metrics in one flat dict."""
    out = dict(outputs["fim"])
    if "min_flip_strength" in outputs:
        out["min_flip_strength"] = outputs["min_flip_strength"]
    if "random" in outputs:
        out.update(random_flip_rate=outputs["random"]["flip_rate"], n_substituted=outputs["random"]["n_substituted"])
    out.update(metrics)
    return out


def compute(texts, model, text_pairs=None, labels=None, perturbed=None, perturbed_pairs=None, tokenizer=None,
            device=None, options: FIMOptions | None = None, **kwargs) -> dict:
    """FIM difficulty of every text and the paper's analyses of it, every argument checked before any model call.

    Args:
        texts: the texts (``text_pairs``: second texts of sentence-pair models).
        model: a ``TextClassifier`` or anything ``as_classifier`` accepts (``tokenizer``, ``device`` for loading).
        labels: gold labels (class indices or label names): adds ``accuracy`` overall and on the easiest /
            hardest quarter of the texts.
        perturbed: one perturbed text per text (§4.4; ``perturbed_pairs`` for pairs): adds ``shift``.
        options / keywords: :class:`FIMOptions`.

    Returns what :func:`difficulty` returns (``difficulty``, ``probs``, ``predictions``, ...) plus ``summary``
    (:func:`summarize`); with ``min_flip``: ``min_flip_strength``, ``min_flip_correlation``,
    ``flipped_within_max_strength``; with ``random_flips``: ``random_flip_rate``, ``n_substituted``,
    ``random_flip_correlation``; with ``labels``: ``accuracy``; with ``perturbed``: ``shift``
    (``values``, ``mean``, ``std``, ``median``, ``fraction_increased``, ``difficulty_perturbed``).

    >>> r = compute(["a wonderful film", "dull"], "textxai/demo-sentiment", labels=[1, 0], min_flip=True)  # doctest: +SKIP
    >>> sorted(r["summary"])[:3]                                                                            # doctest: +SKIP
    ['max', 'mean', 'median']
    """
    request = _validate(texts, model, text_pairs, labels, perturbed, perturbed_pairs, tokenizer, device,
                        _options(options, kwargs))
    outputs = _model_outputs(request)
    return _reduce(outputs, _metrics(request, outputs))