"""TOKI's one analysis, in stages: validate everything -> keyword index -> assessment -> what every surface shows.

:func:`analyse` is the entry point of every surface (the evaluate module, ``textxai run toki_trust``, ``textxai
demo``, the Space): it returns a :class:`textxai.registry.Analysis` (results, the module's summary, warnings,
figures, report; :mod:`textxai.toki.analysis`). :func:`toki_trust` is its summary.

Every argument a user passes is checked in :func:`validate` before any explanation or prediction is
computed (a bad ``human_trust`` costs nothing). The options come in small frozen dataclasses (the one source of
their defaults), each field also accepted as a flat keyword (:func:`textxai.options.apply_keywords`):
:class:`TrainingData` (where the keyword index is built from), :class:`ExplainOptions` (how explanations are
computed, shared by both pipelines), :class:`IndexOptions` (how keywords are found), :class:`AssessOptions`
(the Naive threshold, the resolution) and :class:`OutputOptions` (intervals, figures, report, attack).

>>> ExplainOptions(explainer="omission", top_k=5).checked().top_k
5
>>> IndexOptions(theta_dist=2.5).checked()
Traceback (most recent call last):
...
ValueError: theta_dist=2.5: expected a number in [0, 1]
>>> groups = option_groups("f", {"top_k": 5, "train_texts": ["a film"]})
>>> groups["explain"].top_k, groups["train"].train_texts, groups["output"].figures
(5, ['a film'], True)
"""
from __future__ import annotations

from dataclasses import dataclass

from textxai.options import apply_keywords
from textxai.registry import Analysis
from textxai.toki.analysis import OutputOptions, rate_figure, report, shape, summary_of, warnings_of, with_intervals
from textxai.toki.assess import AssessOptions, assess, check_human_trust
from textxai.toki.index import (SINGLE_LABEL, ExplainOptions, IndexOptions, KeywordIndex, cached_keyword_index, check_index,
                                resolve_class_anchors)
from textxai.validation import short_repr


@dataclass(frozen=True)
class TrainingData:
    """The texts pipeline 1 explains to build the keyword index (when none is given), and where to save it.

    The fields carry their flat keyword names (``train_texts=...`` of the module and of :func:`analyse`)."""

    train_texts: object = None
    train_labels: object = None
    train_text_pairs: object = None
    save_index: object = None

    def checked(self) -> "TrainingData":
        return self


#: ``{parameter: option group}`` of :func:`analyse` / :func:`toki_trust` and the evaluate module (the one
#: source of the defaults: argparse, the Space and the work estimate read them; the registry lists them)
OPTION_GROUPS = {"train": TrainingData, "explain": ExplainOptions, "index": IndexOptions, "assess": AssessOptions}
#: how the model is loaded when it is not loaded yet (``textxai.classifier.as_classifier``)
_MODEL_KEYWORDS = ("tokenizer", "device")


def option_groups(where: str, keywords: dict) -> dict:
    """``{group: checked instance}`` of :data:`OPTION_GROUPS` and ``output`` (:class:`OutputOptions`) from
    ``keywords``: the groups given by name (``explain=ExplainOptions(...)``) and their fields as flat keywords
    (``top_k=5``, ``train_texts=[...]``; a flat keyword overrides the field of its group). An unknown keyword
    or a group of the wrong type is a TypeError naming it; the checks run before anything is loaded."""
    groups = {**OPTION_GROUPS, "output": OutputOptions}
    flat = {k: v for k, v in keywords.items() if k not in groups and k not in _MODEL_KEYWORDS}
    mapped = apply_keywords(where, flat, **{name: (cls, keywords.get(name)) for name, cls in groups.items()})
    return {name: group.checked() for name, group in mapped.items()}


@dataclass
class TrustRequest:
    """Everything :func:`analyse` needs, validated (the output of :func:`validate`)."""

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


