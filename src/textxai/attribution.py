"""Word-level feature attributions on any ``TextClassifier`` (gradients through captum; omission; LIME / Kernel SHAP
in :mod:`textxai.sampling_explainers`, re-exported here).

One score per word of ``classifier.words(text, text_pair)``; the attributed quantity is the target class
probability. Subword (token) scores add up to their word's score.

The methods are ONE registry, :data:`REGISTRY` (name -> :class:`AttributionMethod`); ``METHODS`` (names),
TOKI's explainers, the CLI help, the naopc card / Space read it. A new method: one entry here and its
branch in :func:`word_attributions`.

Sampling methods are deterministic under ``seed``.

>>> from textxai.classifier import as_classifier                     # doctest: +SKIP
>>> clf = as_classifier("textxai/demo-sentiment")                    # doctest: +SKIP
>>> word_attributions(["a wonderful film"], clf, "omission")[0].shape  # doctest: +SKIP
(3,)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from textxai.batching import length_sorted_batches
from textxai.classifier import PERTURBATIONS, TextClassifier, as_classifier
from textxai.loading import LRUCache, cache_size
# the sampling explainers live in textxai.sampling_explainers; their names stay importable from here
from textxai.sampling_explainers import (  # noqa: F401
    AGREEMENT_DRAWS, BATCH_TOKENS, LIME_PRIOR_WORDS, ROUND_SAMPLES, SAMPLES_PER_CALL, STABILITY_DRAWS, STABLE_TOP_K,
    SamplingExplanation, SamplingOptions, _adaptive_sampling, _sampling_attributions, agrees_as_default_runs,
    kernel_shap_samples, lime_distinct_masks, lime_importance, lime_importance_ratio, lime_samples, lime_weights,
    paired_samples, sampling_scores, sampling_settled, shrink_to_prior, weighted_ridge)
from textxai.validation import check_choice, check_positive_int, check_seed, check_text_pairs, check_texts, short_repr

@dataclass(frozen=True)
class AttributionMethod:
    """One attribution method of the registry: its family, a one-line description and its options."""

    name: str
    family: str  # "gradient" (one forward+backward), "perturbation" (N masked inputs), "sampling" (n_samples)
    summary: str
    options: tuple[str, ...] = ()
    default_samples: int | None = None  # n_steps of integrated gradients, n_samples of the sampling methods

    def evaluations(self, n_words: int, samples: int | None = None) -> int:
        """Model evaluations of one explanation of a text of ``n_words`` words (``samples``: steps or samples).

        >>> REGISTRY["omission"].evaluations(10), REGISTRY["lime"].evaluations(10), REGISTRY["gradient"].evaluations(10)
        (11, 5000, 1)
        """
        if self.family == "perturbation":
            return n_words + 1
        if self.default_samples is None:
            return 1
        return int(samples or self.default_samples)


REGISTRY: dict[str, AttributionMethod] = {m.name: m for m in (
    AttributionMethod("gradient", "gradient", "L2 norm of the gradient w.r.t. each token's input embedding, summed "
                      "over the word's tokens (captum Saliency, unsigned)"),
    AttributionMethod("input_x_gradient", "gradient", "embedding x gradient summed over the embedding dimension "
                      "(captum InputXGradient)"),
    AttributionMethod("integrated_gradients", "gradient", "captum IntegratedGradients from an all-mask-token "
                      "baseline (special tokens kept), summed over the embedding dimension", ("n_steps",), 50),
    AttributionMethod("omission", "perturbation", "drop of the target probability when the word alone is removed",
                      ("perturbation", "precision")),
    AttributionMethod("lime", "sampling", "LIME as the lime package's text explainer: word-presence samples, cosine "
                      "kernel of width 0.25, weighted ridge (alpha 1); n_samples=5000 as TOKI",
                      ("n_samples", "perturbation", "kernel_width", "precision", "top_k"), 5000),
    AttributionMethod("kernel_shap", "sampling", "Kernel SHAP: Shapley-kernel coalition sampling, least squares "
                      "(as captum KernelShap); n_samples=1000", ("n_samples", "perturbation", "precision", "top_k"), 1000),
)}
METHODS = tuple(REGISTRY)
GRADIENT_METHODS = tuple(name for name, m in REGISTRY.items() if m.family == "gradient")


def available_methods() -> list[str]:
    """Names accepted by ``word_attributions(method=...)``, in registry order.

    >>> available_methods()
    ['gradient', 'input_x_gradient', 'integrated_gradients', 'omission', 'lime', 'kernel_shap']
    """
    return list(METHODS)


def describe_methods(width: int = 0) -> str:
    """The registry as text lines ``name: summary`` (CLI help, cards)."""
    return "\n".join(f"{name:<{width}}{': ' if not width else ''}{m.summary}" for name, m in REGISTRY.items())


def resolve_targets(target, probs=None, n: int | None = None, num_labels: int | None = None) -> np.ndarray:
    """``"predicted"``, one class index for all, or one per example -> an int array of targets.

    ``probs`` are the [n, C] probabilities of the intact inputs, needed for ``"predicted"`` only; explicit
    targets are checked against ``n`` and ``num_labels`` (taken from ``probs`` when given).
    """
    if isinstance(target, str):
        check_choice(target, "target", ["predicted"])
        return np.asarray(probs).argmax(axis=1)
    if probs is not None:
        n, num_labels = np.asarray(probs).shape
    targets = np.asarray(target)
    if targets.ndim == 0:
        targets = np.full(n, targets)
    if targets.shape != (n,) or not np.issubdtype(targets.dtype, np.integer):
        raise ValueError(f"target={target!r:.80}: expected 'predicted', a class index, or one class index per text ({n})")
    bad = targets[(targets < 0) | (targets >= num_labels)]
    if bad.size:
        raise ValueError(f"target={int(bad[0])} is out of range: the model has {num_labels} classes (0..{num_labels - 1})")
    return targets.astype(np.int64)


def _to_words(token_scores: np.ndarray, word_ids: np.ndarray, n_words: int) -> np.ndarray:
    scores = np.zeros(n_words, dtype=np.float64)
    in_word = word_ids >= 0
    np.add.at(scores, word_ids[in_word], token_scores[: len(word_ids)][in_word])
    return scores


def _gradient_attributions(clf: TextClassifier, texts, pairs, targets, method, batch_size, progress, n_steps=50):
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    extra_keys = list(clf.input_names)  # input_ids too: the classifier swaps embeddings in at its embedding layer

    def forward(embeds, *extra):
        tensors = dict(zip(extra_keys, extra))
        return clf.probabilities(clf.logits_from_embeddings(embeds, tensors))  # softmax, or per-label sigmoid

    out: list[np.ndarray] = [None] * len(texts)  # type: ignore[list-item]
    lengths = [len(e.input_ids) for e in clf.word_encodings(texts, pairs)]   # tokens (the encodings are cached)
    # on a CPU at most clf.batch_tokens per forward and backward pass (32 texts of 400 words held ~2 GB)
    for chunk in length_sorted_batches(lengths, batch_size, progress, method, max_tokens=clf.batch_tokens):
        encoding = clf.encode([texts[i] for i in chunk], [pairs[i] for i in chunk] if pairs else None)
        tensors = encoding.tensors
        with torch.no_grad():
            embeds = clf.input_embeddings(tensors).detach()
        embeds.requires_grad_()
        extra = tuple(tensors[k] for k in extra_keys)
        target = torch.as_tensor(targets[chunk], device=clf.device)
        if method == "gradient":
            grads = Saliency(forward).attribute(embeds, target=target, abs=False, additional_forward_args=extra)
            token_scores = grads.norm(dim=-1)
        elif method == "input_x_gradient":
            token_scores = InputXGradient(forward).attribute(embeds, target=target, additional_forward_args=extra).sum(-1)
        else:
            ids = tensors["input_ids"].clone()
            is_word = torch.zeros_like(ids, dtype=torch.bool)
            for row, word_ids in enumerate(encoding.word_ids):
                is_word[row, : len(word_ids)] = torch.as_tensor(word_ids >= 0)
            baseline_id = clf.mask_token_id if clf.mask_token_id is not None else clf.tokenizer.pad_token_id
            with torch.no_grad():
                baseline = clf.input_embeddings({"input_ids": torch.where(is_word, baseline_id, ids)}).detach()
            token_scores = IntegratedGradients(forward).attribute(
                embeds, baselines=baseline, target=target, additional_forward_args=extra, n_steps=n_steps,
                internal_batch_size=clf.rows_per_batch(batch_size, ids.shape[1]),
            ).sum(-1)
        token_scores = token_scores.detach().double().cpu().numpy()
        for row, i in enumerate(chunk):
            out[i] = _to_words(token_scores[row], encoding.word_ids[row], len(encoding.words[row]))
    return out


def _omission(clf: TextClassifier, texts, pairs, probs, targets, batch_size, perturbation="mask", progress=False,
              precision="float32"):
    encodings = clf.word_encodings(texts, pairs)
    masks = [np.eye(e.n_words, dtype=bool) for e in encodings]
    masked = clf.masked_proba_many(texts, masks, pairs, batch_size=batch_size, perturbation=perturbation,
                                   progress=progress, precision=precision)
    return [probs[i, targets[i]] - m[:, targets[i]] for i, m in enumerate(masked)]


def word_attributions(texts, classifier, method: str = "integrated_gradients", target="predicted", text_pairs=None,
                      seed: int = 0, batch_size: int = 32, progress: bool = False, **options) -> list[np.ndarray]:
    """One attribution score per word of each text (aligned with ``classifier.words(text, text_pair)``).

    Args:
        texts: list of strings.
        classifier: a ``TextClassifier`` or anything ``as_classifier`` accepts.
        method: one of ``available_methods()``.
        target: ``"predicted"`` (default), a class index, or one class index per text.
        text_pairs: second texts for sentence-pair models.
        seed: seed of the sampling methods (lime, kernel_shap).
        batch_size: inputs per forward pass; lime / kernel_shap fill batches of short texts up to
            ``BATCH_TOKENS`` tokens (inference only), so it is a lower bound there.
        options: ``n_samples`` (lime 5000, kernel_shap 1000), ``n_steps`` (integrated_gradients, 50),
            ``perturbation`` ("mask" | "delete": how omission / lime / kernel_shap remove words),
            ``precision`` of lime / kernel_shap / omission's forward passes ("auto": bfloat16 where the hardware
            has it and the model agrees, see ``TextClassifier.resolve_precision``; "float32" for the model's
            exact probabilities; "bfloat16"; default "auto" for the sampling methods, "float32" for omission,
            whose intact probability then comes from the same precision); lime / kernel_shap:
            ``n_samples="auto"`` draws paired masks in rounds until the ``top_k`` words (default 5) are settled or the
            scores are as precise as the default count would make them, at most that count (see
            :func:`sampling_explanations`, which also reports the samples each text used).
    """
    return [r.scores if isinstance(r, SamplingExplanation) else r for r in _explanations(
        texts, classifier, method, target, text_pairs, seed, batch_size, progress, options)]


def sampling_explanations(texts, classifier, method: str = "lime", target="predicted", text_pairs=None, seed: int = 0,
                          batch_size: int = 32, progress: bool = False, **options) -> list[SamplingExplanation]:
    """:func:`word_attributions` of a sampling method ("lime" | "kernel_shap") with what each text cost: one
    :class:`SamplingExplanation` per text (``scores``, ``samples``, model ``inputs``, why it ``stopped``).

    With ``n_samples="auto"`` the samples differ per text: rounds of 250 paired masks until its top-``top_k`` words
    are settled, or its scores are as precise as the default count of independent samples makes them (lime 5,000,
    kernel_shap 1,000), at most that count.
    """
    check_choice(method, "method", ("lime", "kernel_shap"))
    return _explanations(texts, classifier, method, target, text_pairs, seed, batch_size, progress, options)


def _explanations(texts, classifier, method, target, text_pairs, seed, batch_size, progress, options) -> list:
    texts = check_texts(texts)
    pairs = check_text_pairs(text_pairs, texts)
    check_choice(method, "method", METHODS)
    check_positive_int(batch_size, "batch_size")
    allowed = {o for m in REGISTRY.values() for o in m.options}  # each method reads its own, ignores the rest
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} for word_attributions; expected some of {sorted(allowed)}")
    _check_options(seed, options)
    clf = as_classifier(classifier)
    # p(x): omission's intact probability (in its own precision), or to find the predicted class; with the targets
    # given, omission reads it for the texts it has not explained yet only (inside compute)
    intact = _precision(clf, method, options) if method == "omission" else "float32"
    probs = None
    if isinstance(target, str):
        probs = clf.predict_proba(texts, pairs, batch_size=batch_size, precision=intact)
    targets = resolve_targets(target, probs, n=len(texts), num_labels=clf.num_labels)

    def compute(idx):
        sub, sub_pairs = [texts[i] for i in idx], None if pairs is None else [pairs[i] for i in idx]
        p = probs[idx] if probs is not None else (
            clf.predict_proba(sub, sub_pairs, batch_size=batch_size, precision=intact) if method == "omission" else None)
        return _attributions(clf, sub, sub_pairs, p, targets[idx], method, seed, batch_size, progress, options)

    if method in ("omission", "lime", "kernel_shap"):
        return _remembered(clf, texts, pairs, targets, _settings(clf, method, seed, options), compute)
    return compute(np.arange(len(texts)))


def _check_options(seed, options: dict) -> None:
    """Every option of :func:`word_attributions` before any model call (a ValueError naming it)."""
    import math

    check_seed(seed)
    for name in ("n_samples", "n_steps", "top_k"):
        if name in options and not (name == "n_samples" and isinstance(options[name], str) and options[name] == "auto"):
            if name == "n_samples" and isinstance(options[name], str):
                raise ValueError(f"n_samples={short_repr(options[name])}: expected a positive integer or 'auto' (as "
                                 "many as the top-k words need, at most the method's default)")
            check_positive_int(options[name], name)
    if "top_k" in options and options.get("n_samples") != "auto":
        raise ValueError(f"top_k={short_repr(options['top_k'])}: top_k sets when n_samples='auto' stops; "
                         f"expected it with n_samples='auto' only (n_samples={short_repr(options.get('n_samples'))})")
    if "perturbation" in options:
        check_choice(options["perturbation"], "perturbation", PERTURBATIONS)
    width = options.get("kernel_width", 0.25)
    if isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, float, np.integer, np.floating)) or not (
            math.isfinite(width) and width > 0):
        raise ValueError(f"kernel_width={short_repr(width)}: expected a positive finite number (LIME's kernel width, "
                         "default 0.25)")


# ------------------------------------------------------------------------------- explanations remembered
# The perturbation methods' explanations of a text are remembered in this process (bounded LRU, keyed by the
# model's weights, the text, its target and every option that changes the scores): a pipeline that explains
# the same texts twice - TOKI's assessment, then the attack's omission ranking of the same texts; an audit's
# stages - computes each explanation once. A text's scores never depend on the other texts of the call
# (sampling: the same seed for every text), so the remembered ones equal a new computation (up to the float
# rounding of other batch neighbours). ``TEXTXAI_EXPLANATION_CACHE`` bounds it (texts; default 4,096).
_EXPLANATIONS = LRUCache(cache_size("TEXTXAI_EXPLANATION_CACHE", 4096))


def weights_digest(clf) -> str:
    """A digest of the model's current weights: the bytes of every parameter and buffer
    (:func:`textxai.classifier.content_digest`; per-tensor sums missed two head rows swapped).

    The fingerprint names a model; this tells its versions apart, so a model being trained (e.g. under
    ``TextxaiCallback``) never gets what was computed with its earlier weights.
    """
    import hashlib
    import json

    from textxai.classifier import content_digest

    return hashlib.sha256(json.dumps([clf.fingerprint, content_digest(clf.model)]).encode()).hexdigest()[:16]


def _precision(clf, method: str, options: dict) -> str:
    """The resolved precision of a perturbation method's passes: as asked, else float32 for omission (the model's
    exact drops) and "auto" for the sampling methods."""
    return clf.resolve_precision(options.get("precision", "float32" if method == "omission" else "auto"))


def _settings(clf, method: str, seed: int, options: dict) -> tuple:
    perturbation = options.get("perturbation", "mask")
    digest = (weights_digest(clf), clf.word_view_key)  # the words of a text depend on the word view too
    if method == "omission":
        return (digest, method, perturbation, _precision(clf, method, options))
    samples = options.get("n_samples", REGISTRY[method].default_samples)
    if samples == "auto":
        samples = ("auto", options.get("top_k", 5))
    precision = _precision(clf, method, options)
    width = options.get("kernel_width", 0.25) if method == "lime" else None
    return (digest, method, perturbation, samples, precision, width, seed)


def _remembered(clf, texts, pairs, targets, settings: tuple, compute) -> list[np.ndarray]:
    """Each text's remembered scores under ``settings``; ``compute(indices)`` explains the others (one call)."""
    keys = [(settings, text, None if pairs is None else pairs[i], int(targets[i])) for i, text in enumerate(texts)]
    out = [_EXPLANATIONS.get(key) for key in keys]
    todo = [i for i, got in enumerate(out) if got is None]
    if todo:
        for i, scores in zip(todo, compute(np.asarray(todo, dtype=np.int64))):
            _EXPLANATIONS.put(keys[i], scores.copy() if isinstance(scores, SamplingExplanation) else np.array(scores, copy=True))
            out[i] = scores
    return [scores.copy() if isinstance(scores, SamplingExplanation) else np.array(scores, copy=True) for scores in out]


