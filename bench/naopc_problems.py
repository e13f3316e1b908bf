"""The NAOPC beam problems of the benchmarks: texts of given lengths, each input's model outputs cached per removed
set (:class:`CachedScores`), one limit search by name (``beam``, ``beam-paper:5``, ``authors:5``) and the comparison
of searches with the authors' B = 5 beam.

Shared by bench/report.py, bench/bench_naopc.py and bench/naopc_sets.py (below all three).
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from authors_beam import authors_beam  # noqa: E402


def reviews() -> list[str]:
    path = Path(__file__).resolve().parents[1] / "src" / "textxai" / "demo" / "data" / "sentiment.jsonl"
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]


def texts_of_lengths(clf, lengths: list[int]) -> list[str]:
    """One text per requested word count: demo reviews joined and cut at that many words."""
    from textxai.words import word_spans

    pool, out = reviews(), []
    for i, n in enumerate(lengths):
        text = " ".join(pool[(i * 7 + k) % len(pool)] for k in range(6))
        out.append(text[: word_spans(text)[n - 1][2]])
    return out


class CachedScores:
    """Target probabilities of removed feature sets of one input (words or tokens), each set through the model once."""

    def __init__(self, clf, text: str, features: str):
        self.clf, self.text = clf, text
        enc = clf.word_encoding(text)
        self.target = int(clf.predict([text])[0])
        if features == "words":
            self.n = enc.n_words
            self.groups = [np.flatnonzero(enc.word_ids == j) for j in range(self.n)]
        else:  # every non-special token is a feature
            tokens = np.flatnonzero(enc.word_ids >= 0)
            self.n = len(tokens)
            self.groups = [np.array([t]) for t in tokens]
        self.ids, self.types = enc.input_ids, enc.token_type_ids
        self.cache: dict[int, float] = {}
        self.model_seconds = 0.0

    def rows(self, keys):
        out = []
        for key in keys:
            ids = self.ids.copy()
            for j in range(self.n):
                if key >> j & 1:
                    ids[self.groups[j]] = self.clf.mask_token_id
            out.append((ids, self.types))
        return out

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        weights = [1 << j for j in range(self.n)]
        keys = [sum(w for w, m in zip(weights, row) if m) for row in np.asarray(masks, dtype=bool)]
        todo = [k for k in dict.fromkeys(keys) if k not in self.cache]
        if todo:
            start = time.perf_counter()
            probs = self.clf._proba_of_rows(self.rows(todo), 64)[:, self.target]
            self.model_seconds += time.perf_counter() - start
            self.cache.update(zip(todo, probs.tolist()))
        return np.array([self.cache[k] for k in keys])


def beam_problems(clf, n_texts: int, features: str, store: dict | None = None, index=None):
    """The issue's beam benchmark as ``(scores, n)``: ``n_texts`` texts of 10-40 words, word or token features
    (token features: the first 40 tokens, the others kept); with ``store`` (a dict, e.g. kept on disk) each
    (text, features) keeps its model outputs there; ``index``: only these of the texts."""
    lengths = [int(round(x)) for x in np.linspace(10, 40, n_texts)]
    for i, text in enumerate(texts_of_lengths(clf, lengths)):
        if index is not None and i not in index:
            continue
        scores = CachedScores(clf, text, features)
        if store is not None:
            scores.cache = store.setdefault((text, features), scores.cache)
        n = min(scores.n, 40)
        scores.n, scores.groups = n, scores.groups[:n]
        yield scores, n


def search(scores, n: int, search: str):
    """One limit search ``method[:width]`` (``authors:5`` is the authors' beam) -> (limits, model inputs)."""
    from textxai import naopc

    method, _, width = search.partition(":")
    if method == "authors":
        lim = authors_beam(scores, n, int(width))
        return lim, lim.model_inputs
    lim = naopc.aopc_limits(scores, n, method=method, beam_size=int(width) if width else None)
    return lim, lim.n_evaluations


@dataclass
class VersusAuthors:
    """One search against the authors' B = 5 beam over the same problems (diff + = ours looser)."""

    search: str
    inputs: int
    theirs: int
    seconds: float  # the search's wall time, model time of the sets it met first included
    d_up: np.ndarray
    d_lo: np.ndarray
    ns: list[int]


def versus_authors(problems, searches: list[str]) -> list[VersusAuthors]:
    """Each search, then the authors' beam, on the same cached model outputs (each set through the model once)."""
    ours = {}
    for name in searches:  # not `search`: the function of that name runs each one
        start = time.perf_counter()
        ours[name] = [search(s, n, name) for s, n in problems], time.perf_counter() - start
    theirs = [authors_beam(s, n, 5) for s, n in problems]
    return [VersusAuthors(name, sum(i for _, i in runs), sum(t.model_inputs for t in theirs), seconds,
                          np.array([t.upper - o.upper for t, (o, _) in zip(theirs, runs)]),
                          np.array([o.lower - t.lower for t, (o, _) in zip(theirs, runs)]), [n for _, n in problems])
            for name, (runs, seconds) in ours.items()]


def tradeoff(clf, lengths: list[int], searches: list[str]) -> str:
    """Model inputs vs the gap to the exact limits on texts of ``lengths`` words (word features, N <= 14), each
    search of ``searches`` and the authors' beam, as printed lines."""
    from textxai import naopc

    table = {}
    for text, n in zip(texts_of_lengths(clf, lengths), lengths):
        scores = CachedScores(clf, text, "words")
        exact = naopc.aopc_limits(scores, n, method="exact", max_exact_words=14)
        for name in searches + ["authors:5"]:
            lim, inputs = search(scores, n, name)
            entry = table.setdefault(name, [0, [], []])
            entry[0] += inputs
            entry[1].append(exact.upper - lim.upper)
            entry[2].append(lim.lower - exact.lower)
    lines = [f"Trade-off, {len(lengths)} texts N={min(lengths)}-{max(lengths)} words (exact: {sum(1 << n for n in lengths):,} inputs):",
             f"  {'search':<16} {'model inputs':>12} {'upper gap mean/max':>20} {'lower gap mean/max':>20}"]
    for name, (inputs, up, lo) in table.items():
        lines.append(f"  {name.replace(':', ' B='):<16} {inputs:>12,} {np.mean(up):>9.4f}/{max(up):.4f} {np.mean(lo):>11.4f}/{max(lo):.4f}")
    return "\n".join(lines)
