"""The audit's numbers: every estimate with a bootstrap interval (:func:`textxai.stats.bootstrap_interval`) and a
one-line reading that says when the interval is too wide to conclude.

An *estimate* is a plain dict ``{"score", "ci_low", "ci_high", "n", "method", "confidence_level", "reading"}``;
a *difference* adds ``a``, ``b`` and the Wilcoxon ``p_value`` of the paired per-unit values.

>>> e = mean_estimate([1, 0, 1, 1, 0, 1, 1, 1], Intervals(n_resamples=999), "accuracy")
>>> e["n"], round(e["score"], 3), e["ci_low"] < e["score"] < e["ci_high"]
(8, 0.75, True)
>>> e["reading"].startswith("accuracy 0.750 [")
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from textxai import readings, render, stats

#: An interval wider than this (on a [0, 1] scale) is "too wide to conclude": the reading says so
#: (:data:`textxai.readings.WIDE`, the one rule of every surface).
WIDE = readings.WIDE


@dataclass(frozen=True)
class Intervals(stats.IntervalOptions):
    """How every interval of the audit is made: the library's :class:`textxai.stats.IntervalOptions` (its checks,
    its confidence level and seed) with the audit's own explicit 1,999 resamples (it bootstraps dozens of numbers;
    its README timings were measured so), as the demo asks for 2,000."""

    n_resamples: int = 1999


def finite(values) -> np.ndarray:
    a = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
    return a[np.isfinite(a)]


def interval(data, statistic, iv: Intervals) -> dict:
    """:func:`textxai.stats.bootstrap_interval` with the audit's settings."""
    return stats.bootstrap_interval(data, statistic, iv.confidence_level, iv.n_resamples, iv.seed)


def too_wide(entry: dict, scale: float = 1.0) -> bool:
    """No verdict can rest on it (:func:`textxai.readings.conclusive`): fewer than ``readings.MIN_N`` units, no
    interval, a zero-width one (every resample alike: no certainty), or one wider than :data:`WIDE` times ``scale``."""
    return not readings.conclusive(entry, scale)


def shown(entry: dict) -> str:
    """``0.750 [0.38, 1.00]`` (``textxai.render.format_interval``)."""
    return render.format_interval(entry)


def mean_estimate(values, iv: Intervals, what: str, scale: float = 1.0, meaning: str = "") -> dict:
    """Mean of the finite ``values`` with its interval and a reading: ``what`` = the name in the sentence."""
    a = finite(values)
    entry = interval(a, None, iv) if a.size else {"score": float("nan"), "ci_low": float("nan"),
                                                    "ci_high": float("nan"), "n": 0, "method": "n<2"}
    entry["reading"] = reading(entry, what, scale, meaning)
    return entry


def rate_estimate(flags, iv: Intervals, what: str, of: str) -> dict:
    """Share of True among ``flags`` (None left out) with its exact (Clopper–Pearson) interval and a reading in
    counts: ``"4 of 10 correct predictions rest on ... [1.2, 7.4] (exact 95 %)"`` (:func:`textxai.readings.count_estimate`;
    a count never gets a bootstrap interval: 3 of 3 is [0.9, 3], not [3, 3])."""
    a = finite([None if f is None else float(bool(f)) for f in flags])
    return readings.count_estimate([bool(x) for x in a], what, of, iv.confidence_level)


def reading(entry: dict, what: str, scale: float = 1.0, meaning: str = "") -> str:
    """``"<what> 0.750 [0.38, 1.00]: <meaning>."`` or, when the interval is too wide, says so instead
    (:func:`textxai.readings.estimate_reading`, the one rule of every surface)."""
    return readings.estimate_reading(entry, what, scale, meaning)


def difference(values_a, values_b, iv: Intervals, what: str, names=("A", "B"), higher_is_better: bool = True,
               comparable: bool = True) -> dict:
    """Paired difference of means a - b over units where both are finite: interval, Wilcoxon p and a reading
    that ranks the two only when the interval excludes 0."""
    a = np.asarray([np.nan if v is None else v for v in values_a], dtype=np.float64)
    b = np.asarray([np.nan if v is None else v for v in values_b], dtype=np.float64)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    entry = interval((a, b), lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis), iv) if a.size else \
        {"score": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0, "method": "n<2"}
    test = stats.paired_test(a, b)
    entry.update(a=float(a.mean()) if a.size else float("nan"), b=float(b.mean()) if b.size else float("nan"),
                 p_value=test["p_value"], test=test["test"])
    entry["comparable"] = bool(comparable)
    entry["reading"] = difference_reading(entry, what, names, higher_is_better, comparable)
    return entry


