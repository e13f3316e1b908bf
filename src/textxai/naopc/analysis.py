"""One NAOPC analysis (:func:`analyse`): what the evaluate module, ``textxai run naopc``, ``textxai demo`` and
the NAOPC Space compute, warn about and draw, written once.

:func:`analyse` scores one or several attribution sets on the same texts (every model call shared, see
:func:`textxai.naopc.compare_attributions`) and returns a :class:`textxai.registry.Analysis`:

- ``results``: the run's JSON (``methods``: the four means per set, ``per_example``: the per-text rows per
  set, ``limits_choice``, ``narrow_limit_texts``, ``intervals`` / ``comparisons`` over the texts, the AOPC
  vs NAOPC rank agreement, ``warnings``);
- ``summary``: the module's answer (the four means; per set when there are several);
- ``warnings``: which limits the texts got (:func:`limits_sentence`) and the texts whose limits nearly
  coincide (:func:`narrow_sentence`);
- ``figures``: ``scores`` (bars with the intervals as error bars) and the perturbation curves with the limit
  curves (``curves_first_text``, or ``curves`` for several texts);
- ``report``: the text report (:func:`report`), with the ranking flips after normalization.
"""
from __future__ import annotations

import numpy as np

import dataclasses

from textxai import parallel, render, stats
from textxai.naopc.core import NARROW_LIMITS, narrow_limit_texts, rank_agreement
from textxai.naopc.texts import (NAOPCOptions, attribution_sets, compare_attributions, default_max_exact_words,
                                 explain_choice, mean_scores, options_from)
from textxai.registry import Analysis

SCORES = ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency")
#: intervals by default: the one default (:class:`textxai.stats.IntervalOptions`); the demo asks for 2,000 resamples
INTERVALS = dataclasses.asdict(stats.IntervalOptions())


def analyse(texts, classifier, attributions=None, text_pairs=None, target="predicted", attribution_method=None,
            options: NAOPCOptions | None = None, intervals=INTERVALS, figures=True, title: str = "NAOPC",
            **keywords) -> Analysis:
    """NAOPC of one or several attribution sets on ``texts``, every surface's numbers, warnings and figures.

    ``attributions``: one score list per text (the set ``"attributions"``), ``{name: scores or None}``
    (``None``: computed by that :mod:`textxai.attribution` method), or ``None`` with ``attribution_method``.
    ``options`` / ``keywords``: :class:`NAOPCOptions` (its fields also as keywords). ``intervals``:
    :func:`textxai.render.analysis_intervals` options (default: the one default, :data:`INTERVALS`; ``None``:
    no intervals). ``figures``: ``False`` for none; ``True`` or ``n``: the score bars and the perturbation curves of
    the first ``n`` texts (``True``: 1).

    >>> a = analyse(["A wonderful, moving film."], "textxai/demo-sentiment", attribution_method="omission",
    ...             intervals=None)  # doctest: +SKIP
    >>> sorted(a.summary), sorted(a.figures), a.warnings[0][:13]  # doctest: +SKIP
    (['comprehensiveness', 'naopc_comprehensiveness', 'naopc_sufficiency', 'sufficiency'], ['curves_first_text', 'scores'], 'Limits: exact')
    """
    opts = options_from(options, keywords, "naopc.analyse")
    render.check_interval_options(intervals)
    if not isinstance(figures, (bool, np.bool_)) and (not isinstance(figures, (int, np.integer)) or figures < 0):
        raise ValueError(f"figures={figures!r:.80}: expected True, False or the number of texts whose curves to draw")
    from textxai.classifier import as_classifier
    from textxai.validation import check_text_pairs, check_texts

    check_text_pairs(text_pairs, check_texts(texts))   # the inputs' errors before any model loads
    sets = attribution_sets(attributions, attribution_method)
    classifier = as_classifier(classifier)   # resolved once: the scores and the device read the TextClassifier
    compare = parallel.sharded(compare_attributions, over=("texts", "attributions", "text_pairs", "target"),
                               merge=_join_methods)  # compare_attributions itself in one process
    res = compare(texts, classifier, sets, text_pairs=text_pairs, target=target, options=opts)
    results = _results(res, len(texts), classifier.device, opts)
    figs: dict = {}
    per_method = _intervals(res, results, intervals, figs) if intervals is not None else {}
    results["warnings"] = warnings(results)
    if figures:
        figs = {**plot_scores(res, per_method, curve_texts=int(figures)), **figs}
    summary = {k: res[next(iter(res))][k] for k in SCORES} if len(res) == 1 else {
        name: {k: r[k] for k in SCORES} for name, r in res.items()}
    return Analysis("naopc", results, summary, list(results["warnings"]), figs, report(results, title))


