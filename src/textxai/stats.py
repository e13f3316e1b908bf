"""Uncertainty on every number: bootstrap confidence intervals and paired comparisons for every method.

Every summary a module reports (flip rate, AOPC, inc@n, trustworthy rate, mean difficulty, ...) is an
estimate from a handful of examples. :func:`add_intervals` puts a bootstrap confidence interval on each of
them, :func:`compare` tells whether two results on the same examples really differ, and
:func:`sample_size_sweep` shows how the width of an interval shrinks with the number of examples.

**What is resampled** (the unit) and which per-unit values each summary is computed from are the method's
(its descriptor's ``unit`` and ``estimands``, :mod:`textxai.registry`): the examples for ``naopc`` and ``fim_difficulty``; the *chains* for
``inconsistency`` (a chain's steps are not independent, so whole chains are drawn, never single steps); the
*originals* for ``ceval`` (an original's counterfactuals stay together: its diversity, flip and distance
travel as one row); the *correct predictions* for ``toki_trust`` (the trustworthy rate is defined over
them). Units that do not take part in a number (a chain too short for step n, a failed generation for a
distance) are left out of that number's resampling, so its ``n`` is the count the module already reports.

**The statistic of the resample**: ratio statistics are recomputed on each resample as the module defines
them, e.g. pooled inc@n = (sum of inc over the resampled chains' steps) / (their number of steps), not the
mean of per-chain ratios; flip rate = flips / attempts of the resampled chains.

**Method**: :func:`scipy.stats.bootstrap`, BCa (bias-corrected and accelerated) where it is defined, else
the percentile interval (BCa is undefined when the jackknife or the bootstrap distribution is degenerate,
e.g. a statistic that barely moves); when every resample gives the same value the interval is that value
(``method="degenerate"``). Each interval says which method gave it. The resampling is seeded (same
``seed`` -> same interval) and does not depend on ``batch``.

**Result shape** (the same for every module): the module's own keys are left untouched (``result
["comprehensiveness"]`` stays a float) and one key is added, ``result["intervals"]``, mapping each
summary's key (nested summaries by dotted path, e.g. ``"summary.mean"`` of fim_difficulty) to
``{"score", "ci_low", "ci_high", "n", "unit", "method", "confidence_level"}``. ``score`` equals the
module's value.

>>> r = {"difficulty": [0.1, 0.4, 0.35, 0.8, 0.2, 0.5], "summary": {"mean": 2.35 / 6}}
>>> iv = add_intervals("fim_difficulty", r, confidence_level=0.9, n_resamples=999, seed=0)["intervals"]
>>> e = iv["summary.mean"]
>>> e["n"], e["unit"], e["method"], e["ci_low"] < e["score"] < e["ci_high"]
(6, 'example', 'BCa', True)
>>> round(e["ci_low"], 2), round(e["ci_high"], 2)
(0.26, 0.56)

**Defaults**: :class:`IntervalOptions` holds the one default of every surface (``compute(confidence_level=...)``,
``textxai run``, ``textxai compare``, the Spaces); the formatting and plots of intervals are in
:mod:`textxai.render`.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from textxai.validation import check_positive_int, short_repr

__all__ = [
    "resampling_unit",
    "require_values",
    "ratio_estimand",
    "values_estimand",
    "quantile_statistic",
    "std_statistic",
    "median_statistic",
    "mean_of_ratios",
    "IntervalOptions",
    "SWEEP_SIZES",
    "SWEEP_N_RESAMPLES",
    "Estimand",
    "bootstrap_interval",
    "estimands",
    "add_intervals",
    "compare",
    "paired_test",
    "sample_size_sweep",
    "compare_sample_size_sweep",
    "value_at",
]

SWEEP_SIZES = (10, 50, 100, 200)
#: resamples of each interval inside a sample-size sweep (repeats x sizes intervals: at most this many each)
SWEEP_N_RESAMPLES = 999


# ---------------------------------------------------------------------------------------------- checks


def _check_module(module_name) -> str:
    from textxai import registry

    if module_name not in registry.names():
        raise ValueError(f"module_name={short_repr(module_name)}: expected one of {sorted(registry.names())}")
    return module_name


def resampling_unit(module_name: str) -> str:
    """What the bootstrap of method ``module_name`` resamples (its descriptor's ``unit``).

    >>> resampling_unit("inconsistency"), resampling_unit("toki_trust")
    ('chain', 'correct prediction')
    """
    from textxai import registry

    return registry.get(_check_module(module_name)).unit


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

    @property
    def n(self) -> int:
        return int(np.asarray(self.data[0]).shape[-1])

    @property
    def counted(self) -> np.ndarray:
        """Boolean mask of the units that take part in this number."""
        return np.isfinite(self.values)

    def subset(self, index) -> "Estimand":
        return Estimand(tuple(np.asarray(d)[..., index] for d in self.data), self.statistic, self.values[index])


def ratio_estimand(num, den) -> Estimand:
    """sum(num) / sum(den); a unit with den = 0 does not take part."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return Estimand((num, den), _ratio, values)


def values_estimand(values, statistic=None) -> Estimand:
    """A plain mean (or another statistic) of per-unit values; NaN / None values are left out."""
    v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
    keep = np.isfinite(v)
    if statistic is None:
        return ratio_estimand(np.where(keep, v, 0.0), keep.astype(np.float64))
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


# ---------------------------------------------------------------------------------------------- per module


def require_values(result: Mapping, key: str, module_name: str, hint: str):
    """``result[key]``, the per-unit values a method's estimands read; a ``ValueError`` naming ``hint`` if absent."""
    if key not in result or result[key] is None:
        raise ValueError(f"result of {module_name} has no {key!r}: intervals need the per-example values ({hint})")
    return result[key]


def estimands(module_name: str, result: Mapping) -> dict[str, Estimand]:
    """Every summary of a module's ``result`` that gets an interval, as an :class:`Estimand` over its units.

    >>> sorted(estimands("toki_trust", {"trust_labels": [True, None, False], "trustworthy_rate": 0.5}))
    ['trustworthy_rate']
    """
    from textxai import registry

    _check_module(module_name)
    if not isinstance(result, Mapping):
        raise TypeError(f"result={short_repr(result)}: expected the dict a {module_name} computation returned")
    return registry.get(module_name).estimands(result)


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
    if est.statistic is not _ratio or len(est.data) != 2:
        return None
    num, den = (np.asarray(d, dtype=np.float64) for d in est.data)
    if not (np.all(den == 1) and np.all((num == 0) | (num == 1))) or num.size < 2:
        return None
    k, n = int(num.sum()), int(num.size)
    low, high = count_interval(k, n, confidence_level)
    return {"score": k / n, "ci_low": low, "ci_high": high, "n": n, "method": "Clopper-Pearson (exact)",
            "confidence_level": confidence_level}


def add_intervals(module_name: str, result: dict, confidence_level: float = IntervalOptions.confidence_level,
                  n_resamples: int = IntervalOptions.n_resamples, seed: int | None = IntervalOptions.seed,
                  batch: int | None = None) -> dict:
    """Add ``result["intervals"]``: a bootstrap interval per summary of a module's result (see the module doc).

    ``result`` must hold the per-example values (``per_example`` for naopc, inconsistency, ceval; the
    per-text lists of fim_difficulty and toki_trust). Returns ``result`` (changed in place).

    >>> r = {"trust_labels": [True, True, None, False, True, True, False, None], "trustworthy_rate": 4 / 6}
    >>> e = add_intervals("toki_trust", r, n_resamples=999)["intervals"]["trustworthy_rate"]
    >>> e["n"], e["unit"], round(e["score"], 3)
    (6, 'correct prediction', 0.667)
    """
    _check_module(module_name)
    _check_level(confidence_level)
    check_resamples(n_resamples)
    intervals = {}
    for key, est in estimands(module_name, result).items():
        est = est.subset(est.counted)
        entry = count_interval_entry(est, confidence_level) or bootstrap_interval(
            est.data, est.statistic, confidence_level, n_resamples, seed, batch)
        reported = value_at(result, key)
        if isinstance(reported, (int, float)) and math.isfinite(reported) and math.isfinite(entry["score"]) \
                and not math.isclose(entry["score"], reported, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"result[{key!r}]={reported!r} but its per-example values give {entry['score']!r}: "
                             f"expected the per-example values of the same result")
        entry["unit"] = resampling_unit(module_name)
        intervals[key] = {k: entry[k] for k in ("score", "ci_low", "ci_high", "n", "unit", "method", "confidence_level")}
    result["intervals"] = intervals
    return result


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


def compare(module_name: str, results_a: Mapping, results_b: Mapping,
            confidence_level: float = IntervalOptions.confidence_level, n_resamples: int = IntervalOptions.n_resamples,
            seed: int | None = IntervalOptions.seed, keys: Sequence[str] | None = None,
            batch: int | None = None) -> dict:
    """Paired comparison of two results of one module on the SAME examples (same order), per summary.

    Two attribution methods under naopc, two editors under inconsistency (chains from the same originals),
    two generators under ceval, two models under fim_difficulty or toki_trust. For each summary: the value of
    a and b and their difference a - b over the units both define (e.g. chains reaching step n on both sides,
    texts both models predict correctly), a paired bootstrap interval of the difference (units resampled
    jointly, the statistic of each side recomputed on the same resample) and the Wilcoxon signed-rank test of
    the per-unit differences (see :func:`paired_test`).

    >>> a = {"difficulty": [0.9, 0.8, 0.7, 0.95, 0.85, 0.75, 0.9, 0.8], "summary": {"mean": 0.83125}}
    >>> b = {"difficulty": [0.1, 0.2, 0.1, 0.15, 0.1, 0.2, 0.05, 0.1], "summary": {"mean": 0.125}}
    >>> c = compare("fim_difficulty", a, b, n_resamples=999, keys=["summary.mean"])["summary.mean"]
    >>> round(c["difference"], 3), c["ci_low"] > 0, c["p_value"] < 0.01, c["n"]
    (0.706, True, True, 8)
    """
    _check_module(module_name)
    ea_all, eb_all = estimands(module_name, results_a), estimands(module_name, results_b)
    wanted = [k for k in ea_all if k in eb_all] if keys is None else list(keys)
    out = {}
    for key in wanted:
        if key not in ea_all or key not in eb_all:
            raise ValueError(f"keys contains {key!r}, which is not a summary of both results; expected some of "
                             f"{sorted(set(ea_all) & set(eb_all))}")
        ea, eb = ea_all[key], eb_all[key]
        if ea.n != eb.n:
            raise ValueError(f"results_a has {ea.n} {resampling_unit(module_name)}s but results_b has {eb.n} for {key!r}: "
                             f"a paired comparison needs results on the same examples, in the same order")
        common = ea.counted & eb.counted
        ea, eb = ea.subset(common), eb.subset(common)
        k = len(ea.data)
        entry = bootstrap_interval(ea.data + eb.data, _difference(k, ea.statistic), confidence_level, n_resamples,
                                   seed, batch)
        with np.errstate(invalid="ignore", divide="ignore"):
            va, vb = float(ea.statistic(*ea.data, axis=-1)), float(eb.statistic(*eb.data, axis=-1))
        test = paired_test(ea.values, eb.values)
        out[key] = {"a": va, "b": vb, "difference": entry["score"], "ci_low": entry["ci_low"],
                    "ci_high": entry["ci_high"], "n": entry["n"], "unit": resampling_unit(module_name), "method": entry["method"],
                    "confidence_level": entry["confidence_level"], "test": test["test"], "statistic": test["statistic"],
                    "p_value": test["p_value"]}
    return out


# ---------------------------------------------------------------------------------------------- sample size


def sample_size_sweep(module_name: str, result: Mapping, keys: Sequence[str] | None = None,
                      sizes: Sequence[int] = SWEEP_SIZES, repeats: int = 10,
                      confidence_level: float = IntervalOptions.confidence_level,
                      n_resamples: int = SWEEP_N_RESAMPLES, seed: int | None = IntervalOptions.seed) -> dict:
    """Width of the confidence interval against the number of units (the inconsistency paper's App. sweep).

    For every size n: ``repeats`` draws of n units from the result's units -- without replacement when n is at
    most the number available, else with replacement (``"projected": True``: the observed units stand in for
    the population) -- and the interval of each draw. Returns ``{key: [{"n", "width", "width_low",
    "width_high", "projected"}]}``: the median width over the draws and its 10 % / 90 % quantiles.

    >>> r = {"difficulty": list(np.linspace(0, 1, 40)), "summary": {"mean": 0.5}}
    >>> rows = sample_size_sweep("fim_difficulty", r, keys=["summary.mean"], sizes=[10, 40, 160], repeats=3,
    ...                          n_resamples=199)["summary.mean"]
    >>> [row["n"] for row in rows], [row["projected"] for row in rows], rows[0]["width"] > rows[2]["width"]
    ([10, 40, 160], [False, False, True], True)
    """
    _check_module(module_name)
    check_positive_int(repeats, "repeats")
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes:
        raise ValueError(f"sizes={short_repr(sizes)}: expected a non-empty list of positive integers")
    sizes = [check_positive_int(s, f"sizes[{i}]") for i, s in enumerate(sizes)]
    rng = np.random.default_rng(_check_seed(seed))
    all_est = estimands(module_name, result)
    wanted = list(all_est) if keys is None else list(keys)
    out = {}
    for key in wanted:
        if key not in all_est:
            raise ValueError(f"keys contains {key!r}: expected some of {sorted(all_est)}")
        est = all_est[key].subset(all_est[key].counted)
        rows = []
        for n in sizes:
            projected = n > est.n
            widths = []
            for _ in range(repeats):
                if est.n == 0:
                    break
                index = rng.choice(est.n, size=n, replace=projected)
                entry = bootstrap_interval(est.subset(index).data, est.statistic, confidence_level, n_resamples,
                                           int(rng.integers(2**31)))
                widths.append(entry["ci_high"] - entry["ci_low"])
            w = np.asarray(widths, dtype=np.float64)
            w = w[np.isfinite(w)]
            q = np.quantile(w, [0.5, 0.1, 0.9]) if w.size else [float("nan")] * 3
            rows.append({"n": int(n), "width": float(q[0]), "width_low": float(q[1]), "width_high": float(q[2]),
                         "projected": bool(projected)})
        out[key] = rows
    return out


def compare_sample_size_sweep(module_name: str, results_a: Mapping, results_b: Mapping, key: str,
                              sizes: Sequence[int] = SWEEP_SIZES, repeats: int = 10,
                              confidence_level: float = IntervalOptions.confidence_level,
                              n_resamples: int = SWEEP_N_RESAMPLES,
                              seed: int | None = IntervalOptions.seed) -> list[dict]:
    """How many paired examples until a and b differ? (The inconsistency paper's Tables 4-5, paired.)

    For every size n: ``repeats`` draws of n common units (without replacement up to the number available, else
    with replacement, ``"projected"``), each compared as :func:`compare` does. Returns per n the median Wilcoxon
    p-value and the share of draws whose interval of a - b excludes 0: ``[{"n", "p_value", "share_significant",
    "projected"}]``.

    >>> a = {"difficulty": [0.5 + 0.1 * i for i in range(8)], "summary": {"mean": 0.85}}
    >>> b = {"difficulty": [0.45 + 0.1 * i for i in range(8)], "summary": {"mean": 0.8}}
    >>> rows = compare_sample_size_sweep("fim_difficulty", a, b, "summary.mean", sizes=[8], repeats=2, n_resamples=199)
    >>> rows[0]["n"], rows[0]["share_significant"], rows[0]["p_value"] < 0.01
    (8, 1.0, True)
    """
    check_positive_int(repeats, "repeats")
    ea, eb = estimands(module_name, results_a).get(key), estimands(module_name, results_b).get(key)
    if ea is None or eb is None:
        raise ValueError(f"key={key!r}: not a summary of both results")
    if ea.n != eb.n:
        raise ValueError(f"results_a has {ea.n} {resampling_unit(module_name)}s but results_b has {eb.n}: expected the same examples")
    common = ea.counted & eb.counted
    ea, eb = ea.subset(common), eb.subset(common)
    rng = np.random.default_rng(_check_seed(seed))
    rows = []
    for i, n in enumerate(sizes):
        n = check_positive_int(n, f"sizes[{i}]")
        projected = n > ea.n
        ps, hits = [], []
        for _ in range(repeats if ea.n else 0):
            index = rng.choice(ea.n, size=n, replace=projected)
            a, b = ea.subset(index), eb.subset(index)
            entry = bootstrap_interval(a.data + b.data, _difference(len(a.data), a.statistic), confidence_level,
                                       n_resamples, int(rng.integers(2**31)))
            ps.append(paired_test(a.values, b.values)["p_value"])
            hits.append(math.isfinite(entry["ci_low"]) and (entry["ci_low"] > 0 or entry["ci_high"] < 0))
        rows.append({"n": int(n), "p_value": float(np.nanmedian(ps)) if ps and not np.all(np.isnan(ps)) else float("nan"),
                     "share_significant": float(np.mean(hits)) if hits else float("nan"), "projected": bool(projected)})
    return rows