def significant(entry: dict) -> bool:
    """Whether a difference ranks its two sides: its interval excludes 0 and, when it has a paired test, the test
    agrees at the interval's level (p < 1 - confidence level). On a handful of texts the bootstrap's interval can
    exclude 0 where no test could (n = 2: 3 distinct resampled means, Wilcoxon p >= 0.5): the test keeps such a
    difference from being called significant.

    >>> significant({"n": 2, "ci_low": 0.1, "ci_high": 0.4, "p_value": 0.5, "confidence_level": 0.95})
    False
    >>> significant({"n": 20, "ci_low": 0.1, "ci_high": 0.4, "p_value": 0.01, "confidence_level": 0.95})
    True
    """
    return readings.significant(entry)


def difference_reading(entry: dict, what: str, names, higher_is_better: bool = True, comparable: bool = True) -> str:
    """The reading of a paired difference: a side is "better" only when the difference is :func:`significant`, on
    at least ``readings.MIN_N`` units, and the quantity is ``comparable`` across the two (a quantity its method
    declares not comparable across models is shown without a verdict)."""
    a, b = names
    if not entry.get("n"):
        return f"{what}: no unit where both {a} and {b} have a value."
    low, high = entry["ci_low"], entry["ci_high"]
    head = f"{what}: {a} {entry['a']:.3f} vs {b} {entry['b']:.3f}, difference {shown(entry)}"
    p = entry.get("p_value")
    ptext = "" if p is None or p != p else f", Wilcoxon p = {p:.2g}"
    if not comparable:
        return head + ptext + (f" (n={entry['n']}): shown without a verdict: this quantity is not comparable across "
                               "models (its method says so; docs/readings.md).")
    if readings.too_few(entry["n"]):
        return head + ptext + f": {readings.too_few_note(entry['n'])}."
    if readings.zero_width(entry) and low == 0:
        return head + ptext + f" (n={entry['n']}): every text gives both the same value: no difference seen, no interval."
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 <= high:
        return head + ptext + f" (n={entry['n']}): the interval includes 0, so these texts cannot tell them apart."
    if not significant(entry):
        return head + ptext + (f" (n={entry['n']}): the interval excludes 0 but the paired test does not agree, so "
                               "these texts cannot tell them apart; audit more texts.")
    better = a if (entry["score"] > 0) == higher_is_better else b
    return head + ptext + f" (n={entry['n']}): {better} is better, and the difference is significant."


# ------------------------------------------------------------------ statistics the bootstrap recomputes (vectorised)
def ece_statistic(n_bins: int = 10):
    """Expected calibration error of (confidence, correct) along the last axis, equal-width bins on [0, 1]."""
    def ece(conf, correct, axis=-1):
        bins = np.clip((conf * n_bins).astype(int), 0, n_bins - 1)
        total = np.zeros(conf.shape[:-1])
        for k in range(n_bins):
            inside = bins == k
            total = total + np.abs((correct * inside).sum(-1) - (conf * inside).sum(-1))
        return total / conf.shape[-1]
    return ece


def spearman_statistic(x, y, axis=-1):
    """Spearman's rho along the last axis (average ranks), NaN where either side is constant."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=-1), rankdata(y, axis=-1)
    rx = rx - rx.mean(-1, keepdims=True)
    ry = ry - ry.mean(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(-1) / np.sqrt((rx ** 2).sum(-1) * (ry ** 2).sum(-1))


def partial_statistic(x, y, z, axis=-1):
    """Partial (Pearson) correlation of x and y given z along the last axis."""
    def r(a, b):
        a = a - a.mean(-1, keepdims=True)
        b = b - b.mean(-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (a * b).sum(-1) / np.sqrt((a ** 2).sum(-1) * (b ** 2).sum(-1))
    rxy, rxz, ryz = r(x, y), r(x, z), r(y, z)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rxy - rxz * ryz) / np.sqrt((1 - rxz ** 2) * (1 - ryz ** 2))


def correlation(x, y, iv: Intervals, what: str, statistic=spearman_statistic, z=None, built_in: str | None = None) -> dict:
    """A rank (or partial) correlation over the units where every array is finite, with interval and reading."""
    arrays = [np.asarray(v, dtype=np.float64) for v in ((x, y) if z is None else (x, y, z))]
    keep = np.all([np.isfinite(a) for a in arrays], axis=0)
    arrays = tuple(a[keep] for a in arrays)
    entry = interval(arrays, statistic, iv) if keep.sum() >= 3 else \
        {"score": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": int(keep.sum()), "method": "n<3"}
    entry["reading"] = correlation_reading(entry, what, built_in)
    return entry


def correlation_reading(entry: dict, what: str, built_in: str | None = None) -> str:
    """:func:`textxai.readings.relation_reading`: "no relation" only from the equivalence test at the stated margin."""
    return readings.relation_reading(entry, what, built_in)
