"""Pipeline 1: explanations of the training texts, word pools (eq. 2) and each class's keywords (eq. 3-4)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from textxai.loading import LRUCache, cache_size
from textxai.toki.core import (LINKAGES, _check_top_k, can_be_keyword, check_unit, keyword_margins, normalize_rows, plurality,
                               with_keywords)
from textxai.toki.theta import resolve_theta_relate
from textxai.validation import check_choice, check_positive_int, check_seed, short_repr

from textxai.attribution import METHODS as EXPLAINERS  # noqa: E402  (the one registry: textxai.attribution.REGISTRY)
from textxai.attribution import weights_digest  # noqa: E402,F401  (re-exported: the index cache's key)
INDEX_FORMAT = 1
#: what TOKI needs of a classifier (:meth:`textxai.classifier.TextClassifier.require_single_label`)
SINGLE_LABEL = "ToKI (one predicted class per text, one keyword list per class)"


@dataclass(frozen=True)
class ExplainOptions:
    """How explanations are computed (both pipelines): explainer, its options, top-k words, batching, seed."""

    explainer: str = "lime"
    explainer_options: dict | None = None
    top_k: int = 10
    batch_size: int = 32
    seed: int = 0
    progress: bool = False

    def checked(self) -> "ExplainOptions":
        check_choice(self.explainer, "explainer", EXPLAINERS)
        _check_top_k(self.top_k)
        check_positive_int(self.batch_size, "batch_size")
        check_seed(self.seed)
        if self.explainer_options is not None and not isinstance(self.explainer_options, dict):
            raise TypeError(f"explainer_options={short_repr(self.explainer_options)}: expected a dict or None")
        return self


@dataclass(frozen=True)
class IndexOptions:
    """How keywords are found (pipeline 1): dendrogram cut, θ_relate, embedders, class names, linkage."""

    theta_dist: float = 0.3
    theta_relate: float | dict | None = None
    embedders: object = None
    class_names: object = None
    linkage: str = "average"

    def checked(self) -> "IndexOptions":
        check_unit(self.theta_dist, "theta_dist")
        check_choice(self.linkage, "linkage", LINKAGES)
        if isinstance(self.theta_relate, dict):
            for name, value in self.theta_relate.items():
                check_unit(value, f"theta_relate[{name!r}]", -1.0, 1.0)
        elif self.theta_relate is not None:
            check_unit(self.theta_relate, "theta_relate", -1.0, 1.0)
        return self


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
    class_anchors: dict[int, list[str]] = field(default_factory=dict)
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

    def anchors(self, c: int) -> list[str]:
        """The words that describe class ``c`` (default: its name)."""
        return list(self.class_anchors.get(c) or [self.class_names[c]])

    def keyword_list(self, c: int) -> list[str]:
        """Keywords of class ``c``, most important first."""
        pool = self.pools.get(c, {})
        return sorted(self.keywords.get(c, set()), key=lambda w: (-pool.get(w, 0.0), w))

    def to_dict(self) -> dict:
        return {
            "format": INDEX_FORMAT, "class_names": {str(k): v for k, v in self.class_names.items()},
            "class_anchors": {str(k): v for k, v in self.class_anchors.items()},
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
            class_anchors={int(k): list(v) for k, v in data.get("class_anchors", {}).items()},
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
    return classifier.fingerprint


def class_vectors(embedder, anchors: dict[int, Sequence[str] | str]) -> dict[int, np.ndarray]:
    """One vector per class for one embedder: the mean of its anchor words' unit vectors.

    >>> from textxai.embeddings import ArrayEmbedder
    >>> class_vectors(ArrayEmbedder({"good": [2.0, 0.0], "great": [0.0, 1.0]}), {1: ["good", "great"]})[1].tolist()
    [0.5, 0.5]
    """
    return {c: normalize_rows(embedder.embed([words] if isinstance(words, str) else list(words))).mean(axis=0)
            for c, words in anchors.items()}


def identify_keywords(pools: dict[int, dict[str, float]], class_names: dict[int, str | Sequence[str]], embedders: Sequence,
                      theta_relate: dict[str, float], theta_dist: float = 0.3, linkage: str = "average") -> dict[int, set]:
    """Eq. 3-4 with embedder votes: the keyword set of every class.

    ``class_names`` maps each class to its name or its anchor words (:func:`class_vectors`). Each embedder
    clusters the pool with its own vectors and marks the words of clusters related to the class
    (:func:`textxai.toki.core.class_margins`: its own θ_relate, and closer to this class than to any other);
    the words then get the plurality vote (tie rule in the module doc). Function words and punctuation
    (:func:`textxai.toki.core.can_be_keyword`) are left out of the clustering and are never keywords.
    """
    keywords = {}
    per_embedder = {emb.name: class_vectors(emb, class_names) for emb in embedders}
    for c, pool in pools.items():
        words = [w for w in pool if can_be_keyword(w)]   # function words and punctuation: never keywords
        if not words:
            keywords[c] = set()
            continue
        margins = []
        for emb in embedders:
            vecs = per_embedder[emb.name]
            others = [v for k, v in vecs.items() if k != c]
            m, _ = keyword_margins(emb.embed(words), vecs[c], theta_dist, theta_relate[emb.name], linkage, others)
            margins.append(m)
        decided = plurality(np.array(margins))
        keywords[c] = {w for w, k in zip(words, decided) if k}
    return keywords


# ----------------------------------------------------------------------------- pipelines on a classifier
def _generic(label) -> bool:
    return str(label).upper().startswith("LABEL_")


def shipped_class_anchors(classifier) -> dict[int, list[str]] | None:
    """The anchor words shipped for a demo model (``data/class_anchors.json``), else None."""
    table = json.loads((Path(__file__).resolve().parents[1] / "data" / "class_anchors.json").read_text(encoding="utf8"))
    entry = table.get(str(getattr(classifier, "name", "")))
    if entry is None or sorted(entry) != sorted(classifier.labels.values()):
        return None
    return {c: list(entry[label]) for c, label in classifier.labels.items()}


def resolve_class_anchors(classifier, class_names=None) -> tuple[dict[int, str], dict[int, list[str]]]:
    """``(names, anchors)``: each class's display name and the words that describe it.

    ``class_names`` is None (the model's ``id2label``; a demo model's shipped anchors; generic LABEL_i
    refused), a list with one entry per class, or a dict keyed by class index or label name; an entry is
    a name or a list of anchor words (``{"positive": ["positive", "good", "great"], ...}``).

    >>> from types import SimpleNamespace
    >>> clf = SimpleNamespace(num_labels=2, labels={0: "neg", 1: "pos"}, name="mine")
    >>> resolve_class_anchors(clf, {"pos": ["good", "great"], "neg": "bad"})
    ({0: 'neg', 1: 'pos'}, {0: ['bad'], 1: ['good', 'great']})
    """
    n, labels = classifier.num_labels, classifier.labels
    shown = class_names if class_names is not None else list(labels.values())
    if class_names is None:
        if any(_generic(v) for v in labels.values()):
            raise ValueError(f"class_names=None and the model's labels are {list(labels.values())}: expected "
                             f"class_names, a list of {n} words naming the classes (e.g. ['negative', 'positive'])")
        spec = shipped_class_anchors(classifier) or dict(labels)
    elif isinstance(class_names, dict):
        by_label = {str(v).lower(): k for k, v in labels.items()}
        spec = {(by_label.get(str(k).lower(), k) if not isinstance(k, (int, np.integer)) else int(k)): v
                for k, v in class_names.items()}
    elif isinstance(class_names, str) or not isinstance(class_names, Sequence):
        raise TypeError(f"class_names={short_repr(class_names)}: expected a list of {n} class names (or lists of anchor words)")
    else:
        spec = dict(enumerate(class_names))
    anchors = {k: [v] if isinstance(v, str) else list(v) if isinstance(v, Sequence) else None for k, v in spec.items()}
    if set(anchors) != set(range(n)) or not all(
            a and all(isinstance(w, str) and w.strip() for w in a) for a in anchors.values()):
        raise ValueError(f"class_names={short_repr(shown)}: expected {n} entries, one per class of the model "
                         f"(index or label name), each a non-empty name or list of words")
    anchors = {k: [str(w).replace("_", " ").strip() for w in anchors[k]] for k in range(n)}
    names = {k: (str(labels[k]) if not _generic(labels[k]) and (isinstance(class_names, dict) or len(a) > 1)
                 else a[0]) for k, a in anchors.items()}
    return names, anchors


def resolve_class_names(classifier, class_names=None) -> dict[int, str]:
    """Each class's display name (see :func:`resolve_class_anchors`)."""
    return resolve_class_anchors(classifier, class_names)[0]


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


