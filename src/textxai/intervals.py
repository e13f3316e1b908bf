"""Interval maths, with no method in it: a number as an :class:`Estimand` over its units, its bootstrap interval
(:func:`bootstrap_interval`), the exact interval of a count (:func:`count_interval`), the paired test
(:func:`paired_test`), and :class:`IntervalOptions`, the one default of every surface.

The seam of :mod:`textxai.stats`: this half needs no method registry (the pure statistics below the model
adapters); :mod:`textxai.stats` reads each method's descriptor (its unit and estimands) to put these intervals on
a method's results, compare two results and sweep sample sizes. Every name here is importable from
:mod:`textxai.stats` too.

>>> r = bootstrap_interval([0.2, 0.5, 0.9, 0.4, 0.7, 0.6, 0.3], n_resamples=999, seed=1)
>>> r["method"], r["ci_low"] < r["score"] < r["ci_high"]
('BCa', True)
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from textxai.validation import check_positive_int, short_repr

#: The fewest bootstrap resamples an interval may rest on: fewer give bounds that are noise (``n_resamples=1``
#: gives a zero-width interval that reads as certainty).
MIN_RESAMPLES = 99


def check_resamples(n_resamples, name: str = "n_resamples") -> int:
    """``n_resamples`` when it is a whole number of at least :data:`MIN_RESAMPLES`, else a ``ValueError``.

    >>> check_resamples(1)
    Traceback (most recent call last):
    ...
    ValueError: n_resamples=1: expected at least 99 bootstrap resamples (fewer give noise for bounds; 1999 or more is usual)
    """
    value = check_positive_int(n_resamples, name)
    if value < MIN_RESAMPLES:
        raise ValueError(f"{name}={value}: expected at least {MIN_RESAMPLES} bootstrap resamples (fewer give noise for "
                         "bounds; 1999 or more is usual)")
    return value


def _check_level(confidence_level) -> float:
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float, np.floating)) \
            or not 0 < float(confidence_level) < 1:
        raise ValueError(f"confidence_level={short_repr(confidence_level)}: expected a number strictly between 0 and 1, "
                         f"e.g. 0.95")
    return float(confidence_level)


def _check_seed(seed) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={short_repr(seed)}: expected a non-negative integer or None")
    return int(seed)


# ---------------------------------------------------------------------------------------------- options


@dataclass(frozen=True)
class IntervalOptions:
    """How intervals are computed: the ONE default every surface reads (``compute(confidence_level=...)``,
    ``textxai run``, ``textxai compare``, the Spaces; the demo asks for ``n_resamples=2000`` explicitly).

    ``n_resamples`` 9,999 is :func:`scipy.stats.bootstrap`'s own default.

    >>> IntervalOptions()
    IntervalOptions(confidence_level=0.95, n_resamples=9999, seed=0)
    >>> IntervalOptions(confidence_level=95)
    Traceback (most recent call last):
    ...
    ValueError: confidence_level=95: expected a number strictly between 0 and 1, e.g. 0.95
    """

    confidence_level: float = 0.95
    n_resamples: int = 9999
    seed: int | None = 0

    def __post_init__(self):
        _check_level(self.confidence_level)
        check_resamples(self.n_resamples)
        _check_seed(self.seed)


# ---------------------------------------------------------------------------------------------- statistics


def _ratio(num, den, axis=-1):
    """sum(num) / sum(den) along ``axis``: a plain mean when den is all ones."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(num, axis=axis) / np.sum(den, axis=axis)


def mean_of_ratios(*arrays, axis=-1):
    """Mean over k ratio statistics given as num_1, den_1, num_2, den_2, ... (ceval's text_quality)."""
    parts = [_ratio(arrays[i], arrays[i + 1], axis=axis) for i in range(0, len(arrays), 2)]
    return np.mean(parts, axis=0)


def quantile_statistic(q: float):
    """The vectorised ``q``-quantile statistic (``statistic(x, axis=-1)``) of an :class:`Estimand`."""

    def statistic(x, axis=-1):
        return np.quantile(x, q, axis=axis)

    statistic.__name__ = f"quantile_{q}"
    return statistic


def std_statistic(x, axis=-1):
    """Standard deviation along ``axis`` (an :class:`Estimand` statistic)."""
    return np.std(x, axis=axis)


def median_statistic(x, axis=-1):
    """Median along ``axis`` (an :class:`Estimand` statistic)."""
    return np.median(x, axis=axis)