def _results(res: dict, n_texts: int, device, opts: NAOPCOptions) -> dict:
    """The run's JSON without intervals: means per set, the texts' limits, the rank agreement."""
    first = next(iter(res.values()))["per_example"]
    max_exact = opts.max_exact_words or default_max_exact_words(device)
    results = {
        "methods": {name: {k: r[k] for k in SCORES} for name, r in res.items()},
        "n_texts": n_texts,
        "mean_words": float(np.mean([row["n_words"] for row in first])),
        "normalization_used": sorted({row["normalization"] for row in first}),
        "limits_choice": explain_choice([r["n_words"] for r in first], opts.normalization, max_exact, device.type),
        "mean_lower": None if first[0]["lower"] is None else float(np.mean([row["lower"] for row in first])),
        "mean_upper": None if first[0]["upper"] is None else float(np.mean([row["upper"] for row in first])),
        "model_evaluations": int(sum(row["n_evaluations"] for row in first)),
        "per_example": {name: r["per_example"] for name, r in res.items()},
        "narrow_limit_texts": narrow_limit_texts(first),
    }
    if len(res) >= 2 and first[0]["lower"] is not None:
        names = list(res)
        for metric in ("comprehensiveness", "sufficiency"):
            raw = [res[n][metric] for n in names]
            norm = [res[n][f"naopc_{metric}"] for n in names]
            results[f"rank_agreement_{metric}"] = rank_agreement(raw, norm)
    return results


def _join_methods(parts: list[dict]) -> dict:
    """compare_attributions results of consecutive shares of the texts as one result (means over all texts)."""
    return {name: mean_scores([row for part in parts for row in part[name]["per_example"]]) for name in parts[0]}


def _intervals(res: dict, results: dict, options, figs: dict) -> dict:
    """Per set: intervals over the texts (flat keys "set/summary"); every pair of sets compared."""
    per_method = {}
    for name, r in res.items():
        one = {k: r[k] for k in SCORES if r.get(k) is not None}
        one["per_example"] = r["per_example"]
        per_method[name] = render.analysis_intervals("naopc", one, {**(options or {}), "sample_size_sweep": False})
        if "intervals" in one:
            results["methods"][name]["intervals"] = one["intervals"]
            results["methods"][name]["readings"] = score_readings(name, one["intervals"])
            results.setdefault("intervals", {}).update({f"{name}/{k}": e for k, e in one["intervals"].items()})
    if not results.get("intervals"):
        return {}
    names = list(res)
    opts = {**render.DEMO_OPTIONS, **options}
    results["comparisons"] = {
        f"{a} vs {b}": stats.compare("naopc", {**res[a]}, {**res[b]}, opts["confidence_level"], opts["n_resamples"],
                                     opts["seed"], keys=[k for k in SCORES if res[a].get(k) is not None])
        for i, a in enumerate(names) for b in names[i + 1:]}
    if opts.get("sample_size_sweep"):
        one = {**res[names[0]]}
        sweep = stats.sample_size_sweep("naopc", one, keys=[k for k in SCORES if one.get(k) is not None],
                                        sizes=opts["sweep_sizes"], confidence_level=opts["confidence_level"],
                                        n_resamples=min(opts["n_resamples"], stats.SWEEP_N_RESAMPLES), seed=opts["seed"])
        results["sample_size_sweep"] = {names[0]: sweep}
        figs["sample_size_sweep"] = render.plot_sample_size_sweep(sweep, f"Interval width against n ({names[0]})")
    return per_method


def score_readings(name: str, intervals: dict) -> dict:
    """``{score: sentence}`` of one attribution set's four means (:func:`textxai.readings.estimate_reading`: "too
    few to conclude" below ``readings.MIN_N`` texts, a zero-width interval no certainty); what the report prints
    and the audit's faithfulness section shows.

    >>> score_readings("omission", {"sufficiency": {"score": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 4}})["sufficiency"]
    'omission: sufficiency 0.200 [0.10, 0.30]: too few to conclude (n = 4 < 10); more texts needed.'
    """
    from textxai import readings

    return {k: readings.estimate_reading(intervals[k], f"{name}: {k.replace('_', ' ')}") for k in SCORES
            if k in intervals}


