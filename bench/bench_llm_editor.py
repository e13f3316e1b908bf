"""The LLM editor with k candidates chosen by the classifier, against the substitution editor (issue 40, part 3).

Texts: the ``--n`` shortest of CEval's IMDb test reviews (``../shared/reference/ceval``, expert originals; read there,
never copied) and the 8 held-out demo texts; classifier ``textxai/demo-sentiment``; LM the packaged
SmolLM2-135M-Instruct. For each prompt (``minimal``, ``ceval``) one pool of candidates per text: the greedy rewrite,
then sampled ones (:func:`textxai.lm.sample`: reply j by its own seeded generator, so k = 4's 3 samples are k = 8's
first 3 and each k asks only the new ones); the editor at k = 1, 4, 8 offers the first k of them (failed ones
dropped, as :class:`textxai.llm_editor.LLMEditor` does). Chains: :func:`textxai.inconsistency.feedback_chains`,
selection ``flip_then_min_distance`` (the classifier chooses the flipping candidate with the smallest word distance,
else the closest). Reported per editor, over the texts: flip@1 (a failed generation counts as no flip; a count with
its exact 95 % interval, :func:`textxai.stats.count_interval`), with 95 % bootstrap intervals
(:func:`textxai.stats.bootstrap_interval`, resampling texts) minimality@1 (word distance of the chosen edit, texts with one), inc@1 (chains that reach step 2); the generation
cost per text (replies, generated tokens, contended seconds).

Order (a run stopped early reports what ran; every chain is saved in ``--out`` as its chunk completes): the IMDb
reviews by chunks of ``--chunk``, each chunk's substitution chains, LLM step 1 at k = 8, 4, 1 and step 2 at k = 4
and 1; then the demo texts; step 2 at k = 8 last. ``--offset`` / ``--n`` make shards run in parallel;
``--merge a.json b.json ...`` prints their table together. 1 torch thread by default (``--threads``).

    TEXTXAI_REFERENCE_DIR=../shared/reference nice -n 10 python bench/bench_llm_editor.py --n 50 --out llm_editor.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

KS = (1, 4, 8)


class Pool:
    """Per text, the LLM's candidates for one prompt, in slots: 0 the greedy one (asked for every text of a call in
    one batch), 1.. sampled ones, made only as far as a k asks (reply j is the same whether 3 or 7 are asked:
    :func:`textxai.lm.sample`'s per-reply seeds), so k = 1, 4, 8 share their generations; each cleaned and checked
    once, by the editor itself (its log: the reply and its failure reason, duplicates of an earlier slot included)."""

    def __init__(self, classifier, lm, prompt):
        from textxai.llm_editor import LLMEditor

        self.editor = LLMEditor(classifier, lm=lm, prompt=prompt, num_candidates=1, progress=False)
        self.editor.rank = False
        self.slots = {}   # text -> [(rewrite or None), ...]
        self.cost = {"texts": 0, "replies": 0, "tokens": 0, "seconds": 0.0}

    def _fill(self, texts, k):
        from textxai.llm_editor import _strip_reply

        editor = self.editor
        editor.num_candidates = k
        before = len(editor.log)
        start = time.perf_counter()
        editor(texts)
        self.cost["seconds"] += time.perf_counter() - start
        entries = editor.log[before:]
        tok = editor.lm.tokenizer
        names = editor._label_names().values()
        for i, text in enumerate(texts):
            mine = entries[i * k:(i + 1) * k]
            assert len(mine) == k and all(e[0] == text for e in mine)
            fresh = mine[len(self.slots.get(text, ())):]   # the earlier slots came from the memo
            self.cost["replies"] += len(fresh)
            self.cost["tokens"] += sum(len(tok(r, add_special_tokens=False)["input_ids"]) for _, r, _ in fresh)
            if text not in self.slots:
                self.cost["texts"] += 1
            self.slots[text] = [_strip_reply(r, names) if reason is None else None for _, r, reason in mine]

    def candidates(self, texts, k):
        todo = [t for t in dict.fromkeys(texts) if len(self.slots.get(t, ())) < k]
        if todo:
            self._fill(todo, k)
        return [[c for c in self.slots[t][:k] if c is not None] for t in texts]

    def editor_at(self, k):
        return lambda texts: self.candidates(list(texts), k)


def chain_metrics(chains, labels) -> dict:
    from textxai.stats import bootstrap_interval, count_interval
    from textxai.words import word_distance

    flips, minimal, inc = [], [], []
    for chain, lab in zip(chains, labels):
        flips.append(float(len(chain) > 1 and chain[1] is not None and lab[1] != lab[0]))
        if len(chain) > 1 and chain[1] is not None:
            d1 = word_distance(chain[0], chain[1])
            minimal.append(float(d1))
            if len(chain) > 2 and chain[2] is not None:
                inc.append(float(max(word_distance(chain[1], chain[2]) - d1, 0)))
    out = {}
    for name, values in (("minimality@1", minimal), ("inc@1", inc)):
        r = bootstrap_interval(np.array(values), n_resamples=2000, seed=0) if values else {"score": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0}
        out[name] = {k: r[k] for k in ("score", "ci_low", "ci_high", "n")}
    k, n = int(sum(flips)), len(flips)   # a count: its exact (Clopper-Pearson) interval, as the library reports it
    low, high = count_interval(k, n) if n else (float("nan"), float("nan"))
    out["flip@1"] = {"score": k / n if n else float("nan"), "ci_low": low, "ci_high": high, "n": n, "k": k}
    return {key: out[key] for key in ("flip@1", "minimality@1", "inc@1")}


def merged(paths) -> dict:
    """``{run key: {"chains", "labels", "cost"}}`` of several runs' JSON files (shards), chains of one key concatenated;
    step-1 metrics from the ``|1`` chains (or the substitution's), inc@1 from the ``|2`` ones."""
    out: dict = {}
    for path in paths:
        data = json.loads(Path(path).read_text())
        for key, entry in data.get("chains", {}).items():
            slot = out.setdefault(key, {"chains": [], "labels": []})
            slot["chains"] += entry["chains"]
            slot["labels"] += entry["labels"]
        for key, cost in data.items():
            if key.startswith("cost/"):
                total = out.setdefault(key, {"texts": 0, "replies": 0, "tokens": 0, "seconds": 0.0})
                for field in total:
                    total[field] += cost.get(field, 0)
    return out


def table(runs: dict) -> str:
    """The markdown table: per editor, flip@1, minimality@1 (step 1 chains) and inc@1 (2-step chains), flip@1 a count with its
    exact 95 % interval, the others with their 95 % bootstrap interval and n; then the generation cost per text."""
    def cell(m):
        if not m["n"]:
            return "–"
        if "k" in m:   # a count, its exact interval
            return f"{m['k']} of {m['n']} = {m['score']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]"
        return f"{m['score']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}] (n={m['n']})"

    rows = ["| texts | editor | flip@1 | minimality@1 (words) | inc@1 (words) |", "|---|---|---|---|---|"]
    names = sorted({k.split("|")[0] for k in runs if "|" in k})
    for name in names:
        one = runs.get(f"{name}|1") or runs.get(f"{name}|2")
        two = runs.get(f"{name}|2")
        first, second = chain_metrics(one["chains"], one["labels"]), chain_metrics(two["chains"], two["labels"]) if two else None
        texts, editor = name.split("/", 1)
        rows.append(f"| {texts} | {editor} | {cell(first['flip@1'])} | {cell(first['minimality@1'])} | "
                    f"{cell(second['inc@1']) if second else '–'} |")
    for key in sorted(k for k in runs if k.startswith("cost/")):
        c = runs[key]
        if c["texts"]:
            rows.append(f"\n{key}: {c['texts']} prompts (texts and edits), {c['replies'] / c['texts']:.1f} replies and "
                        f"{c['tokens'] / c['texts']:.0f} generated tokens each, {c['seconds'] / c['texts']:.0f} s each (contended)")
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50, help="shortest IMDb reviews (default 50)")
    parser.add_argument("--offset", type=int, default=0, help="skip the first OFFSET of them (a shard: --offset 25 --n 25)")
    parser.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                        help="no run: the table of these runs' chains together (shards of one run)")
    parser.add_argument("--out", default="llm_editor.json")
    parser.add_argument("--prompts", default="minimal,ceval")
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--no-substitution", action="store_true", help="LLM chains only (another process makes them)")
    parser.add_argument("--chunk", type=int, default=5, help="texts per editor call (their greedy replies batched)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: a shared, loaded machine; default 1)")
    args = parser.parse_args(argv)
    if args.merge:
        print(table(merged(args.merge)))
        return

    import torch

    torch.set_num_threads(args.threads)   # 2 threads on 2 loaded cores ran each LM step ~10x slower than 1 (spinning)
    from real_texts import imdb_labelled

    from textxai.classifier import as_classifier
    from textxai.demo import demo_texts
    from textxai.editors import SubstitutionEditor
    from textxai.inconsistency import feedback_chains
    from textxai.lm import PACKAGED_LM, as_lm

    reviews = [t for t, _ in sorted(imdb_labelled(), key=lambda r: (len(r[0].split()), r[0]))][
        args.offset: args.offset + args.n]
    if len(reviews) < args.n:
        raise SystemExit("CEval's IMDb reviews not found: set TEXTXAI_REFERENCE_DIR=../shared/reference")
    sets = {"imdb": reviews} if args.no_demo else {"imdb": reviews, "demo": demo_texts("sentiment", 8)}
    clf = as_classifier("textxai/demo-sentiment")
    lm = as_lm(PACKAGED_LM)
    results = {"texts": {k: len(v) for k, v in sets.items()},
               "words": {k: [len(t.split()) for t in v] for k, v in sets.items()}, "runs": {}}
    out = Path(args.out)

    def save():
        out.write_text(json.dumps(results, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    pools = {p: Pool(clf, lm, p) for p in args.prompts.split(",")}
    sub_done: dict = {}

    def substitution(name, lo=0, hi=None):
        """The substitution editor's 2-step chains of ``texts[lo:hi]``, added to those already made."""
        texts = sets[name][lo:hi]
        start = time.perf_counter()
        sub = feedback_chains(SubstitutionEditor(clf, max_words=4), texts, clf, steps=2, progress=False)
        chains, labels, seconds = sub_done.setdefault(name, ([], [], [0.0]))
        chains.extend(sub.chains)
        labels.extend(sub.labels)
        seconds[0] += time.perf_counter() - start
        results.setdefault("chains", {})[f"{name}/substitution|2"] = {"chains": chains, "labels": labels}
        results["runs"][f"{name}/substitution"] = {**chain_metrics(chains, labels), "texts": len(chains),
                                                   "seconds_per_text_step": seconds[0] / len(chains) / 2,
                                                   "steps": 2, "chains": [c[:3] for c in chains][:3]}
        log(f"{name} substitution ({len(chains)} texts) "
            f"{ {m: round(v['score'], 3) for m, v in chain_metrics(chains, labels).items()} }")
        save()

    chains_of: dict = {}

    def llm(prompt, name, steps, ks, chunk=10, with_substitution=False):
        """Chains at each k, by chunks of texts (each saved as it completes: chains are per text). ``steps`` 1 or 2: that
        many steps at every k of ``ks``; (1, 2): per chunk, step 1 at ``ks``, then 2 steps at the ks 4 and 1."""
        pool, texts = pools[prompt], sets[name]
        plan_ks = [(1, k) for k in ks] + [(2, k) for k in (4, 1)] if steps == (1, 2) else [(steps, k) for k in ks]
        for lo in range(0, len(texts), chunk):
            if with_substitution:
                substitution(name, lo, lo + chunk)
            for step, k in plan_ks:
                key = f"{name}/llm-{prompt}/k={k}"
                res = feedback_chains(pool.editor_at(k), texts[lo:lo + chunk], clf, steps=step, progress=False)
                done = chains_of.setdefault((key, step), ([], []))
                done[0].extend(res.chains)
                done[1].extend(res.labels)
                results.setdefault("chains", {})[f"{key}|{step}"] = {"chains": done[0], "labels": done[1]}
                entry = results["runs"].setdefault(key, {})
                metrics = chain_metrics(*done)
                if step == 1:
                    entry.update({m: v for m, v in metrics.items() if m != "inc@1"})
                else:
                    entry["inc@1"] = metrics["inc@1"]
                entry["texts_step1" if step == 1 else "texts_step2"] = len(done[0])
                entry["chains"] = [c[:3] for c in done[0]][:3]
                results[f"cost/{prompt}"] = dict(pool.cost, failures=dict(pool.editor.failures),
                                                 seconds_per_text=pool.cost["seconds"] / max(pool.cost["texts"], 1))
                log(f"{key} step {step} ({len(done[0])} texts): { {m: round(v['score'], 3) for m, v in metrics.items()} } "
                    f"cost {pool.cost}")
                save()

    # most wanted first (a run stopped early reports what ran): the IMDb reviews by chunks of 5 with the first prompt:
    # each chunk's substitution chains, step 1 (its k = 8 pool serves k = 1 and 4) and step 2 at k = 4 and 1 before the
    # next chunk; then the other prompts likewise; then the demo texts; step 2 at k = 8 last
    first, *others = list(pools)
    plan = []
    for p in [first, *others]:
        plan += [lambda p=p: llm(p, "imdb", (1, 2), (8, 4, 1), chunk=args.chunk,
                                 with_substitution=p == first and not args.no_substitution)]
    for p in [first, *others]:
        if "demo" in sets:
            plan += [lambda p=p: llm(p, "demo", 1, (8, 4, 1), chunk=8, with_substitution=p == first and not args.no_substitution),
                     lambda p=p: llm(p, "demo", 2, (4, 1), chunk=8)]
    plan += [lambda p=p, name=name: llm(p, name, 2, (8,), chunk=args.chunk) for p in pools for name in sets]
    for task in plan:
        task()
    log("done")


if __name__ == "__main__":
    main()
