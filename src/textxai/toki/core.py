"""TOKI's pure maths: checks, cosine geometry, clusters (eq. 3-4), embedder votes, eq. 5-6."""
from __future__ import annotations

import functools
import math

import numpy as np

from textxai.validation import short_repr

LINKAGES = ("average", "complete", "single", "weighted")


@functools.lru_cache(maxsize=1)
def stop_words() -> frozenset:
    """English function words (spaCy's stop-word list, lower case): never keywords, never substitutes.

    >>> {"we", "will", "never"} <= stop_words() and "good" not in stop_words()
    True
    """
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(w.lower() for w in STOP_WORDS)


def can_be_keyword(word: str) -> bool:
    """A pool word may be a keyword only when it has a letter and is not a function word (:func:`stop_words`).

    In GloVe the mean of frequent function words sits close to "good" / "great" (the cluster of "we",
    "will", "be", "back", "the" had cosine 0.41 with the positive anchors, above θ_relate 0.34), so on the
    demo sentiment model they became positive keywords; a function word is never semantically related to a
    class, whatever the embedding says. They stay in the pool (``F_c``): a prediction resting on them is
    resting on unrelated words.

    >>> [can_be_keyword(w) for w in ["wonderful", "we", "'s", "."]]
    [True, False, False, False]
    """
    return any(ch.isalpha() for ch in word) and word.lower() not in stop_words()


# ----------------------------------------------------------------------------- checks
def check_unit(value, name: str, low: float = 0.0, high: float = 1.0) -> float:
    """A real number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value) \
            or not low <= float(value) <= high:
        raise ValueError(f"{name}={short_repr(value)}: expected a number in [{low:g}, {high:g}]")
    return float(value)


def with_keywords(where: str, keywords: dict, *options, extra: tuple = ()):
    """``options`` (option dataclasses, or ``(class, value or None)`` pairs: a value of another type is a
    TypeError naming it) with the flat ``keywords`` applied to the one that has each field.

    The pre-dataclass spelling of a call (``build_keyword_index(..., top_k=5)``) keeps working; a keyword
    that no option has (and that is not in ``extra``, the names the caller handles itself) is a TypeError
    naming it: no typo is swallowed. The mapping is :func:`textxai.options.apply_keywords` (one rule for all).

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class A:
    ...     k: int = 1
    >>> with_keywords("f", {"k": 3}, A())
    (A(k=3),)
    >>> with_keywords("f", {"kk": 3}, A())
    Traceback (most recent call last):
    ...
    TypeError: f() got an unexpected keyword argument 'kk' (did you mean 'k'?): expected one of ['k'] (or a=A(...))
    >>> with_keywords("f", {}, (A, None)), with_keywords("f", {}, (A, A(k=2)))
    ((A(k=1),), (A(k=2),))
    >>> with_keywords("f", {}, (A, {"k": 2}))
    Traceback (most recent call last):
    ...
    TypeError: a={'k': 2} (dict): expected a A or None
    """
    from textxai.options import apply_keywords

    pairs = [o if isinstance(o, tuple) else (type(o), o) for o in options]  # (class, the user's value or None)
    groups = {cls.__name__.removesuffix("Options").lower(): (cls, value) for cls, value in pairs}
    mapped = apply_keywords(where, {k: v for k, v in keywords.items() if k not in extra}, **groups)
    return tuple(mapped[name] for name in groups)


def _check_top_k(top_k) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k <= 0:
        raise ValueError(f"top_k={short_repr(top_k)}: expected a positive integer")
    return int(top_k)


# ----------------------------------------------------------------------------- geometry
def normalize_rows(vectors) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero, so their cosine with anything is 0)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def cosine_matrix(a, b) -> np.ndarray:
    """Cosine similarities ``[len(a), len(b)]``.

    >>> cosine_matrix([[1, 0], [0, 2]], [[1, 1]]).round(4).tolist()
    [[0.7071], [0.7071]]
    """
    return normalize_rows(a) @ normalize_rows(b).T



# ----------------------------------------------------------------------------- step 3-4: clusters and keywords
def cluster_words(vectors, theta_dist: float = 0.3, linkage: str = "average") -> np.ndarray:
    """Eq. 3: hierarchical clusters of ``vectors`` under cosine distance, dendrogram cut at ``theta_dist``.

    Returns a cluster id per row (0-based, numbered by first appearance). Two rows end in one cluster only
    if the chosen linkage distance between their clusters is <= ``theta_dist`` when they merge.

    >>> cluster_words([[1, 0], [0.99, 0.1], [0, 1]], theta_dist=0.3).tolist()
    [0, 0, 1]
    """
    from scipy.cluster.hierarchy import fcluster, linkage as _linkage
    from scipy.spatial.distance import squareform

    theta_dist = check_unit(theta_dist, "theta_dist", 0.0, 2.0)
    if linkage not in LINKAGES:
        raise ValueError(f"linkage={linkage!r}: expected one of {list(LINKAGES)}")
    x = normalize_rows(vectors)
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=int)
    if n == 1:
        return np.zeros(1, dtype=int)
    dist = np.clip(1.0 - x @ x.T, 0.0, 2.0)
    np.fill_diagonal(dist, 0.0)
    dist = (dist + dist.T) / 2
    tree = _linkage(squareform(dist, checks=False), method=linkage)
    raw = fcluster(tree, t=theta_dist, criterion="distance")
    ids: dict[int, int] = {}
    return np.array([ids.setdefault(int(r), len(ids)) for r in raw], dtype=int)


def class_margins(vectors, class_vector, theta_relate: float, other_class_vectors=None) -> np.ndarray:
    """Per row, how related it is to the class: ``sim(v, class) - theta_relate``, and, when other classes are
    given, at most ``sim(v, class) - max sim(v, other class)`` (related = margin >= 0).

    The second term keeps a word that is as close to another class from counting for this one: in
    distributional embeddings antonyms are close ("good" and "bad" have GloVe cosine 0.80), so a threshold
    alone makes "awful" related to "positive" too.

    >>> class_margins([[1.0, 0.2], [0.6, 0.8]], [1.0, 0.0], 0.5, [[0.0, 1.0]]).round(3).tolist()
    [0.481, -0.2]
    """
    sims = cosine_matrix(vectors, np.asarray(class_vector, dtype=np.float64)[None, :])[:, 0]
    margins = sims - theta_relate
    others = np.asarray(other_class_vectors if other_class_vectors is not None else [], dtype=np.float64)
    if others.size:
        margins = np.minimum(margins, sims - cosine_matrix(vectors, others.reshape(len(others), -1)).max(axis=1))
    return margins


def keyword_margins(vectors, class_vector, theta_dist: float, theta_relate: float, linkage: str = "average",
                    other_class_vectors=None) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 3-4 for one embedder: per word, :func:`class_margins` of the mean of its cluster, and its cluster id.

    A word is a keyword of the class when its margin is >= 0.
    """
    x = np.asarray(vectors, dtype=np.float64)
    clusters = cluster_words(x, theta_dist, linkage)
    margins = np.zeros(len(x))
    for k in np.unique(clusters):
        members = clusters == k
        margins[members] = class_margins(x[members].mean(axis=0)[None, :], class_vector, theta_relate, other_class_vectors)[0]
    return margins, clusters


