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

**Where it lives**: the interval maths that needs no method (:class:`Estimand`, :func:`bootstrap_interval`,
:func:`count_interval`, :func:`paired_test`, :class:`IntervalOptions`) is :mod:`textxai.intervals`, re-exported
here; this module is the per-method half, reading each method's descriptor (:mod:`textxai.registry`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from textxai.intervals import (MIN_RESAMPLES, Estimand, IntervalOptions, _check_level, _check_seed, _difference,
                               bootstrap_interval, check_resamples, count_interval, count_interval_entry, mean_of_ratios,
                               median_statistic, paired_test, quantile_statistic, ratio_estimand, std_statistic,
                               value_at, values_estimand)
from textxai.intervals import _ratio  # noqa: F401  (re-exported: a ratio statistic, as before)
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
    "count_interval",
    "count_interval_entry",
    "check_resamples",
    "MIN_RESAMPLES",
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


# ---------------------------------------------------------------------------------------------- per method


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


def add_intervals(module_name: str, result: dict, confidence_level: float = IntervalOptions.confidence_level,
                  n_resamples: int = IntervalOptions.n_resamples, seed: int | None = IntervalOptions.seed,
                  batch: int | None = None) -> dict:
    """Add ``result["intervals"]``: a bootstrap interval per summary of a module's result (see the module doc).

    ``result`` must hold the per-example values (``per_example`` for naopc, inconsistency, ceval; the
    per-text lists of fim_difficulty and toki_trust). Returns ``result`` (changed in place).

    >>> r = {"trust_labels": [True, True, None, False, True, True, False, None], "trustworthy_rate": 4 / 6}
    >>> e = add_intervals("toki_trust", r, n_resamples=999)["intervals"]["trustworthy_rate"]
    >>> e["n"], e["unit"], round(e["score"], 3), e["method"]
    (6, 'correct prediction', 0.667, 'Clopper-Pearson (exact)')
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
