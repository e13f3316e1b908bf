"""Ten edits of the built-in counterfactual editor on held-out demo-sentiment texts (the table in the
inconsistency card). Offline, a few minutes on 2 busy CPU cores:

    python examples/counterfactual_edits.py [--n 10] [--max-words 3]

For each held-out text (balanced over the labels, file order) the editor proposes candidates; the one
:func:`textxai.inconsistency.feedback_chains` would keep (the smallest edit that flips the prediction,
else the smallest edit) is printed as a markdown row with the changed words in bold and the prediction
before and after. Texts without a candidate are counted and skipped.
"""
from __future__ import annotations

import argparse

from textxai import demo
from textxai.classifier import as_classifier
from textxai.editors import SubstitutionEditor
from textxai.inconsistency import feedback_chains
from textxai.words import word_spans


def bold_changes(before: str, after: str) -> str:
    """``after`` with the words that differ from ``before`` (same word count: a substitution) in bold."""
    a, b = word_spans(before), word_spans(after)
    out, pos = [], 0
    for (wa, _, _), (wb, start, end) in zip(a, b):
        out.append(after[pos:start] + (f"**{wb}**" if wa != wb else wb))
        pos = end
    return "".join(out) + after[pos:]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="edits to show (default 10)")
    parser.add_argument("--max-words", type=int, default=3, help="the editor's max_words (default 3)")
    args = parser.parse_args(argv)
    clf = as_classifier("textxai/demo-sentiment")
    editor = SubstitutionEditor(clf, max_words=args.max_words)
    rows, skipped, flipped = [], 0, 0
    for text in demo.demo_texts("sentiment", 90):
        chains, labels = feedback_chains(editor, [text], clf, steps=1, progress=False)
        if chains[0][1] is None:
            skipped += 1
            continue
        before, after = (clf.labels[k] for k in labels[0])
        flipped += before != after
        rows.append(f"| {text} | {bold_changes(text, chains[0][1])} | {before} → {after} |")
        if len(rows) == args.n:
            break
    print("| original | edit | prediction |\n| --- | --- | --- |")
    print("\n".join(rows))
    print(f"\n{len(rows)} edits shown, {flipped} flip the prediction; {skipped} texts before them got no candidate.")


if __name__ == "__main__":
    main()
