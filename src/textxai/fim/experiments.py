"""What difficulty is compared with (paper §4.3-§5.1): correlations, the shift under perturbation, the FIM test set.

>>> r = difficulty_correlation([0.1, 1.0, 10.0, 100.0], [4.0, 3.0, 2.0, 1.0])
>>> r["n"]
4
"""
from __future__ import annotations

import numpy as np

from textxai.fim.perturb import perturb_along_eigenvector
from textxai.fim.text import _label_ids, _prepare, difficulty


def difficulty_correlation(difficulty_values, other, log: bool = True) -> dict:
    """Correlation between difficulty and another per-example quantity (paper Fig. 3, 6, 7), via scipy.

    Pearson's r (on ``log lambda_max`` when ``log``, as in the paper's appendix) with its p-value, and
    Spearman's rho (rank-based, so ``log`` does not change it). Pairs where either value is not finite
    (e.g. ``min_flip_strength == inf``) or lambda_max <= 0 under ``log`` are left out; ``n`` counts the rest.

    >>> r = difficulty_correlation([0.1, 1.0, 10.0, 100.0], [4.0, 3.0, 2.0, 1.0])
    >>> round(r["pearson_r"], 6), round(r["spearman_rho"], 6), r["n"]
    (-1.0, -1.0, 4)
    """
    from scipy import stats

    a = np.asarray(difficulty_values, dtype=np.float64)
    b = np.asarray(other, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"other has shape {b.shape} but difficulty has shape {a.shape}: expected two equal 1-D arrays")
    keep = np.isfinite(a) & np.isfinite(b) & ((a > 0) if log else True)
    x = np.log(a[keep]) if log else a[keep]
    y = b[keep]
    out = {"n": int(keep.sum()), "pearson_r": float("nan"), "pearson_p": float("nan"),
           "spearman_rho": float("nan"), "spearman_p": float("nan")}
    if out["n"] >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        pr = stats.pearsonr(x, y)
        sr = stats.spearmanr(x, y)
        out.update(pearson_r=float(pr.statistic), pearson_p=float(pr.pvalue),
                   spearman_rho=float(sr.statistic), spearman_p=float(sr.pvalue))
    return out


def difficulty_shift(originals, perturbed, classifier, original_pairs=None, perturbed_pairs=None,
                     batch_size: int = 16, progress: bool = False) -> dict:
    """lambda_max(perturbed) - lambda_max(original) per pair (paper §4.4, Fig. 4 / 8).

    Returns ``shift`` ``[N]``, ``difficulty_original``, ``difficulty_perturbed`` and a summary: ``mean``,
    ``std``, ``median`` and ``fraction_increased`` (share of pairs whose difficulty went up).

    >>> difficulty_shift(["a fine film"], ["a dull film"], "textxai/demo-sentiment")["shift"].shape  # doctest: +SKIP
    (1,)
    """
    from textxai.validation import check_same_length, check_texts

    originals = check_texts(originals, "originals")
    perturbed = check_texts(perturbed, "perturbed")
    check_same_length(originals, perturbed, "originals", "perturbed")
    if (original_pairs is None) != (perturbed_pairs is None):
        missing = "original_pairs" if original_pairs is None else "perturbed_pairs"
        raise ValueError(f"{missing}=None: expected text pairs for both originals and perturbed, or for neither")
    if original_pairs is not None:
        check_same_length(originals, check_texts(original_pairs, "original_pairs"), "originals", "original_pairs")
        check_same_length(perturbed, check_texts(perturbed_pairs, "perturbed_pairs"), "perturbed", "perturbed_pairs")
    both_pairs = None if original_pairs is None else list(original_pairs) + list(perturbed_pairs)
    r = difficulty(originals + perturbed, classifier, both_pairs, batch_size=batch_size, progress=progress)
    n = len(originals)
    d0, d1 = r["difficulty"][:n], r["difficulty"][n:]
    shift = d1 - d0
    return {"shift": shift, "difficulty_original": d0, "difficulty_perturbed": d1,
            "mean": float(shift.mean()), "std": float(shift.std()), "median": float(np.median(shift)),
            "fraction_increased": float((shift > 0).mean())}


def perturbed_test_set(texts, classifier, labels=None, size: int = 10, strengths=(0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0),
                       difficulty_values=None, batch_size: int = 16) -> dict:
    """The paper's FIM test set (§5.1, Fig. 2): the ``size`` hardest and ``size`` easiest texts by lambda_max, each
    moved along its top eigenvector by every L2 ``strength``; accuracy of both sets at each strength.

    Accuracy is against ``labels`` (class indices) when given, else against the unperturbed prediction (the
    share of predictions that survive the push). ``difficulty_values``: lambda_max already computed (else
    :func:`difficulty` runs). Costs one forward and backward pass per chosen text plus one forward per strength.

    Returns ``{"strengths": [k], "reference": "labels" | "predictions", "hard": {"indices", "difficulty",
    "accuracy": [k], "kept": [k]}, "easy": {...}}`` (``kept``: the share of unchanged predictions; with labels,
    a push that flips a wrong prediction makes it right, so on a binary task ``accuracy`` of a set whose
    predictions all flip is 1 - its accuracy at 0; with fewer than ``2 * size`` texts the sets split them in half).

    >>> r = perturbed_test_set(["a wonderful film", "dull", "fine, I guess", "great"], "textxai/demo-sentiment", size=1)  # doctest: +SKIP
    >>> len(r["hard"]["accuracy"]) == len(r["strengths"])                                                               # doctest: +SKIP
    True
    """
    from textxai.validation import check_positive_int

    check_positive_int(size, "size")
    grid = np.atleast_1d(np.asarray(strengths, dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or (grid < 0).any():
        raise ValueError(f"strengths={strengths!r}: expected a non-empty list of finite numbers >= 0")
    texts, _, clf = _prepare(texts, classifier, None, batch_size)
    ref = None if labels is None else _label_ids(labels, clf, len(texts))
    if difficulty_values is None:
        d = difficulty(texts, clf, batch_size=batch_size)["difficulty"]
    else:
        d = np.asarray(difficulty_values, dtype=np.float64)
        if d.shape != (len(texts),):
            raise ValueError(f"difficulty_values has shape {d.shape}: expected one value per text ({len(texts)})")
    k = min(size, len(texts) // 2) or 1
    order = np.argsort(-d, kind="stable")
    out = {"strengths": grid.tolist(), "reference": "predictions" if ref is None else "labels"}
    for name, chosen in (("hard", order[:k]), ("easy", order[::-1][:k])):
        correct, kept = np.zeros((len(chosen), grid.size)), np.zeros((len(chosen), grid.size))
        for row, i in enumerate(chosen):
            probs = perturb_along_eigenvector(texts[i], clf, grid if grid[0] == 0 else np.r_[0.0, grid])
            pushed = probs[-grid.size:].argmax(1)
            kept[row] = pushed == int(probs[0].argmax())
            correct[row] = pushed == (int(probs[0].argmax()) if ref is None else int(ref[i]))
        out[name] = {"indices": [int(i) for i in chosen], "difficulty": [float(d[i]) for i in chosen],
                     "accuracy": correct.mean(0).tolist(), "kept": kept.mean(0).tolist()}
    return out

