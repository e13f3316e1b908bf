"""The one FIM difficulty analysis: :func:`analyse` -> :class:`textxai.registry.Analysis`, shown by every surface.

``results`` is what ``textxai run fim_difficulty`` writes (per-text difficulties and predictions, the summary,
the hardest and easiest texts with their most sensitive words, the asked-for experiments, intervals);
``summary`` is what the ``fim_difficulty`` evaluate module returns; ``warnings`` are plain sentences (texts
that never flip within the search range, correlations that cannot be computed); ``figures`` are the plots of
:mod:`textxai.fim.plots`; ``report`` is the text the CLI and ``textxai demo`` print.

>>> ShowOptions().top, ShowOptions().figures
(5, True)
>>> never_flips({"min_flip_strength": [0.5, float("inf")]}, FIMOptions(min_flip=True))
['1 of 2 texts do not flip within max_strength=6: their min_flip_strength is inf, and the correlation leaves them out.']
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from textxai import render
from textxai.fim.plots import figures as _figures
from textxai.fim.staged import FIMOptions, compute
from textxai.fim.text import top_words
from textxai.registry import Analysis
from textxai.validation import one_line

#: the intervals of the CLI and the demo (``intervals=None``: none, the cheap path of the evaluate module)
INTERVALS = render.DEMO_OPTIONS
#: the summaries that get an interval (and the flat scalars the command line prints with theirs)
INTERVAL_KEYS = ("summary.mean", "summary.median", "summary.q10", "summary.q90")
_ALIASES = (("mean_difficulty", "summary.mean"), ("median_difficulty", "summary.median"))
#: what the evaluate module returns of ``results`` beside its own keys, when the options asked for it
_EXPERIMENT_KEYS = ("min_flip_strength", "min_flip_correlation", "flipped_within_max_strength", "random_flip_rate",
                    "random_flip_correlation", "shift")


@dataclass(frozen=True)
class ShowOptions:
    """What :func:`analyse` shows beyond :func:`textxai.fim.compute` (each field also a keyword of ``analyse``).

    top: hardest / easiest texts listed. figures: draw the figures (``False``: the cheap path). title: the
    report's heading.
    """

    top: int = 5
    figures: bool = True
    title: str = "FIM difficulty"


def _check_show(show: ShowOptions) -> None:
    from textxai.validation import check_positive_int

    check_positive_int(show.top, "top")
    if not isinstance(show.figures, (bool, np.bool_)):
        raise TypeError(f"figures={show.figures!r}: expected True or False")
    if not isinstance(show.title, str):
        raise TypeError(f"title={show.title!r}: expected a string")


def shape_results(r: dict, texts, top: int) -> dict:
    """:func:`textxai.fim.compute`'s result (computed with ``return_eigenvector``) as the CLI's JSON: lists of
    floats, the ``top`` hardest and easiest texts with their three most sensitive words."""
    d = r["difficulty"]
    order = np.argsort(-d, kind="stable")

    def entry(i):
        return {"index": int(i), "text": texts[i], "difficulty": float(d[i]), "prediction": int(r["predictions"][i]),
                "sensitive_words": top_words(r["words"][i], r["word_sensitivity"][i])}

    results = {"difficulty": [float(x) for x in d], "predictions": [int(x) for x in r["predictions"]],
               "summary": r["summary"], "mean_difficulty": float(d.mean()), "median_difficulty": float(np.median(d)),
               "hardest": [entry(i) for i in order[:top]], "easiest": [entry(i) for i in order[::-1][:top]]}
    if "accuracy" in r:
        results["accuracy"] = r["accuracy"]
    if "min_flip_strength" in r:
        results.update(min_flip_strength=[float(x) for x in r["min_flip_strength"]],
                       min_flip_correlation=r["min_flip_correlation"],
                       flipped_within_max_strength=r["flipped_within_max_strength"])
    if "random_flip_rate" in r:
        results.update(random_flip_rate=[float(x) for x in r["random_flip_rate"]],
                       random_flip_correlation=r["random_flip_correlation"])
    if "shift" in r:
        sh = r["shift"]
        results["shift"] = {**sh, "values": [float(x) for x in sh["values"]]}
        results.update(shift_mean=sh["mean"], shift_std=sh["std"], shift_fraction_increased=sh["fraction_increased"])
    results["probs"] = [[float(p) for p in row] for row in r["probs"]]
    return results


def module_summary(r: dict, results: dict, options: FIMOptions, warnings: list) -> dict:
    """What the ``fim_difficulty`` evaluate module returns: difficulties, predictions, the summary; words and
    their sensitivity with ``return_eigenvector``, the spectrum with ``return_all_eigenvalues``, the asked-for
    experiments as in ``results``, and the warnings when there are any."""
    out = {"difficulty": results["difficulty"], "predictions": results["predictions"], "summary": r["summary"]}
    if options.return_eigenvector:
        out["words"] = r["words"]
        out["word_sensitivity"] = [[float(x) for x in s] for s in r["word_sensitivity"]]
    if options.return_all_eigenvalues:
        out["all_eigenvalues"] = [[float(x) for x in row] for row in r["all_eigenvalues"]]
    out.update({k: results[k] for k in _EXPERIMENT_KEYS if k in results})
    if warnings:
        out["warnings"] = list(warnings)
    return out


def never_flips(results: dict, options: FIMOptions) -> list[str]:
    """A warning when some texts do not flip within the min-flip search range (their strength is ``inf``)."""
    strengths = results.get("min_flip_strength")
    if strengths is None:
        return []
    stuck = sum(1 for s in strengths if not math.isfinite(s))
    if not stuck:
        return []
    return [f"{stuck} of {len(strengths)} texts do not flip within max_strength={options.max_strength:g}: their "
            "min_flip_strength is inf, and the correlation leaves them out."]


def undetermined_correlations(results: dict) -> list[str]:
    """A warning per asked-for correlation that could not be computed on 3 or more texts (fewer than 3 usable
    pairs, or one side constant)."""
    out = []
    for key, what in (("min_flip_correlation", "min flip strength"), ("random_flip_correlation", "random flip rate")):
        c = results.get(key)
        if c is not None and len(results["difficulty"]) >= 3 and not math.isfinite(c["pearson_r"]):
            out.append(f"The correlation of log lambda_max with the {what} is undetermined (nan): {c['n']} usable "
                       "texts, or one of the two is the same for all of them.")
    return out


def mean_log10(difficulty, intervals) -> dict:
    """Mean log10 λ_max over the texts with its bootstrap interval (``intervals``: confidence_level, n_resamples,
    seed) and its reading (:func:`textxai.readings.estimate_reading`, on a scale of 10: a spread of orders of
    magnitude). Not comparable across models (``Method.comparable``): each model's embeddings set its scale.

    >>> e = mean_log10([1e-3, 1e-2, 1e-1] * 4, {"confidence_level": 0.95, "n_resamples": 199, "seed": 0})
    >>> e["score"], e["n"], e["reading"].startswith("mean log10 λ_max -2.000 [")
    (-2.0, 12, True)
    """
    from textxai import readings, stats

    values = np.log10(np.maximum(np.asarray(difficulty, dtype=np.float64), 1e-300))
    values = values[np.isfinite(values)]
    options = {**render.DEMO_OPTIONS, **(intervals or {})}
    entry = (stats.bootstrap_interval(values, None, options["confidence_level"], options["n_resamples"], options["seed"])
             if values.size else {"score": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0,
                                  "method": "n<2"})
    entry["reading"] = readings.estimate_reading(entry, "mean log10 λ_max", scale=10.0)
    return entry


def _intervals(results: dict, figures: dict | None, intervals) -> None:
    if intervals is None:
        return
    ivs = render.analysis_intervals("fim_difficulty", results, intervals, figures, keys=list(INTERVAL_KEYS))
    if ivs:   # intervals asked for (confidence_level None: none)
        results["mean_log10"] = mean_log10(results["difficulty"], intervals)
    for alias, key in _ALIASES:
        if key in ivs:  # the flat scalars the command line prints
            ivs[alias] = ivs[key]


def report(results: dict, title: str = "FIM difficulty") -> str:
    """The plain-text report of an analysis' ``results`` (what ``textxai run`` / ``textxai demo`` print)."""
    s = results["summary"]
    lines = [f"## {title}", "",
             f"{s['n']} texts: median lambda_max {render.fmt(results, 'summary.median', 4)}, mean "
             f"{render.fmt(results, 'summary.mean', 4)} (q10 {s['q10']:.4g}, q90 {s['q90']:.4g}, max {s['max']:.4g}). "
             "Higher = closer to the decision boundary."]
    if results.get("intervals"):
        lines.append(render.interval_note({k: v for k, v in results["intervals"].items() if k.startswith("summary.")}))
    if results.get("mean_log10"):
        lines.append(results["mean_log10"]["reading"] + " (not comparable across models: the embeddings set its scale)")
    lines.append("")
    for key, head in (("hardest", "Hardest"), ("easiest", "Easiest")):
        lines.append(f"{head}:")
        for e in results[key]:
            lines.append(f"  {e['difficulty']:.4g}  [{', '.join(e['sensitive_words'])}]  {one_line(e['text'])}")
        lines.append("")
    lines.extend(_experiment_lines(results))
    if results.get("warnings"):
        lines.extend(["", "Warnings:"] + [f"  {w}" for w in results["warnings"]])
    return "\n".join(lines).rstrip() + "\n"


