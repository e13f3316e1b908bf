"""Real texts for the benchmarks: CEval's reference IMDb reviews where ../shared/reference is present, the demo
corpora otherwise (joined reviews), cut to an exact number of words.

    >>> from real_texts import reviews_of_words      # doctest: +SKIP
    >>> [len(t.split()) for t in reviews_of_words(clf, 50, 2)]
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def reference_dir() -> Path:
    return Path(os.environ.get("TEXTXAI_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))


def imdb_labelled() -> list[tuple[str, int]]:
    """CEval's IMDb test reviews (expert originals, ``<br />`` as spaces) with their label (1 = Positive), [] when the
    reference data is absent."""
    path = reference_dir() / "ceval" / "datasets" / "imdb" / "expert" / "test_original.tsv"
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [(" ".join(r["Text"].replace("<br />", " ").split()), int(r["Sentiment"].strip().lower() == "positive"))
            for r in rows if r.get("Text")]


def imdb_reviews() -> list[str]:
    """CEval's IMDb test reviews without labels (see :func:`imdb_labelled`)."""
    return [text for text, _ in imdb_labelled()]


def demo_reviews() -> list[str]:
    path = ROOT / "src" / "textxai" / "demo" / "data" / "sentiment.jsonl"
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]


def source() -> str:
    return "CEval IMDb reviews" if imdb_reviews() else "demo sentiment reviews (joined)"


def reviews_of_words(clf, n_words: int, count: int, offset: int = 0) -> list[str]:
    """``count`` real texts of exactly ``n_words`` words (``clf.words``): IMDb reviews of at least that length cut
    there (the longest has 326 words: then two consecutive reviews joined; demo reviews joined when the reference
    data is absent); ``offset`` skips the first matching ones."""
    from textxai.words import word_spans

    pool = imdb_reviews()
    if not pool:
        demo = demo_reviews()
        pool = [" ".join(demo[(i * 7 + k) % len(demo)] for k in range(40)) for i in range(count + offset)]
    pool = pool + [f"{a} {b}" for a, b in zip(pool[::2], pool[1::2])]  # two reviews joined: lengths beyond the longest
    out = []
    for text in pool:
        spans = word_spans(text)
        if len(spans) < n_words:
            continue
        cut = text[: spans[n_words - 1][2]]
        if len(clf.words(cut)) != n_words:
            continue
        if offset:
            offset -= 1
            continue
        out.append(cut)
        if len(out) == count:
            break
    return out