def explain_texts(classifier, texts, options: ExplainOptions, targets=None, text_pairs=None) -> list[list[tuple[str, float]]]:
    """:func:`explain` with an :class:`ExplainOptions` (texts shared out under a multi-process ``textxai run``)."""
    from textxai import parallel

    return parallel.split(explain, over=("texts", "targets", "text_pairs"))(classifier, texts, options.explainer, options.top_k, targets=targets, batch_size=options.batch_size,
                   seed=options.seed, progress=options.progress, explainer_options=options.explainer_options,
                   text_pairs=text_pairs)


def _pick(pairs, idx):
    return None if pairs is None else [pairs[i] for i in idx]


def build_keyword_index(classifier, train_texts, train_labels, train_text_pairs=None, explain: ExplainOptions | None = None,
                        index: IndexOptions | None = None, synonyms=None, **keywords) -> KeywordIndex:
    """Pipeline 1: explain the correctly predicted training texts and find each class's keywords.

    Args:
        classifier: anything ``textxai.classifier.as_classifier`` accepts.
        train_texts, train_labels: training texts and their true class indices (``train_text_pairs``: the
            second texts of sentence-pair models).
        explain: :class:`ExplainOptions` — explainer (``"lime"`` with 5000 samples, ``"omission"``,
            ``"gradient"``, ... of ``textxai.attribution``), explainer_options, top_k (words kept per
            explanation, positive scores only), batch_size, seed, progress.
        index: :class:`IndexOptions` — theta_dist (dendrogram cut, a cosine distance in [0, 1]; paper 0.3),
            theta_relate (None: estimated per embedder on synonym vs random pairs; a number in [-1, 1]; or
            ``{embedder name: number}``), embedders (names or embedder objects; default all), class_names (list
            of names or of lists of anchor words, or a dict keyed by index or label name; default the model's
            ``id2label`` or a demo model's shipped anchors, see :func:`resolve_class_anchors`), linkage.
        synonyms: related pairs for the θ_relate estimate (default: the shipped list).
        keywords: the same options as flat keywords (``explainer="omission"``, ``top_k=5``, ...); an unknown
            keyword is a TypeError.

    Raises ``ValueError`` naming the class when a class has no correctly predicted training text.
    """
    from textxai.classifier import as_classifier

    explain, index = with_keywords("build_keyword_index", keywords, (ExplainOptions, explain), (IndexOptions, index))
    explain, index = explain.checked(), index.checked()
    clf = as_classifier(classifier)   # the one resolution: everything below takes the TextClassifier
    return _build_index(clf, train_texts, train_labels, train_text_pairs, explain, index, synonyms)


