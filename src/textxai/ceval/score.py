"""All CEval metrics at once, in four named stages: validate everything -> model outputs -> per metric -> reduce.

:func:`compute` takes its options as three small dataclasses (:class:`ClassifierOutputs`,
:class:`QualityOptions`, :class:`RunOptions`), each field also accepted as a plain keyword
(``textxai.options``); every check runs in :func:`validate` before the first model call, so e.g.
``targets=[7]`` for a two-class model is refused before any ``predict_proba`` pass.
``textxai.ceval.score_counterfactuals`` is its deprecated old name (:mod:`textxai.deprecation`).

NaN in a result is the documented answer to "no example to average over": ``probability_change_flipped``
when nothing flipped (``num_flipped`` 0 beside it), distances when every generation failed
(``num_valid`` 0), ``diversity`` when no original has two valid counterfactuals
(``num_diversity_examples`` 0), perplexity and text quality when nothing could be scored; each call
that returns such a NaN emits one ``RuntimeWarning`` naming the keys.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from collections.abc import Mapping

import numpy as np

from textxai.ceval._checks import _check_generation, _check_list, _check_originals, _check_probs, check_labels
from textxai.ceval.distances import _failed_any, diversity, token_distance, token_distances
from textxai.ceval.judge import JUDGE_METHODS, MAX_NEW_TOKENS, QUALITY_ASPECTS, TOPICS, check_judge, judge_quality
from textxai.ceval.probabilities import CONTRASTS, contrast_classes, flips, probability_change
from textxai import parallel
from textxai.options import apply_keywords
from textxai.validation import check_positive_int, check_same_length, check_unicode, short_repr


@dataclass(frozen=True)
class ClassifierOutputs:
    """Precomputed classifier outputs (any may be None): softmax rows ``[n, C]`` or predicted labels."""

    original_probs: object = None
    counterfactual_probs: object = None
    original_labels: object = None
    counterfactual_labels: object = None


@dataclass(frozen=True)
class QualityOptions:
    """CEval's text-quality metrics: perplexity under a causal ``lm`` with the start token ``bos`` (``"auto"``:
    the model's BOS, CEval's rule; see :mod:`textxai.lm`), and an LLM ``judge`` (a causal LM or a callable
    ``prompts -> replies``) asked about ``judge_topic``. ``judge_method`` (:data:`textxai.ceval.judge.JUDGE_METHODS`):
    ``"auto"`` reads an LM judge from its next-token probabilities over the scores 1-5 (every text scored, one
    forward pass per text and aspect) and a callable from its parsed replies; ``"generate"`` has an LM generate up
    to ``max_new_tokens`` tokens, greedily unless ``judge_generate_kwargs`` asks for sampling (then repeatable
    under ``seed``), and parses them (CEval's reading)."""

    lm: object = None
    judge: object = None
    judge_tokenizer: object = None
    judge_topic: str | None = None
    max_new_tokens: int = MAX_NEW_TOKENS
    judge_generate_kwargs: Mapping | None = None
    seed: int = 0
    bos: object = "auto"
    judge_method: str = "auto"


@dataclass(frozen=True)
class RunOptions:
    """How the models are loaded and run, and what comes back: the classifier's ``tokenizer`` (for a loaded
    transformers model), ``device``, ``batch_size``, progress bars, per-example values in the result."""

    tokenizer: object = None
    batch_size: int = 32
    device: object = None
    progress: bool = False
    return_per_example: bool = False


@dataclass
class Request:
    """Everything :func:`validate` checked, ready for the model stage."""

    originals: list            # one tuple per example: (text,) or (premise, hypothesis)
    sets: list                 # one list of counterfactual tuples per example (None sides for failures)
    multi: bool                # some example has two or more counterfactuals (diversity)
    nli: bool
    contrast: str
    failed: np.ndarray         # the primary counterfactual failed
    outputs: dict = field(default_factory=dict)   # checked probabilities / labels given by the caller
    targets: np.ndarray | None = None
    classifier: object = None  # a TextClassifier when model outputs must be computed
    num_classes: int | None = None

    @property
    def n(self) -> int:
        return len(self.originals)

    @property
    def primary(self) -> list:
        return [s[0] for s in self.sets]


# ----------------------------------------------------------------------------------- stage 1: validate
def _prepare(references, predictions, reference_pairs, prediction_pairs):
    """-> originals (list of tuples), counterfactual sets (list of lists of tuples), multi?, nli?"""
    nli = reference_pairs is not None or prediction_pairs is not None
    refs = _check_originals(references, "references")
    preds = _check_list(predictions, "predictions")
    check_same_length(refs, preds, "references", "predictions")
    preds = [p.tolist() if isinstance(p, np.ndarray) and p.ndim == 1 else p for p in preds]  # rows of a 2-d array
    multi = any(isinstance(p, (list, tuple)) and len(p) > 1 for p in preds)
    pred_pairs = None
    originals = [(p,) for p in refs]
    if nli:
        if reference_pairs is None or prediction_pairs is None:
            missing = "reference_pairs" if reference_pairs is None else "prediction_pairs"
            raise ValueError(f"{missing}=None: an NLI example needs both sides, premise (references / predictions) "
                             f"and hypothesis (reference_pairs / prediction_pairs)")
        ref_pairs = _check_list(reference_pairs, "reference_pairs")
        check_same_length(refs, ref_pairs, "references", "reference_pairs")
        for i, h in enumerate(ref_pairs):
            if not isinstance(h, str):
                raise TypeError(f"reference_pairs[{i}]={short_repr(h)} ({type(h).__name__}): expected the original hypothesis as a string")
            if not h.strip():
                raise ValueError(f"reference_pairs[{i}]={h!r}: the original hypothesis is missing; expected a non-empty string")
            check_unicode(h, f"reference_pairs[{i}]")
        pred_pairs = [p.tolist() if isinstance(p, np.ndarray) and p.ndim == 1 else p
                      for p in _check_list(prediction_pairs, "prediction_pairs")]
        check_same_length(refs, pred_pairs, "references", "prediction_pairs")
        originals = [(p, h) for p, h in zip(refs, ref_pairs)]

    def as_set(value, name):
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"{name}=[]: expected at least one counterfactual (use '-1' for a failed generation)")
            return [(_check_generation(v, f"{name}[{j}]"),) for j, v in enumerate(value)]
        return [(_check_generation(value, name),)]

    sets = []
    for i in range(len(refs)):
        premise_set = as_set(preds[i], f"predictions[{i}]")
        if nli:
            hyp_set = as_set(pred_pairs[i], f"prediction_pairs[{i}]")
            if len(hyp_set) != len(premise_set):
                raise ValueError(f"prediction_pairs[{i}] has {len(hyp_set)} counterfactuals but predictions[{i}] has "
                                 f"{len(premise_set)}: expected the same number")
            sets.append([(p[0], h[0]) for p, h in zip(premise_set, hyp_set)])
        else:
            sets.append(premise_set)
    return originals, sets, multi, nli