def plurality(margins) -> np.ndarray:
    """Plurality vote of embedders (rows) per item (columns): yes where margin >= 0.

    Tie rule: as many yes as no -> the sign of the summed margins decides (sum >= 0 -> yes).

    >>> plurality([[0.2, -0.1, 0.1], [-0.1, -0.3, -0.3]]).tolist()
    [True, False, False]
    """
    m = np.atleast_2d(np.asarray(margins, dtype=np.float64))
    yes = (m >= 0).sum(axis=0)
    no = m.shape[0] - yes
    return np.where(yes > no, True, np.where(no > yes, False, m.sum(axis=0) >= 0))


# ----------------------------------------------------------------------------- eq. 5-6
def relatedness_margins(word_vectors, keyword_vectors, other_vectors) -> np.ndarray:
    """Eq. 5 for one embedder: ``max sim to K_c - max sim to F_c`` per word (r = 1 where >= 0).

    No keyword -> -inf (never related); keywords but no other word -> +inf (always related).
    """
    w = np.asarray(word_vectors, dtype=np.float64)
    n = len(w)
    if len(keyword_vectors) == 0:
        return np.full(n, -np.inf)
    best_k = cosine_matrix(w, keyword_vectors).max(axis=1)
    if len(other_vectors) == 0:
        return np.full(n, np.inf)
    return best_k - cosine_matrix(w, other_vectors).max(axis=1)


def _finite_sum(m: np.ndarray) -> np.ndarray:
    # infinite margins vote with unit weight in the tie break
    return np.where(np.isfinite(m), m, np.sign(m))


def vote(margins) -> np.ndarray:
    """:func:`plurality` with infinite margins counted as +-1 in the tie break."""
    m = np.atleast_2d(np.asarray(margins, dtype=np.float64))
    return plurality(_finite_sum(m)) if m.size else np.zeros(m.shape[1], dtype=bool)


def importance_sums(scores, related) -> tuple[float, float]:
    """Eq. 6: ``(IS_rel, IS_unr)``; trustworthy iff ``IS_rel >= IS_unr``.

    >>> importance_sums([0.4, 0.3, 0.2], [0, 1, 1])
    (0.5, 0.4)
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    r = np.asarray(related, dtype=np.float64).reshape(-1)
    if len(s) != len(r):
        raise ValueError(f"related has {len(r)} values but scores has {len(s)}: expected the same length")
    return float(np.round((s * r).sum(), 12)), float(np.round((s * (1 - r)).sum(), 12))
