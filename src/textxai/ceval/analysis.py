"""One CEval analysis (:func:`analyse`): what the evaluate module, ``textxai run ceval``, ``textxai demo`` and
the CEval Space compute, warn about and draw, written once.

:func:`analyse` scores counterfactuals against their originals (:func:`textxai.ceval.compute`) and returns a
:class:`textxai.registry.Analysis`:

- ``results``: the metrics with ``per_example`` values, the ``originals`` and ``counterfactuals``, the
  bootstrap ``intervals`` over the originals and the ``warnings``;
- ``summary``: the module's answer (``compute``'s result; ``per_example`` only when asked for);
- ``warnings`` (:func:`warnings`): failed generations, every documented NaN with its reason (nothing flipped,
  no probabilities, every generation failed, ...), the judge's unparsed replies;
- ``figures``: ``probability_histogram`` (the paper's Fig. 1), ``method_distances`` (Fig. 2), ``intervals``;
- ``report``: the text report (:func:`report`).
:func:`generate` makes counterfactuals with a built-in editor of :mod:`textxai.editors` for it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from textxai import render, stats
from textxai.ceval._checks import is_failed
from textxai.ceval.baselines import pick_counterfactuals
from textxai.ceval.plots import plot_method_distances, plot_probability_histogram
from textxai.ceval.score import RunOptions, compute, nan_notes
from textxai.registry import Analysis
from textxai.validation import one_line

METRIC_LINES = (
    ("flip_rate", "flip rate", "{:.3f}"), ("probability_change", "probability change", "{:+.3f}"),
    ("probability_change_flipped", "  over flipped", "{:+.3f}"), ("token_distance", "token distance", "{:.2f}"),
    ("token_distance_normalized", "  normalised", "{:.3f}"), ("diversity", "diversity", "{:.2f}"),
    ("perplexity", "perplexity", "{:.1f}"), ("text_quality", "text quality (1-5)", "{:.2f}"),
)
#: the summaries with intervals in the report and the intervals figure
INTERVAL_KEYS = tuple(key for key, _, _ in METRIC_LINES)
#: intervals by default: the one default (:class:`textxai.stats.IntervalOptions`); the demo asks for 2,000 resamples
INTERVALS = dataclasses.asdict(stats.IntervalOptions())
EDITOR = "substitution"  # the default editor of generate and of textxai run ceval
N_COUNTERFACTUALS = 2  # counterfactuals kept per text: two give the diversity


def generate(texts, classifier, editor: str = EDITOR, k: int = N_COUNTERFACTUALS,
             batch_size: int = RunOptions().batch_size, progress: bool = False, editor_model=None) -> list[list[str]]:
    """``k`` counterfactuals per text from a built-in editor of :data:`textxai.editors.EDITORS` (``editor_model``:
    the LM of the ``"llm"`` editor, default the packaged one, asked for ``max(k, 4)`` distinct rewrites: the
    first greedy, the others sampled under seed 0, the classifier keeping the ``k`` best). A slot an editor could not fill is ``"-1"`` (a failed generation)."""
    from textxai.editors import get_editor

    options = {"batch_size": batch_size} if editor == "deletion" else {}
    if editor == "llm":
        from textxai.lm import PACKAGED_LM

        from textxai.llm_editor import DEFAULTS

        # at least the LLM editor's default k candidates, the classifier keeping the k best (pick_counterfactuals)
        options = {"lm": editor_model or PACKAGED_LM, "num_candidates": max(k, DEFAULTS["num_candidates"])}
    candidates = get_editor(editor, classifier, progress=progress, **options)(texts)
    return pick_counterfactuals(texts, candidates, classifier, k=k, batch_size=batch_size)


def analyse(texts, counterfactuals, classifier=None, text_pairs=None, counterfactual_pairs=None,
            intervals=INTERVALS, figures: bool = True, title: str = "CEval", **options) -> Analysis:
    """CEval of ``counterfactuals`` (one or a list per text) against ``texts``: every surface's numbers,
    warnings and figures.

    ``options``: those of :func:`textxai.ceval.compute` (targets, contrast, outputs, quality, run or their
    fields). ``intervals``: :func:`textxai.render.analysis_intervals` options (default: the one default,
    :data:`INTERVALS`; ``None``: no intervals); ``figures=False``: no figures (the module's cheap path).

    >>> a = analyse(["a bad film"], ["a good film"], original_probs=[[0.9, 0.1]], counterfactual_probs=[[0.2, 0.8]],
    ...             intervals=None, figures=False)
    >>> a.summary["flip_rate"], a.summary["token_distance"], a.warnings
    (1.0, 1.0, [])
    """
    run = options.get("run") or RunOptions()
    wanted = options.get("return_per_example", run.return_per_example)
    results = compute(texts, counterfactuals, text_pairs, counterfactual_pairs, model=classifier,
                      **{**options, "return_per_example": True})
    summary = {k: v for k, v in results.items() if k != "per_example" or wanted}
    results["originals"] = [str(t) for t in texts]  # checked strings (numpy.str_ of an array -> str)
    rows = (list(c) if isinstance(c, (list, tuple, np.ndarray)) else [c] for c in counterfactuals)
    results["counterfactuals"] = [[str(v) if isinstance(v, np.str_) else v for v in row] for row in rows]
    figs = _figures(results, text_pairs is None) if figures else {}
    if intervals is not None:
        render.analysis_intervals("ceval", results, intervals, figs if figures else None, keys=list(INTERVAL_KEYS))
        results["readings"] = readings_of(results.get("intervals", {}))   # none under confidence_level=None
    results["warnings"] = warnings(results)
    return Analysis("ceval", results, summary, list(results["warnings"]), figs, report(results, title))


#: the readings of the report (and of the audit's counterfactual section): (summary key, what, scale, meaning)
READINGS = (("flip_rate", "flip the prediction", 1.0, ""),
            ("probability_change", "probability change", 1.0,
             "the share of probability the edit moves to the contrast class"),
            ("token_distance", "token distance", 10.0, "words changed per counterfactual"))


def readings_of(intervals: dict) -> dict:
    """``{summary key: sentence}`` of the flip rate (a count: exact interval, :func:`textxai.readings.count_reading`),
    the probability change and the token distance (:func:`textxai.readings.estimate_reading`).

    >>> readings_of({"flip_rate": {"score": 0.5, "n": 2, "ci_low": 0.013, "ci_high": 0.987,
    ...                            "method": "Clopper-Pearson (exact)"}})["flip_rate"]
    '1 of 2 counterfactuals flip the prediction [0, 2] (exact 95 %); too few to conclude (n = 2 < 10).'
    """
    from textxai import readings

    return {key: readings.entry_reading(intervals[key], what, "counterfactuals", scale, meaning)
            for key, what, scale, meaning in READINGS if key in intervals}


def _figures(results: dict, single_texts: bool) -> dict:
    """The probability histogram (failed generations left out) and the distances between the counterfactual sets."""
    figures = {}
    per = results["per_example"]
    if "original_contrast_prob" in per:
        failed = [is_failed(c[0]) for c in results["counterfactuals"]]
        cf = [np.nan if f else q for f, q in zip(failed, per["counterfactual_contrast_prob"])]
        figures["probability_histogram"] = plot_probability_histogram(
            {"original": per["original_contrast_prob"], "counterfactual": cf}, xlabel="p(contrast class)")
    if single_texts:
        by_method = {"original": list(results["originals"])}
        width = max(len(c) for c in results["counterfactuals"])
        for j in range(width):
            by_method[f"counterfactual {j + 1}"] = [c[j] if j < len(c) else "-1" for c in results["counterfactuals"]]
        if len(by_method) >= 2:
            figures["method_distances"] = plot_method_distances(by_method)
    return figures


def warnings(results: dict) -> list[str]:
    """Every surface's warnings: failed generations, each documented NaN with its reason, the judge's warning.

    >>> warnings({"num_examples": 4, "num_failed": 1, "num_flipped": 0, "probability_change_flipped": float("nan")})
    ['1 failed generation(s) of 4: counted as not flipped (probability change 0), left out of distance, diversity, perplexity and quality.', 'Nothing to average for probability_change_flipped (= NaN: no counterfactual flipped the prediction, num_flipped=0).']
    """
    out = []
    if results.get("num_failed"):
        out.append(f"{results['num_failed']} failed generation(s) of {results['num_examples']}: counted as not flipped "
                   "(probability change 0), left out of distance, diversity, perplexity and quality.")
    out += [f"Nothing to average for {note}." for note in nan_notes(results)]
    if results.get("judge_warning"):
        out.append(results["judge_warning"])
    return out


def report(results: dict, title: str = "CEval", max_examples: int = 3) -> str:
    """The text report of :func:`analyse`'s results (``textxai run ceval``, ``textxai demo``)."""
    lines = [f"## {title}", "", f"{results['num_examples']} originals, {results['num_failed']} failed generations, "
             f"{results.get('num_flipped')} flipped; contrast class: {results.get('contrast')}", ""]
    for key, label, fmt in METRIC_LINES:
        value = results.get(key)
        if value is not None and not (isinstance(value, float) and np.isnan(value)):
            shown = render.fmt(results, key) if key in results.get("intervals", {}) else fmt.format(value)
            lines.append(f"  {label:<22} {shown}")
    if results.get("intervals"):
        lines.append(render.interval_note(results["intervals"]))
    lines += [f"  {results['readings'][key]}" for key, *_ in READINGS if key in results.get("readings", {})]
    lines += judge_lines(results)
    lines.append("")
    per = results["per_example"]
    for i in range(min(max_examples, results["num_examples"])):
        cf = results["counterfactuals"][i][0]
        flip = per.get("flipped", [None] * (i + 1))[i]
        lines.append(f"  x : {_short(results['originals'][i])}")
        lines.append(f"  x': {_short(cf)}   (flipped: {flip}, distance: {per['token_distance'][i]})")
    return "\n".join(lines).rstrip() + "\n"


def judge_lines(results: dict, shown: int = 3) -> list[str]:
    """The start token of perplexity, the judge's unparsed replies (a few, raw) and its warning, as report lines."""
    lines = []
    if results.get("perplexity_start_token"):
        lines.append(f"  perplexity start token: {results['perplexity_start_token']}")
    if results.get("judge_method") == "probabilities":
        entropies = [results.get(f"{a}_entropy") for a in ("grammar", "cohesiveness", "likability", "fluency")]
        shown_h = ", ".join(f"{a} {h:.2f}" for a, h in zip(("grammar", "cohesiveness", "likability", "fluency"), entropies)
                            if isinstance(h, float))
        lines.append(f"  judge: read from its next-token probabilities over the scores 1-5 ({results['num_judgements']} "
                     f"judgements, none parsed); mean entropy (nats, 0 sure .. 1.61 uniform): {shown_h}")
    elif "num_judgements" in results:
        lines.append(f"  judge: {results['num_unparsed_judgements']} of {results['num_judgements']} replies unparsed "
                     "(a reply counts only when it holds one score 1-5)")
        for u in results.get("unparsed_judgements", [])[:shown]:
            lines.append(f"    {u['aspect']}, example {u['example']}: {one_line(u['reply'], 80)!r}")
    if results.get("judge_warning"):
        lines.append(f"  WARNING: {results['judge_warning']}")
    return lines


def _short(text, limit: int = 110) -> str:
    return "<failed generation>" if is_failed(text) else one_line(text, limit)
