"""Moves along the top eigenvector (paper §4.3): the class probabilities of a push, the smallest push that flips
the prediction, and the random-substitution baseline (Fig. 7).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from textxai.batching import charge
from textxai.fim.text import _embedding_batch, _fisher_counted, _length_batches, _prepare


def _check_strength(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={value!r}: expected a finite number > 0")
    return float(value)


def perturb_along_eigenvector(text: str, classifier, strength, text_pair: str | None = None) -> np.ndarray:
    """Class probabilities when the input embeddings move by ``strength * v`` (``v`` the unit top eigenvector).

    ``v`` is signed so that a small positive ``strength`` lowers the predicted class (paper §4.3, Fig. 2-3).
    ``strength`` is a number or a list of numbers (L2 norm of the move); returns ``[k, C]`` (``k`` strengths).

    >>> perturb_along_eigenvector("a wonderful film", "textxai/demo-sentiment", [0.0, 1.0]).shape  # doctest: +SKIP
    (2, 2)
    """
    strengths = np.atleast_1d(np.asarray(strength, dtype=np.float64)) if not isinstance(strength, (str, bytes)) else None
    if strengths is None or strengths.ndim != 1 or strengths.size == 0 or not np.isfinite(strengths).all():
        raise ValueError(f"strength={strength!r}: expected a finite number or a non-empty list of finite numbers")
    if not isinstance(text, str):
        raise TypeError(f"text={text!r} ({type(text).__name__}): expected a string")
    texts, pairs, clf = _prepare([text], classifier, None if text_pair is None else [text_pair], 1)
    enc, embeds, fn, mask = _embedding_batch(clf, texts, pairs)
    charge(1)   # the text's forward; its backward passes and the moved inputs below are counted too
    r = _fisher_counted(fn, embeds, mask, return_eigenvector=True)
    charge(len(strengths))
    s = torch.as_tensor(strengths, dtype=embeds.dtype, device=embeds.device).reshape(-1, 1, 1)
    moved = embeds + s * r.eigenvectors
    tensors = {k: t.repeat(len(strengths), 1) for k, t in enc.tensors.items()}
    with torch.no_grad():
        logits = clf.logits_from_embeddings(moved, tensors)
    return torch.softmax(logits.to(torch.float64), dim=1).cpu().numpy()


def min_flip_strength(
    texts,
    classifier,
    max_strength: float = 6.0,
    tol: float = 1e-3,
    text_pairs=None,
    batch_size: int = 16,
    progress: bool = False,
) -> np.ndarray:
    """Smallest L2 strength along the top eigenvector that flips the prediction (binary search, paper §4.3).

    The search runs in ``[0, max_strength]`` (the paper uses (0, 6)) to a bracket of width ``tol``; the
    returned value is the upper end of the final bracket (a strength that flips). ``inf`` where even
    ``max_strength`` does not flip the prediction. Texts are searched in parallel, ``batch_size`` at a time.

    >>> min_flip_strength(["a wonderful film"], "textxai/demo-sentiment")  # doctest: +SKIP
    array([...])
    """
    max_strength = _check_strength(max_strength, "max_strength")
    tol = _check_strength(tol, "tol")
    texts, pairs, clf = _prepare(texts, classifier, text_pairs, batch_size)
    steps = max(1, math.ceil(math.log2(max_strength / tol)))
    out = np.empty(len(texts))
    for idx in _length_batches(clf, texts, pairs, batch_size, progress, "min flip strength"):
        sub_pairs = None if pairs is None else [pairs[i] for i in idx]
        enc, embeds, fn, mask = _embedding_batch(clf, [texts[i] for i in idx], sub_pairs)
        r = _fisher_counted(fn, embeds, mask, return_eigenvector=True)
        yhat = r.probs.argmax(1).to(embeds.device)
        v = r.eigenvectors

        def flips(s: torch.Tensor) -> torch.Tensor:
            charge(len(s))   # one forward per text of the batch: the walk is priced (fim_evaluations) and counted
            with torch.no_grad():
                logits = fn(embeds + s.to(embeds.dtype).reshape(-1, 1, 1) * v)
            return logits.argmax(1) != yhat

        B = len(idx)
        lo = torch.zeros(B, dtype=torch.float64)
        hi = torch.full((B,), max_strength, dtype=torch.float64)
        ok = flips(hi).cpu()
        for _ in range(steps):
            mid = (lo + hi) / 2
            f = flips(mid).cpu()
            hi = torch.where(f, mid, hi)
            lo = torch.where(f, lo, mid)
        res = torch.where(ok, hi, torch.full_like(hi, float("inf")))
        out[idx] = res.numpy()
    return out


def _check_fraction(fraction) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating)) or not (0 < fraction <= 1):
        raise ValueError(f"fraction={fraction!r}: expected a number in (0, 1]")
    return float(fraction)


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={seed!r}: expected a non-negative integer")
    return int(seed)


def _check_vocabulary(vocabulary) -> list[str]:
    """Replacement words, sorted and unique (an empty list is refused)."""
    if isinstance(vocabulary, str) or not hasattr(vocabulary, "__iter__") or not all(isinstance(w, str) and w.strip() for w in vocabulary):
        raise ValueError(f"vocabulary={str(vocabulary)[:80]!r}: expected a list of non-empty word strings")
    if not vocabulary:
        raise ValueError("vocabulary=[]: expected at least one replacement word")
    return sorted(set(vocabulary))


def _substitute(text: str, spans, positions, replacements) -> str:
    from textxai import words as _words

    pieces, last = [], 0
    for pos, word in sorted(zip(positions, replacements)):
        _, a, b = spans[pos]
        pieces.append(text[last:a])
        pieces.append(_words.separated(text, a, b, word))
        last = b
    pieces.append(text[last:])
    return "".join(pieces)


def random_substitution_flip_rate(
    texts,
    classifier,
    fraction: float = 0.1,
    trials: int = 20,
    seed: int = 0,
    vocabulary=None,
    text_pairs=None,
    batch_size: int = 32,
    progress: bool = False,
) -> dict:
    """Fraction of ``trials`` in which replacing ``fraction`` of the words by random words flips the prediction.

    Paper §4.3 / Fig. 7: 10 % of the words (``max(1, round(fraction * n_words))`` positions, drawn without
    replacement) are replaced by words drawn uniformly from ``vocabulary`` (default: the whole-word
    alphabetic entries of the model's tokenizer vocabulary, ``TextClassifier.word_vocabulary()``; pass the words of your dataset to follow the
    paper exactly). For sentence pairs the positions are drawn over the words of both texts.
    Repeatable: text ``i`` uses ``numpy.random.default_rng([seed, i])``, whatever the batch size.

    Returns ``{"flip_rate": np.ndarray [N], "n_substituted": np.ndarray [N]}``.
    """
    from textxai import words as _words
    from textxai.validation import check_positive_int

    _check_fraction(fraction)
    check_positive_int(trials, "trials")
    _check_seed(seed)
    vocab = None if vocabulary is None else _check_vocabulary(vocabulary)
    texts, pairs, clf = _prepare(texts, classifier, text_pairs, batch_size)
    if vocab is None:
        vocab = sorted(clf.word_vocabulary())
    if not vocab:
        raise ValueError("vocabulary=[]: expected at least one replacement word")
    perturbed, perturbed_pairs, counts = [], [], []
    for i, text in enumerate(texts):
        rng = np.random.default_rng([int(seed), i])
        spans_a = _words.word_spans(text, clf.word_tokenizer)
        spans_b = _words.word_spans(pairs[i], clf.word_tokenizer) if pairs is not None else []
        n_a, n = len(spans_a), len(spans_a) + len(spans_b)
        k = max(1, int(round(fraction * n)))
        counts.append(k)
        for _ in range(trials):
            pos = rng.choice(n, size=k, replace=False)
            rep = [vocab[j] for j in rng.integers(0, len(vocab), size=k)]
            in_a = [(p, w) for p, w in zip(pos, rep) if p < n_a]
            in_b = [(p - n_a, w) for p, w in zip(pos, rep) if p >= n_a]
            perturbed.append(_substitute(text, spans_a, [p for p, _ in in_a], [w for _, w in in_a]))
            if pairs is not None:
                perturbed_pairs.append(_substitute(pairs[i], spans_b, [p for p, _ in in_b], [w for _, w in in_b]))
    base = clf.predict_proba(texts, pairs, batch_size=batch_size).argmax(1)
    pred = clf.predict_proba(perturbed, perturbed_pairs if pairs is not None else None, batch_size=batch_size,
                             progress=progress).argmax(1)
    flips = (pred.reshape(len(texts), trials) != base[:, None]).mean(1)
    return {"flip_rate": flips, "n_substituted": np.asarray(counts)}

