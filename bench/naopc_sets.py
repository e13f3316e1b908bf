"""The NAOPC beam's text sets (issue 26): our beam vs the authors' B = 5 beam on every set, in one run.

    .venv/bin/python bench/naopc_sets.py [--sets project sst2 yelp long] [--cache /tmp/naopc_sets.pkl]

Sets (demo sentiment model; word and token features each):

- ``project``: the project's 20 texts of 10-40 words (naopc_problems.beam_problems; tokens: the first 40);
- ``sst2`` / ``yelp``: the NAOPC authors' own short texts (../shared/reference/naopc/data, <= 12 words);
- ``long``: real texts of 40-80 words (real_texts.reviews_of_words: CEval IMDb reviews; tokens: the first 80).
- ``longer``: real texts of 100-200 words (one of 100 words unless --count says more: the authors' B=5 asks ~5 N^2
  model inputs per text; tokens: the first 100).
- ``stored``: the authors' own model outputs of EVERY word subset of those SST-2 / Yelp texts (three BERT
  models, ../shared/reference/naopc/results/permutation_outputs): no model runs, the counts and limits are exact.

Per set: model inputs of ours and theirs (each search counts the distinct sets IT asks; the model sees each
(text, set) once, shared), the ratio, and the limits against theirs (mean and worst per text; + = ours looser).

``--ceilings``: how many fewer inputs than the authors' B = 5 ANY search could ask on a set, and what the cheapest
searches lose (see :func:`ceilings`): a beam limit is the AOPC of an ordering, so a search reports it only after
evaluating that ordering's N - 1 inner prefix sets (and the intact and the empty input), two orderings per text.
"""
from __future__ import annotations

import argparse
import csv
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_texts import reference_dir, reviews_of_words  # noqa: E402
from authors_beam import authors_beam  # noqa: E402
from naopc_problems import CachedScores, beam_problems, versus_authors  # noqa: E402

SETS = ("project", "sst2", "yelp", "long", "longer", "stored")
STORED_MODELS = ("bert-base-uncased-SST-2", "bert-base-uncased-imdb", "bert-base-uncased-yelp-polarity")
FEATURES = ("words", "tokens")


def authors_texts(name: str, count: int) -> list[str]:
    path = reference_dir() / "naopc" / "data" / f"{name}_test_short.csv"
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return [row["text"].strip() for row in csv.DictReader(f)][:count]


def stored_problems(dataset: str, model: str):
    """``(score_fn, n)`` per text from the authors' stored outputs of every subset (p = softmax of the logits)."""
    import json
    import math

    import pandas as pd

    path = reference_dir() / "naopc" / "results" / "permutation_outputs" / f"{dataset}_{model}.parquet"
    if not path.exists():
        return []
    out = []
    for _, group in pd.read_parquet(path).groupby("id"):
        keys = [sum(1 << (i - 1) for i in json.loads(s)) for s in group["word_key"]]
        n = int(round(math.log2(len(keys))))
        logits = np.stack([group["negative_logit"].to_numpy(), group["positive_logit"].to_numpy()], axis=1)
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        table = np.empty(1 << n)
        table[keys] = z[:, 1] / z.sum(axis=1)
        weights = 1 << np.arange(n)
        if n >= 2:
            out.append((lambda masks, t=table, w=weights: t[np.asarray(masks, dtype=np.int64) @ w], n))
    return out


