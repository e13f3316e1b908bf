"""The audit's trust stage on a user's model (no training texts: TOKI's keyword index learns from the audited
texts), its index explained in the run precision and shared with the assessment (now) against an index explained
apart in float32 (before issue 26's change), each in a fresh process so nothing is remembered across the two.

    .venv/bin/python bench/bench_trust_index.py [--reviews 40]

The model is the demo sentiment model loaded from its folder (a path, not its demo name, so the audit treats it as
a user's model); the texts are the first N of CEval's reference IMDb reviews (../shared/reference); no attack.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_texts import imdb_labelled  # noqa: E402


def one(n: int, index_precision: str) -> None:
    from textxai import toki
    from textxai.audit import numbers as nb
    from textxai.audit import trust
    from textxai.audit.options import TrustOptions
    from textxai.classifier import TextClassifier, as_classifier

    rows = imdb_labelled()[:n]
    texts, labels = [t for t, _ in rows], [int(y) for _, y in rows]
    clf = TextClassifier(as_classifier("textxai/demo-sentiment").model.name_or_path)
    options, run = TrustOptions(attack_texts=0), clf.resolve_precision("auto")
    start = time.perf_counter()
    if index_precision == "shared":
        res = trust.trust(clf, texts, labels, None, options, nb.Intervals(n_resamples=999), precision=run)
        rate = res["rates"]["TOKI"]["reading"]
    else:   # before: the index's explanations in float32, the assessment's in the run precision
        index, _ = trust.keyword_index(clf, texts, labels, options, precision="float32")
        res = toki.assess(clf, texts, labels, index, explain=trust.explain_options(options, precision=run))
        rate = f"{sum(e['label'] is True for e in res['examples'])} of {res['n_correct']} trusted"
    print(f"{index_precision:>8}: {time.perf_counter() - start:7.1f} s  ({run}; {rate})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=40)
    parser.add_argument("--one", choices=["shared", "float32"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.reviews, args.one)
    for setting in ("float32", "shared"):
        subprocess.run([sys.executable, __file__, "--reviews", str(args.reviews), "--one", setting], check=True)


if __name__ == "__main__":
    main()