def validate(texts, references, text_pairs, classifier, keyword_index, human_trust, groups: dict) -> TrustRequest:
    """Stage 1: check every argument (``classifier`` already loaded; no model is called); ``groups``: the
    checked option groups of :func:`option_groups`."""
    from textxai.embeddings import get_embedders
    from textxai.validation import check_text_pairs, check_texts

    clf, train, index = classifier, groups["train"], groups["index"]
    texts = check_texts(texts, "texts")
    pairs = check_text_pairs(text_pairs, texts, "text_pairs")
    from textxai.validation import ClassIndices

    labels = ClassIndices(int(y) for y in clf.class_indices(references, "references", n=len(texts)))
    human = check_human_trust(human_trust, len(texts))
    get_embedders(index.embedders, clf)   # names and objects only: nothing is loaded yet
    anchors = resolve_class_anchors(clf, index.class_names)[1] if index.class_names is not None or keyword_index is None else None
    request = TrustRequest(clf, texts, labels, pairs, human, groups["explain"], index, groups["assess"],
                           save_index=_writable_folder(train.save_index, "save_index"))
    if keyword_index is not None:
        request.keyword_index = check_index(keyword_index, clf)
        built = {c: request.keyword_index.anchors(c) for c in request.keyword_index.class_names}
        if anchors is not None and anchors != built:
            raise ValueError(f"class_names={short_repr(index.class_names)} but the keyword index was built with "
                             f"{list(request.keyword_index.class_names.values())}: expected the same names (or leave class_names out)")
        return request
    if train.train_texts is None or train.train_labels is None:
        raise ValueError("keyword_index=None and train_texts / train_labels missing: expected a keyword index "
                         "(object or folder) or the training texts and labels to build one")
    train_texts = check_texts(train.train_texts, "train_texts")
    request.train = (train_texts, ClassIndices(int(y) for y in clf.class_indices(train.train_labels, "train_labels",
                                                                                   n=len(train_texts))),
                     check_text_pairs(train.train_text_pairs, train_texts, "train_text_pairs"))
    return request


def _writable_folder(folder, name: str):
    """``folder`` (None passes) checked before any model call: a folder that is a file, or one that cannot be
    written, failed only once the index was built (minutes later)."""
    import tempfile
    from pathlib import Path

    if folder is None:
        return None
    if not isinstance(folder, (str, Path)) or not str(folder).strip():
        raise TypeError(f"{name}={folder!r}: expected a folder path to write keyword_index.json into")
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name}={str(folder)!r}: is a file; expected a folder to write keyword_index.json into")
    if (path / "keyword_index.json").is_dir():
        raise ValueError(f"{name}={str(folder)!r}: holds a folder named keyword_index.json; expected a folder to "
                         "write that file into")
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as error:
        raise ValueError(f"{name}={str(folder)!r}: cannot write there ({error.strerror or error}); expected a "
                         "writable folder") from None
    return folder


def keyword_index_of(request: TrustRequest) -> KeywordIndex:
    """Stage 2: the given keyword index, or the one built (and cached) from the training texts (saved by the
    main process when ``save_index`` names a folder)."""
    from textxai import parallel

    if request.keyword_index is not None:
        return request.keyword_index
    train_texts, train_labels, train_pairs = request.train
    index = cached_keyword_index(request.classifier, train_texts, train_labels, train_pairs, explain=request.explain,
                                 index=request.index)
    if request.save_index is not None and parallel.is_main_process():
        index.save(request.save_index)
    return index


def assessment(request: TrustRequest, index: KeywordIndex) -> dict:
    """Stage 3: pipeline 2 on the texts (:func:`textxai.toki.assess`)."""
    return assess(request.classifier, request.texts, request.references, index, human_trust=request.human_trust,
                  text_pairs=request.text_pairs, embedders=request.index.embedders, explain=request.explain,
                  options=request.assess)


def attack_of(request: TrustRequest, index: KeywordIndex, result: dict, output: OutputOptions) -> dict | None:
    """Stage 4 (optional): the TOKI-guided attack on the first ``output.attack`` predictions with a verdict."""
    from textxai import parallel
    from textxai.toki.attack import toki_attack

    if output.attack <= 0 or request.text_pairs is not None:
        return None
    parallel.note("the TOKI attack is not split: every process runs it on all chosen texts")
    chosen = [i for i, e in enumerate(result["examples"]) if e["label"] is not None][: output.attack]
    return toki_attack(request.classifier, [request.texts[i] for i in chosen], index,
                       labels=[request.references[i] for i in chosen], embedders=request.index.embedders,
                       options=output.attack_options, batch_size=request.explain.batch_size,
                       progress=request.explain.progress)


def presented(request: TrustRequest, index: KeywordIndex, result: dict, output: OutputOptions) -> Analysis:
    """Stage 5: what every surface shows (:mod:`textxai.toki.analysis`), from the assessment and the attack."""
    results = shape(result, index, attack_of(request, index, result, output))
    figures = {"trust_rates": rate_figure(results, index.class_names, request.references)} if output.figures else {}
    if output.intervals is not None:
        with_intervals(results, output.intervals, figures if output.figures else None)
    warnings = warnings_of(results, index, request.explain.top_k, request.assess.resolution)
    if output.attack > 0 and request.text_pairs is not None:
        warnings.append("the TOKI-guided attack takes single texts: not run on sentence pairs")
    results["warnings"] = warnings
    summary = {**summary_of(results), "warnings": warnings}
    title = output.title if output.title is not None else f"TOKI trust — {getattr(request.classifier, 'name', '')}"
    return Analysis("toki_trust", results, summary, warnings, figures,
                    report(index, results, request.texts, title, output.max_examples))