# ---------------------------------------------------------------------------------------------- warnings
def limits_sentence(results: dict) -> str:
    """Which limits the texts got and why ("auto": exact within the device's budget, else beam), as a sentence.

    >>> limits_sentence({"limits_choice": "limits: none for every text (normalization='none')"})
    "Limits: none for every text (normalization='none')."
    """
    choice = results.get("limits_choice")
    return choice[0].upper() + choice[1:] + "." if choice else ""


def narrow_sentence(results: dict) -> str:
    """The texts whose upper and lower limits nearly coincide (their NAOPC rescales noise), or ``""``.

    >>> narrow_sentence({"narrow_limit_texts": [1, 3]})[:48]
    'text(s) 2, 4 have limits closer than 0.001 (uppe'
    """
    narrow = results.get("narrow_limit_texts")
    if not narrow:
        return ""
    return (f"text(s) {', '.join(str(i + 1) for i in narrow)} have limits closer than {NARROW_LIMITS:g} (upper - "
            "lower): the model barely reacts to removing words there, so their NAOPC rescales noise.")


def warnings(results: dict) -> list[str]:
    """Every surface's warnings: the limits used and the texts with nearly coinciding limits."""
    return [s for s in (limits_sentence(results), narrow_sentence(results)) if s]


# ---------------------------------------------------------------------------------------------- figures
def _yerr(intervals: dict, names, key):
    """Error bar lengths [[below], [above]] from per-set intervals (None without intervals)."""
    if not intervals:
        return None
    rows = [intervals.get(n, {}).get(key) for n in names]
    if any(r is None for r in rows):
        return None
    return np.nan_to_num([[r["score"] - r["ci_low"] for r in rows], [r["ci_high"] - r["score"] for r in rows]])


def plot_scores(res: dict, intervals: dict | None = None, curve_texts: int = 1) -> dict:
    """``scores``: bar charts of the means per set (error bars: ``intervals[set][summary]``); the perturbation
    curves of the first set on its first ``curve_texts`` texts (``curves_first_text`` for one text, else ``curves``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(res)
    normalized = res[names[0]]["naopc_comprehensiveness"] is not None
    fig, axes = plt.subplots(1, 2 if normalized else 1, figsize=(10 if normalized else 5.5, 3.8), squeeze=False)
    x = np.arange(len(names))
    panels = [("AOPC", "")] + ([("NAOPC", "naopc_")] if normalized else [])
    for ax, (title, prefix) in zip(axes[0], panels):
        ax.bar(x - 0.2, [res[n][f"{prefix}comprehensiveness"] for n in names], 0.4, label="comprehensiveness ↑",
               color="#4f46e5", yerr=_yerr(intervals, names, f"{prefix}comprehensiveness"), capsize=4)
        ax.bar(x + 0.2, [res[n][f"{prefix}sufficiency"] for n in names], 0.4, label="sufficiency ↓", color="#f59e0b",
               yerr=_yerr(intervals, names, f"{prefix}sufficiency"), capsize=4)
        ax.set_xticks(x, names, rotation=15)
        level = next(iter(next(iter(intervals.values())).values()))["confidence_level"] if intervals else None
        ax.set_title(f"{title} (error bars: {level:.0%} CI over texts)" if level else title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    rows = res[names[0]]["per_example"][:max(1, curve_texts)]
    return {"scores": fig, "curves_first_text" if len(rows) == 1 else "curves": plot_curves(rows, names[0])}


def plot_curves(rows: list[dict], method: str = ""):
    """One panel per text: the probability drop after k words removed along comprehensiveness, sufficiency and
    the two limit orderings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(rows), 1, figsize=(7, 3.2 + 2.6 * (len(rows) - 1)), squeeze=False)
    for i, (ax, r) in enumerate(zip(axes[:, 0], rows)):
        k = np.arange(1, r["n_words"] + 1)
        ax.plot(k, r["comprehensiveness_curve"], "o-", color="#4f46e5", label=f"comprehensiveness {r['comprehensiveness']:.3f}")
        ax.plot(k, r["sufficiency_curve"], "o-", color="#f59e0b", label=f"sufficiency {r['sufficiency']:.3f}")
        if r.get("upper_curve") is not None:
            ax.plot(k, r["upper_curve"], "--", color="#059669", label=f"upper limit {r['upper']:.3f} ({r['normalization']})")
            ax.plot(k, r["lower_curve"], "--", color="#dc2626", label=f"lower limit {r['lower']:.3f}")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(f"perturbation curves, text {i + 1}" + (f" ({method})" if method else ""), fontsize=9)
        ax.set_ylabel("p(x) − p(x without k words)", fontsize=8)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("words removed (k)")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------- report
