"""NAOPC on texts: word attributions of a TextClassifier scored against their AOPC limits.

:func:`compare_attributions` runs in named stages, as torchmetrics' metrics do:
``_validate`` (every argument, before any model call) -> ``_model_outputs`` (p(x), targets, computed
attributions, the sets of every attribution ordering, one batched call) -> ``_limits_per_text``
(exact or beam per text) -> ``_reduce`` (per-text rows and means).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from textxai.classifier import PERTURBATIONS
from textxai.naopc.core import (AOPCLimits, ScoreManyFn, _evaluate, _keys_to_masks, _Memo, _order_to_keys,
                                comprehensiveness_order, sufficiency_order)
from textxai.naopc.limits import (EXACT_SETS_PER_CALL, _beam_limits, _check_limit_args, _exact_many, _limits, _memo_chain,
                                  _too_many_words, check_max_exact_words)
from textxai.options import apply_keywords
from textxai.validation import check_choice, check_positive_int, check_seed, short_repr

NORMALIZATIONS = ("auto", "exact", "beam", "beam-paper", "none")
# "auto": exact limits when 2^N model inputs fit this per-text budget (N words); CPU: 2^12 = 4,096 inputs
# (about 30 s per text for the demo MiniLM on 2 shared cores, measured in bench/bench_naopc.py)
EXACT_WORDS_BY_DEVICE = {"cpu": 12, "cuda": 16}


@dataclass(frozen=True)
class NAOPCOptions:
    """Options of :func:`compute` / :func:`compare_attributions` (each also accepted as a keyword).

    normalization: ``"auto"`` (exact when N <= max_exact_words, else ``"beam"``), ``"exact"``, ``"beam"``,
        ``"beam-paper"`` (the paper's Algorithm 1), ``"none"`` (plain AOPC, no limits).
    beam_size: beam width (default: 1 for ``"beam"``, 5 for ``"beam-paper"``).
    max_exact_words: the largest N for exact limits (2^N model inputs per text); default ``None`` picks it
        from the device: 12 on CPU (4,096 inputs, about 30 s per text for a MiniLM on 2 cores), 16 on CUDA.
    perturbation: ``"mask"`` (every subword of a removed word -> mask token) or ``"delete"``.
    batch_size: model batch size (results do not depend on it beyond float32 noise).
    seed: seed of sampling attribution methods computed here (lime, kernel_shap).
    progress: tqdm progress bars.
    precision: of the passes over removed-word inputs (AOPC curves and limits; the attributions are computed
        as asked): ``"float32"`` (the model's exact outputs), ``"bfloat16"`` or ``"auto"`` (see
        ``TextClassifier.resolve_precision``): the NAOPC of the model as it runs in that precision.
    """

    normalization: str = "auto"
    beam_size: int | None = None
    max_exact_words: int | None = None
    perturbation: str = "mask"
    batch_size: int = 32
    seed: int = 0
    progress: bool = False
    precision: str = "float32"

    def checked(self) -> "NAOPCOptions":
        from textxai.classifier import PRECISIONS

        check_choice(self.normalization, "normalization", NORMALIZATIONS)
        check_choice(self.precision, "precision", PRECISIONS)
        check_choice(self.perturbation, "perturbation", PERTURBATIONS)
        if self.beam_size is not None:
            check_positive_int(self.beam_size, "beam_size")
        if self.max_exact_words is not None:
            check_max_exact_words(self.max_exact_words)
        check_positive_int(self.batch_size, "batch_size")
        check_seed(self.seed)
        return self


def options_from(options: NAOPCOptions | None, keywords: dict, where: str = "naopc.compute") -> NAOPCOptions:
    """``options`` (or the defaults) with the keywords naming its fields, checked (``where`` names the caller)."""
    return apply_keywords(where, keywords, options=(NAOPCOptions, options))["options"].checked()


def default_max_exact_words(device) -> int:
    """The largest N whose 2^N exact model inputs fit the per-text budget on ``device`` (12 CPU, 16 CUDA)."""
    return EXACT_WORDS_BY_DEVICE["cuda" if str(device).startswith("cuda") else "cpu"]


def explain_choice(n_words: list[int], normalization: str, max_exact_words: int, device) -> str:
    """One sentence: which limits the texts get and why (printed by ``textxai run naopc``).

    >>> explain_choice([8, 14, 30], "auto", 12, "cpu")
    "limits: exact for 1 text (N <= 12: 2^N <= 4,096 model inputs per text, the 'auto' budget on cpu), beam for 2 (N = 14-30)"
    """
    if normalization != "auto":
        return f"limits: {normalization} for every text (normalization={normalization!r})"
    exact = [n for n in n_words if n <= max_exact_words]
    beam = [n for n in n_words if n > max_exact_words]
    parts = []
    if exact:
        parts.append(f"exact for {len(exact)} text{'s' * (len(exact) > 1)} (N <= {max_exact_words}: 2^N <= "
                     f"{2 ** max_exact_words:,} model inputs per text, the 'auto' budget on {device})")
    if beam:
        parts.append(f"beam for {len(beam)} (N = {min(beam)}-{max(beam)})" if len(set(beam)) > 1 else f"beam for {len(beam)} (N = {beam[0]})")
    return "limits: " + ", ".join(parts)


def limit_method(n_words: int, normalization: str, max_exact_words: int) -> str:
    """The limits a text of ``n_words`` words gets: ``"auto"`` -> exact when 2^N inputs fit, else ``"beam"``.

    >>> limit_method(10, "auto", 12), limit_method(13, "auto", 12), limit_method(13, "beam-paper", 12)
    ('exact', 'beam', 'beam-paper')
    """
    if normalization == "auto":
        return "exact" if n_words <= max_exact_words else "beam"
    return normalization


def _check_attributions(attributions, words: list[list[str]], texts: list[str]) -> list[np.ndarray]:
    if isinstance(attributions, (str, bytes)) or not hasattr(attributions, "__len__"):
        raise TypeError(f"attributions={short_repr(attributions)}: expected one sequence of scores per text")
    if len(attributions) != len(texts):
        raise ValueError(
            f"attributions has {len(attributions)} items but texts has {len(texts)}: expected one score list per text"
        )
    out = []
    for i, (scores, w) in enumerate(zip(attributions, words)):
        if isinstance(scores, (str, bytes)):
            raise TypeError(f"attributions[{i}]={short_repr(scores)}: expected a sequence of numbers")
        if hasattr(scores, "detach") and hasattr(scores, "cpu"):  # a torch tensor (captum's output may require grad)
            scores = scores.detach().cpu().numpy()
        try:
            kind = np.asarray(scores).dtype.kind
            arr = np.asarray(scores, dtype=float) if kind not in "USbc" else None
        except (TypeError, ValueError) as exc:
            raise TypeError(f"attributions[{i}]={short_repr(scores)}: expected a sequence of numbers") from exc
        if arr is None:  # strings ('0.3' was read as 0.3), booleans, complex (the imaginary part was dropped)
            raise TypeError(f"attributions[{i}]={short_repr(scores)}: expected a sequence of real numbers, not "
                            f"{ {'U': 'strings', 'S': 'bytes', 'b': 'booleans', 'c': 'complex numbers'}[kind]}")
        if arr.ndim != 1:
            raise ValueError(f"attributions[{i}] has shape {arr.shape}: expected a flat list of {len(w)} scores")
        if len(arr) != len(w):
            raise ValueError(
                f"attributions[{i}] has {len(arr)} scores but texts[{i}] has {len(w)} words "
                f"{short_repr(w, 120)}: expected one score per word of classifier.words(text)"
            )
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"attributions[{i}][{j}]={float(arr[j])!r}: expected finite numbers (no NaN or inf)")
        out.append(arr)
    return out



@dataclass
class _Job:
    """Everything :func:`compare_attributions` checked before its first model call."""

    texts: list
    pairs: list | None
    clf: object
    words: list
    sets: dict  # name -> checked attributions, or None (a method to compute)
    targets: object  # "predicted" or an int array
    opts: NAOPCOptions
    max_exact_words: int


def _validate(texts, classifier, attributions, text_pairs, target, opts: NAOPCOptions) -> _Job:
    from textxai.attribution import METHODS, resolve_targets
    from textxai.classifier import as_classifier
    from textxai.validation import check_text_pairs, check_texts

    texts = check_texts(texts)
    pairs = check_text_pairs(text_pairs, texts)
    if not isinstance(attributions, dict) or not attributions:
        raise TypeError(f"attributions={short_repr(attributions)}: expected a non-empty dict name -> attributions (or None)")
    clf = as_classifier(classifier)
    full_words = [clf.words(t, None if pairs is None else pairs[i]) for i, t in enumerate(texts)]
    texts, pairs, words, kept = _fit_to_model(clf, texts, pairs, full_words)
    for i, w in enumerate(words):
        if not w:
            where = f"texts[{i}]={short_repr(texts[i])}" + ("" if pairs is None else f" with text_pairs[{i}]={short_repr(pairs[i])}")
            raise ValueError(f"{where} has no words: expected at least one word to remove")
    sets = {}
    for name, attrs in attributions.items():
        if attrs is None:
            check_choice(name, "attribution_method", METHODS)
            sets[name] = None
        else:
            checked = _check_attributions(attrs, full_words, texts)
            sets[name] = [a if k is None else a[k] for a, k in zip(checked, kept)]
    if not isinstance(target, str):
        target = resolve_targets(target, None, n=len(texts), num_labels=clf.num_labels)
    else:
        check_choice(target, "target", ["predicted"])
    max_exact = opts.max_exact_words or default_max_exact_words(clf.device)
    if opts.normalization == "exact":
        for i, w in enumerate(words):
            if len(w) > max_exact:
                raise _too_many_words(len(w), max_exact, f"texts[{i}]: normalization='exact': ")
    return _Job(texts, pairs, clf, words, sets, target, opts, max_exact)


def _fit_to_model(clf, texts: list[str], pairs: list[str] | None, words: list[list[str]]):
    """Texts cut to the words the model sees (its ``max_length`` tokens), with a warning: the features of NAOPC,
    so work and memory per text are bounded by ``max_length`` however long the text is.

    Returns ``(texts, pairs, words, kept)``; ``kept[i]`` is None for a text the model sees whole, else the indices
    of its kept words among ``words[i]`` (given attributions are cut with it). Truncation keeps the start of
    each text (and of each pair), so a cut text ends with its last word the model sees.
    """
    import warnings

    from textxai import words as _words

    texts, pairs = list(texts), None if pairs is None else list(pairs)
    kept: list = [None] * len(texts)
    out_words = list(words)
    encodings = clf.word_encodings(texts, pairs)
    for i, (encoding, w) in enumerate(zip(encodings, words)):
        seen = encoding.seen_words  # a word whose only token it shares (Metaspace "y.") is seen too
        n_first = len(_words.tokenize(texts[i], clf.word_tokenizer)) if pairs is not None else len(w)
        k1 = int(seen[seen < n_first].max()) + 1 if (seen < n_first).any() else 0
        k2 = int(seen[seen >= n_first].max()) + 1 - n_first if (seen >= n_first).any() else 0
        if k1 + k2 == len(w):
            continue
        kept[i] = np.r_[np.arange(k1), n_first + np.arange(k2)]
        texts[i] = _cut(texts[i], k1, clf.word_tokenizer)
        if pairs is not None:
            pairs[i] = _cut(pairs[i], k2, clf.word_tokenizer)
        out_words[i] = [w[j] for j in kept[i]]
        if clf.words(texts[i], None if pairs is None else pairs[i]) != out_words[i]:
            raise ValueError(f"texts[{i}]={short_repr(texts[i])} is longer than model {clf.name!r} sees "
                             f"(max_length={clf.max_length} tokens) and cannot be cut at a word: expected a shorter text")
        warnings.warn(f"texts[{i}]: model {clf.name!r} sees only {len(out_words[i])} of its {len(w)} words "
                      f"(max_length={clf.max_length} tokens); NAOPC scores those words (the text is cut after the "
                      "last one, given attributions with it)", stacklevel=4)
    return texts, pairs, out_words, kept


def _cut(text: str, n_words: int, word_tokenizer: str) -> str:
    """``text`` up to the end of its ``n_words``-th word."""
    from textxai import words as _words

    spans = _words.word_spans(text, word_tokenizer)
    return text[: spans[n_words - 1][2]] if n_words else ""


def _score_many(job: _Job, targets) -> ScoreManyFn:
    """Target probabilities of masked texts: one batched model pass over every input asked for."""
    opts = job.opts

    def score_many(masks_list, show=False):
        idx = [i for i, m in enumerate(masks_list) if m is not None and len(m)]
        outs = [np.zeros(0) for _ in masks_list]
        if idx:
            probs = job.clf.masked_proba_many([job.texts[i] for i in idx], [masks_list[i] for i in idx],
                                              None if job.pairs is None else [job.pairs[i] for i in idx],
                                              batch_size=opts.batch_size, perturbation=opts.perturbation, progress=show,
                                              precision=opts.precision)
            for i, p in zip(idx, probs):
                outs[i] = p[:, targets[i]]
        return outs

    return score_many


def _methods(job: _Job) -> list[str]:
    """The limits each text gets (see :func:`limit_method`); ``"none"`` without normalization."""
    if job.opts.normalization == "none":
        return ["none"] * len(job.words)
    return [limit_method(len(w), job.opts.normalization, job.max_exact_words) for w in job.words]


def _first_masks(job: _Job) -> list[np.ndarray]:
    """Masks of the first model call: the intact input, and every subset of the texts with exact limits when
    they fit one exact round (so p(x), the attribution orderings and the exact limits share ONE model pass)."""
    exact = [len(w) if m == "exact" else 0 for w, m in zip(job.words, _methods(job))]
    fold = sum(1 << n for n in exact if n) <= EXACT_SETS_PER_CALL
    return [_keys_to_masks(range(1 << n), n) if n and fold else np.zeros((1, len(w)), dtype=bool)
            for n, w in zip(exact, job.words)]


def _model_outputs(job: _Job):
    """p(x) and targets, attributions still to compute, and the sets of every attribution ordering."""
    from textxai.attribution import resolve_targets, word_attributions

    opts = job.opts
    first = _first_masks(job)
    probs = job.clf.masked_proba_many(job.texts, first, job.pairs, batch_size=opts.batch_size,
                                      perturbation=opts.perturbation, progress=opts.progress and any(len(m) > 1 for m in first),
                                      precision=opts.precision)
    full = np.stack([p[0] for p in probs])  # row 0 of every text: nothing removed
    targets = resolve_targets(job.targets, full) if isinstance(job.targets, str) else job.targets
    for name, attrs in job.sets.items():
        if attrs is None:
            computed = word_attributions(job.texts, job.clf, name, target=targets, text_pairs=job.pairs, seed=opts.seed,
                                         batch_size=opts.batch_size, progress=opts.progress,
                                         perturbation=opts.perturbation)  # words removed as the AOPC removes them
            job.sets[name] = _check_attributions(computed, job.words, job.texts)
    memos = [_Memo(len(w)) for w in job.words]
    for memo, t, p, masks in zip(memos, targets, probs, first):
        memo.values.update(zip(range(len(masks)), p[:, t].tolist()))  # row k of ``first`` is the set k
    orders = {name: ([comprehensiveness_order(a) for a in attrs], [sufficiency_order(a) for a in attrs])
              for name, attrs in job.sets.items()}
    requests = [[] for _ in job.texts]
    for comp_orders, suff_orders in orders.values():
        for i in range(len(job.texts)):
            requests[i] += _order_to_keys(comp_orders[i]) + _order_to_keys(suff_orders[i])
    score_many = _score_many(job, targets)
    _evaluate(memos, requests, score_many)
    return targets, memos, orders, score_many


def _limits_per_text(job: _Job, memos, score_many) -> tuple[list[str], list[AOPCLimits | None]]:
    """The method per text (see :func:`limit_method`) and its limits, inputs of a method batched together."""
    methods = _methods(job)
    limits: list[AOPCLimits | None] = [None] * len(memos)
    for method in ("exact", "beam", "beam-paper"):
        idx = [i for i, m in enumerate(methods) if m == method]
        if not idx:
            continue
        sub_memos = [memos[i] for i in idx]
        if method == "exact":
            sub = _subset_score_many(lambda ml: score_many(ml, show=job.opts.progress), idx, len(memos))
            results = _exact_many(sub_memos, sub)
        else:
            width = _check_limit_args(method, job.opts.beam_size, job.max_exact_words)
            results = _independent_beam(sub_memos, _subset_score_many(score_many, idx, len(memos)), method, width,
                                        job.opts.progress)
        for i, lim in zip(idx, _limits(sub_memos, results, method)):
            limits[i] = lim
    return methods, limits


def _row(job: _Job, i: int, attrs, memo: _Memo, comp_order, suff_order, method: str, lim) -> dict:
    comp_curve, suff_curve = memo.drops(comp_order), memo.drops(suff_order)
    comp, suff = float(comp_curve.mean()), float(suff_curve.mean())
    row = {
        "words": job.words[i],
        "attributions": [float(a) for a in attrs],
        "p_full": float(memo.p0),
        "n_words": memo.n,
        "normalization": method,
        "comprehensiveness": comp,
        "sufficiency": suff,
        "naopc_comprehensiveness": None if lim is None else lim.normalize(comp),
        "naopc_sufficiency": None if lim is None else lim.normalize(suff),
        "lower": None if lim is None else lim.lower,
        "upper": None if lim is None else lim.upper,
        "comprehensiveness_order": comp_order,
        "sufficiency_order": suff_order,
        "comprehensiveness_curve": comp_curve.tolist(),
        "sufficiency_curve": suff_curve.tolist(),
        "lower_order": None if lim is None else lim.lower_order,
        "upper_order": None if lim is None else lim.upper_order,
        "lower_curve": None if lim is None else lim.lower_curve.tolist(),
        "upper_curve": None if lim is None else lim.upper_curve.tolist(),
        # distinct perturbed inputs the model saw for this text (shared by all attribution sets)
        "n_evaluations": len(memo.values),
    }
    return row


def _reduce(job: _Job, targets, memos, orders, methods, limits) -> dict:
    out = {}
    for name, attrs in job.sets.items():
        comp_orders, suff_orders = orders[name]
        rows = []
        for i, memo in enumerate(memos):
            row = _row(job, i, attrs[i], memo, comp_orders[i], suff_orders[i], methods[i], limits[i])
            rows.append({"target": int(targets[i]), **row})
        out[name] = mean_scores(rows)
    return out


def mean_scores(rows: list[dict]) -> dict:
    """One attribution set's result from its per-text rows: the four means (None when a row has None) and the rows."""
    means = {}
    for key in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency"):
        values = [r[key] for r in rows]
        means[key] = None if any(v is None for v in values) else float(np.mean(values))
    return {**means, "per_example": rows}


def _independent_beam(memos: list[_Memo], score_many: ScoreManyFn, method: str, width: int, progress: bool) -> list[tuple]:
    """Beam limits whose search does not depend on the attributions compared: the beam runs on memos of its own
    (its lazy decisions and its local search's budget read the sets IT asked, not the sets of the attributions'
    curves already in ``memos``; a set already there is read, not sent to the model again). Then, for
    ``method="beam"``, each limit is the best chain through every evaluated set (:func:`_memo_chain`): the beam's
    or an attribution's ordering, whichever is better, so adding a method to the comparison can only tighten the
    limits, and a compared method's AOPC never lies outside them.
    """
    own = [_Memo(m.n) for m in memos]
    for mine, shared in zip(own, memos):
        mine.values[0] = shared.values[0]

    def reuse(masks_list):
        keys = [[sum(1 << int(j) for j in np.flatnonzero(row)) for row in masks] for masks in masks_list]
        todo = [[k for k in ks if k not in shared.values] for ks, shared in zip(keys, memos)]
        _evaluate(memos, todo, score_many)
        return [np.array([shared.values[k] for k in ks], dtype=float) for ks, shared in zip(keys, memos)]

    results = _beam_limits(own, reuse, method, width, progress)
    if method != "beam":
        return results
    out = []
    for memo, (lo, up, lo_order, up_order) in zip(memos, results):
        top, top_order = _memo_chain(memo, +1.0)
        low, low_order = _memo_chain(memo, -1.0)
        if top / memo.n > up:
            up, up_order = top / memo.n, top_order
        if -low / memo.n < lo:
            lo, lo_order = -low / memo.n, low_order
        out.append((lo, up, lo_order, up_order))
    return out


def _subset_score_many(score_many: ScoreManyFn, idx: list[int], total: int) -> ScoreManyFn:
    """``score_many`` over a sub-list of the inputs (positions ``idx`` of ``total``)."""

    def sub(masks_list):
        full = [None] * total
        for i, m in zip(idx, masks_list):
            full[i] = m
        outs = score_many(full)
        return [outs[i] for i in idx]

    return sub


def compute(texts, attributions, classifier, text_pairs=None, target="predicted",
                  attribution_method: str | None = None, options: NAOPCOptions | None = None, **kwargs) -> dict:
    """Comprehensiveness, sufficiency and their NAOPC for word attributions on a text classifier.

    Args:
        texts: the texts; features are the words ``classifier.words(text, text_pair)``.
        attributions: one score per word per text, or ``None`` with ``attribution_method`` set
            (computed by :func:`textxai.attribution.word_attributions` with ``seed``).
        classifier: a ``TextClassifier`` or anything ``as_classifier`` accepts.
        text_pairs: second texts for sentence-pair models (their words follow the first text's).
        target: ``"predicted"`` (the class predicted on the intact input), a class index, or one per text.
        options / keywords: :class:`NAOPCOptions` (normalization, beam_size, max_exact_words, perturbation,
            batch_size, seed, progress, precision).

    Returns a dict with the means ``comprehensiveness``, ``sufficiency``, ``naopc_comprehensiveness``,
    ``naopc_sufficiency`` (``None`` with ``normalization="none"``) and ``per_example``: one dict per text
    with words, attributions, target, p_full, n_words, the scores, limits (lower, upper, their orders and
    curves), the comprehensiveness / sufficiency curves, the method used and n_evaluations (distinct
    perturbed inputs the model saw for that text).
    """
    out = compare_attributions(texts, classifier, attribution_sets(attributions, attribution_method),
                               text_pairs=text_pairs, target=target, options=options, **kwargs)
    return next(iter(out.values()))


def attribution_sets(attributions, attribution_method: str | None = None) -> dict:
    """``{name: scores or None}`` for :func:`compare_attributions`: a dict as given, one score list per text as
    the set ``"attributions"``, or ``None`` with ``attribution_method`` (computed by that method).

    >>> attribution_sets([[0.1, 0.2]]), attribution_sets(None, "omission"), attribution_sets(None, ["omission", "gradient"])
    ({'attributions': [[0.1, 0.2]]}, {'omission': None}, {'omission': None, 'gradient': None})
    """
    if isinstance(attributions, dict) and attribution_method is None:
        return attributions
    if attributions is None:
        if attribution_method is None:
            raise ValueError(
                "attributions=None: expected one score per word per text, or attribution_method= one of "
                "textxai.attribution.available_methods() to compute them"
            )
        names = [attribution_method] if isinstance(attribution_method, str) else attribution_method
        if not isinstance(names, (list, tuple)) or not names or not all(isinstance(m, str) for m in names):
            raise ValueError(f"attribution_method={attribution_method!r}: expected a method name or a list of them "
                             "(textxai.attribution.available_methods())")
        return dict.fromkeys(names)
    if attribution_method is not None:
        raise ValueError(
            f"attribution_method={attribution_method!r} with attributions given: expected one of the two"
        )
    return {"attributions": attributions}


def compare_attributions(texts, classifier, attributions: dict, text_pairs=None, target="predicted",
                         options: NAOPCOptions | None = None, **kwargs) -> dict:
    """:func:`compute` for several attribution sets at once, sharing p(x), the limits and every model call.

    ``attributions`` maps a name to one score list per text, or an attribution method name (see
    :func:`textxai.attribution.available_methods`) to ``None`` to compute it. Options as in
    :func:`compute`. Every argument is checked before the first model call. Returns name -> the
    :func:`compute` result for that set.
    """
    job = _validate(texts, classifier, attributions, text_pairs, target, options_from(options, kwargs))
    targets, memos, orders, score_many = _model_outputs(job)
    methods, limits = _limits_per_text(job, memos, score_many)
    return _reduce(job, targets, memos, orders, methods, limits)
