"""inc@n over 10,000 synthetic chains x 10 steps of ~200 words: textxai vs the authors' style of code.

The authors' code computed word-level Levenshtein with nltk's ``edit_distance`` (a pure-Python dynamic
programme, one function call per cell) on spaCy tokens, tokenizing both texts of every pair. The baseline
below is that algorithm written out (nltk is not a dependency). It is timed on a subsample of the chains
(it would take hours on all of them) and compared per chain; both give identical distances.

    .venv/bin/python bench/bench_inconsistency.py [--chains 10000] [--baseline-chains 20]
"""
from __future__ import annotations

import argparse
import random
import time

import numpy as np


from baselines import nltk_edit_distance  # noqa: E402  (the authors' algorithm, written out)


def baseline_inc(chains, n_values):
    import spacy

    nlp = spacy.blank("en")

    def words(text):
        return [t.text for t in nlp(text) if not t.is_space]

    steps = []
    for chain in chains:
        d = [nltk_edit_distance(words(chain[i - 1]), words(chain[i])) for i in range(1, len(chain))]
        steps.append((d, [max(d[i + 1] - d[i], 0) for i in range(len(d) - 1)]))
    out = {}
    for n in n_values:
        vals = [v for _, s in steps for v in s[:n]]
        out[n] = float(np.mean(vals))
    return out, [d for d, _ in steps]


# ----------------------------------------------------------------------------- data
def synthetic_chains(n_chains, steps=10, length=200, seed=0):
    rnd = random.Random(seed)
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9))) for _ in range(3000)]
    vocab += [",", ".", "!", "n't", "'s"]
    chains = []
    for _ in range(n_chains):
        words = [rnd.choice(vocab) for _ in range(length)]
        chain = [" ".join(words)]
        for _ in range(steps):
            words = list(words)
            for _ in range(rnd.randint(1, 12)):
                op = rnd.random()
                pos = rnd.randrange(len(words))
                if op < 0.6:
                    words[pos] = rnd.choice(vocab)
                elif op < 0.8:
                    words.insert(pos, rnd.choice(vocab))
                elif len(words) > 5:
                    del words[pos]
            chain.append(" ".join(words))
        chains.append(chain)
    return chains


def report_row(n_chains: int = 2000, baseline_chains: int = 10):
    """One row of bench/report.py: inc@n per chain, ours vs the authors' style (nltk DP on spaCy tokens)."""
    from rows import Row

    from textxai import inconsistency as inc

    chains = synthetic_chains(n_chains)
    inc.compute([["warm up", "spaCy import", "x"]], n=[1])
    baseline_inc([["warm up", "spaCy import", "x"]], [1])
    t0 = time.perf_counter()
    inc.compute(chains, n=[1, 2, 3, 5, 9])
    per_fast = (time.perf_counter() - t0) / len(chains)
    sub = chains[:baseline_chains]
    t0 = time.perf_counter()
    _, slow_d = baseline_inc(sub, [1, 2, 3, 5, 9])
    per_slow = (time.perf_counter() - t0) / len(sub)
    assert inc.compute(sub, n=[1], return_per_example=True)["per_example"]["minimality"] == slow_d
    return Row(f"inconsistency inc@n, {n_chains:,} chains x 10 steps of ~200 words (baseline on {len(sub)})",
               "nltk DP on spaCy tokens, authors' style (ms/chain)", f"{per_slow * 1e3:.0f}",
               f"{per_fast * 1e3:.2f} (identical distances)", f"{per_slow / per_fast:,.0f}x faster")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chains", type=int, default=10_000)
    parser.add_argument("--baseline-chains", type=int, default=20)
    args = parser.parse_args()

    from textxai import inconsistency as inc

    n_values = [1, 2, 3, 5, 9]
    chains = synthetic_chains(args.chains)
    n_words = np.mean([len(t.split()) for t in chains[0]])
    print(f"{len(chains)} chains x {len(chains[0]) - 1} steps, ~{n_words:.0f} words per text")

    inc.compute([["warm up", "spaCy import", "x"]], n=[1])  # imports and tokenizer construction are not timed
    baseline_inc([["warm up", "spaCy import", "x"]], [1])
    t0 = time.perf_counter()
    fast = inc.compute(chains, n=n_values)
    t_fast = time.perf_counter() - t0

    sub = chains[: args.baseline_chains]
    t0 = time.perf_counter()
    slow, slow_d = baseline_inc(sub, n_values)
    t_slow = time.perf_counter() - t0

    check = inc.compute(sub, n=n_values, return_per_example=True)
    assert check["per_example"]["minimality"] == slow_d, "distances differ from the baseline"
    assert all(abs(check[f"inc@{n}"] - slow[n]) < 1e-12 for n in n_values)

    per_fast = t_fast / len(chains)
    per_slow = t_slow / len(sub)
    print(f"textxai  : {t_fast:8.2f} s for {len(chains)} chains ({per_fast * 1e3:.3f} ms/chain)")
    print(f"baseline : {t_slow:8.2f} s for {len(sub)} chains ({per_slow * 1e3:.1f} ms/chain; "
          f"~{per_slow * len(chains) / 3600:.1f} h for all)")
    print("inc@n:", {n: round(fast[f"inc@{n}"], 4) for n in n_values})
    print(f"ratio (baseline / textxai, per chain): {per_slow / per_fast:.0f}x")


if __name__ == "__main__":
    main()
