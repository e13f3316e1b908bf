"""The NAOPC beam's text sets (issue 26): our beam vs the authors' B = 5 beam on every set, in one run.

    .venv/bin/python bench/naopc_sets.py [--sets project sst2 yelp long] [--cache /tmp/naopc_sets.pkl]

Sets (demo sentiment model; word and token features each):

- ``project``: the project's 20 texts of 10-40 words (report.beam_problems; tokens: the first 40);
- ``sst2`` / ``yelp``: the NAOPC authors' own short texts (../shared/reference/naopc/data, <= 12 words);
- ``long``: real texts of 40-80 words (real_texts.reviews_of_words: CEval IMDb reviews; tokens: the first 80).
- ``stored``: the authors' own model outputs of EVERY word subset of those SST-2 / Yelp texts (three BERT
  models, ../shared/reference/naopc/results/permutation_outputs): no model runs, the counts and limits are exact.

Per set: model inputs of ours and theirs (each search counts the distinct sets IT asks; the model sees each
(text, set) once, shared), the ratio, and the limits against theirs (mean and worst per text; + = ours looser).
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
from report import CachedScores, beam_problems, versus_authors  # noqa: E402

SETS = ("project", "sst2", "yelp", "long", "stored")
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


def compare(clf, sets, store, searches=("beam",), count=None):
    """One line per (set, features, search): inputs, theirs, ratio, mean / worst differences, texts > 0.01."""
    lines = []
    for name in sets:
        kinds = [f"{d}_{m}" for d in ("sst2", "yelp") for m in STORED_MODELS] if name == "stored" else FEATURES
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
    args = parser.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    store = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    clf = None if args.sets == ["stored"] else demo_classifier()
    start = time.perf_counter()
    try:
        for line in compare(clf, args.sets, store, args.searches, args.count):
            print(format_line(line), flush=True)
    finally:
        if cache:
            cache.write_bytes(pickle.dumps(store))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
