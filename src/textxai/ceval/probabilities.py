"""Flips and probability changes of CEval: from predicted labels and softmax rows.

>>> flip_rate([0, 1, 1], [1, 1, 0])
0.6666666666666666
>>> probability_change([[0.9, 0.1]], [[0.2, 0.8]]).round(2).tolist()   # contrast class 1 = argmin of the original
[0.7]
"""
from __future__ import annotations

import numpy as np

from textxai.ceval._checks import _check_probs
from textxai.validation import check_labels, check_list, check_same_length, short_repr

CONTRASTS = ("target", "argmin", "counterfactual_argmax")


def _label_vectors(original_labels, counterfactual_labels, failed):
    a = check_labels(original_labels, "original_labels")
    b = check_labels(counterfactual_labels, "counterfactual_labels")
    check_same_length(a, b, "original_labels", "counterfactual_labels")
    if failed is None:
        return a, b, np.zeros(len(a), dtype=bool)
    failed = check_list(failed, "failed")
    check_same_length(a, failed, "original_labels", "failed")
    for i, f in enumerate(failed):
        if not isinstance(f, (bool, np.bool_)) and f not in (0, 1):
            raise TypeError(f"failed[{i}]={short_repr(f)}: expected True / False")
    return a, b, np.asarray(failed, dtype=bool)


def flips(original_labels, counterfactual_labels, failed=None) -> np.ndarray:
    """Per example: did the predicted class change? A failed generation (``failed[i]``) is not flipped.

    >>> flips([0, 0, 1], [1, 0, 0], failed=[False, False, True]).tolist()
    [True, False, False]
    """
    a, b, failed = _label_vectors(original_labels, counterfactual_labels, failed)
    return (a != b) & ~failed


def flip_rate(original_labels, counterfactual_labels, failed=None) -> float:
    """Share of examples whose predicted class changed (failed generations count as not flipped)."""
    return float(np.mean(flips(original_labels, counterfactual_labels, failed)))


def contrast_classes(original_probs, counterfactual_probs=None, contrast: str = "argmin", targets=None) -> np.ndarray:
    """The contrast class ``c'`` of each example for ``contrast`` in ``CONTRASTS``.

    >>> contrast_classes([[0.7, 0.2, 0.1]], [[0.1, 0.6, 0.3]], "argmin").tolist()
    [2]
    >>> contrast_classes([[0.7, 0.2, 0.1]], [[0.1, 0.6, 0.3]], "counterfactual_argmax").tolist()
    [1]
    """
    if contrast not in CONTRASTS:
        raise ValueError(f"contrast={short_repr(contrast)}: expected one of {list(CONTRASTS)}")
    p = _check_probs(original_probs, "original_probs")
    if contrast == "target":
        if targets is None:
            raise ValueError("contrast='target' needs targets= (one target class per example)")
        return check_labels(targets, "targets", len(p), p.shape[1])
    if contrast == "argmin":
        return np.argmin(p, axis=1)
    if counterfactual_probs is None:
        raise ValueError("contrast='counterfactual_argmax' needs counterfactual_probs=")
    return np.argmax(_check_probs(counterfactual_probs, "counterfactual_probs", len(p), p.shape[1]), axis=1)


def probability_change(original_probs, counterfactual_probs, contrast: str = "argmin", targets=None, failed=None) -> np.ndarray:
    """Per example ``p(c' | x') - p(c' | x)``; 0 for a failed generation (the text is left unchanged).

    >>> probability_change([[0.6, 0.3, 0.1]], [[0.2, 0.7, 0.1]], contrast="target", targets=[1]).round(2).tolist()
    [0.4]
    """
    p = _check_probs(original_probs, "original_probs")
    q = _check_probs(counterfactual_probs, "counterfactual_probs", len(p), p.shape[1])
    c = contrast_classes(p, q, contrast, targets)
    rows = np.arange(len(p))
    out = q[rows, c] - p[rows, c]
    if failed is not None:
        _, _, failed = _label_vectors(np.zeros(len(p), dtype=int), np.zeros(len(p), dtype=int), failed)
        out = np.where(failed, 0.0, out)
    return out