@dataclass
class Estimand:
    """One reported number as a statistic of per-unit data.

    ``data``: arrays whose last axis runs over ALL units, in the result's order (resampled together);
    ``statistic(*data, axis=-1)`` gives the number (vectorised); ``values``: one value per unit, NaN where the
    unit does not take part in this number (then it is left out of the resampling); used by the paired test,
    the sweep and the plots.
    """

    data: tuple
    statistic: Callable
    values: np.ndarray
    #: True: a share of units (each unit 0 or 1: a rate), whose interval is the exact count interval; False: a
    #: measurement, whatever its values (inc@n in words that are all 0 or 1 is no rate). Declared, never inferred.
    share: bool = False

    @property
    def n(self) -> int:
        return int(np.asarray(self.data[0]).shape[-1])

    @property
    def counted(self) -> np.ndarray:
        """Boolean mask of the units that take part in this number."""
        return np.isfinite(self.values)

    def subset(self, index) -> "Estimand":
        return Estimand(tuple(np.asarray(d)[..., index] for d in self.data), self.statistic, self.values[index],
                        self.share)


def ratio_estimand(num, den, *, share: bool) -> Estimand:
    """sum(num) / sum(den); a unit with den = 0 does not take part (``share``: see :class:`Estimand`)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return Estimand((num, den), _ratio, values, share)


def values_estimand(values, statistic=None, share: bool = False) -> Estimand:
    """A plain mean (or another statistic) of per-unit values; NaN / None values are left out. ``share=True``: the
    values are 0/1 outcomes (a rate: an exact count interval); else a mean of measurements, whatever its values
    (word distances that are all 1 are no rate)."""
    v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
    keep = np.isfinite(v)
    if statistic is None:
        return ratio_estimand(np.where(keep, v, 0.0), keep.astype(np.float64), share=share)
    return Estimand((v,), statistic, v)


# ---------------------------------------------------------------------------------------------- the interval


def bootstrap_interval(data, statistic: Callable | None = None, confidence_level: float = IntervalOptions.confidence_level,
                       n_resamples: int = IntervalOptions.n_resamples, seed: int | None = IntervalOptions.seed,
                       batch: int | None = None) -> dict:
    """Bootstrap confidence interval of ``statistic`` over the units of ``data`` (``scipy.stats.bootstrap``).

    ``data``: one array of per-unit values, or a tuple of arrays resampled together (last axis = units);
    ``statistic(*data, axis=-1)`` vectorised (default: the mean). BCa where defined, else percentile, else
    ``"degenerate"`` (every resample equal). Returns ``{"score", "ci_low", "ci_high", "n", "method",
    "confidence_level"}``; with fewer than 2 units the bounds are NaN (``method="n<2"``).

    >>> r = bootstrap_interval([0.2, 0.5, 0.9, 0.4, 0.7, 0.6, 0.3], n_resamples=999, seed=1)
    >>> r["n"], r["method"], round(r["score"], 3), r["ci_low"] < r["score"] < r["ci_high"]
    (7, 'BCa', 0.514, True)
    >>> bootstrap_interval([1.0, 1.0, 1.0], n_resamples=99)["method"]
    'degenerate'
    """
    from scipy import stats

    level = _check_level(confidence_level)
    check_resamples(n_resamples)
    seed = _check_seed(seed)
    if batch is not None:
        check_positive_int(batch, "batch")
    arrays = tuple(np.asarray(d, dtype=np.float64) for d in (data if isinstance(data, tuple) else (data,)))
    if statistic is None:
        if len(arrays) != 1:
            raise ValueError(f"data has {len(arrays)} arrays and statistic=None: expected one array for the default mean")
        statistic = lambda x, axis=-1: np.mean(x, axis=axis)  # noqa: E731
    n = arrays[0].shape[-1]
    for i, a in enumerate(arrays):
        if a.shape[-1] != n:
            raise ValueError(f"data[{i}] has {a.shape[-1]} units but data[0] has {n}: expected the same number")
    with np.errstate(invalid="ignore", divide="ignore"):
        score = float(statistic(*arrays, axis=-1))
    out = {"score": score, "ci_low": float("nan"), "ci_high": float("nan"), "n": int(n), "method": "n<2",
           "confidence_level": level}
    if n < 2 or not math.isfinite(score):
        if n >= 2:
            out["method"] = "undefined"
        return out
    kwargs = dict(statistic=statistic, n_resamples=n_resamples, batch=batch, vectorized=True, paired=True, axis=-1,
                  confidence_level=level, rng=np.random.default_rng(seed))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")  # degenerate / NaN cases are handled below and reported in "method"
        res = stats.bootstrap(arrays, method="BCa", **kwargs)
        dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
        finite = dist[np.isfinite(dist)]
        if finite.size and np.ptp(finite) <= 1e-12 * max(1.0, abs(score)):
            out.update(ci_low=score, ci_high=score, method="degenerate")
            return out
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        method = "BCa"
        if not (math.isfinite(low) and math.isfinite(high)):
            method = "percentile"
            if finite.size == dist.size:
                res = stats.bootstrap(arrays, method="percentile", bootstrap_result=res, **{**kwargs, "n_resamples": 0})
                low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
            else:  # some resamples leave the statistic undefined: percentile over the defined ones
                alpha = (1 - level) / 2
                low, high = (float(v) for v in np.quantile(finite, [alpha, 1 - alpha])) if finite.size else (np.nan,) * 2
                method = f"percentile ({dist.size - finite.size} of {dist.size} resamples undefined)"
    out.update(ci_low=low, ci_high=high, method=method)
    return out


def value_at(result: Mapping, key: str):
    """``result[key]``, a dotted ``key`` reaching into nested summaries (``"summary.mean"``); None when absent.

    >>> value_at({"summary": {"mean": 0.5}}, "summary.mean"), value_at({}, "flip_rate")
    (0.5, None)
    """
    value = result
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def count_interval(k: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a proportion ``k / n`` as shares in [0, 1]; (nan, nan) for n = 0.

    >>> [tuple(round(x * n, 1) for x in count_interval(k, n)) for k, n in ((0, 4), (10, 10))]
    [(0.0, 2.4), (6.9, 10.0)]
    """
    from scipy.stats import beta

    k, n = int(k), int(n)
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= k <= n:
        raise ValueError(f"k={k}: expected a count between 0 and n={n}")
    alpha = 1 - confidence_level
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def count_interval_entry(est: Estimand, confidence_level: float) -> dict | None:
    """The exact (Clopper–Pearson) interval of an estimand that is a share of units (a mean of 0/1 values: trust
    rates, flip rates, accuracy), else None (the bootstrap's). A count never gets a bootstrap interval: with every
    value alike the bootstrap's is zero-width ("3 of 3 [3, 3]"), read as certainty (docs/readings.md, rule 1)."""
    if est.share is not True or est.statistic is not _ratio or len(est.data) != 2:
        return None
    num, den = (np.asarray(d, dtype=np.float64) for d in est.data)
    if not (np.all(den == 1) and np.all((num == 0) | (num == 1))) or num.size < 2:
        return None
    k, n = int(num.sum()), int(num.size)
    low, high = count_interval(k, n, confidence_level)
    return {"score": k / n, "ci_low": low, "ci_high": high, "n": n, "method": "Clopper-Pearson (exact)",
            "confidence_level": confidence_level}



