"""One inconsistency analysis (:class:`textxai.registry.Analysis`), computed once and shown by every surface.

The evaluate module returns its ``summary``, ``textxai run inconsistency`` writes its ``results`` and
``figures`` and prints its ``report``, the Space renders it, the demo composes three of them.

>>> a = analyse([["good film", "bad film", "good movie here now"], ["a b", "a c", "a b"]], n=[1, 3], intervals=None,
...             figures=False)
>>> a.summary["inc@1"], a.summary["minimality@3_chains"]
(1.5, 0)
>>> a.warnings
['no chain contributes to minimality@3: those values are NaN (chains too short for that n)']
>>> print(a.report.splitlines()[-1])
Why chain 0 is inconsistent at step 1: the editor turned x0 into x1 by changing 1 word; asked to edit x1, it changed 4 words to reach x2, although x0 itself was only 1 word away -- a smaller counterfactual existed and the editor missed it: inc = 4 - 1 = 3.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections import Counter

from textxai import parallel, render, stats
from textxai.editors import get_editor
from textxai.inconsistency.checks import check_n
from textxai.inconsistency.feedback import FeedbackChains, feedback_chains
from textxai.inconsistency.options import EditorOptions, Presentation, RunOptions, ScoreOptions, editor_options
from textxai.inconsistency.plots import plot_steps
from textxai.inconsistency.reporting import report
from textxai.inconsistency.scoring import compute
from textxai.options import apply_keywords
from textxai.registry import Analysis
from textxai.validation import check_texts


def _join_chains(parts: list) -> FeedbackChains:
    """The per-process :class:`FeedbackChains`, end to end."""
    return FeedbackChains([c for p in parts for c in p.chains], [lab for p in parts for lab in p.labels])


def _edit_texts(editor, texts, classifier, editing: EditorOptions, scoring: ScoreOptions, run: RunOptions):
    """:class:`FeedbackChains` of ``editor`` fed its own output on ``texts``, as ``editing`` says; under
    ``accelerate`` the originals are split across processes (one chain per original)."""
    feedback = parallel.sharded(feedback_chains, over=("texts",), merge=_join_chains)
    chains, labels = feedback(editor, texts, classifier, steps=editing.steps, selection=editing.selection,
                              word_tokenizer=scoring.word_tokenizer, batch_size=run.batch_size, progress=run.progress)
    return FeedbackChains(chains, labels)


def _failed_generations(editor, before: Counter) -> list[str]:
    """One sentence on the generations of an editor that counts its failures (the LLM editor), since ``before``."""
    counts = Counter(getattr(editor, "failures", None) or {})
    counts.subtract(before)
    failed = {k: v for k, v in sorted(counts.items()) if k != "ok" and v > 0}
    total = sum(v for v in counts.values() if v > 0)
    if not failed:
        return []
    reasons = ", ".join(f"{k} {v}" for k, v in failed.items())
    return [f"{sum(failed.values())} of the editor's {total} generations failed ({reasons}): a failed generation "
            "ends its chain, and a step no chain reaches has no inc@n"]


def _score(chains, labels, classifier, lm, scoring: ScoreOptions, run: RunOptions) -> tuple[dict, dict]:
    """``(results, summary)``: the module's numbers with the per-chain values, and the module's own output."""
    with parallel.collective():  # given chains: their labels and perplexities are shared out
        results = compute(chains, n=scoring.n, labels=labels, model=None if labels is not None else classifier, lm=lm,
                          word_tokenizer=scoring.word_tokenizer, pooling=scoring.pooling, return_per_example=True,
                          batch_size=run.batch_size, progress=run.progress)
    summary = dict(results) if scoring.return_per_example else {k: v for k, v in results.items() if k != "per_example"}
    results["chains"] = [list(c) for c in chains]
    if labels is not None:
        results["labels"] = [list(lab) for lab in labels]
    return results, summary


#: intervals by default: the one default (:class:`textxai.stats.IntervalOptions`); the demo asks for 2,000 resamples
INTERVALS = dataclasses.asdict(stats.IntervalOptions())
_PASSED_ON: dict = {}  # a library's warning passed on is shown once, as it would have been


def _sentences(caught) -> list[str]:
    """The user warnings raised inside an analysis, each once, in order (the other warnings are passed on)."""
    out = []
    for w in caught:
        if issubclass(w.category, UserWarning) and str(w.message) not in out:
            out.append(str(w.message))
        if not issubclass(w.category, UserWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, registry=_PASSED_ON)
    return out


def readings_of(intervals: dict) -> dict:
    """``{summary key: sentence}`` of inc@n, minimality@n (means over the chains: :func:`textxai.readings.estimate_reading`,
    a zero-width interval no certainty) and flip_rate@n (a count: exact interval, :func:`textxai.readings.count_reading`).

    >>> readings_of({"inc@1": {"score": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 11}})["inc@1"]
    'inc@1 0.000: every one of the 11 values is the same, so the bootstrap gives no interval (not a certainty); too few to conclude.'
    """
    from textxai import readings

    out = {}
    for key, entry in intervals.items():
        name, _, k = key.partition("@")
        if name == "inc":
            out[key] = readings.estimate_reading(entry, key, 5.0, "extra words the editor needs when fed its own edit "
                                                                  "(0 = consistent)")
        elif name == "minimality":
            out[key] = readings.estimate_reading(entry, key, 10.0, "words between a counterfactual and its original")
        elif name == "flip_rate":
            out[key] = readings.entry_reading(entry, f"flip the prediction at step {k}", "chains")
    return out


def analyse(chains=None, labels=None, classifier=None, lm=None, texts=None, intervals=INTERVALS,
            scoring: ScoreOptions = None, editing: EditorOptions = None, run: RunOptions = None,
            presentation: Presentation = None, **keywords) -> Analysis:
    """The inconsistency of given ``chains`` (with their ``labels``, else ``classifier``'s), or of the editor of
    ``editing`` fed its own output on ``texts``: numbers, per-chain values, intervals over the chains, the
    per-step box-plots (``figures["steps"]``, ``figures["intervals"]``), warnings and the report.

    Options: :class:`ScoreOptions` (``n``, ``pooling``, ``word_tokenizer``, ``return_per_example``),
    :class:`EditorOptions` (``editor``, ``steps``, ...), :class:`RunOptions` (``batch_size``, ``progress``),
    :class:`Presentation` (``figures``, ``title``, ``max_chains``), each field also as a keyword. ``lm``: a
    causal LM for perplexity@n. ``intervals``: :func:`textxai.render.analysis_intervals` options (None: none).
    ``warnings``: every user warning raised on the way (raised again) and the editor's failed generations.
    """
    groups = apply_keywords("analyse", keywords, scoring=(ScoreOptions, scoring), editing=(EditorOptions, editing),
                            run=(RunOptions, run), presentation=(Presentation, presentation))
    scoring, run, shown = groups["scoring"], groups["run"], groups["presentation"]
    if (chains is None) == (texts is None):
        raise ValueError(f"chains={'None' if chains is None else 'given'}, texts={'None' if texts is None else 'given'}: "
                         "expected exactly one of them (chains to score, or texts for the editor to edit)")
    if texts is not None and labels is not None:
        raise ValueError("labels=given with texts: the labels of an editor's chains come from the classifier; "
                         "expected labels only with chains")
    if texts is not None:   # the inputs' errors before any model loads
        texts = [t for t in check_texts(texts) if t.strip()]  # blank lines of a file are no texts to edit
    if classifier is not None:   # resolved once: the editor, the chains and the scoring take the TextClassifier
        from textxai.classifier import as_classifier

        classifier = as_classifier(classifier)
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if chains is None:
            editor = get_editor(groups["editing"].editor, classifier, **editor_options(groups["editing"]))
            before = Counter(getattr(editor, "failures", None) or {})
            chains, labels = _edit_texts(editor, texts, classifier, groups["editing"], scoring, run)
            notes = _failed_generations(editor, before)
        results, summary = _score(chains, labels, classifier, lm, scoring, run)
        figures = {"steps": plot_steps(chains, word_tokenizer=scoring.word_tokenizer)} if shown.figures else {}
        if intervals is not None:  # bootstrap over the chains
            render.analysis_intervals("inconsistency", results, intervals, figures if shown.figures else None)
            results["readings"] = readings_of(results.get("intervals", {}))   # none under confidence_level=None
    sentences = _sentences(caught)
    for sentence in sentences + notes:
        warnings.warn(sentence, UserWarning, stacklevel=2)
    results["warnings"] = sentences + notes
    text = report(results, check_n(scoring.n), shown.title, classifier=classifier, max_chains=shown.max_chains)
    if results.get("readings"):
        text = text.rstrip("\n") + "\n\nReadings:\n" + "".join(f"  {r}\n" for r in results["readings"].values())
    return Analysis("inconsistency", results, summary, sentences + notes, figures, text)
