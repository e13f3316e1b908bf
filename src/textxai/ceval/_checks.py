"""Input checks of CEval's functions: failed generations, original texts, probability rows, labels."""
from __future__ import annotations

import math

import numpy as np

from textxai.validation import check_labels, check_list, check_unicode, short_repr

FAILED_MARKERS = ("", "-1")


def is_failed(text) -> bool:
    """True for a failed generation: ``None``, NaN, an empty / blank string or ``"-1"`` (CEval's marker).

    >>> [is_failed(t) for t in ["-1", " ", None, float("nan"), "ok"]]
    [True, True, True, True, False]
    """
    if text is None:
        return True
    if isinstance(text, float) and math.isnan(text):
        return True
    return isinstance(text, str) and text.strip() in FAILED_MARKERS


_check_list = check_list


def _check_originals(texts, name: str) -> list[str]:
    texts = _check_list(texts, name)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}]={short_repr(text)} ({type(text).__name__}): expected a string")
        if not text.strip():
            raise ValueError(f"{name}[{i}]={text!r}: expected a non-empty original text")
        check_unicode(text, f"{name}[{i}]")
    return [t if type(t) is str else str(t) for t in texts]  # numpy.str_ items of an array: spaCy takes str only


def _check_generation(text, name: str):
    """A counterfactual string, or ``None`` for a failed generation."""
    if is_failed(text):
        return None
    if not isinstance(text, str):
        raise TypeError(f"{name}={short_repr(text)} ({type(text).__name__}): expected a string (or None / '-1' for a failed generation)")
    return str(check_unicode(text, name))  # numpy.str_ -> str


def _check_probs(probs, name: str, n: int | None = None, num_classes: int | None = None, atol: float = 1e-3) -> np.ndarray:
    """Softmax rows ``[n, C]`` (C >= 2), finite, each in [0, 1] and summing to 1 (within ``atol``)."""
    if isinstance(probs, (str, bytes)) or probs is None:
        raise TypeError(f"{name}={short_repr(probs)}: expected an array of probabilities of shape [n_examples, n_classes]")
    try:
        arr = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}={short_repr(probs)}: expected an array of probabilities of shape [n_examples, n_classes]") from None
    if n is None:
        n = arr.shape[0] if arr.ndim else -1
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 2 or n == 0:
        rows = n if n > 0 else "n_examples >= 1"
        raise ValueError(f"{name} has shape {arr.shape}: expected ({rows}, n_classes) with n_classes >= 2, one row per example")
    if num_classes is not None and arr.shape[1] != num_classes:
        raise ValueError(f"{name} has {arr.shape[1]} classes: expected {num_classes} (as the other probabilities / the model)")
    if not np.all(np.isfinite(arr)):
        row = int(np.where(~np.isfinite(arr).all(axis=1))[0][0])
        raise ValueError(f"{name}[{row}]={arr[row].tolist()}: expected finite probabilities")
    bad = np.where((arr < -atol).any(axis=1) | (arr > 1 + atol).any(axis=1) | (np.abs(arr.sum(axis=1) - 1) > atol))[0]
    if len(bad):
        row = int(bad[0])
        raise ValueError(f"{name}[{row}]={arr[row].tolist()} (sum {arr[row].sum():.6g}): expected probabilities in [0, 1] "
                         f"summing to 1 (softmax outputs, not logits)")
    return arr


_check_labels = check_labels
