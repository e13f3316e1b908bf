"""Benchmark of textxai.naopc: exact DP vs enumerating orderings; deduplicated beam vs the printed Algorithm 1.

    .venv/bin/python bench/bench_naopc.py [--texts 20] [--exact-sizes 6 8 9 12 14] [--beam-sizes 10 20 30 40]

On the demo sentiment model (MiniLM encoder; MiniLM with a random head when the demo model is missing):

1. Exact limits. Ours: DP over word subsets (2^N model calls, O(2^N N) arithmetic). Naive: the authors'
   way, enumerating all N! orderings over the same 2^N subset outputs (run for N <= 9, where N! fits in
   time; for larger N the enumeration time is extrapolated per ordering and marked "est."), and the fully
   naive count N! * N model calls (every ordering evaluated on the model).
2. Beam limits (B = 5), 20 texts of 10-40 words. Ours: both limits in one pass, deduplicated by removed
   set, memoised, batched across beams and texts. Paper's Algorithm 1 as printed: two runs, every
   candidate's AOPC recomputed from scratch (i + 1 model inputs for a candidate of length i, no memo).
   Its model calls are counted exactly; its wall time is measured on the shortest texts (every input run
   through the model, batched per step) and estimated elsewhere from the measured time per model input.
"""
from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
import torch

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baselines import demo_classifier  # noqa: E402




def corpus() -> list[str]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "src" / "textxai" / "demo" / "data" / "sentiment.jsonl"
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]


def texts_with_words(clf, n_words: int, count: int) -> list[str]:
    """``count`` texts of exactly ``n_words`` words: demo reviews, joined and cut at n_words words."""
    from textxai.words import word_spans

    reviews = corpus()
    out = []
    for i in range(count):
        text = " ".join(reviews[i * 3 % len(reviews) + k] for k in range(4))
        spans = word_spans(text)
        out.append(text[: spans[n_words - 1][2]])
        assert len(clf.words(out[-1])) == n_words, (len(clf.words(out[-1])), n_words)
    return out


class Counter:
    """score_many over the classifier that counts model inputs (rows) and calls."""

    def __init__(self, clf, texts, targets, batch_size=64):
        self.clf, self.texts, self.targets, self.batch_size = clf, texts, targets, batch_size
        self.inputs = 0
        self.seconds = 0.0

    def __call__(self, masks_list):
        idx = [i for i, m in enumerate(masks_list) if m is not None and len(m)]
        outs = [np.zeros(0) for _ in masks_list]
        if not idx:
            return outs
        start = time.perf_counter()
        probs = self.clf.masked_proba_many([self.texts[i] for i in idx], [masks_list[i] for i in idx],
                                           batch_size=self.batch_size)
        self.seconds += time.perf_counter() - start
        for i, p in zip(idx, probs):
            outs[i] = p[:, self.targets[i]]
            self.inputs += len(p)
        return outs


# ----------------------------------------------------------------------------------- printed Algorithm 1
def printed_algorithm1(score_many, ns, beam_size, run_model=True):
    """Algorithm 1 as printed: FindLimit twice; each candidate's AOPC from scratch. Returns (limits, inputs).

    With ``run_model`` every candidate prefix set goes to the model (batched per step, duplicates kept, as
    the printed algorithm has no memo); otherwise the inputs are only counted and served from a table
    filled by real (deduplicated) model calls.
    """
    cache = [dict() for _ in ns]
    inputs = 0

    def key_masks(keys, n):
        return ((np.asarray(keys, dtype=object)[:, None] >> np.arange(n)) & 1).astype(bool)

    def probs(requests):  # requests[e] = list of set keys (with duplicates)
        nonlocal inputs
        inputs += sum(len(r) for r in requests)
        if run_model:
            outs = score_many([key_masks(r, n) if r else None for r, n in zip(requests, ns)])
            return [dict(zip(r, o)) if r else {} for r, o in zip(requests, outs)]
        todo = [sorted({k for k in r if k not in c}) for r, c in zip(requests, cache)]
        outs = score_many([key_masks(t, n) if t else None for t, n in zip(todo, ns)])
        for c, t, o in zip(cache, todo, outs):
            c.update(zip(t, o))
        return [{k: c[k] for k in r} for r, c in zip(requests, cache)]

    p0 = [v[0] for v in probs([[0] for _ in ns])]
    limits = []
    for mode in ("upper", "lower"):
        beams = [[()] for _ in ns]
        for step in range(1, max(ns) + 1):
            cands, requests = [], []
            for e, n in enumerate(ns):
                c = [o + (j,) for o in beams[e] for j in range(n) if j not in o] if step <= n else []
                cands.append(c)
                req = []
                for order in c:  # AOPC(f, x, new_ord) from scratch: every prefix of the candidate
                    key = 0
                    for j in order:
                        key |= 1 << j
                        req.append(key)
                requests.append(req)
            got = probs(requests)
            for e, n in enumerate(ns):
                if step > n:
                    continue
                scored = []
                for order in cands[e]:
                    key, total = 0, 0.0
                    for j in order:
                        key |= 1 << j
                        total += p0[e] - got[e][key]
                    scored.append((total / n, order))
                scored.sort(key=lambda t: -t[0] if mode == "upper" else t[0])
                beams[e] = [o for _, o in scored[:beam_size]]
                if step == n:
                    beams[e] = [(scored[0][0], beams[e][0])]
        limits.append([b[0][0] for b in beams])
    return limits, inputs