def check_theta_names(theta_relate, embedders) -> None:
    """A ``theta_relate`` dict names embedders in use only (a ValueError naming the key): a misspelt name was
    silently ignored and that embedder's threshold estimated instead."""
    if not isinstance(theta_relate, dict):
        return
    names = [getattr(e, "name", None) for e in embedders]
    unknown = [key for key in theta_relate if key not in names]
    if unknown:
        raise ValueError(f"theta_relate has the key {unknown[0]!r}: expected the names of the embedders in use {names}")


def _build_index(clf, train_texts, train_labels, train_text_pairs, explain: ExplainOptions, options: IndexOptions,
                 synonyms) -> KeywordIndex:
    """:func:`build_keyword_index` on a resolved ``TextClassifier`` (nothing here resolves a model by name)."""
    from textxai.embeddings import distinct_voters, get_embedders
    from textxai.validation import check_text_pairs, check_texts

    clf = clf.require_single_label(SINGLE_LABEL)
    texts = check_texts(train_texts, "train_texts")
    pairs = check_text_pairs(train_text_pairs, texts, "train_text_pairs")
    labels = clf.class_indices(train_labels, "train_labels", n=len(texts))
    names, anchors = resolve_class_anchors(clf, options.class_names)
    embs = get_embedders(options.embedders, clf)
    check_theta_names(options.theta_relate, embs)
    embs = distinct_voters(embs)
    thetas = resolve_theta_relate(options.theta_relate, embs, synonyms, explain.seed)
    predicted = clf.predict(texts, pairs, batch_size=explain.batch_size)
    correct = np.flatnonzero(predicted == labels)
    missing = [names[c] for c in range(clf.num_labels) if not np.any(labels[correct] == c)]
    if missing:
        raise ValueError(f"train_labels: class(es) {missing} have no correctly predicted training text; expected at "
                         "least one per class (add training texts of that class, or check the model)")
    explanations = explain_texts(clf, [texts[i] for i in correct], explain, targets=labels[correct], text_pairs=_pick(pairs, correct))
    pools = word_pools(explanations, labels[correct])
    for c in range(clf.num_labels):
        pools.setdefault(c, {})
    keywords = identify_keywords(pools, anchors, embs, thetas, options.theta_dist, options.linkage)
    return KeywordIndex(class_names=names, class_anchors=anchors, pools=pools, keywords=keywords, theta_dist=options.theta_dist,
                        theta_relate=thetas, embedders=[e.name for e in embs], linkage=options.linkage,
                        explainer=explain.explainer, top_k=explain.top_k,
                        fingerprint=model_fingerprint(clf), model_name=str(getattr(clf, "name", "")),
                        n_explained={c: int((labels[correct] == c).sum()) for c in range(clf.num_labels)})


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


