"""Uncertainty on every number: bootstrap confidence intervals and paired comparisons for the five modules.

Every summary a module reports (flip rate, AOPC, inc@n, trustworthy rate, mean difficulty, ...) is an
estimate from a handful of examples. :func:`add_intervals` puts a bootstrap confidence interval on each of
them, :func:`compare` tells whether two results on the same examples really differ, and
:func:`sample_size_sweep` shows how the width of an interval shrinks with the number of examples.

**What is resampled** (the unit): the examples for ``naopc`` and ``fim_difficulty``; the *chains* for
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
>>> format_interval(e)
'0.392 [0.26, 0.56]'
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
    "DEFAULT_N_RESAMPLES",
    "SWEEP_SIZES",
    "Estimand",
    "bootstrap_interval",
    "estimands",
    "add_intervals",
    "compare",
    "paired_test",
    "sample_size_sweep",
    "compare_sample_size_sweep",
    "format_interval",
    "format_value",
    "intervals_table",
    "compare_table",
    "plot_intervals",
    "plot_sample_size_sweep",
    "DEMO_OPTIONS",
    "add_cli_arguments",
    "cli_options",
    "runner_intervals",
    "fmt",
    "interval_note",
]

DEFAULT_N_RESAMPLES = 9999
SWEEP_SIZES = (10, 50, 100, 200)


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


def bootstrap_interval(data, statistic: Callable | None = None, confidence_level: float = 0.95,
                       n_resamples: int = DEFAULT_N_RESAMPLES, seed: int | None = 0, batch: int | None = None) -> dict:
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
    check_positive_int(n_resamples, "n_resamples")
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


def _get(result: Mapping, key: str):
    value = result
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def add_intervals(module_name: str, result: dict, confidence_level: float = 0.95,
                  n_resamples: int = DEFAULT_N_RESAMPLES, seed: int | None = 0, batch: int | None = None) -> dict:
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
    check_positive_int(n_resamples, "n_resamples")
    intervals = {}
    for key, est in estimands(module_name, result).items():
        est = est.subset(est.counted)
        entry = bootstrap_interval(est.data, est.statistic, confidence_level, n_resamples, seed, batch)
        reported = _get(result, key)
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


def compare(module_name: str, results_a: Mapping, results_b: Mapping, confidence_level: float = 0.95,
            n_resamples: int = DEFAULT_N_RESAMPLES, seed: int | None = 0, keys: Sequence[str] | None = None,
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
                      sizes: Sequence[int] = SWEEP_SIZES, repeats: int = 10, confidence_level: float = 0.95,
                      n_resamples: int = 999, seed: int | None = 0) -> dict:
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
                              sizes: Sequence[int] = SWEEP_SIZES, repeats: int = 10, confidence_level: float = 0.95,
                              n_resamples: int = 999, seed: int | None = 0) -> list[dict]:
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


# ---------------------------------------------------------------------------------------------- showing them


def _fmt(x: float, decimals: int) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{decimals}f}"


def format_interval(entry: Mapping, digits: int = 3) -> str:
    """``"0.880 [0.71, 0.97]"``: the score with ``digits`` decimals, the bounds with one fewer (more when
    that would hide the width); ``digits + 1`` significant digits for scores outside [0.01, 100).

    >>> format_interval({"score": 0.88, "ci_low": 0.712, "ci_high": 0.968, "n": 6})
    '0.880 [0.71, 0.97]'
    >>> format_interval({"score": 0.5, "ci_low": float("nan"), "ci_high": float("nan"), "n": 1})
    '0.500 [no interval: n=1]'
    >>> format_interval({"score": 144.09, "ci_low": 78.7, "ci_high": 258.48, "n": 90})
    '144.1 [78.7, 258.5]'
    """
    score, low, high = entry.get("score"), entry.get("ci_low"), entry.get("ci_high")
    text = _fmt(score, digits)
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"{text} [no interval: n={entry.get('n', 0)}]"
    if score is not None and math.isfinite(score) and score != 0 and not 0.01 <= abs(score) < 100:
        g = lambda x: f"{x:.{digits + 1}g}"  # noqa: E731 - very large / small values: significant digits
        return f"{g(score)} [{g(low)}, {g(high)}]"
    decimals = max(digits - 1, 0)
    while decimals < digits + 3 and high > low and _fmt(low, decimals) == _fmt(high, decimals):
        decimals += 1
    return f"{text} [{_fmt(low, decimals)}, {_fmt(high, decimals)}]"


def format_value(value, interval: Mapping | None = None, digits: int = 3) -> str:
    """``value`` with its interval when there is one (``format_interval``), else the plain number.

    >>> format_value(0.25), format_value(None)
    ('0.250', '-')
    """
    if interval is not None:
        return format_interval(interval, digits)
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (int, np.integer)):
        return str(value)
    return _fmt(float(value), digits)


def intervals_table(intervals: Mapping, title: str | None = None) -> str:
    """A text table of ``result["intervals"]``: key, score [low, high], n units, method.

    >>> print(intervals_table({"flip_rate": {"score": 0.75, "ci_low": 0.5, "ci_high": 1.0, "n": 8,
    ...     "unit": "original", "method": "BCa", "confidence_level": 0.95}}))
    flip_rate     0.750 [0.50, 1.00]   n=8 originals  95% BCa
    """
    if not intervals:
        return ""
    width = max(len(k) for k in intervals) + 4
    lines = [title] if title else []
    for key, e in intervals.items():
        unit = e.get("unit", "unit")
        plural = unit if e.get("n") == 1 else unit + "s"
        lines.append(f"{key:<{width}} {format_interval(e):<20} n={e.get('n')} {plural}  "
                     f"{e.get('confidence_level', 0.95) * 100:.0f}% {e.get('method', '')}".rstrip())
    return "\n".join(lines)


def compare_table(comparison: Mapping, name_a: str = "A", name_b: str = "B") -> str:
    """A text table of :func:`compare`: a, b, a - b [CI], n, Wilcoxon p.

    >>> print(compare_table({"inc@1": {"a": 1.2, "b": 0.4, "difference": 0.8, "ci_low": 0.3, "ci_high": 1.3,
    ...     "n": 20, "unit": "chain", "p_value": 0.004, "method": "BCa", "confidence_level": 0.95}}, "mice", "poly"))
    summary   mice     poly     mice - poly [95% CI]  n   Wilcoxon p
    inc@1     1.200    0.400    0.800 [0.30, 1.30]    20  0.004
    """
    if not comparison:
        return ""
    kw = max(len("summary"), *(len(k) for k in comparison)) + 2
    aw, bw = max(8, len(name_a) + 1), max(8, len(name_b) + 1)
    level = next(iter(comparison.values())).get("confidence_level", 0.95)
    head = f"{name_a} - {name_b} [{level * 100:.0f}% CI]"
    dw = max(21, len(head) + 1)
    lines = [f"{'summary':<{kw}} {name_a:<{aw}} {name_b:<{bw}} {head:<{dw}} {'n':<3} Wilcoxon p"]
    for key, c in comparison.items():
        diff = format_interval({"score": c["difference"], "ci_low": c["ci_low"], "ci_high": c["ci_high"], "n": c["n"]})
        p = c.get("p_value")
        lines.append(f"{key:<{kw}} {_fmt(c['a'], 3):<{aw}} {_fmt(c['b'], 3):<{bw}} {diff:<{dw}} {c['n']:<3} "
                     f"{'nan' if p is None or not math.isfinite(p) else f'{p:.3g}'}")
    return "\n".join(lines)


def plot_intervals(intervals: Mapping, keys: Sequence[str] | None = None, title: str | None = None, cols: int = 4):
    """Error bars of intervals: ``result["intervals"]``, or ``{group name: intervals}`` to set groups (methods,
    editors, models) side by side. One panel per summary (their scales differ). A matplotlib Figure.

    >>> iv = {"flip_rate": {"score": 0.7, "ci_low": 0.5, "ci_high": 0.9, "n": 9}}
    >>> fig = plot_intervals({"mice": iv, "polyjuice": iv})
    >>> [ax.get_title() for ax in fig.axes]
    ['flip_rate']
    """
    from matplotlib.figure import Figure

    groups = intervals if intervals and all(isinstance(v, Mapping) and "score" not in v and
                                            all(isinstance(x, Mapping) for x in v.values())
                                            for v in intervals.values()) else {"": intervals}
    names = list(groups)
    all_keys = list(dict.fromkeys(k for g in groups.values() for k in g))
    keys = all_keys if keys is None else [k for k in keys if k in all_keys]
    if not keys:
        raise ValueError(f"intervals={short_repr(intervals)}: expected at least one interval to draw")
    if all(_at_n(k) for k in keys) and len(keys) > 1:
        return _plot_at_n(groups, keys, title)
    cols = min(cols, len(keys))
    rows = math.ceil(len(keys) / cols)
    fig = Figure(figsize=(3.2 * cols, 0.5 + (0.35 * len(names) + 1.1) * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, key in zip(axes, keys):
        for i, name in enumerate(names):
            e = groups[name].get(key)
            if e is None:
                continue
            y = len(names) - 1 - i
            low, high = e.get("ci_low"), e.get("ci_high")
            has = low is not None and high is not None and math.isfinite(low) and math.isfinite(high)
            err = [[e["score"] - low], [high - e["score"]]] if has else None
            ax.errorbar([e["score"]], [y], xerr=err, fmt="o", color=f"C{i}", capsize=4,
                        label=f"{name} (n={e.get('n')})" if name else f"n={e.get('n')}")
        ax.set_yticks(range(len(names)), [n or "" for n in reversed(names)])
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.set_title(key)
        ax.grid(axis="x", alpha=0.3)
        if not any(names):
            ax.set_yticks([])
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    level = next((e.get("confidence_level") for g in groups.values() for e in g.values()), 0.95) or 0.95
    fig.suptitle(title or f"{level * 100:.0f}% bootstrap confidence intervals")
    return fig


def _at_n(key: str):
    """("inc", 3) for "inc@3", else None."""
    name, _, k = key.rpartition("@")
    return (name, int(k)) if name and k.isdigit() else None


def _plot_at_n(groups: Mapping, keys: Sequence[str], title: str | None):
    """Summaries reported at several n (inconsistency's inc@n, ...): one panel per summary, error bars against n."""
    from matplotlib.figure import Figure

    metrics = list(dict.fromkeys(_at_n(k)[0] for k in keys))
    fig = Figure(figsize=(3.6 * len(metrics), 3.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(metrics), squeeze=False)).ravel()
    width = 0.25 / max(len(groups), 1)
    for ax, metric in zip(axes, metrics):
        for i, (name, ivs) in enumerate(groups.items()):
            pts = sorted((_at_n(k)[1], e) for k, e in ivs.items() if k in keys and _at_n(k)[0] == metric)
            if not pts:
                continue
            x = np.array([p[0] for p in pts], dtype=float) + (i - (len(groups) - 1) / 2) * width
            y = np.array([p[1]["score"] for p in pts], dtype=float)
            low = np.array([p[1]["ci_low"] for p in pts], dtype=float)
            high = np.array([p[1]["ci_high"] for p in pts], dtype=float)
            err = np.nan_to_num(np.vstack([y - low, high - y]), nan=0.0)
            ax.errorbar(x, y, yerr=np.maximum(err, 0), fmt="o-", color=f"C{i}", capsize=4, label=name or None)
        ax.set_xlabel("n (feedback step)")
        ax.set_title(f"{metric}@n")
        ax.grid(alpha=0.3)
        if any(groups):
            ax.legend(fontsize=8)
    level = next((e.get("confidence_level") for g in groups.values() for e in g.values()), 0.95) or 0.95
    fig.suptitle(title or f"{level * 100:.0f}% bootstrap confidence intervals")
    return fig


def plot_sample_size_sweep(sweep: Mapping, title: str | None = None):
    """Interval width against n (log-log) for each summary of :func:`sample_size_sweep`, with the 1/sqrt(n)
    line through the first point; hollow markers are projected sizes (more units than the result has).

    >>> fig = plot_sample_size_sweep({"inc@1": [{"n": 10, "width": 1.0, "width_low": 0.8, "width_high": 1.2,
    ...     "projected": False}, {"n": 40, "width": 0.5, "width_low": 0.45, "width_high": 0.55, "projected": True}]})
    >>> fig.axes[0].get_xlabel()
    'number of units (n)'
    """
    from matplotlib.figure import Figure

    if not sweep:
        raise ValueError("sweep={}: expected the output of sample_size_sweep")
    fig = Figure(figsize=(6.5, 4.2), layout="constrained")
    ax = fig.subplots()
    for i, (key, rows) in enumerate(sweep.items()):
        rows = [r for r in rows if math.isfinite(r["width"]) and r["width"] > 0]
        if not rows:
            continue
        n = np.array([r["n"] for r in rows], dtype=float)
        w = np.array([r["width"] for r in rows])
        err = [w - np.array([r["width_low"] for r in rows]), np.array([r["width_high"] for r in rows]) - w]
        ax.errorbar(n, w, yerr=np.maximum(err, 0), color=f"C{i}", capsize=3, lw=1, label=key)
        for r in rows:
            ax.plot(r["n"], r["width"], "o", color=f"C{i}", markerfacecolor="white" if r["projected"] else f"C{i}")
        ax.plot(n, w[0] * np.sqrt(n[0] / n), ":", color=f"C{i}", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of units (n)")
    ax.set_ylabel("width of the confidence interval")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, title="dotted: 1/sqrt(n); hollow: projected", title_fontsize=7)
    ax.set_title(title or "How many examples? Interval width against sample size")
    return fig


# ---------------------------------------------------------------------------------------------- runners (CLI, demo)

#: intervals in ``textxai demo`` (on by default there and in ``textxai run``; off by default in ``compute``)
DEMO_OPTIONS = {"confidence_level": 0.95, "n_resamples": 2000, "seed": 0, "sample_size_sweep": False,
                "sweep_sizes": SWEEP_SIZES}


def add_cli_arguments(parser) -> None:
    """``--confidence-level``, ``--n-resamples``, ``--sample-size-sweep``, ``--sweep-sizes`` of ``textxai run``."""
    group = parser.add_argument_group("confidence intervals (textxai.stats)")
    group.add_argument("--confidence-level", type=float, default=0.95,
                       help="level of the bootstrap intervals printed with every number (default 0.95; 0 = none)")
    group.add_argument("--n-resamples", type=int, default=DEFAULT_N_RESAMPLES,
                       help=f"bootstrap resamples (default {DEFAULT_N_RESAMPLES})")
    group.add_argument("--sample-size-sweep", action="store_true",
                       help="also plot the interval width against the number of examples (--sweep-sizes)")
    group.add_argument("--sweep-sizes", type=int, nargs="+", default=list(SWEEP_SIZES),
                       help="sample sizes of the sweep (default 10 50 100 200, as the inconsistency paper)")


def cli_options(args) -> dict:
    """The interval options of parsed ``textxai run`` arguments (defaults when the CLI did not add them)."""
    level = getattr(args, "confidence_level", DEMO_OPTIONS["confidence_level"])
    seed = getattr(args, "seed", 0)
    return {"confidence_level": None if level in (None, 0) else _check_level(level),
            "n_resamples": check_positive_int(getattr(args, "n_resamples", DEFAULT_N_RESAMPLES), "--n-resamples"),
            "seed": seed if isinstance(seed, int) and seed >= 0 else 0,
            "sample_size_sweep": bool(getattr(args, "sample_size_sweep", False)),
            "sweep_sizes": list(getattr(args, "sweep_sizes", SWEEP_SIZES))}


def runner_intervals(module_name: str, result: dict, options: Mapping | None, figures: dict | None = None,
                     keys: Sequence[str] | None = None, title: str | None = None) -> dict:
    """What a runner does with intervals, in one call: ``result["intervals"]`` (``options["confidence_level"]``
    None = nothing), their error bars as ``figures["intervals"]`` (the summaries ``keys``, default all), and with
    ``options["sample_size_sweep"]`` the sweep as ``result["sample_size_sweep"]`` / ``figures["sample_size_sweep"]``.
    Returns ``result["intervals"]`` (``{}`` when off).

    >>> r = {"trust_labels": [True, False, True, True, None, True], "trustworthy_rate": 0.8}
    >>> runner_intervals("toki_trust", r, DEMO_OPTIONS)["trustworthy_rate"]["n"]
    5
    """
    options = {**DEMO_OPTIONS, **(options or {})}
    if options.get("confidence_level") is None:
        return {}
    add_intervals(module_name, result, options["confidence_level"], options["n_resamples"], options["seed"])
    shown = [k for k in (keys or result["intervals"]) if k in result["intervals"]]
    if figures is not None and shown:
        figures["intervals"] = plot_intervals(result["intervals"], shown, title=title)
    if options.get("sample_size_sweep") and shown:
        sweep = sample_size_sweep(module_name, result, keys=shown, sizes=options["sweep_sizes"],
                                  confidence_level=options["confidence_level"],
                                  n_resamples=min(options["n_resamples"], 999), seed=options["seed"])
        result["sample_size_sweep"] = sweep
        if figures is not None:
            figures["sample_size_sweep"] = plot_sample_size_sweep(sweep)
    return result["intervals"]


def fmt(result: Mapping, key: str, digits: int = 3, value=None) -> str:
    """``result[key]`` (or ``value``) for a report: with its interval from ``result["intervals"]`` when there is one.

    >>> fmt({"flip_rate": 0.5, "intervals": {"flip_rate": {"score": 0.5, "ci_low": 0.2, "ci_high": 0.8, "n": 9}}},
    ...     "flip_rate")
    '0.500 [0.20, 0.80]'
    >>> fmt({"flip_rate": 0.5}, "flip_rate")
    '0.500'
    """
    entry = (result.get("intervals") or {}).get(key)
    return format_value(_get(result, key) if value is None else value, entry, digits)


def interval_note(intervals: Mapping) -> str:
    """One line under a report: what the brackets are.

    >>> interval_note({"inc@1": {"score": 1, "ci_low": 0, "ci_high": 2, "n": 8, "unit": "chain", "method": "BCa",
    ...                          "confidence_level": 0.95}})
    '[brackets]: 95% bootstrap confidence intervals, chains resampled (BCa; scipy.stats.bootstrap, textxai.stats).'
    """
    entries = list(intervals.values())
    if not entries:
        return ""
    level = entries[0].get("confidence_level", 0.95)
    units = sorted({e.get("unit", "example") for e in entries})
    methods = sorted({e.get("method", "") for e in entries if e.get("method")}, key=lambda m: (m != "BCa", m))
    return (f"[brackets]: {level * 100:.0f}% bootstrap confidence intervals, {' / '.join(u + 's' for u in units)} "
            f"resampled ({', '.join(methods)}; scipy.stats.bootstrap, textxai.stats).")


# ---------------------------------------------------------------------------------------------- textxai compare


def _expand(module_name: str, result: Mapping, label: str) -> dict:
    """The results held by one saved JSON file: a naopc run file holds one result per attribution method."""
    if module_name == "naopc" and isinstance(result.get("methods"), Mapping) and isinstance(result.get("per_example"), Mapping):
        return {(name if label == "" else f"{label}:{name}"): {**summary, "per_example": result["per_example"][name]}
                for name, summary in result["methods"].items() if name in result["per_example"]}
    if module_name == "toki_trust" and "trust_labels" not in result and isinstance(result.get("examples"), list):
        ex = result["examples"]  # a `textxai run toki_trust` file: the per-text verdicts of toki.assess
        return {label: {**result, "trust_labels": [e["label"] for e in ex], "naive_labels": [e["naive"] for e in ex],
                        "no_ki_labels": [e["no_ki"] for e in ex]}}
    return {label: result}


def to_jsonable(value):
    """Plain JSON values (for results files) from numpy scalars/arrays, tuples and nested containers (NaN -> None)."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def compare_files(module_name: str, paths: Sequence[str], names: Sequence[str] | None = None,
                  confidence_level: float = 0.95, n_resamples: int = DEFAULT_N_RESAMPLES, seed: int | None = 0,
                  sweep_sizes: Sequence[int] | None = None):
    """Intervals of every result in the JSON files ``paths`` (``textxai run`` outputs, or a module's result with
    its per-example values) and the paired comparison of every pair (with ``sweep_sizes``: also
    :func:`compare_sample_size_sweep` of every summary). Returns ``(text report, dict)``."""
    import json
    from pathlib import Path

    _check_module(module_name)
    if names is not None and len(names) != len(paths):
        raise ValueError(f"names has {len(names)} items but {len(paths)} files were given: expected one name per file")
    results = {}
    for i, path in enumerate(paths):
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"results file {str(path)!r}: no such file; expected the .json a `textxai run "
                             f"{module_name}` wrote (or a result saved with its per-example values)")
        data = json.loads(p.read_text(encoding="utf-8"))
        label = names[i] if names else ("" if len(paths) == 1 else p.stem)
        results.update(_expand(module_name, data, label))
    if len(results) < 2:
        raise ValueError(f"files={list(paths)} hold {len(results)} result: expected at least two to compare "
                         f"(several files, or one naopc file with several attribution methods)")
    lines, out = [], {"intervals": {}, "comparisons": {}}
    for name, res in results.items():
        add_intervals(module_name, res, confidence_level, n_resamples, seed)
        out["intervals"][name] = res["intervals"]
        lines += [intervals_table(res["intervals"], f"== {name}"), ""]
    names_ = list(results)
    for i, a in enumerate(names_):
        for b in names_[i + 1:]:
            c = compare(module_name, results[a], results[b], confidence_level, n_resamples, seed)
            out["comparisons"][f"{a} vs {b}"] = c
            lines += [f"== paired comparison, {a} vs {b} (same {resampling_unit(module_name)}s, in the same order)",
                      compare_table(c, a, b), ""]
            if sweep_sizes:
                sweeps = {key: compare_sample_size_sweep(module_name, results[a], results[b], key, sweep_sizes,
                                                         confidence_level=confidence_level, seed=seed) for key in c}
                out.setdefault("sample_size_sweep", {})[f"{a} vs {b}"] = sweeps
                lines.append(f"   median Wilcoxon p (share of draws whose CI of a - b excludes 0) at n = "
                             f"{', '.join(map(str, sweep_sizes))} (* = more units than given: projected)")
                for key, rows in sweeps.items():
                    cells = [f"{r['p_value']:.3g} ({r['share_significant']:.0%}){'*' if r['projected'] else ''}"
                             for r in rows]
                    lines.append(f"   {key:<24} " + "  ".join(cells))
                lines.append("")
    lines.append("Difference: bootstrap interval of a - b, units resampled jointly; p: Wilcoxon signed-rank test of "
                 "the per-unit differences (textxai.stats.compare).")
    return "\n".join(lines), out


def add_compare_parser(commands) -> None:
    """``textxai compare A.json B.json ... --module NAME`` (a sub-command of the ``textxai`` CLI)."""
    from textxai import registry

    parser = commands.add_parser("compare", help="confidence intervals and paired comparisons of saved results "
                                                 "(several methods / editors / models on the same examples)")
    parser.add_argument("files", nargs="+", help="result .json files of `textxai run MODULE` (same examples, same order)")
    parser.add_argument("--module", required=True, choices=registry.names())
    parser.add_argument("--names", nargs="+", default=None, help="a name per file (default: the file names)")
    parser.add_argument("--confidence-level", type=float, default=0.95)
    parser.add_argument("--n-resamples", type=int, default=DEFAULT_N_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None, help="also write the comparison as .json and its error bars as .png")
    parser.add_argument("--sample-size-sweep", type=int, nargs="*", default=None, metavar="N",
                        help="also: p-value against the number of examples (default sizes 10 50 100 200, as the "
                             "inconsistency paper's Tables 4-5)")
    parser.set_defaults(func=_cmd_compare)


def _cmd_compare(args) -> int:
    try:
        sizes = None if args.sample_size_sweep is None else (args.sample_size_sweep or list(SWEEP_SIZES))
        text, out = compare_files(args.module, args.files, args.names, args.confidence_level, args.n_resamples, args.seed,
                                  sweep_sizes=sizes)
    except (ValueError, TypeError) as error:
        raise SystemExit(f"textxai compare: {error}") from error
    print(text)
    if args.output:  # replaced together, as textxai run writes (textxai.outputs)
        from textxai.outputs import staged

        stem = f"compare_{args.module}"
        with staged(args.output, [stem]) as stage:
            written = stage.write(stem, to_jsonable(out), {"intervals": plot_intervals(out["intervals"])})
        print(f"Wrote {' and '.join(str(p) for p in written)}")
    return 0


# ---------------------------------------------------------------------------------------------- Spaces

SPACE_MIN_UNITS = 5


def space_intervals_html(module_name: str, result: dict, keys: Sequence[str] | None = None,
                         min_units: int = SPACE_MIN_UNITS, confidence_level: float = 0.95, n_resamples: int = 2000,
                         seed: int = 0) -> str:
    """An HTML table of the intervals of ``result`` for a Space (the result needs its per-example values), or a
    one-line note when fewer than ``min_units`` units were given (an interval from 3 examples says little).

    >>> html = space_intervals_html("toki_trust", {"trust_labels": [True, False, True, True, True, False],
    ...                                            "trustworthy_rate": 4 / 6})
    >>> "0.667 [" in html and "n = 6 correct predictions" in html
    True
    >>> space_intervals_html("toki_trust", {"trust_labels": [True, None], "trustworthy_rate": 1.0})[:40]
    '<p class="textxai-intervals-note">Confid'
    """
    from html import escape

    ests = estimands(module_name, result)
    wanted = [k for k in (keys or ests) if k in ests]
    most = max((int(ests[k].counted.sum()) for k in wanted), default=0)
    unit = resampling_unit(module_name)
    if most < min_units:
        return (f'<p class="textxai-intervals-note">Confidence intervals are shown from {min_units} {unit}s on '
                f"(here {most}).</p>")
    add_intervals(module_name, result, confidence_level, n_resamples, seed)
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(format_interval(result['intervals'][k]))}</td>"
                   f"<td>{result['intervals'][k]['n']}</td><td>{escape(result['intervals'][k]['method'])}</td></tr>"
                   for k in wanted)
    return (f'<table class="textxai-intervals"><thead><tr><th>summary</th><th>value [{confidence_level:.0%} CI]</th>'
            f"<th>n</th><th>method</th></tr></thead><tbody>{rows}</tbody></table>"
            f'<p class="textxai-intervals-note">Bootstrap intervals over the {escape(unit)}s '
            f"(n = {most} {escape(unit)}s): a wide interval means the number could change a lot with other "
            "examples.</p>")