def report(results: dict, title: str = "NAOPC") -> str:
    """The text report of :func:`analyse`'s results (``textxai demo``)."""
    from textxai import readings

    lines = [f"## {title}", "",
             f"{results['n_texts']} texts, {results['mean_words']:.1f} words on average; limits: "
             f"{', '.join(results['normalization_used'])}; {results['model_evaluations']} model evaluations."]
    if limits_sentence(results):
        lines.append(limits_sentence(results))
    if results["mean_lower"] is not None:
        lines.append(f"Mean AOPC limits of this model: lower {results['mean_lower']:.3f}, upper {results['mean_upper']:.3f}.")
    if narrow_sentence(results):
        lines.append("Warning: " + narrow_sentence(results))
    w = 20 if results.get("intervals") else 13
    lines += ["", f"{'method':<22} {'comp ↑':<{w}} {'suff ↓':<{w}} {'NAOPC comp ↑':<{w}} {'NAOPC suff ↓':<{w}}"]
    for name, m in results["methods"].items():
        cells = [render.fmt(m, k) for k in SCORES]
        lines.append(f"{name:<22} " + " ".join(f"{c:<{w}}" for c in cells).rstrip())
    if results.get("intervals"):
        lines += ["", render.interval_note(results["intervals"])]
        shared = readings.shared_verdict([m["intervals"][k] for m in results["methods"].values()
                                          for k in SCORES if k in (m.get("intervals") or {})])
        lines += [f"  Every number above: {shared}"] if shared else [
            f"  {r}" for m in results["methods"].values() for r in (m.get("readings") or {}).values()]
    for pair, comparison in results.get("comparisons", {}).items():
        a, b = pair.split(" vs ")
        lines += ["", f"Paired comparison on the same texts ({pair}):", render.compare_table(comparison, a, b)]
    for metric in ("comprehensiveness", "sufficiency"):
        key = f"rank_agreement_{metric}"
        if key in results:
            lines.append(f"Kendall tau of the method ranking, AOPC vs NAOPC ({metric}): {results[key]:.2f}")
    lines += ranking_flips(results)
    return "\n".join(lines) + "\n"


def _flip_sentence(metric: str, orders: str, test: dict | None) -> str:
    """A ranking flip is claimed only when the NAOPC paired difference ranks the two
    (:func:`textxai.readings.significant`); otherwise the point estimates' orders are shown without a verdict."""
    from textxai import readings

    if test is None:
        return (f"Point estimates ({metric}): {orders}; no paired test on these texts, so no ranking flip is "
                "claimed.")
    p = test.get("p_value")
    ptext = "" if p is None or p != p else f", paired Wilcoxon p = {p:.2g}"
    if readings.significant(test):
        return f"Ranking flip ({metric}): {orders} (NAOPC difference significant, n = {test['n']}{ptext})."
    why = readings.too_few_note(test.get("n")) if readings.too_few(test.get("n")) else "within noise on these texts"
    return (f"Point estimates ({metric}): {orders}; the NAOPC difference is not significant (n = {test.get('n')}"
            f"{ptext}: {why}), so the two share a rank and no ranking flip is claimed.")


def ranking_flips(results: dict) -> list[str]:
    """One sentence per pair of sets whose order under AOPC and under NAOPC differ (the paper's point:
    normalizing by each text's limits can change which explanation looks more faithful), with the paired
    test of the NAOPC difference when the results have one."""
    methods, out = results["methods"], []
    names = list(methods)
    for metric in ("comprehensiveness", "sufficiency"):
        sign = 1 if metric == "comprehensiveness" else -1  # comprehensiveness: higher is better; sufficiency: lower
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                raw = sign * (methods[a][metric] - methods[b][metric])
                norm = sign * (methods[a][f"naopc_{metric}"] - methods[b][f"naopc_{metric}"])
                if raw * norm >= 0:
                    continue
                first, second = (a, b) if raw > 0 else (b, a)
                pairs = results.get("comparisons", {})
                test = (pairs.get(f"{a} vs {b}") or pairs.get(f"{b} vs {a}") or {}).get(f"naopc_{metric}")
                orders = (f"AOPC rates {first} better than {second} ({methods[first][metric]:.3f} vs "
                          f"{methods[second][metric]:.3f}); normalized by each text's limits, {second} is better "
                          f"({methods[second][f'naopc_{metric}']:.3f} vs {methods[first][f'naopc_{metric}']:.3f})")
                out.append(_flip_sentence(metric, orders, test))
    return out
