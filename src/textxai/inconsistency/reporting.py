"""The inconsistency method's plain-text report: the table of inc@n, the chains a reader learns most from,
the most inconsistent step explained in words, editors side by side, the LLM editor's raw edits, comparisons.

>>> results = {"chains": [["good film", "bad film", "good movie here now"]],
...            "per_example": {"minimality": [[1, 4]], "inc": [[3]]}}
>>> most_inconsistent(results)
(0, 1)
"""
from __future__ import annotations

from textxai import render
from textxai.validation import one_line


def _short(text, limit: int = 100) -> str:
    return "<no edit: the editor returned no candidate (the chain ends)>" if text is None else one_line(text, limit)


def most_inconsistent(results: dict) -> tuple[int, int] | None:
    """(chain, step i) of the largest inc (the first such), None when every step's inc is 0."""
    best = None
    for c, incs in enumerate(results["per_example"]["inc"]):
        for i, v in enumerate(incs, start=1):
            if v > 0 and (best is None or v > best[2]):
                best = (c, i, v)
    return None if best is None else best[:2]


def explain_step(results: dict, c: int, i: int, label_names: dict | None = None) -> list[str]:
    """Why step ``i`` of chain ``c`` is inconsistent, in words (eq. 1 on that chain); ``label_names``: class
    index -> name (a classifier's ``labels``)."""
    chain, d = results["chains"][c], results["per_example"]["minimality"][c]
    labels = (results.get("labels") or results.get("per_example", {}).get("labels") or [None] * (c + 1))[c]
    names = label_names or {}

    def label(k):
        return "" if labels is None or labels[k] is None else f" ({names.get(labels[k], labels[k])})"

    return [f"Why chain {c} is inconsistent at step {i}: the editor turned x{i - 1}{label(i - 1)} into x{i}{label(i)} "
            f"by changing {d[i - 1]} word{'s' * (d[i - 1] != 1)}; asked to edit x{i}, it changed {d[i]} words to reach "
            f"x{i + 1}{label(i + 1)}, although x{i - 1} itself was only {d[i - 1]} word{'s' * (d[i - 1] != 1)} away "
            f"{'with the other label ' if labels is not None and labels[i - 1] != labels[i] else ''}"
            f"-- a smaller counterfactual existed and the editor missed it: inc = {d[i]} - {d[i - 1]} = {d[i] - d[i - 1]}."]


def report(results: dict, n, title: str = "Inconsistency", classifier=None, max_chains: int = 2) -> str:
    lines = [f"## {title}", "", f"{len(results['chains'])} chains. inc@n: lower is better (0 = the editor never answered "
             "its own edit with a larger one).", "",
             f"{'n':>3}  {'inc@n':<19}  {'(chains, steps)':<16}  {'minimality@n':<19}  {'flip_rate@n (chains)':<20}"]
    for k in n:
        flip = f"{render.fmt(results, f'flip_rate@{k}')} ({results[f'flip_rate@{k}_chains']})" if f"flip_rate@{k}" in results else "-"
        counts = f"({results[f'inc@{k}_chains']}, {results[f'inc@{k}_steps']})"
        lines.append(f"{k:>3}  {render.fmt(results, f'inc@{k}'):<19}  {counts:<16}  "
                     f"{render.fmt(results, f'minimality@{k}'):<19}  {flip:<20}")
    if results.get("intervals"):
        lines += ["", render.interval_note(results["intervals"])]
    lines.append("")
    worst = most_inconsistent(results)
    shown = chains_to_show(results, max_chains)
    if worst is not None and worst[0] not in shown:
        shown = shown[:-1] + [worst[0]] if shown else [worst[0]]
    for c in shown:
        lines += _chain_lines(results, c, classifier)
    if worst is None:
        lines.append("No step of any chain is inconsistent: whenever the editor was asked to edit its own edit, it "
                     "answered with an edit at most as large.")
    else:
        lines += explain_step(results, *worst, label_names=getattr(classifier, "labels", None))
    return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"


