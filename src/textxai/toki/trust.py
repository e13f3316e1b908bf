"""The one-call entry point of the ``toki_trust`` module, in stages: validate everything -> keyword index ->
assessment -> plain output.

Every argument a user passes is checked in :func:`validate` before any explanation or prediction is
computed (a bad ``human_trust`` costs nothing). The options are grouped in two small dataclasses,
:class:`ExplainOptions` (how explanations are computed, shared by both pipelines) and :class:`IndexOptions`
(how keywords are found); :func:`toki_trust` still accepts them as flat keyword arguments.

>>> ExplainOptions(explainer="omission", top_k=5).checked().top_k
5
>>> IndexOptions(theta_dist=2.5).checked()
Traceback (most recent call last):
...
ValueError: theta_dist=2.5: expected a number in [0, 1]
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from textxai.toki.assess import RESOLUTION, assess, check_human_trust
from textxai.toki.core import LINKAGES, _check_top_k, check_unit
from textxai.toki.index import EXPLAINERS, KeywordIndex, cached_keyword_index, check_index, resolve_class_anchors
from textxai.validation import check_choice, check_labels, check_positive_int, short_repr


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
        if self.explainer_options is not None and not isinstance(self.explainer_options, dict):
            raise TypeError(f"explainer_options={short_repr(self.explainer_options)}: expected a dict or None")
        return self

    def kwargs(self) -> dict:
        return dataclasses.asdict(self)


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

    def kwargs(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


_EXPLAIN_FIELDS = {f.name for f in dataclasses.fields(ExplainOptions)}
_INDEX_FIELDS = {f.name for f in dataclasses.fields(IndexOptions)}


@dataclass
class TrustRequest:
    """Everything :func:`toki_trust` needs, validated (the output of :func:`validate`)."""

    classifier: object
    texts: list
    references: list
    text_pairs: list | None
    human_trust: list | None
    theta_conf: float
    resolution: float
    explain: ExplainOptions
    index: IndexOptions
    keyword_index: KeywordIndex | None = None
    train: tuple | None = None          # (texts, labels, pairs) when the index is to be built
    save_index: object = None


def validate(texts, references, text_pairs=None, model=None, tokenizer=None, device=None, keyword_index=None,
             train=None, save_index=None, theta_conf: float = 0.9, human_trust=None, resolution: float = RESOLUTION,
             explain: ExplainOptions = ExplainOptions(), index: IndexOptions = IndexOptions()) -> TrustRequest:
    """Stage 1: check every argument (loading the classifier, but calling no model)."""
    from textxai.classifier import as_classifier
    from textxai.embeddings import get_embedders
    from textxai.validation import check_text_pairs, check_texts

    if model is None:
        raise ValueError("model=None: expected a classifier (Hub id, folder, loaded model, pipeline or 'textxai/demo-sentiment')")
    explain, index = explain.checked(), index.checked()
    theta_conf = check_unit(theta_conf, "theta_conf")
    resolution = check_unit(resolution, "resolution", 0.0, float("inf"))
    clf = as_classifier(model, tokenizer=tokenizer, device=device) if tokenizer is not None or device is not None else as_classifier(model)
    texts = check_texts(texts, "texts")
    pairs = check_text_pairs(text_pairs, texts, "text_pairs")
    labels = [int(y) for y in check_labels(references, "references", n=len(texts), num_classes=clf.num_labels)]
    human = check_human_trust(human_trust, len(texts))
    get_embedders(index.embedders, clf)   # names and objects only: nothing is loaded yet
    anchors = resolve_class_anchors(clf, index.class_names)[1] if index.class_names is not None or keyword_index is None else None
    request = TrustRequest(clf, texts, labels, pairs, human, theta_conf, resolution, explain, index, save_index=save_index)
    if keyword_index is not None:
        request.keyword_index = check_index(keyword_index, clf)
        built = {c: request.keyword_index.anchors(c) for c in request.keyword_index.class_names}
        if anchors is not None and anchors != built:
            raise ValueError(f"class_names={short_repr(index.class_names)} but the keyword index was built with "
                             f"{list(request.keyword_index.class_names.values())}: expected the same names (or leave class_names out)")
        return request
    train_texts, train_labels, train_pairs = train if train is not None else (None, None, None)
    if train_texts is None or train_labels is None:
        raise ValueError("keyword_index=None and train_texts / train_labels missing: expected a keyword index "
                         "(object or folder) or the training texts and labels to build one")
    train_texts = check_texts(train_texts, "train_texts")
    request.train = (train_texts, [int(y) for y in check_labels(train_labels, "train_labels", n=len(train_texts), num_classes=clf.num_labels)],
                     check_text_pairs(train_pairs, train_texts, "train_text_pairs"))
    return request


def keyword_index_of(request: TrustRequest) -> KeywordIndex:
    """Stage 2: the given keyword index, or the one built (and cached) from the training texts."""
    if request.keyword_index is not None:
        return request.keyword_index
    train_texts, train_labels, train_pairs = request.train
    index = cached_keyword_index(request.classifier, train_texts, train_labels, **request.explain.kwargs(),
                                 **request.index.kwargs(), train_text_pairs=train_pairs)
    if request.save_index is not None:
        index.save(request.save_index)
    return index


def assessment(request: TrustRequest, index: KeywordIndex) -> dict:
    """Stage 3: pipeline 2 on the texts (:func:`textxai.toki.assess`)."""
    return assess(request.classifier, request.texts, request.references, index, embedders=request.index.embedders,
                  theta_conf=request.theta_conf, resolution=request.resolution, human_trust=request.human_trust, text_pairs=request.text_pairs,
                  **request.explain.kwargs())


def module_output(result: dict, index: KeywordIndex) -> dict:
    """Stage 4: the module's plain output (lists, floats, dicts) from :func:`assess`'s result."""
    ex = result["examples"]
    out = {
        "trust_labels": [e["label"] for e in ex],
        "is_rel": [e["is_rel"] for e in ex],
        "is_unr": [e["is_unr"] for e in ex],
        "related_words": [[w for w, _, r in e["top_words"] if r] for e in ex],
        "unrelated_words": [[w for w, _, r in e["top_words"] if not r] for e in ex],
        "top_words": [[[w, s, r] for w, s, r in e["top_words"]] for e in ex],
        "predictions": [e["predicted"] for e in ex],
        "confidences": [e["confidence"] for e in ex],
        "trustworthy_rate": result["trustworthy_rate"],
        "n_correct": result["n_correct"],
        "naive_trustworthy_rate": result["baselines"]["naive_trustworthy_rate"],
        "no_ki_trustworthy_rate": result["baselines"]["no_ki_trustworthy_rate"],
        "naive_labels": [e["naive"] for e in ex],  # per text, as trust_labels: the baselines' intervals need them
        "no_ki_labels": [e["no_ki"] for e in ex],
        "keywords": {index.class_names[c]: index.keyword_list(c) for c in sorted(index.class_names)},
        "theta_relate": dict(index.theta_relate),
    }
    for key in ("reasons", "n_undetermined"):
        if key in result:
            out[key] = result[key]
    if "evaluation" in result:
        out["evaluation"] = result["evaluation"]
    return out


def toki_trust(texts, references, text_pairs=None, model=None, tokenizer=None, keyword_index=None, train_texts=None,
               train_labels=None, train_text_pairs=None, save_index=None, theta_conf: float = 0.9, human_trust=None,
               device=None, resolution: float = RESOLUTION, **options) -> dict:
    """Everything the ``toki_trust`` module returns (see its card), as plain lists, floats and dicts.

    ``options`` are the fields of :class:`ExplainOptions` (explainer, explainer_options, top_k, batch_size,
    seed, progress) and :class:`IndexOptions` (theta_dist, theta_relate, embedders, class_names, linkage),
    or the two objects themselves as ``explain=`` / ``index=``. ``resolution``: the smallest top-k importance
    sum given a verdict (below: label None, reason "undetermined: ...").
    """
    explain = options.pop("explain", None) or ExplainOptions()
    index = options.pop("index", None) or IndexOptions()
    unknown = sorted(set(options) - _EXPLAIN_FIELDS - _INDEX_FIELDS)
    if unknown:
        raise TypeError(f"toki_trust got unexpected option(s) {unknown}: expected {sorted(_EXPLAIN_FIELDS | _INDEX_FIELDS)}")
    explain = dataclasses.replace(explain, **{k: v for k, v in options.items() if k in _EXPLAIN_FIELDS})
    index = dataclasses.replace(index, **{k: v for k, v in options.items() if k in _INDEX_FIELDS})
    request = validate(texts, references, text_pairs, model, tokenizer, device, keyword_index,
                       (train_texts, train_labels, train_text_pairs), save_index, theta_conf, human_trust, resolution,
                       explain, index)
    built = keyword_index_of(request)
    return module_output(assessment(request, built), built)