def label_ids(labels, classifier, name: str = "references") -> list[int]:
    """Class indices of ``labels`` given as indices, label names (any case) or whole floats (a table's column);
    a ValueError names ``name``, the row and the model's labels."""
    from textxai.validation import ClassIndices

    return ClassIndices(classifier.class_index(int(y) if isinstance(y, float) and y.is_integer() else y,
                                               f"{name} row {i}") for i, y in enumerate(labels))


def _classifier(model, keywords: dict):
    from textxai.classifier import as_classifier

    if model is None:
        raise ValueError("model=None: expected a classifier (Hub id, folder, loaded model, pipeline or 'textxai/demo-sentiment')")
    loading = {k: keywords[k] for k in _MODEL_KEYWORDS if keywords.get(k) is not None}
    clf = as_classifier(model, **loading) if loading else as_classifier(model)
    clf.require_single_label(SINGLE_LABEL)
    return clf


def analyse(texts, references, text_pairs=None, model=None, keyword_index=None, human_trust=None,
            **options) -> Analysis:
    """TOKI on ``texts`` with their true ``references``, computed once: a :class:`textxai.registry.Analysis`.

    The keyword index is ``keyword_index`` (object or folder) or built from the training texts
    (:class:`TrainingData`: ``train_texts``, ``train_labels``, ``train_text_pairs``, and ``save_index``, a
    folder to save it to). ``options``: the groups ``train``, ``explain`` (:class:`ExplainOptions`: explainer,
    explainer_options, top_k, batch_size, seed, progress), ``index`` (:class:`IndexOptions`: theta_dist,
    theta_relate, embedders, class_names, linkage), ``assess`` (:class:`AssessOptions`: theta_conf, resolution:
    the smallest top-k importance sum given a verdict), ``output`` (:class:`OutputOptions`: intervals, figures,
    title, max_examples, attack, attack_options), each field also as a flat keyword (``top_k=5``,
    ``figures=False``); the model's ``tokenizer`` / ``device`` when ``model`` is not loaded yet.

    ``results``: what ``textxai run toki_trust`` writes (rates, baselines, keywords, theta_relate, examples,
    evaluation with ``human_trust``, intervals, attack, warnings); ``summary``: the evaluate module's output;
    ``warnings``; ``figures`` (``trust_rates``, ``intervals``); ``report``. Cheap path for the module:
    ``figures=False`` and no ``intervals`` (the default).

    >>> train = ["a wonderful , moving film", "a dull and boring film", "great acting , great story",
    ...          "awful plot and terrible acting"]
    >>> a = analyse(["a great and moving story", "a boring , awful film"], [1, 0], model="textxai/demo-sentiment",
    ...             train_texts=train, train_labels=[1, 0, 1, 0], explainer="omission", embedders=["minilm"],
    ...             theta_relate=0.33)
    >>> a.summary["trust_labels"], sorted(a.figures), a.report.splitlines()[0]
    ([True, True], ['trust_rates'], '## TOKI trust — textxai/demo-sentiment')
    >>> a.warnings
    ['only 2 correct prediction(s) with a verdict: each moves the trustworthy rates by 50%; read them with their intervals']
    """
    return _analyse("analyse", texts, references, text_pairs, model, keyword_index, human_trust, options)


def _analyse(where, texts, references, text_pairs, model, keyword_index, human_trust, options: dict) -> Analysis:
    groups = option_groups(where, options)      # cheap checks before loading
    clf = _classifier(model, options)
    request = validate(texts, references, text_pairs, clf, keyword_index, human_trust, groups)
    index = keyword_index_of(request)
    return presented(request, index, assessment(request, index), groups["output"])


def toki_trust(texts, references, text_pairs=None, model=None, keyword_index=None, human_trust=None,
               **options) -> dict:
    """Everything the ``toki_trust`` module returns (see its card): :func:`analyse`'s ``summary``, without
    figures or intervals. Same arguments as :func:`analyse`."""
    if "output" not in options:
        options.setdefault("figures", False)
    return _analyse("toki_trust", texts, references, text_pairs, model, keyword_index, human_trust, options).summary