# ----------------------------------------------------------------------------------------------- main
def subset_table(clf, text, target, n):
    """p_target for every subset of the n words removed, indexed by bitmask (2^n model inputs)."""
    masks = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(bool)
    return clf.masked_proba(text, masks, batch_size=64)[:, target]


def enumerate_orderings(table, n):
    """max and min AOPC over all n! orderings (the authors' exhaustive search, correct running extrema)."""
    best, worst = -math.inf, math.inf
    for order in itertools.permutations(range(n)):
        key, total = 0, 0.0
        for j in order:
            key |= 1 << j
            total += table[0] - table[key]
        best, worst = max(best, total), min(worst, total)
    return worst / n, best / n


def bench_exact(clf, sizes, count):
    from textxai import naopc

    print("\n== Exact limits: DP over subsets vs enumerating all N! orderings (same 2^N model calls) ==")
    print(f"{'N':>3} {'texts':>5} {'model s':>8} {'DP s':>8} {'enum s':>12} {'enum/DP':>10} "
          f"{'total ratio':>11} {'calls ours':>10} {'calls N!*N':>11} {'calls ratio':>11}")
    per_order = None
    for n in sizes:
        texts = texts_with_words(clf, n, count if n <= 10 else 1)
        targets = clf.predict(texts)
        start = time.perf_counter()
        tables = [subset_table(clf, t, c, n) for t, c in zip(texts, targets)]
        model_s = time.perf_counter() - start
        w = 1 << np.arange(n)
        start = time.perf_counter()
        lims = [naopc.aopc_limits(lambda m, tb=tb: tb[np.asarray(m, np.int64) @ w], n, max_exact_words=max(sizes))
                for tb in tables]
        dp_s = time.perf_counter() - start
        if n <= 9:
            start = time.perf_counter()
            for tb, lim in zip(tables, lims):
                lo, hi = enumerate_orderings(tb, n)
                assert abs(lo - lim.lower) < 1e-9 and abs(hi - lim.upper) < 1e-9
            enum_s = time.perf_counter() - start
            per_order = enum_s / (len(texts) * math.factorial(n))
            enum_txt = f"{enum_s:.3f}"
        else:
            enum_s = per_order * len(texts) * math.factorial(n)
            enum_txt = f"{enum_s:.3g} est."
        calls = len(texts) * (1 << n)
        naive_calls = len(texts) * math.factorial(n) * n
        print(f"{n:>3} {len(texts):>5} {model_s:>8.2f} {dp_s:>8.3f} {enum_txt:>12} {enum_s / dp_s:>10.3g} "
              f"{(model_s + enum_s) / (model_s + dp_s):>11.3g} {calls:>10} {naive_calls:>11.3g} "
              f"{naive_calls / calls:>11.3g}")


def bench_beam(clf, sizes, count, beam_size=5, measure_printed_upto=10):
    from textxai import naopc

    print(f"\n== Beam limits (B = {beam_size}): ours (dedup + memo, batched) vs Algorithm 1 as printed ==")
    print(f"{'N':>3} {'texts':>5} {'ours s':>8} {'ours calls':>10} {'printed s':>12} {'printed calls':>13} "
          f"{'time ratio':>10} {'calls ratio':>11} {'same limits':>11}")
    for n in sizes:
        texts = texts_with_words(clf, n, count)
        targets = clf.predict(texts)
        ours_counter = Counter(clf, texts, targets)
        start = time.perf_counter()
        lims = naopc.aopc_limits_many(ours_counter, [n] * len(texts), method="beam", beam_size=beam_size)
        ours_s = time.perf_counter() - start
        run_model = n <= measure_printed_upto
        printed_counter = Counter(clf, texts, targets)
        start = time.perf_counter()
        (upper, lower), printed_inputs = printed_algorithm1(printed_counter, [n] * len(texts), beam_size, run_model)
        printed_s = time.perf_counter() - start
        if not run_model:  # add the model time of the inputs served from the table
            per_input = printed_counter.seconds / max(printed_counter.inputs, 1)
            printed_s += per_input * (printed_inputs - printed_counter.inputs)
        same = np.mean([abs(u - l.upper) < 1e-6 and abs(lo - l.lower) < 1e-6
                        for u, lo, l in zip(upper, lower, lims)])
        # dedup keeps the best partial sum per set: usually as good or better than the printed beam, not always
        better = np.mean([l.upper >= u - 1e-9 and l.lower <= lo + 1e-9 for u, lo, l in zip(upper, lower, lims)])
        print(f"{n:>3} {len(texts):>5} {ours_s:>8.2f} {ours_counter.inputs:>10} "
              f"{printed_s:>9.1f}{'' if run_model else ' est':>3} {printed_inputs:>13} {printed_s / ours_s:>10.1f} "
              f"{printed_inputs / ours_counter.inputs:>11.1f} {same:>11.0%}  (ours as good or better: {better:.0%})")