def chains_to_show(results: dict, max_chains: int) -> list[int]:
    """The first ``max_chains`` chains, those where the editor changed the label first (then any other edit,
    then chains it could not edit at all): the examples a reader learns most from."""
    labels = results.get("labels") or results.get("per_example", {}).get("labels")

    def rank(c):
        texts = [t for t in results["chains"][c] if t is not None]
        flipped = labels is not None and len(set(x for x in labels[c] if x is not None)) > 1
        return (0 if flipped else 1 if len(texts) > 1 else 2, c)

    return sorted(range(len(results["chains"])), key=rank)[:max_chains]


def _chain_lines(results: dict, c: int, classifier=None) -> list[str]:
    labels = results.get("labels") or results.get("per_example", {}).get("labels")
    names = getattr(classifier, "labels", None) or {}
    incs = results["per_example"]["inc"][c]
    lines = [f"Chain {c}:" + (f"  (inc per step: {incs})" if any(incs) else "")]
    d = results["per_example"]["minimality"][c]
    for i, text in enumerate(results["chains"][c]):
        lab = ""
        if labels is not None and i < len(labels[c]) and labels[c][i] is not None:
            lab = f"[{names.get(labels[c][i], labels[c][i])}] "
        dist = f"d={d[i - 1]}" if 0 < i <= len(d) else ""
        lines.append(f"  x{i:<2} {dist:<5} {lab}{_short(text)}")
    return lines + [""]


def editors_table(runs: dict, n) -> str:
    """One line per editor: inc@n, flip rate, minimality and perplexity at each n, with their intervals."""
    keys = [f"{m}@{k}" for k in n for m in ("inc", "flip_rate", "minimality", "perplexity")]
    keys = [k for k in keys if any(k in r for r in runs.values())]
    lines = ["Editors on the same texts (inc@n lower is better; [95% bootstrap interval over the chains]):",
             f"{'editor':<13}" + "".join(f"{k:<24}" for k in keys)]
    for name, r in runs.items():
        lines.append(f"{name:<13}" + "".join(f"{render.fmt(r, k) if k in r else '-':<24}" for k in keys))
    start = next((r["perplexity_start_token"] for r in runs.values() if "perplexity_start_token" in r), None)
    if start:
        lines.append(f"perplexity: the LM's start token {start} prepended to each text (CEval's rule)")
    return "\n".join(lines) + "\n"


def llm_edits(editor, limit: int = 10) -> str:
    """The first ``limit`` edits the LLM editor made, as they came out (raw reply, and why a failure failed)."""
    counts = ", ".join(f"{k} {v}" for k, v in sorted(editor.failures.items()))
    lines = [f"{min(limit, len(editor.log))} of the LLM editor's {len(editor.log)} generations, as they came out "
             f"({counts}; a failed generation ends the chain):"]
    for text, reply, reason in editor.log[:limit]:
        lines += [f"  in : {one_line(text, 110)}", f"  out: {one_line(reply, 110) or '<empty>'}"
                  + (f"   [failed: {reason}]" if reason else "")]
    return "\n".join(lines) + "\n"


def comparison_lines(comparison: dict, name_a: str, name_b: str) -> str:
    """The :func:`textxai.inconsistency.compare_editors` table as text."""
    head = "Paired comparison of the editors on the same originals (inc@n, lower is better):"
    if not any(r["chains_a"] for r in comparison.values()):
        return (f"{head} {name_a} vs {name_b}: no original has a chain of both editors reaching step 2, "
                "so there is nothing to compare.\n")
    lines = [head, f"{'n':>3}  {name_a:>12}  {name_b:>12}  {'difference [95% CI]':<24}  {'chains':>6}  p (test)"]
    for k, r in comparison.items():
        ci = "" if r["ci_low"] != r["ci_low"] else f" [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
        lines.append(f"{k:>3}  {r['mean_a']:>12.3f}  {r['mean_b']:>12.3f}  {r['difference']:+.3f}{ci:<17}  "
                     f"{r['chains_a']:>6}  {r['p_value']:.3g} ({r['test']})")
    return "\n".join(lines) + "\n"
