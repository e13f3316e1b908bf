"""Token distance, diversity and the method-distance matrix of CEval (spaCy tokens, whitespace kept).

>>> token_distance("the film was good", "the film was bad")
1
>>> diversity([["a good film", "a great film", "-1"]])[0]
1.0
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from textxai import words as _words
from textxai.ceval._checks import _check_list, is_failed
from textxai.validation import check_same_length, short_repr


def _tokens(text: str) -> tuple[str, ...]:
    """spaCy blank-English tokens of ``text``, whitespace tokens kept (cached in ``textxai.words``).

    Whole texts, not whitespace pieces: spaCy matches its multi-token special cases (":)" = ":" + ")") on
    the whole token sequence, and a match tried across a space (")" + ":" in "') :)!") can block another, so
    piecewise tokenization is not exact (and was slower here: one spaCy call per distinct piece).
    """
    return tuple(_words.tokenize(text, method="spacy", keep_whitespace=True))


def _side_distance(x: str, y: str) -> tuple[int, int]:
    """(token distance, token count of x)."""
    return _words.word_distance(x, y, keep_whitespace=True), len(_tokens(x))


def _sides(text, name: str) -> tuple:
    """A text as its sides: ``"x"`` -> ``("x",)``, ``(premise, hypothesis)`` kept; anything else a TypeError."""
    if isinstance(text, str):
        return (text,)
    if isinstance(text, (tuple, list)) and text:
        return tuple(text)
    raise TypeError(f"{name}={short_repr(text)} ({type(text).__name__}): expected a string or a (premise, hypothesis) "
                    "tuple of strings")


def token_distance(original, counterfactual, normalized: bool = False):
    """Levenshtein distance between the spaCy tokens (whitespace tokens kept) of two texts.

    ``original`` / ``counterfactual`` are strings, or tuples of strings (``(premise, hypothesis)``: the
    distance is the sum over the sides). ``normalized=True`` divides by the number of tokens of the
    original's sides that changed (all sides when none changed), CEval's "distance / length of x".

    >>> token_distance(("A man sleeps.", "He is outside."), ("A man sleeps.", "He is inside."))
    1
    >>> token_distance("the film was good", "the film was bad", normalized=True)
    0.25
    """
    a, b = _sides(original, "original"), _sides(counterfactual, "counterfactual")
    if len(a) != len(b):
        raise ValueError(f"original has {len(a)} sides but counterfactual has {len(b)}: expected the same number")
    for side, name in ((a, "original"), (b, "counterfactual")):
        for text in side:
            if not isinstance(text, str):
                raise TypeError(f"{name}={short_repr(text)} ({type(text).__name__}): expected a string")
    distance = 0
    changed_length = 0
    total_length = 0
    for x, y in zip(a, b):
        d, length = _side_distance(x, y)
        distance += d
        total_length += length
        if x != y:
            changed_length += length
    if not normalized:
        return int(distance)
    length = changed_length or total_length
    return distance / length if length else float("nan")


def token_distances(originals, counterfactuals, normalized: bool = False) -> np.ndarray:
    """Per-example token distance; NaN where the counterfactual failed (see ``is_failed``).

    >>> token_distances(["a b c", "a b"], ["a c", "-1"]).tolist()
    [1.0, nan]
    """
    originals = _check_list(originals, "originals")
    counterfactuals = _check_list(counterfactuals, "counterfactuals")
    check_same_length(originals, counterfactuals, "originals", "counterfactuals")
    out = np.full(len(originals), np.nan)
    for i, (x, y) in enumerate(zip(originals, counterfactuals)):
        if not _failed_any(y):
            out[i] = token_distance(x, y, normalized=normalized)
    return out


def _failed_any(text) -> bool:
    if isinstance(text, tuple):
        return any(is_failed(t) for t in text)
    return is_failed(text)


def diversity(counterfactual_sets, originals=None, normalized: bool = False) -> tuple[float, np.ndarray]:
    """Mean pairwise token distance between the counterfactuals of each original.

    ``counterfactual_sets``: one list of counterfactuals per original. Failed generations are dropped;
    originals with fewer than two valid counterfactuals get NaN and are left out of the mean.
    ``normalized=True`` divides each distance by the original's token count (needs ``originals``), the
    paper's formula. Returns ``(mean, per_original)``; the mean is NaN only when no original has two
    valid counterfactuals (count them with ``(~np.isnan(per_original)).sum()``).

    >>> mean, per = diversity([["a b", "a c", "b c"], ["x", None]])
    >>> round(mean, 4), per.tolist()
    (1.3333, [1.3333333333333333, nan])
    """
    counterfactual_sets = _check_list(counterfactual_sets, "counterfactual_sets")
    for i, cfs in enumerate(counterfactual_sets):
        if isinstance(cfs, (str, bytes)) or not isinstance(cfs, Sequence):
            raise TypeError(f"counterfactual_sets[{i}]={short_repr(cfs)} ({type(cfs).__name__}): expected a list of "
                            "counterfactuals of one original")
    per = np.full(len(counterfactual_sets), np.nan)
    if normalized and originals is None:
        raise ValueError("normalized=True needs originals= (the diversity is divided by the original's token count)")
    if originals is not None:
        originals = _check_list(originals, "originals")
        check_same_length(counterfactual_sets, originals, "counterfactual_sets", "originals")
    for i, cfs in enumerate(counterfactual_sets):
        valid = [c for c in cfs if not _failed_any(c)]
        if len(valid) < 2:
            continue
        pairs = [(j, k) for j in range(len(valid)) for k in range(j + 1, len(valid))]
        dists = [token_distance(valid[j], valid[k]) for j, k in pairs]
        value = float(np.mean(dists))
        if normalized:
            orig = (originals[i],) if isinstance(originals[i], str) else originals[i]
            length = sum(len(_tokens(t)) for t in orig)
            value = value / length if length else float("nan")
        per[i] = value
    valid_rows = ~np.isnan(per)
    mean = float(per[valid_rows].mean()) if valid_rows.any() else float("nan")
    return mean, per


def method_distance_matrix(texts_by_method: Mapping[str, Sequence], normalized: bool = False) -> tuple[list[str], np.ndarray]:
    """Mean token distance between the texts of every two methods, row by row (the paper's Fig. 2).

    ``texts_by_method``: method name -> list of texts, all lists aligned (same originals, same order); include
    the originals as a "method" to see each method's distance to them. Rows where either text failed are
    skipped for that pair. ``normalized`` divides by the first method's token count per row.

    >>> names, m = method_distance_matrix({"original": ["a b c"], "x": ["a b d"], "y": ["a"]})
    >>> names, m.tolist()
    (['original', 'x', 'y'], [[0.0, 1.0, 2.0], [1.0, 0.0, 2.0], [2.0, 2.0, 0.0]])
    """
    if not isinstance(texts_by_method, Mapping) or len(texts_by_method) < 2:
        raise ValueError(f"texts_by_method={short_repr(texts_by_method)}: expected a dict of at least two method names -> lists of texts")
    names = list(texts_by_method)
    lists = [_check_list(texts_by_method[n], f"texts_by_method[{n!r}]") for n in names]
    for n, texts in zip(names[1:], lists[1:]):
        check_same_length(lists[0], texts, f"texts_by_method[{names[0]!r}]", f"texts_by_method[{n!r}]")
    k = len(names)
    matrix = np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            values = [token_distance(x, y, normalized=normalized) for x, y in zip(lists[a], lists[b])
                      if not is_failed(x) and not is_failed(y)]
            matrix[a, b] = matrix[b, a] = float(np.mean(values)) if values else float("nan")
    return names, matrix
