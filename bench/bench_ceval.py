"""Token distance + diversity over the IMDb rows of CEval's stored results, against nltk.edit_distance.

CEval's code computes each distance as ``nltk.edit_distance`` (a pure-Python dynamic programme) over spaCy
tokens, tokenizing both texts on every call. textxai.ceval caches each text's tokens as a string with one
code point per distinct token and runs the C ``Levenshtein.distance`` on those strings. Two ratios, measured in one run on the same rows:

1. edit distance only, on the same pre-tokenized lists;
2. end to end from the raw strings (tokenization included; our token cache starts cold).

The baseline is slow (~0.1 s per long review pair), so it runs on every ``--stride``-th row of each file
(default 6); the fast path is timed on the same rows and, for information, on all rows. Values must be
identical (checked) and equal to CEval's stored columns.

    .venv/bin/python bench/bench_ceval.py [--stride 6] [--reference ../shared/reference]

Uses nltk when importable (``pip install nltk``), else a line-by-line copy of nltk's algorithm below.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import Levenshtein
import pandas as pd

from textxai import ceval
from textxai import words as _words

METHODS = ("crowd", "expert", "mice", "gbda", "crest", "llama_02")

try:
    from nltk.metrics.distance import edit_distance as nltk_edit_distance

    BASELINE = "nltk.edit_distance"
except ImportError:  # the same algorithm as nltk.metrics.distance.edit_distance (substitution_cost=1, no transpositions)
    from baselines import nltk_edit_distance

    BASELINE = "pure-Python copy of nltk.edit_distance (nltk not installed)"


def spacy_tokens(text: str) -> list[str]:
    return [t.text for t in _words._spacy_tokenizer()(text)]


def end_to_end(pairs) -> tuple[float, float]:
    """Seconds of ours (token cache cold) and of the baseline, tokenization + distance of every pair; equal values."""
    _words._tokenize_cached.cache_clear()
    _words._codes.cache_clear()
    t0 = time.perf_counter()
    fast = [ceval.token_distance(a, b) for a, b in pairs]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = [nltk_edit_distance(spacy_tokens(a), spacy_tokens(b)) for a, b in pairs]
    t_slow = time.perf_counter() - t0
    assert fast == slow, "values differ"
    return t_fast, t_slow


def report_row(stride: int = 12, reference: str | None = None):
    """One row of bench/report.py: token distance + diversity end to end (tokenize + distance) on every
    ``stride``-th pair of CEval's stored IMDb results, ours vs nltk.edit_distance on spaCy tokens; None without
    the reference data."""
    from rows import Row

    root = Path(reference or Path(__file__).resolve().parents[2] / "shared" / "reference") / "ceval" / "results" / "imdb"
    if not root.exists():
        return None
    pairs = []
    for method in METHODS:
        df = pd.read_csv(root / method / "results_auto_eval.csv", keep_default_na=False)
        for a, b, c in zip(df.orig_text, df.gen_text, df.gen_text_2):
            pairs += [(a, b), (b, c)]
    pairs = [p for i, p in enumerate(pairs) if (i // 2) % stride == 0]
    spacy_tokens("warm up")
    t_fast, t_slow = end_to_end(pairs)
    return Row(f"CEval token distance + diversity, {len(pairs)} IMDb pairs, end to end", f"{BASELINE.split(' ')[0]} "
               "on spaCy tokens (CEval's code) (s)", f"{t_slow:.2f}", f"{t_fast:.3f} (identical values)",
               f"{t_slow / t_fast:,.0f}x faster")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=str(Path(__file__).resolve().parents[2] / "shared" / "reference"))
    parser.add_argument("--stride", type=int, default=6, help="baseline on every STRIDE-th row (1 = all rows)")
    args = parser.parse_args()
    root = Path(args.reference) / "ceval" / "results" / "imdb"
    pairs_all, stored_all = [], []
    for method in METHODS:
        df = pd.read_csv(root / method / "results_auto_eval.csv", keep_default_na=False)
        for a, b, c, d, v in zip(df.orig_text, df.gen_text, df.gen_text_2, df.distance, df.diversity):
            pairs_all.append((a, b))
            stored_all.append(int(d))
            pairs_all.append((b, c))
            stored_all.append(int(v))
    sample = [i for i in range(len(pairs_all)) if (i // 2) % args.stride == 0]
    pairs = [pairs_all[i] for i in sample]
    print(f"{len(pairs_all)} distance + diversity pairs in {len(METHODS)} files; baseline on {len(pairs)} of them "
          f"(stride {args.stride}); baseline = {BASELINE}")

    # warm up spaCy once (model-free blank tokenizer construction is not what we measure)
    spacy_tokens("warm up")

    # ---- 2. end to end from raw strings
    t_fast_e2e, t_slow_e2e = end_to_end(pairs)
    fast = [ceval.token_distance(a, b) for a, b in pairs]

    # ---- 1. edit distance only, texts already tokenized (ours: cached as code strings, see textxai.words._codes)
    tokens = [(spacy_tokens(a), spacy_tokens(b)) for a, b in pairs]
    codes = [(_words._codes(a, "spacy", True), _words._codes(b, "spacy", True)) for a, b in pairs]
    t0 = time.perf_counter()
    fast_d = [Levenshtein.distance(x, y) for x, y in codes]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    tuple_d = [_words.word_distance(x, y) for x, y in tokens]
    t_tuple = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow_d = [nltk_edit_distance(x, y) for x, y in tokens]
    t_slow = time.perf_counter() - t0
    assert fast_d == tuple_d == slow_d == fast

    # ---- all rows, fast path only, against CEval's stored columns
    _words._tokenize_cached.cache_clear()
    _words._codes.cache_clear()
    t0 = time.perf_counter()
    every = [ceval.token_distance(a, b) for a, b in pairs_all]
    t_all = time.perf_counter() - t0
    assert every == stored_all, "differs from CEval's stored distance / diversity"

    print(f"edit distance only : textxai {t_fast:.3f} s, {BASELINE.split(' ')[0]} {t_slow:.2f} s  -> {t_slow / t_fast:,.0f}x "
          f"(Levenshtein on token tuples: {t_tuple:.3f} s, {t_slow / t_tuple:,.0f}x)")
    print(f"end to end (tokenize + distance): textxai {t_fast_e2e:.2f} s, CEval-style {t_slow_e2e:.2f} s  "
          f"-> {t_slow_e2e / t_fast_e2e:,.1f}x")
    print(f"all {len(pairs_all)} pairs with textxai: {t_all:.2f} s, identical to CEval's stored columns: True")


if __name__ == "__main__":
    main()