def _check_quality(options: QualityOptions) -> None:
    if options.judge is not None:
        check_judge(options.judge, options.judge_topic, options.max_new_tokens, options.judge_generate_kwargs)
    if options.judge_method not in JUDGE_METHODS:
        raise ValueError(f"judge_method={short_repr(options.judge_method)}: expected one of {list(JUDGE_METHODS)}")
    lm = options.lm
    if lm is not None and isinstance(lm, str) and not lm.strip():
        raise ValueError(f"lm={lm!r}: expected a causal LM id or folder, or None (no perplexity)")
    seed = options.seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed={short_repr(seed)}: expected an integer (the judge's sampling seed)")
    bos = options.bos
    if not (bos is None or isinstance(bos, str) or isinstance(bos, (int, np.integer)) and not isinstance(bos, bool)):
        raise ValueError(f"bos={short_repr(bos)}: expected 'auto', None, a token string or a token id")


def _map_targets(targets, classifier, n: int, num_classes: int | None) -> np.ndarray:
    """Targets as class indices; label names are mapped through the model's ``id2label``."""
    if isinstance(targets, (str, bytes)):
        raise TypeError(f"targets={short_repr(targets)}: expected a list of class indices, one per example")
    targets = _check_list(targets, "targets")
    if any(isinstance(t, str) for t in targets):
        if classifier is None:
            raise TypeError("targets holds label names but there is no model to map them; expected class indices")
        names = {v: k for k, v in classifier.labels.items()}
        for i, t in enumerate(targets):
            if isinstance(t, str) and t not in names:
                raise ValueError(f"targets[{i}]={t!r}: not a label of the model; expected one of {sorted(names)}")
        targets = [names[t] if isinstance(t, str) else t for t in targets]
    return check_labels(targets, "targets", n, num_classes)


def validate(references, predictions, reference_pairs, prediction_pairs, *, model, targets, contrast,
             outputs: ClassifierOutputs, quality: QualityOptions, run: RunOptions) -> Request:
    """Stage 1: every check, before any model call. Loads (does not run) the classifier when one is needed."""
    check_positive_int(run.batch_size, "batch_size")
    if run.device is not None:  # also for a loaded classifier and the LM / judge, before any model call
        from textxai.classifier import check_device

        check_device(run.device)
    for flag in ("progress", "return_per_example"):
        if not isinstance(getattr(run, flag), (bool, np.bool_)):
            raise TypeError(f"{flag}={short_repr(getattr(run, flag))}: expected True or False")
    originals, sets, multi, nli = _prepare(references, predictions, reference_pairs, prediction_pairs)
    n = len(originals)
    if contrast is not None and contrast not in CONTRASTS:
        raise ValueError(f"contrast={short_repr(contrast)}: expected one of {list(CONTRASTS)} or None (CEval's default per task)")
    if contrast == "target" and targets is None:
        raise ValueError("contrast='target' needs targets= (one target class per example)")
    if contrast not in (None, "target") and targets is not None:
        raise ValueError(f"contrast={contrast!r} does not use targets, but targets= is given: expected contrast='target' "
                         "(or None) with targets, or no targets")
    contrast = contrast or ("target" if targets is not None else "counterfactual_argmax" if nli else "argmin")
    _check_quality(quality)
    failed = np.array([_failed_any(s[0]) for s in sets], dtype=bool)
    request = Request(originals, sets, multi, nli, contrast, failed)

    given, num_classes = {}, None
    for name in ("original_probs", "counterfactual_probs"):
        value = getattr(outputs, name)
        if value is not None:
            given[name] = _check_probs(value, name, n, num_classes)
            num_classes = given[name].shape[1]
    need_orig = "original_probs" not in given and outputs.original_labels is None
    need_cf = "counterfactual_probs" not in given and outputs.counterfactual_labels is None
    if model is not None and (need_orig or need_cf or targets is not None and any(isinstance(t, str) for t in _iter(targets))):
        from textxai.classifier import as_classifier

        request.classifier = as_classifier(model, tokenizer=run.tokenizer, device=run.device)
        request.classifier.require_single_label("CEval (a flip moves the prediction to another, exclusive class)")
        if num_classes is not None and request.classifier.num_labels != num_classes:
            raise ValueError(f"model has {request.classifier.num_labels} classes but the given probabilities have "
                             f"{num_classes}: expected the same")
        num_classes = request.classifier.num_labels
    elif model is None and need_orig != need_cf:
        missing = "original_probs (or original_labels)" if need_orig else "counterfactual_probs (or counterfactual_labels)"
        raise ValueError(f"{missing} is missing and model=None: expected the classifier outputs of both the originals "
                         f"and the counterfactuals, or a model to compute them")
    for name in ("original_labels", "counterfactual_labels"):
        value = getattr(outputs, name)
        if value is not None:
            given[name] = check_labels(value, name, n, num_classes)
    if targets is not None:
        request.targets = _map_targets(targets, request.classifier, n, num_classes)
    request.outputs, request.num_classes = given, num_classes
    if request.classifier is not None and not (need_orig or need_cf):
        request.classifier = None  # loaded only to read label names: no model pass needed
    return request


def _iter(values):
    return values if isinstance(values, (list, tuple)) else []


# ------------------------------------------------------------------------------ stage 2: model outputs
def model_outputs(request: Request, run: RunOptions) -> tuple:
    """Stage 2: ``(p_orig, q_cf, y_orig, y_cf)``, each None when neither given nor computable."""
    p_orig = request.outputs.get("original_probs")
    q_cf = request.outputs.get("counterfactual_probs")
    clf, n = request.classifier, request.n
    if clf is not None:
        need_orig = p_orig is None and "original_labels" not in request.outputs
        need_cf = q_cf is None and "counterfactual_labels" not in request.outputs
        predict = parallel.split(clf.predict_proba, over=("texts", "text_pairs"))  # shared out under textxai run
        if need_orig:
            texts = [o[0] for o in request.originals]
            pairs = [o[1] for o in request.originals] if request.nli else None
            p_orig = predict(texts, pairs, batch_size=run.batch_size, progress=run.progress)
        if need_cf:
            q_cf = np.full((n, clf.num_labels), np.nan) if p_orig is None else p_orig.copy()
            ok = np.where(~request.failed)[0]
            if len(ok):
                primary = request.primary
                texts = [primary[i][0] for i in ok]
                pairs = [primary[i][1] for i in ok] if request.nli else None
                q_cf[ok] = predict(texts, pairs, batch_size=run.batch_size, progress=run.progress)
    y_orig = request.outputs.get("original_labels")
    if y_orig is None and p_orig is not None:
        y_orig = np.argmax(p_orig, axis=1)
    y_cf = request.outputs.get("counterfactual_labels")
    if y_cf is None and q_cf is not None and y_orig is not None:
        y_cf = np.where(request.failed, y_orig, np.argmax(np.nan_to_num(q_cf, nan=-1.0), axis=1))
    if y_orig is None or y_cf is None:
        y_orig = y_cf = None
    return p_orig, q_cf, y_orig, y_cf


# ---------------------------------------------------------------------------------- stage 3: per metric
def _nanmean(values) -> float:
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if arr.size else float("nan")


def flip_metrics(request: Request, y_orig, y_cf) -> tuple[dict, dict]:
    if y_orig is None:
        return {"num_flipped": None, "flip_rate": float("nan")}, {}
    flipped = flips(y_orig, y_cf, request.failed)
    return ({"num_flipped": int(flipped.sum()), "flip_rate": float(flipped.mean())},
            {"original_label": y_orig.tolist(), "counterfactual_label": y_cf.tolist(), "flipped": flipped.tolist()})


def probability_metrics(request: Request, p_orig, q_cf, flipped) -> tuple[dict, dict]:
    if p_orig is None or q_cf is None:
        return {"probability_change": float("nan"), "probability_change_flipped": float("nan")}, {}
    n = request.n
    q_safe = np.where(request.failed[:, None], p_orig, q_cf)
    c = contrast_classes(p_orig, q_safe, request.contrast, request.targets)
    dp = probability_change(p_orig, q_safe, request.contrast, request.targets, request.failed.tolist())
    result = {"contrast": request.contrast, "probability_change": float(dp.mean()),
              "probability_change_flipped": _nanmean(dp[flipped]) if flipped is not None else float("nan")}
    per = {"contrast_class": c.tolist(), "original_contrast_prob": p_orig[np.arange(n), c].tolist(),
           "counterfactual_contrast_prob": q_safe[np.arange(n), c].tolist(), "probability_change": dp.tolist()}
    return result, per


def distance_metrics(request: Request, flipped) -> tuple[dict, dict]:
    originals, primary = request.originals, request.primary
    dist = token_distances(originals, primary)
    dist_norm = token_distances(originals, primary, normalized=True)
    result = {"num_valid": int((~request.failed).sum()), "token_distance": _nanmean(dist),
              "token_distance_normalized": _nanmean(dist_norm)}
    if flipped is not None:
        result["token_distance_flipped"] = _nanmean(dist[flipped])
        result["token_distance_normalized_flipped"] = _nanmean(dist_norm[flipped])
    per = {"token_distance": dist.tolist(), "token_distance_normalized": dist_norm.tolist()}
    if request.nli:
        for side, key in ((0, "token_distance_premise"), (1, "token_distance_hypothesis")):
            per[key] = [float("nan") if f else float(token_distance(o[side], c[side]))
                        for o, c, f in zip(originals, primary, request.failed)]
    return result, per


def diversity_metrics(request: Request) -> tuple[dict, dict]:
    if not request.multi:
        return {}, {}
    div, div_per = diversity(request.sets)
    div_norm, div_norm_per = diversity(request.sets, originals=request.originals, normalized=True)
    result = {"diversity": div, "diversity_normalized": div_norm,
              "num_diversity_examples": int((~np.isnan(div_per)).sum()),
              "num_failed_counterfactuals": int(sum(_failed_any(c) for s in request.sets for c in s))}
    return result, {"diversity": div_per.tolist(), "diversity_normalized": div_norm_per.tolist()}


def _scored_texts(request: Request) -> tuple[np.ndarray, list[str]]:
    ok = np.where(~request.failed)[0]
    return ok, [" ".join(request.primary[i]) for i in ok]


def perplexity_metrics(request: Request, lm, flipped, run: RunOptions, bos="auto") -> tuple[dict, dict]:
    if lm is None:
        return {}, {}
    from textxai import lm as _lm

    ok, joined = _scored_texts(request)
    ppl = np.full(request.n, np.nan)
    lm = _lm.as_lm(lm, device=run.device, bos=bos)  # the run's device, as the classifier's and the judge's
    if len(ok):
        perplexity = parallel.split(_lm.perplexity, over=("texts",))
        ppl[ok] = np.asarray(perplexity(joined, lm, batch_size=run.batch_size, progress=run.progress), dtype=np.float64)
    result = {"perplexity": _nanmean(ppl), "num_perplexity": int((~np.isnan(ppl)).sum()),
              "perplexity_start_token": _lm.start_token(lm)}
    if flipped is not None:
        result["perplexity_flipped"] = _nanmean(ppl[flipped])
    return result, {"perplexity": ppl.tolist()}


def quality_metrics(request: Request, options: QualityOptions, run: RunOptions) -> tuple[dict, dict]:
    if options.judge is None:
        return {}, {}
    ok, joined = _scored_texts(request)
    topic = options.judge_topic or TOPICS["nli" if request.nli else "text"]
    judge = options.judge if options.judge_tokenizer is None else (options.judge, options.judge_tokenizer)
    quality = judge_quality(joined, judge, topic=topic, device=run.device,
                            max_new_tokens=options.max_new_tokens, progress=run.progress,
                            generate_kwargs=options.judge_generate_kwargs, seed=options.seed,
                            batch_size=min(run.batch_size, 8), method=options.judge_method)
    result, per, means = {}, {}, []
    for aspect in QUALITY_ASPECTS:
        scores = np.full(request.n, np.nan)
        scores[ok] = quality[aspect]
        result[aspect] = _nanmean(scores)
        means.append(result[aspect])
        per[aspect] = scores.tolist()
        if quality["method"] == "probabilities":
            entropy = np.full(request.n, np.nan)
            entropy[ok] = quality["entropy"][aspect]
            result[f"{aspect}_entropy"] = _nanmean(entropy)
            per[f"{aspect}_entropy"] = entropy.tolist()
    # the mean of the four aspects, as its interval (mean_of_ratios) is: NaN when one has no score at all (it was the
    # mean of whichever aspects parsed beside a NaN interval)
    result["text_quality"] = float(np.mean(means)) if all(np.isfinite(means)) else float("nan")
    result["judge_method"] = quality["method"]
    result["num_unparsed_judgements"] = quality["num_unparsed"]
    result["num_judgements"] = len(joined) * len(QUALITY_ASPECTS)
    result["unparsed_judgements"] = [{"aspect": a, "example": int(ok[i]), "reply": r} for a, i, r in quality["unparsed"]]
    if quality["warning"]:
        result["judge_warning"] = quality["warning"]  # warned by reduce, in the call's one warning
    return result, per


# ------------------------------------------------------------------------------------- stage 4: reduce
_NAN_REASONS = {  # key -> (count key that is 0 beside it, why)
    "flip_rate": ("num_flipped", "no classifier outputs (model=, probabilities or labels)"),
    "probability_change": ("num_flipped", "no probabilities (model= or original_probs / counterfactual_probs)"),
    "probability_change_flipped": ("num_flipped", "no counterfactual flipped the prediction"),
    "token_distance": ("num_valid", "every generation failed"),
    "token_distance_flipped": ("num_flipped", "no counterfactual flipped the prediction"),
    "diversity": ("num_diversity_examples", "no original has two valid counterfactuals"),
    "perplexity": ("num_perplexity", "no counterfactual text to score"),
    "perplexity_flipped": ("num_flipped", "no counterfactual flipped the prediction"),
    "text_quality": ("num_unparsed_judgements", "an aspect has no parsed judge reply (see its note): the mean of the "
                     "four aspects is undefined"),
    **{aspect: ("num_unparsed_judgements", "no judge reply about it could be parsed") for aspect in QUALITY_ASPECTS},
}


def nan_notes(result: Mapping) -> list[str]:
    """One note per documented NaN of a result: the key, why it is NaN and the count beside it.

    >>> nan_notes({"num_flipped": 0, "flip_rate": 0.0, "probability_change_flipped": float("nan")})
    ['probability_change_flipped (= NaN: no counterfactual flipped the prediction, num_flipped=0)']
    """
    def nan(key):
        return isinstance(result.get(key), float) and np.isnan(result[key])

    def named_by_another(key):  # its reason is another key's: a "_flipped" key when something did flip (e.g. no
        # probabilities at all), an aspect of an all-NaN text_quality
        return (key.endswith("_flipped") and nan(key[: -len("_flipped")]) and bool(result.get("num_flipped"))
                or key in QUALITY_ASPECTS and all(nan(a) for a in QUALITY_ASPECTS))

    return [f"{k} (= NaN: {why}, {count}={result.get(count)})" for k, (count, why) in _NAN_REASONS.items()
            if nan(k) and not named_by_another(k)]


def reduce(request: Request, parts: list[tuple[dict, dict]], return_per_example: bool) -> dict:
    """Stage 4: one result dict; one warning naming every documented NaN it holds (and the judge's warning)."""
    result: dict = {"num_examples": request.n, "num_failed": int(request.failed.sum()), "contrast": None}
    per: dict = {}
    for metrics, values in parts:
        result.update(metrics)
        per.update(values)
    messages = [result["judge_warning"]] if result.get("judge_warning") else []
    if nan_notes(result):
        messages.insert(0, f"nothing to average for {'; '.join(nan_notes(result))}")
    if messages:
        warnings.warn(f"ceval: {'; '.join(messages)}", RuntimeWarning, stacklevel=3)
    if return_per_example:
        result["per_example"] = per
    return result


def compute(references, predictions, reference_pairs=None, prediction_pairs=None, *, model=None, targets=None,
            contrast: str | None = None, outputs: ClassifierOutputs | None = None, quality: QualityOptions | None = None,
            run: RunOptions | None = None, **options) -> dict:
    """All CEval metrics for counterfactuals ``predictions`` of originals ``references``.

    - ``predictions[i]``: one counterfactual (string) or a list of them; with a list the first one is "the"
      counterfactual (flip, probability change, distance, perplexity, quality) and all of them give the
      diversity (CEval's ``gen_text`` / ``gen_text_2``), reported when some example has two or more.
      ``None`` / ``"-1"`` / ``""``: a failed generation.
    - NLI: ``reference_pairs`` (original hypotheses) and ``prediction_pairs`` (counterfactual hypotheses);
      ``references`` / ``predictions`` are then the premises. Edit one side and copy the other.
    - Classifier outputs: ``model`` (anything ``textxai.classifier.as_classifier`` takes), or precomputed
      ``outputs`` (:class:`ClassifierOutputs`: ``original_probs`` / ``counterfactual_probs`` as [n, C]
      softmax rows, or just ``original_labels`` / ``counterfactual_labels`` for the flip rate).
    - ``contrast``: ``"target"`` (needs ``targets``, class indices or label names), ``"argmin"``,
      ``"counterfactual_argmax"``; default ``"target"`` when targets are given, else CEval's choice per
      task: argmin (texts), counterfactual argmax (NLI).
    - ``quality``: :class:`QualityOptions` (``lm`` for perplexity, ``judge`` for the four text-quality
      questions); ``run``: :class:`RunOptions` (tokenizer, batch_size, device, progress, return_per_example).
    - ``**options``: any field of the three groups as a plain keyword (``lm="gpt2"``,
      ``original_probs=...``, ``return_per_example=True``); it overrides the same field of a group given
      beside it. Anything else raises ``TypeError`` naming it.

    Every input is checked before any model runs (stage :func:`validate`).

    >>> r = compute(["a bad film"], ["a good film"], original_probs=[[0.9, 0.1]], counterfactual_probs=[[0.2, 0.8]])
    >>> r["flip_rate"], round(r["probability_change"], 2), r["token_distance"]
    (1.0, 0.7, 1.0)
    """
    groups = apply_keywords("ceval.compute", options, outputs=(ClassifierOutputs, outputs),
                            quality=(QualityOptions, quality), run=(RunOptions, run))
    outputs, quality, run = groups["outputs"], groups["quality"], groups["run"]
    request = validate(references, predictions, reference_pairs, prediction_pairs, model=model, targets=targets,
                       contrast=contrast, outputs=outputs, quality=quality, run=run)
    p_orig, q_cf, y_orig, y_cf = model_outputs(request, run)
    flip_part = flip_metrics(request, y_orig, y_cf)
    flipped = np.asarray(flip_part[1]["flipped"], dtype=bool) if "flipped" in flip_part[1] else None
    parts = [flip_part, probability_metrics(request, p_orig, q_cf, flipped), distance_metrics(request, flipped),
             diversity_metrics(request), perplexity_metrics(request, quality.lm, flipped, run, quality.bos),
             quality_metrics(request, quality, run)]
    return reduce(request, parts, run.return_per_example)
