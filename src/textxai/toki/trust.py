"""The one-call entry point of the ``toki_trust`` module, in stages: validate everything -> keyword index ->
assessment -> plain output.

Every argument a user passes is checked in :func:`validate` before any explanation or prediction is
computed (a bad ``human_trust`` costs nothing). The options are grouped in small dataclasses,
:class:`ExplainOptions` (how explanations are computed, shared by both pipelines) and :class:`IndexOptions`
(how keywords are found), plus :class:`AssessOptions` (the Naive threshold, the resolution) and
:class:`TrainingData`; :func:`toki_trust` still accepts them as flat keyword arguments.

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

from textxai.toki.assess import AssessOptions, assess, check_human_trust
from textxai.toki.core import with_keywords
from textxai.toki.index import (ExplainOptions, IndexOptions, KeywordIndex, cached_keyword_index, check_index,
                                resolve_class_anchors)
from textxai.validation import check_labels, short_repr


@dataclass(frozen=True)
class TrainingData:
    """The texts pipeline 1 explains to build the keyword index, and where to save the index built."""

    texts: object
    labels: object
    text_pairs: object = None
    save_index: object = None


#: Flat keywords toki_trust still accepts (the loading options, and the pre-dataclass spelling of the options).
_MODEL_KEYWORDS = {"tokenizer", "device"}
_TRAIN_KEYWORDS = {"train_texts": "texts", "train_labels": "labels", "train_text_pairs": "text_pairs",
                   "save_index": "save_index"}


@dataclass
class TrustRequest:
    """Everything :func:`toki_trust` needs, validated (the output of :func:`validate`)."""

    classifier: object
    texts: list
    references: list
    text_pairs: list | None
    human_trust: list | None
    explain: ExplainOptions
    index: IndexOptions
    assess: AssessOptions
    keyword_index: KeywordIndex | None = None
    train: tuple | None = None          # (texts, labels, pairs) when the index is to be built
    save_index: object = None


def validate(texts, references, text_pairs=None, classifier=None, keyword_index=None, train: TrainingData | None = None,
             human_trust=None, explain: ExplainOptions = ExplainOptions(), index: IndexOptions = IndexOptions(),
             assess: AssessOptions = AssessOptions()) -> TrustRequest:
    """Stage 1: check every argument (``classifier`` already loaded; no model is called)."""
    from textxai.embeddings import get_embedders
    from textxai.validation import check_text_pairs, check_texts

    clf = classifier
    explain, index, assess = explain.checked(), index.checked(), assess.checked()
    texts = check_texts(texts, "texts")
    pairs = check_text_pairs(text_pairs, texts, "text_pairs")
    labels = [int(y) for y in check_labels(references, "references", n=len(texts), num_classes=clf.num_labels)]
    human = check_human_trust(human_trust, len(texts))
    get_embedders(index.embedders, clf)   # names and objects only: nothing is loaded yet
    anchors = resolve_class_anchors(clf, index.class_names)[1] if index.class_names is not None or keyword_index is None else None
    request = TrustRequest(clf, texts, labels, pairs, human, explain, index, assess,
                           save_index=train.save_index if train is not None else None)
    if keyword_index is not None:
        request.keyword_index = check_index(keyword_index, clf)
        built = {c: request.keyword_index.anchors(c) for c in request.keyword_index.class_names}
        if anchors is not None and anchors != built:
            raise ValueError(f"class_names={short_repr(index.class_names)} but the keyword index was built with "
                             f"{list(request.keyword_index.class_names.values())}: expected the same names (or leave class_names out)")
        return request
    if train is None or train.texts is None or train.labels is None:
        raise ValueError("keyword_index=None and train_texts / train_labels missing: expected a keyword index "
                         "(object or folder) or the training texts and labels to build one")
    train_texts = check_texts(train.texts, "train_texts")
    request.train = (train_texts, [int(y) for y in check_labels(train.labels, "train_labels", n=len(train_texts), num_classes=clf.num_labels)],
                     check_text_pairs(train.text_pairs, train_texts, "train_text_pairs"))
    return request


def keyword_index_of(request: TrustRequest) -> KeywordIndex:
    """Stage 2: the given keyword index, or the one built (and cached) from the training texts."""
    if request.keyword_index is not None:
        return request.keyword_index
    train_texts, train_labels, train_pairs = request.train
    index = cached_keyword_index(request.classifier, train_texts, train_labels, train_pairs, explain=request.explain,
                                 index=request.index)
    if request.save_index is not None:
        index.save(request.save_index)
    return index


def assessment(request: TrustRequest, index: KeywordIndex) -> dict:
    """Stage 3: pipeline 2 on the texts (:func:`textxai.toki.assess`)."""
    return assess(request.classifier, request.texts, request.references, index, human_trust=request.human_trust,
                  text_pairs=request.text_pairs, embedders=request.index.embedders, explain=request.explain,
                  options=request.assess)


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


def _options_from_keywords(explain, index, assess, train, keywords: dict):
    """The option objects with the flat keywords applied (``top_k=5``, ``train_texts=...``, ``theta_conf=...``);
    an unknown keyword is a TypeError naming it (no typo is swallowed)."""
    if train is not None and not isinstance(train, TrainingData):
        raise TypeError(f"train={short_repr(train)}: expected a TrainingData or None")
    options = {k: v for k, v in keywords.items() if k not in _TRAIN_KEYWORDS and k not in _MODEL_KEYWORDS}
    explain, index, assess = with_keywords("toki_trust", options, (ExplainOptions, explain), (IndexOptions, index),
                                           (AssessOptions, assess), extra=tuple(_TRAIN_KEYWORDS) + tuple(_MODEL_KEYWORDS))
    flat = {_TRAIN_KEYWORDS[k]: v for k, v in keywords.items() if k in _TRAIN_KEYWORDS}
    if flat:
        train = dataclasses.replace(train or TrainingData(None, None), **flat)
    return explain, index, assess, train


def toki_trust(texts, references, text_pairs=None, model=None, keyword_index=None, train: TrainingData | None = None,
               human_trust=None, explain: ExplainOptions | None = None, index: IndexOptions | None = None,
               assess: AssessOptions | None = None, **keywords) -> dict:
    """Everything the ``toki_trust`` module returns (see its card), as plain lists, floats and dicts.

    The keyword index is ``keyword_index`` (object or folder) or built from ``train``
    (:class:`TrainingData`: texts, labels, pairs, and a folder to save the index to). Options come as
    :class:`ExplainOptions` (explainer, explainer_options, top_k, batch_size, seed, progress),
    :class:`IndexOptions` (theta_dist, theta_relate, embedders, class_names, linkage) and
    :class:`AssessOptions` (theta_conf, resolution: the smallest top-k importance sum given a verdict, below:
    label None, reason "undetermined: ..."). ``keywords``: the model's ``tokenizer`` / ``device``, and the
    same options as flat keywords (``top_k=5``, ``train_texts=...``, ``theta_conf=0.8``; an unknown keyword is
    a TypeError).

    """
    from textxai.classifier import as_classifier

    explain, index, assess, train = _options_from_keywords(explain, index, assess, train, keywords)
    explain, index, assess = explain.checked(), index.checked(), assess.checked()   # cheap checks before loading
    if model is None:
        raise ValueError("model=None: expected a classifier (Hub id, folder, loaded model, pipeline or 'textxai/demo-sentiment')")
    loading = {k: keywords[k] for k in _MODEL_KEYWORDS if keywords.get(k) is not None}
    clf = as_classifier(model, **loading) if loading else as_classifier(model)
    clf.require_single_label("ToKI (one predicted class per text, one keyword list per class)")
    request = validate(texts, references, text_pairs, clf, keyword_index, train, human_trust, explain, index, assess)
    built = keyword_index_of(request)
    return module_output(assessment(request, built), built)