# ---------------------------------------------------------------------------------------------- paired comparison


def paired_test(values_a, values_b) -> dict:
    """Wilcoxon signed-rank test of paired per-unit values (units where either is NaN are left out).

    Why Wilcoxon and not a paired t-test: per-example scores here are bounded, skewed and often discrete with
    many ties (inc in whole words, flips and trust labels 0/1, AOPC drops piling up near 0) and n is often
    5-50, so the t-test's normality is not credible; the signed-rank test needs only that, with no real
    difference, a- and b-values of a unit are exchangeable (symmetric differences). Zero differences are
    dropped (``zero_method="wilcox"``); all differences zero gives p = 1.

    >>> paired_test([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])["p_value"]
    1.0
    >>> round(paired_test([1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 0, 0, 0, 0, 0, 0])["p_value"], 4)
    0.0078
    """
    from scipy import stats

    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"values_a has {a.shape} values but values_b has {b.shape}: expected one value per unit on both sides")
    d = (a - b)[np.isfinite(a) & np.isfinite(b)]
    out = {"test": "wilcoxon signed-rank", "n": int(d.size), "statistic": float("nan"), "p_value": float("nan")}
    if d.size == 0:
        return out
    if np.all(d == 0):
        out.update(statistic=0.0, p_value=1.0)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.wilcoxon(d, zero_method="wilcox")
    out.update(statistic=float(res.statistic), p_value=float(res.pvalue))
    return out


def _difference(k: int, statistic: Callable):
    def diff(*arrays, axis=-1):
        return statistic(*arrays[:k], axis=axis) - statistic(*arrays[k:], axis=axis)

    return diff