def problems(clf, name: str, features: str, store: dict, count: int | None = None):
    """``(scores, n)`` of one set (see the module docstring); ``store`` keeps the model outputs."""
    if name == "project":
        return list(beam_problems(clf, count or 20, features, store))
    if name in ("sst2", "yelp"):
        texts, cap = authors_texts(name, count or 60), 40
    elif name == "long":
        lengths = np.linspace(40, 80, count or 5).round().astype(int)
        texts, cap = [reviews_of_words(clf, int(n), 1, offset=i)[0] for i, n in enumerate(lengths)], 80
    elif name == "longer":  # the authors' B=5 asks ~5 N^2 inputs per text (50,000 at N=100): one text unless asked
        lengths = np.linspace(100, 200, count or 1).round().astype(int)
        texts = [reviews_of_words(clf, int(n), 1, offset=i)[0] for i, n in enumerate(lengths)]
        cap = 200 if features == "words" else 100
    else:
        raise ValueError(f"set={name!r}: expected one of {SETS}")
    out = []
    for text in texts:
        scores = CachedScores(clf, text, features)
        scores.cache = store.setdefault((text, features), scores.cache)
        n = min(scores.n, cap)
        scores.n, scores.groups = n, scores.groups[:n]
        if n >= 2:
            out.append((scores, n))
    return out


def compare(clf, sets, store, searches=("beam",), count=None, features_of_sets=FEATURES):
    """One line per (set, features, search): inputs, theirs, ratio, mean / worst differences, texts > 0.01."""
    lines = []
    for name in sets:
        kinds = [f"{d}_{m}" for d in ("sst2", "yelp") for m in STORED_MODELS] if name == "stored" else features_of_sets
        for features in kinds:
            probs = stored_problems(*features.split("_")) if name == "stored" else problems(clf, name, features, store, count)
            if not probs:
                continue
            for v in versus_authors(probs, list(searches)):
                looser = int(((v.d_up > 0.01) | (v.d_lo > 0.01)).sum())
                lines.append(dict(set=name, features=features, search=v.search, texts=len(v.ns), n=(min(v.ns), max(v.ns)),
                                  ours=v.inputs, theirs=v.theirs, ratio=v.theirs / v.inputs,
                                  up_mean=v.d_up.mean(), up_worst=v.d_up.max(), lo_mean=v.d_lo.mean(),
                                  lo_worst=v.d_lo.max(), looser=looser))
    return lines


def _prefix_keys(order) -> list[int]:
    keys, key = [], 0
    for j in order:
        key |= 1 << int(j)
        keys.append(key)
    return keys


def _aopc(scores, n: int, order) -> float:
    keys = _prefix_keys(order)
    masks = ((np.asarray(keys, dtype=object)[:, None] >> np.arange(n)) & 1).astype(bool)
    p0 = float(np.asarray(scores(np.zeros((1, n), dtype=bool)), dtype=float).reshape(-1)[0])
    return float(np.mean(p0 - np.asarray(scores(masks), dtype=float)))


def one_look(scores, n: int):
    """The cheapest search that looks at every feature: p without each single feature (N inputs), then ONE
    ordering per limit by those drops (upper: the largest drop first; lower: the reverse); ``(upper, lower,
    model inputs)``. Exact for a model additive in its features."""
    p_single = np.asarray(scores(np.eye(n, dtype=bool)), dtype=float)
    up_order = np.argsort(p_single, kind="stable").tolist()
    lo_order = up_order[::-1]
    asked = {0, (1 << n) - 1} | {1 << j for j in range(n)} | set(_prefix_keys(up_order)) | set(_prefix_keys(lo_order))
    return _aopc(scores, n, up_order), _aopc(scores, n, lo_order), len(asked)