def _correlation_line(what: str, c: dict, note: str) -> str:
    return f"{what} vs log lambda_max: Pearson r {c['pearson_r']:.2f}, Spearman {c['spearman_rho']:.2f} ({note})"


def _experiment_lines(results: dict) -> list[str]:
    lines = []
    if "accuracy" in results:
        a = results["accuracy"]
        lines.append(f"Accuracy: all {a['all']:.2f}, easiest quarter {a['easiest_quarter']:.2f}, "
                     f"hardest quarter {a['hardest_quarter']:.2f}")
    if "min_flip_correlation" in results:
        c = results["min_flip_correlation"]
        lines.append(_correlation_line("Min flip strength", c, f"n = {c['n']}; {results['flipped_within_max_strength']:.0%} "
                                       "flip within the search range; paper: -0.4"))
    if "random_flip_correlation" in results:
        lines.append(_correlation_line("Random substitution flip rate", results["random_flip_correlation"], "paper: 0.35"))
    if "shift" in results:
        sh = results["shift"]
        lines.append(f"Difficulty shift (perturbed - original): mean {sh['mean']:.4g}, std {sh['std']:.4g}, "
                     f"{sh['fraction_increased']:.0%} of pairs harder")
    return lines


def analyse(texts, model, text_pairs=None, labels=None, perturbed=None, tokenizer=None, device=None,
            options: FIMOptions | None = None, show: ShowOptions | None = None, intervals=INTERVALS,
            **keywords) -> Analysis:
    """The FIM difficulty of ``texts`` under ``model``, computed once, as every surface shows it.

    Arguments as :func:`textxai.fim.compute` (``perturbed``: one perturbed text per text, paired with the same
    ``text_pairs``); ``options`` / ``show`` / keywords: :class:`FIMOptions` and :class:`ShowOptions` fields;
    ``intervals``: bootstrap options (:data:`INTERVALS`; ``None``: no intervals). The eigenvector is always
    computed (the hardest texts' sensitive words); the module summary has the words only with
    ``return_eigenvector``.

    >>> a = analyse(["a wonderful film", "dull"], "textxai/demo-sentiment", intervals=None, figures=False)  # doctest: +SKIP
    >>> a.summary["summary"]["n"], a.results["hardest"][0]["sensitive_words"], a.figures                     # doctest: +SKIP
    (2, ['dull'], {})
    """
    from textxai.options import apply_keywords

    groups = apply_keywords("fim.analyse", keywords, options=(FIMOptions, options), show=(ShowOptions, show))
    opts, shown = groups["options"], groups["show"]
    _check_show(shown)
    render.check_interval_options(intervals)
    r = compute(texts, model, text_pairs, labels=labels, perturbed=perturbed, tokenizer=tokenizer, device=device,
                perturbed_pairs=None if perturbed is None else text_pairs,
                options=dataclasses.replace(opts, return_eigenvector=True))
    texts = list(texts)
    results = shape_results(r, texts, shown.top)
    warnings = never_flips(results, opts) + undetermined_correlations(results)
    figures = _figures(r, len(texts)) if shown.figures else {}
    _intervals(results, figures if shown.figures else None, intervals)
    results["warnings"] = warnings
    return Analysis(method="fim_difficulty", results=results, summary=module_summary(r, results, opts, warnings),
                    warnings=warnings, figures=figures, report=report(results, shown.title))