# --------------------------------------------------------------------- vs the authors' beam (issue 11)
def bench_authors(clf, n_texts: int, cache: str | None, searches: list[str], index: dict | None = None):
    """Model inputs and limits of our searches against the authors' beam (B = 5) on the same model outputs
    (naopc_problems.versus_authors; ``cache``: a pickle file keeping the model outputs between runs)."""
    import pickle
    from pathlib import Path

    from naopc_problems import beam_problems, versus_authors

    store = pickle.loads(Path(cache).read_bytes()) if cache and Path(cache).exists() else {}
    print(f"\n== Limits vs the authors' beam (B = 5), {n_texts} texts of 10-40 words ==")
    print("(ratio = their model inputs / ours over all texts; diff = theirs - ours for the upper limit, "
          "ours - theirs for the lower: + = ours looser)")
    print(f"{'features':<8} {'search':<18} {'inputs':>8} {'theirs':>8} {'ratio':>6} {'upper mean':>11} {'upper worst':>11} "
          f"{'lower mean':>11} {'lower worst':>11} {'texts > 0.01':>12}")
    for features in ("words", "tokens"):
        problems = list(beam_problems(clf, n_texts, features, store, (index or {}).get(features)))
        if not problems:
            continue
        for v in versus_authors(problems, searches):
            print(f"{features:<8} {v.search:<18} {v.inputs:>8} {v.theirs:>8} {v.theirs / v.inputs:>6.2f} "
                  f"{v.d_up.mean():>+11.4f} {v.d_up.max():>+11.4f} {v.d_lo.mean():>+11.4f} {v.d_lo.max():>+11.4f} "
                  f"{int(((v.d_up > 0.01) | (v.d_lo > 0.01)).sum()):>7}/{len(v.ns)}  (N={min(v.ns)}-{max(v.ns)})", flush=True)
        if cache:
            Path(cache).write_bytes(pickle.dumps(store))


def bench_tradeoff(clf, n_texts: int, searches: list[str]):
    """Model inputs vs the gap to the exact limits, texts of 10-14 words (word features; naopc_problems.tradeoff)."""
    from naopc_problems import tradeoff

    print()
    print(tradeoff(clf, [int(round(x)) for x in np.linspace(10, 14, n_texts)], searches))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=20, help="texts per beam size (default 20)")
    parser.add_argument("--exact-texts", type=int, default=3, help="texts per exact size <= 10 (default 3)")
    parser.add_argument("--exact-sizes", type=int, nargs="*", default=[6, 8, 9, 12, 14])
    parser.add_argument("--beam-sizes", type=int, nargs="*", default=[10, 20, 30, 40])
    parser.add_argument("--measure-printed-upto", type=int, default=10,
                        help="run every input of the printed algorithm through the model up to this N; beyond, its "
                             "inputs are counted exactly and its time estimated per input (default 10)")
    parser.add_argument("--authors", type=int, default=20, help="texts of the comparison with the authors' beam (0: skip)")
    parser.add_argument("--cache", default=None, help="pickle file keeping the model outputs between runs")
    parser.add_argument("--searches", nargs="*", default=["beam", "beam:2", "beam-paper:1", "beam-paper:5"],
                        help="method[:width] compared with the authors' beam and the exact limits")
    parser.add_argument("--word-index", type=int, nargs="*", default=None, help="run only these of the texts (words)")
    parser.add_argument("--token-index", type=int, nargs="*", default=None, help="run only these of the texts (tokens)")
    parser.add_argument("--tradeoff", type=int, default=5, help="texts of 10-14 words for the trade-off curve (0: skip)")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    clf = demo_classifier()
    print(f"classifier: {clf!r}")
    if args.exact_sizes:
        bench_exact(clf, args.exact_sizes, args.exact_texts)
    if args.authors:
        bench_authors(clf, args.authors, args.cache, args.searches, {"words": args.word_index, "tokens": args.token_index})
    if args.tradeoff:
        bench_tradeoff(clf, args.tradeoff, args.searches)
    if args.beam_sizes:
        bench_beam(clf, args.beam_sizes, args.texts, measure_printed_upto=args.measure_printed_upto)


if __name__ == "__main__":
    main()