def ceilings(problems, exact_words: int = 12) -> dict:
    """What any search can reach against the authors' B = 5 beam on one set of ``(scores, n)`` problems.

    - ``floor``: the inputs of the two best orderings known (exact DP when N <= ``exact_words``, else the better
      of the authors' and ours per limit) — the intact input plus the union of their prefix sets. Any search
      reporting those limits evaluates at least these, so ``theirs / floor`` bounds the ratio from above (a
      search returning other orderings within 0.01 still evaluates N + 1 sets per ordering).
    - ``one_look``: :func:`one_look` (N singles + one chain per limit): its ratio and texts > 0.01 looser.
    - ``greedy``: the paper's beam at B = 1 (every child of one state per level): ratio and texts > 0.01 looser.
    - ``ours``: ``method="beam"``: ratio and texts > 0.01 looser.
    """
    from naopc_problems import search

    from textxai import naopc

    out = {"texts": len(problems), "theirs": 0, "floor": 0, "one_look": 0, "greedy": 0, "ours": 0,
           "one_look_looser": 0, "greedy_looser": 0, "ours_looser": 0}
    for scores, n in problems:
        theirs = authors_beam(scores, n, 5)
        out["theirs"] += theirs.model_inputs
        ours, ours_inputs = search(scores, n, "beam")
        greedy, greedy_inputs = search(scores, n, "beam-paper:1")
        if n <= exact_words:
            best = naopc.aopc_limits(scores, n, method="exact", max_exact_words=exact_words)
            up_order, lo_order = best.upper_order, best.lower_order
        else:
            up_order = max((theirs.upper, theirs.upper_order), (ours.upper, ours.upper_order))[1]
            lo_order = min((theirs.lower, theirs.lower_order), (ours.lower, ours.lower_order))[1]
        out["floor"] += len({0, (1 << n) - 1} | set(_prefix_keys(up_order)) | set(_prefix_keys(lo_order)))
        up, lo, inputs = one_look(scores, n)
        out["one_look"] += inputs
        out["ours"] += ours_inputs
        out["greedy"] += greedy_inputs
        for name, (u, low) in {"one_look": (up, lo), "greedy": (greedy.upper, greedy.lower),
                               "ours": (ours.upper, ours.lower)}.items():
            out[f"{name}_looser"] += int(theirs.upper - u > 0.01 or low - theirs.lower > 0.01)
    return out


def format_ceilings(name: str, features: str, c: dict) -> str:
    t = c["theirs"]
    return (f"{name:<8} {features:<38} {c['texts']:>3} texts, theirs {t:>7,}: any search <= {t / c['floor']:.2f}x | "
            f"one look {t / c['one_look']:.2f}x, {c['one_look_looser']} looser | greedy B=1 {t / c['greedy']:.2f}x, "
            f"{c['greedy_looser']} looser | ours {t / c['ours']:.2f}x, {c['ours_looser']} looser")


def format_line(r: dict) -> str:
    return (f"{r['set']:<8} {r['features']:<38} {r['search']:<10} {r['texts']:>3} N={r['n'][0]}-{r['n'][1]:<3} "
            f"{r['ours']:>8,} {r['theirs']:>9,} {r['ratio']:>6.2f}x  upper {r['up_mean']:+.4f}/{r['up_worst']:+.4f}  "
            f"lower {r['lo_mean']:+.4f}/{r['lo_worst']:+.4f}  >0.01: {r['looser']}")


def main(argv=None):
    from baselines import demo_classifier

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS)
    parser.add_argument("--searches", nargs="*", default=["beam"])
    parser.add_argument("--count", type=int, default=None, help="texts per set (default: 20 / 60 / 60 / 5)")
    parser.add_argument("--cache", default=None, help="a pickle file keeping the model outputs between runs")
    parser.add_argument("--features", nargs="*", default=list(FEATURES), choices=FEATURES, help="of the demo-model sets")
    parser.add_argument("--ceilings", action="store_true", help="per set: the most any search could save (see ceilings)")
    args = parser.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    store = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    clf = None if args.sets == ["stored"] else demo_classifier()
    start = time.perf_counter()
    try:
        if args.ceilings:
            for name in args.sets:
                kinds = [f"{d}_{m}" for d in ("sst2", "yelp") for m in STORED_MODELS] if name == "stored" else args.features
                for features in kinds:
                    probs = (stored_problems(*features.split("_")) if name == "stored"
                             else problems(clf, name, features, store, args.count))
                    if probs:
                        print(format_ceilings(name, features, ceilings(probs)), flush=True)
            return
        for line in compare(clf, args.sets, store, args.searches, args.count, args.features):
            print(format_line(line), flush=True)
    finally:
        if cache:
            cache.write_bytes(pickle.dumps(store))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
