"""Word-level feature attributions on any ``TextClassifier``, built on captum.

One score per word of ``classifier.words(text, text_pair)``; the attributed quantity is the target class
probability. Subword (token) scores add up to their word's score.

- ``"gradient"``: the L2 norm of the gradient w.r.t. each token's input embedding, summed over the word's
  tokens (captum ``Saliency``, unsigned).
- ``"input_x_gradient"``: embedding x gradient summed over the embedding dimension (captum ``InputXGradient``).
- ``"integrated_gradients"``: captum ``IntegratedGradients`` from a baseline where every word token is the
  mask token (special tokens kept), summed over the embedding dimension; ``n_steps=50``.
- ``"omission"``: the drop in target probability when the word alone is masked.
- ``"lime"``: captum ``Lime`` over word-presence vectors (absent = masked), ridge regression and an
  exponential cosine kernel of width 0.25 (the lime package's text default); ``n_samples=5000`` as TOKI.
- ``"kernel_shap"``: captum ``KernelShap`` over word-presence vectors; ``n_samples=1000``.

Sampling methods are deterministic under ``seed``.

>>> from textxai.classifier import as_classifier                     # doctest: +SKIP
>>> clf = as_classifier("textxai/demo-sentiment")                    # doctest: +SKIP
>>> word_attributions(["a wonderful film"], clf, "omission")[0].shape  # doctest: +SKIP
(3,)
"""
from __future__ import annotations

import numpy as np
import torch

from textxai.batching import length_sorted_batches
from textxai.classifier import TextClassifier, as_classifier
from textxai.validation import check_choice, check_positive_int, check_text_pairs, check_texts
from textxai.progress import progress_bar

METHODS = ("gradient", "input_x_gradient", "integrated_gradients", "omission", "lime", "kernel_shap")
GRADIENT_METHODS = ("gradient", "input_x_gradient", "integrated_gradients")


def available_methods() -> list[str]:
    """Names accepted by ``word_attributions(method=...)``."""
    return list(METHODS)


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
        return torch.softmax(clf.logits_from_embeddings(embeds, tensors), dim=-1)

    out: list[np.ndarray] = [None] * len(texts)  # type: ignore[list-item]
    lengths = [len(texts[i]) + len(pairs[i] if pairs else "") for i in range(len(texts))]
    for chunk in length_sorted_batches(lengths, batch_size, progress, method):
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
                internal_batch_size=max(batch_size, 1),
            ).sum(-1)
        token_scores = token_scores.detach().double().cpu().numpy()
        for row, i in enumerate(chunk):
            out[i] = _to_words(token_scores[row], encoding.word_ids[row], len(encoding.words[row]))
    return out


def _omission(clf: TextClassifier, texts, pairs, probs, targets, batch_size, perturbation="mask"):
    encodings = clf.word_encodings(texts, pairs)
    masks = [np.eye(e.n_words, dtype=bool) for e in encodings]
    masked = clf.masked_proba_many(texts, masks, pairs, batch_size=batch_size, perturbation=perturbation)
    return [probs[i, targets[i]] - m[:, targets[i]] for i, m in enumerate(masked)]


def _sampling_attributions(clf: TextClassifier, texts, pairs, targets, method, batch_size, progress, seed,
                           n_samples, perturbation="mask", kernel_width=0.25):
    from captum._utils.models.linear_model import SkLearnRidge
    from captum.attr import KernelShap, Lime
    from captum.attr._core.lime import get_exp_kernel_similarity_function

    out = []
    items = progress_bar(range(len(texts)), progress, method, unit="text")
    for i in items:
        text, pair, target = texts[i], (pairs[i] if pairs else None), int(targets[i])
        n_words = clf.word_encoding(text, pair).n_words
        if n_words == 0:
            out.append(np.zeros(0))
            continue

        def forward(present: torch.Tensor) -> torch.Tensor:
            masks = present.detach().cpu().numpy() < 0.5
            probs = clf.masked_proba(text, masks, pair, batch_size=batch_size, perturbation=perturbation)
            return torch.as_tensor(probs[:, target])

        torch.manual_seed(seed)
        inputs = torch.ones((1, n_words), dtype=torch.float64)
        if method == "lime":
            explainer = Lime(forward, interpretable_model=SkLearnRidge(alpha=1.0),
                             similarity_func=get_exp_kernel_similarity_function("cosine", kernel_width))
        else:
            explainer = KernelShap(forward)
        scores = explainer.attribute(inputs, baselines=torch.zeros_like(inputs), n_samples=n_samples,
                                     perturbations_per_eval=batch_size)
        out.append(scores.detach().double().cpu().numpy()[0])
    return out


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
        options: ``n_samples`` (lime 5000, kernel_shap 1000), ``n_steps`` (integrated_gradients, 50),
            ``perturbation`` ("mask" | "delete": how omission / lime / kernel_shap remove words).
    """
    texts = check_texts(texts)
    pairs = check_text_pairs(text_pairs, texts)
    check_choice(method, "method", METHODS)
    check_positive_int(batch_size, "batch_size")
    allowed = {"n_samples", "n_steps", "perturbation", "kernel_width"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} for word_attributions; expected some of {sorted(allowed)}")
    clf = as_classifier(classifier)
    probs = None
    if method == "omission" or isinstance(target, str):  # p(x) is needed: omission, or to find the predicted class
        probs = clf.predict_proba(texts, pairs, batch_size=batch_size)
    targets = resolve_targets(target, probs, n=len(texts), num_labels=clf.num_labels)
    if method in GRADIENT_METHODS:
        kwargs = {"n_steps": check_positive_int(options.get("n_steps", 50), "n_steps")} if method == "integrated_gradients" else {}
        return _gradient_attributions(clf, texts, pairs, targets, method, batch_size, progress, **kwargs)
    perturbation = options.get("perturbation", "mask")
    if method == "omission":
        return _omission(clf, texts, pairs, probs, targets, batch_size, perturbation)
    n_samples = check_positive_int(options.get("n_samples", 5000 if method == "lime" else 1000), "n_samples")
    return _sampling_attributions(clf, texts, pairs, targets, method, batch_size, progress, seed, n_samples,
                                  perturbation, options.get("kernel_width", 0.25))