# ----------------------------------------------------------------------------- one call (the evaluate module)
_INDEX_CACHE = LRUCache(cache_size("TEXTXAI_INDEX_CACHE", 8))  # bounded: a Space builds indexes for visitors' data


def cached_keyword_index(classifier, train_texts, train_labels, train_text_pairs=None, explain: ExplainOptions | None = None,
                         index: IndexOptions | None = None, **keywords) -> KeywordIndex:
    """:func:`build_keyword_index`, memoised in this process on the model fingerprint and weights, the data and
    the options (the same arguments, flat keywords included)."""
    from textxai.classifier import as_classifier

    from textxai.validation import ClassIndices

    clf = as_classifier(classifier)
    train_labels = ClassIndices(int(y) for y in clf.class_indices(train_labels, "train_labels"))  # keyed as classes
    explain, index = with_keywords("cached_keyword_index", keywords, (ExplainOptions, explain), (IndexOptions, index))
    emb = index.embedders
    emb_key = None if emb is None else tuple(e if isinstance(e, str) else f"{type(e).__name__}:{getattr(e, 'name', '')}:{id(e)}"
                                             for e in (emb if isinstance(emb, (list, tuple)) else [emb]))
    settings = {**dataclasses.asdict(dataclasses.replace(explain, progress=False)),
                **{f.name: getattr(index, f.name) for f in dataclasses.fields(index) if f.name != "embedders"}}
    key = hashlib.sha256(json.dumps([model_fingerprint(clf), weights_digest(clf), clf.word_view_key, list(map(str, train_texts)),
                                     list(train_labels),
                                     None if train_text_pairs is None else list(map(str, train_text_pairs)), emb_key, settings],
                                    default=str).encode()).hexdigest()
    return _INDEX_CACHE.get_or_create(key, lambda: _build_index(clf, train_texts, train_labels, train_text_pairs,
                                                                explain.checked(), index.checked(), None))
