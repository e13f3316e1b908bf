"""TOKI keyword identification cost on the demo sentiment model (θ_relate is resolved before timing; it is
cached per embedder).

1. ``main``: keyword identification (pipeline 1) for ``--train`` texts with omission and with LIME at each
   ``--lime-samples`` (the issue asks 200 texts, LIME 5000: hours on a shared 2-core CPU).
2. ``toki_row``: the row of ``make bench`` (bench/report.py): seconds per instance with LIME 5,000 samples on a
   sample of training texts, next to the paper's 94-97 s per instance. LIME against the ``lime`` package is
   bench/report.py's ``lime_rows``.

    .venv/bin/python bench/bench_toki.py [--train 200] [--lime-samples 500 5000]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from textxai import toki
from textxai.classifier import as_classifier
from textxai.embeddings import get_embedders


def rows(kind: str, split: str):
    path = Path(__file__).resolve().parents[1] / "src" / "textxai" / "demo" / "data" / f"{kind}.jsonl"
    data = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in data if r.get("split") == split] or data


def keyword_identification(clf, train, lime_samples, batch_size):
    texts, labels = [r["text"] for r in train], [int(r["label"]) for r in train]
    embs = get_embedders(None, clf)
    thetas = toki.resolve_theta_relate(None, embs)
    print(f"theta_relate: {thetas}")
    settings = [("omission", {})] + [("lime", {"n_samples": n}) for n in lime_samples]
    for explainer, options in settings:
        start = time.perf_counter()
        index = toki.build_keyword_index(clf, texts, labels, explainer=explainer, theta_relate=thetas, embedders=embs,
                                         explainer_options=options, batch_size=batch_size, progress=True)
        took = time.perf_counter() - start
        label = explainer + (f"-{options['n_samples']}" if options else "")
        kws = {index.class_names[c]: index.keyword_list(c)[:8] for c in index.class_names}
        print(f"keyword identification, {len(texts)} texts, {label:>10}: {took:8.1f} s  keywords {kws}")


def toki_row(clf, n_texts: int, n_samples: int = 5000, batch_size: int = 64):
    """TOKI keyword identification with LIME ``n_samples`` on ``n_texts`` training texts: seconds per instance
    (the issue's workload is 200 texts; the time per instance does not depend on how many), next to the
    paper's 94-97 s per instance."""
    from rows import Row

    data = rows("sentiment", "train")
    by_class = {}
    for r in data:  # the same number of texts from each class (the index needs every class)
        by_class.setdefault(int(r["label"]), []).append(r)
    train = [r for group in zip(*by_class.values()) for r in group][: max(n_texts, len(by_class))]
    texts, labels = [r["text"] for r in train], [int(r["label"]) for r in train]
    embs = get_embedders(None, clf)
    thetas = toki.resolve_theta_relate(None, embs)
    start = time.perf_counter()
    toki.build_keyword_index(clf, texts, labels, explainer="lime", theta_relate=thetas, embedders=embs,
                             explainer_options={"n_samples": n_samples}, batch_size=batch_size)
    per = (time.perf_counter() - start) / len(texts)
    return Row(f"TOKI keyword identification, LIME {n_samples:,} samples ({len(texts)} texts timed)",
               "paper, per instance (MacBook M3 Pro; BERT/RoBERTa/DistilBERT-base)", "94-97 s", f"{per:.1f} s per instance (CPU, demo MiniLM)",
               f"{95.5 / per:.2f}x (different models and hardware)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="textxai/demo-sentiment")
    parser.add_argument("--train", type=int, default=200)
    parser.add_argument("--lime-samples", type=int, nargs="*", default=[500, 5000])
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    clf = as_classifier(args.model)
    keyword_identification(clf, rows("sentiment", "train")[: args.train], args.lime_samples, args.batch_size)


if __name__ == "__main__":
    main()