def _attributions(clf, texts, pairs, probs, targets, method: str, seed: int, batch_size: int, progress: bool,
                  options: dict) -> list[np.ndarray]:
    if not texts:
        return []
    if method in GRADIENT_METHODS:
        kwargs = {"n_steps": check_positive_int(options.get("n_steps", REGISTRY[method].default_samples), "n_steps")} if method == "integrated_gradients" else {}
        return _gradient_attributions(clf, texts, pairs, targets, method, batch_size, progress, **kwargs)
    perturbation = options.get("perturbation", "mask")
    if method == "omission":
        return _omission(clf, texts, pairs, probs, targets, batch_size, perturbation, progress,
                         _precision(clf, method, options))
    n_samples = options.get("n_samples", REGISTRY[method].default_samples)
    precision = _precision(clf, method, options)
    sampling = SamplingOptions(method, 0 if n_samples == "auto" else n_samples, seed, perturbation,
                               options.get("kernel_width", 0.25), precision)
    if n_samples == "auto":
        return _adaptive_sampling(clf, texts, pairs, targets, sampling, batch_size, progress, options.get("top_k", 5),
                                  REGISTRY[method].default_samples)
    return [SamplingExplanation(scores, n_samples, inputs) for scores, inputs in
            _sampling_attributions(clf, texts, pairs, targets, sampling, batch_size, progress)]
