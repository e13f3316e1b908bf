"""CEval: counterfactual and text-quality metrics for generated counterfactual texts.

Nguyen, Schlötterer & Seifert (2024), "CEval: A Benchmark for Evaluating Counterfactual Text Generation",
INLG 2024 (https://aclanthology.org/2024.inlg-main.6). The definitions are those of CEval's own code,
checked against the results it stored (../shared/reference/ceval):

- flip rate: share of examples whose predicted class changes, ``argmax f(x') != argmax f(x)``;
- probability change: ``p(c' | x') - p(c' | x)`` with ``c'`` the contrast class (``contrast=``):
  ``"target"`` (a given target label), ``"argmin"`` (least likely class of the original; CEval's IMDb code)
  or ``"counterfactual_argmax"`` (predicted class of the counterfactual; CEval's SNLI code);
- token distance: Levenshtein distance over spaCy blank-English tokens, whitespace tokens kept, not
  normalised (what CEval stores); ``normalized=True`` divides by the original's token count;
- diversity: mean pairwise token distance between the counterfactuals of one original;
- perplexity of the counterfactual under a causal LM (``textxai.lm``), "premise hypothesis" for NLI;
- text quality: four 1-5 questions (grammar, cohesiveness, likability, fluency) asked to an
  instruction-following LM with CEval's prompt wording.

A failed generation (``None``, NaN, ``""`` or ``"-1"``) is kept in the counts: it is scored as the
unchanged original for the flip rate (not flipped) and the probability change (0), and left out of
distance, diversity, perplexity and text quality.

>>> token_distance("the film was good", "the film was bad")
1
>>> token_distance("a  b", "a b")   # the extra space is a token of its own
1
>>> diversity([["a good film", "a great film", "-1"]])[0]
1.0
>>> flip_rate([0, 1, 1], [1, 1, 0])
0.6666666666666666
>>> probability_change([[0.9, 0.1]], [[0.2, 0.8]]).round(2).tolist()   # contrast class 1 = argmin of the original
[0.7]
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np

from textxai import words as _words
from textxai.progress import progress_bar
from textxai.validation import check_same_length, short_repr

CONTRASTS = ("target", "argmin", "counterfactual_argmax")
FAILED_MARKERS = ("", "-1")
QUALITY_ASPECTS = ("grammar", "cohesiveness", "likability", "fluency")
TOPICS = {"text": "movie review", "nli": "natural language inference pair"}


# --------------------------------------------------------------------------------------------- checks
def is_failed(text) -> bool:
    """True for a failed generation: ``None``, NaN, an empty / blank string or ``"-1"`` (CEval's marker).

    >>> [is_failed(t) for t in ["-1", " ", None, float("nan"), "ok"]]
    [True, True, True, True, False]
    """
    if text is None:
        return True
    if isinstance(text, float) and math.isnan(text):
        return True
    return isinstance(text, str) and text.strip() in FAILED_MARKERS


def _check_list(values, name: str, allow_empty: bool = False) -> list:
    if isinstance(values, (str, bytes)) or not (isinstance(values, Sequence) or hasattr(values, "__array__")):
        raise TypeError(f"{name}={short_repr(values)} ({type(values).__name__}): expected a list")
    values = list(values)
    if not values and not allow_empty:
        raise ValueError(f"{name}=[]: expected at least one item")
    return values


def _check_originals(texts, name: str) -> list[str]:
    texts = _check_list(texts, name)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}]={short_repr(text)} ({type(text).__name__}): expected a string")
        if not text.strip():
            raise ValueError(f"{name}[{i}]={text!r}: expected a non-empty original text")
    return texts


def _check_generation(text, name: str):
    """A counterfactual string, or ``None`` for a failed generation."""
    if is_failed(text):
        return None
    if not isinstance(text, str):
        raise TypeError(f"{name}={short_repr(text)} ({type(text).__name__}): expected a string (or None / '-1' for a failed generation)")
    return text


def _check_probs(probs, name: str, n: int, num_classes: int | None = None, atol: float = 1e-3) -> np.ndarray:
    try:
        arr = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}={short_repr(probs)}: expected an array of probabilities of shape [n_examples, n_classes]") from None
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 2:
        raise ValueError(f"{name} has shape {arr.shape}: expected ({n}, n_classes) with n_classes >= 2, one row per example")
    if num_classes is not None and arr.shape[1] != num_classes:
        raise ValueError(f"{name} has {arr.shape[1]} classes: expected {num_classes} (as the other probabilities / the model)")
    if not np.all(np.isfinite(arr)):
        row = int(np.where(~np.isfinite(arr).all(axis=1))[0][0])
        raise ValueError(f"{name}[{row}]={arr[row].tolist()}: expected finite probabilities")
    bad = np.where((arr < -atol).any(axis=1) | (arr > 1 + atol).any(axis=1) | (np.abs(arr.sum(axis=1) - 1) > atol))[0]
    if len(bad):
        row = int(bad[0])
        raise ValueError(f"{name}[{row}]={arr[row].tolist()} (sum {arr[row].sum():.6g}): expected probabilities in [0, 1] "
                         f"summing to 1 (softmax outputs, not logits)")
    return arr


def _check_labels(labels, name: str, n: int, num_classes: int | None = None) -> np.ndarray:
    labels = _check_list(labels, name)
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} items but there are {n} examples: expected one label per example")
    out = np.empty(n, dtype=np.int64)
    for i, label in enumerate(labels):
        if isinstance(label, (bool, np.bool_)) or not isinstance(label, (int, np.integer)):
            raise TypeError(f"{name}[{i}]={short_repr(label)} ({type(label).__name__}): expected an integer class index")
        hi = f"{num_classes - 1}" if num_classes else "n_classes - 1"
        if label < 0 or (num_classes is not None and label >= num_classes):
            raise ValueError(f"{name}[{i}]={label}: expected a class index in [0, {hi}]")
        out[i] = int(label)
    return out


# ------------------------------------------------------------------------------------------ distances
def _tokens(text: str) -> tuple[str, ...]:
    """spaCy blank-English tokens of ``text``, whitespace tokens kept (cached in ``textxai.words``).

    Whole texts, not whitespace pieces: spaCy matches its multi-token special cases (":)" = ":" + ")") on
    the whole token sequence, and a match tried across a space (")" + ":" in "') :)!") can block another, so
    piecewise tokenization is not exact (and was slower here: one spaCy call per distinct piece).
    """
    return tuple(_words.tokenize(text, method="spacy", keep_whitespace=True))


def _side_distance(x: str, y: str) -> tuple[int, int]:
    """(token distance, token count of x)."""
    return _words.word_distance(x, y, keep_whitespace=True), len(_tokens(x))


def token_distance(original, counterfactual, normalized: bool = False):
    """Levenshtein distance between the spaCy tokens (whitespace tokens kept) of two texts.

    ``original`` / ``counterfactual`` are strings, or tuples of strings (``(premise, hypothesis)``: the
    distance is the sum over the sides). ``normalized=True`` divides by the number of tokens of the
    original's sides that changed (all sides when none changed), CEval's "distance / length of x".

    >>> token_distance(("A man sleeps.", "He is outside."), ("A man sleeps.", "He is inside."))
    1
    >>> token_distance("the film was good", "the film was bad", normalized=True)
    0.25
    """
    a = (original,) if isinstance(original, str) else tuple(original)
    b = (counterfactual,) if isinstance(counterfactual, str) else tuple(counterfactual)
    if len(a) != len(b):
        raise ValueError(f"original has {len(a)} sides but counterfactual has {len(b)}: expected the same number")
    for side, name in ((a, "original"), (b, "counterfactual")):
        for text in side:
            if not isinstance(text, str):
                raise TypeError(f"{name}={short_repr(text)} ({type(text).__name__}): expected a string")
    distance = 0
    changed_length = 0
    total_length = 0
    for x, y in zip(a, b):
        d, length = _side_distance(x, y)
        distance += d
        total_length += length
        if x != y:
            changed_length += length
    if not normalized:
        return int(distance)
    length = changed_length or total_length
    return distance / length if length else float("nan")


def token_distances(originals, counterfactuals, normalized: bool = False) -> np.ndarray:
    """Per-example token distance; NaN where the counterfactual failed (see ``is_failed``).

    >>> token_distances(["a b c", "a b"], ["a c", "-1"]).tolist()
    [1.0, nan]
    """
    out = np.full(len(originals), np.nan)
    for i, (x, y) in enumerate(zip(originals, counterfactuals)):
        if not _failed_any(y):
            out[i] = token_distance(x, y, normalized=normalized)
    return out


def _failed_any(text) -> bool:
    if isinstance(text, tuple):
        return any(is_failed(t) for t in text)
    return is_failed(text)


def diversity(counterfactual_sets, originals=None, normalized: bool = False) -> tuple[float, np.ndarray]:
    """Mean pairwise token distance between the counterfactuals of each original.

    ``counterfactual_sets``: one list of counterfactuals per original. Failed generations are dropped;
    originals with fewer than two valid counterfactuals get NaN and are left out of the mean.
    ``normalized=True`` divides each distance by the original's token count (needs ``originals``), the
    paper's formula. Returns ``(mean, per_original)``.

    >>> mean, per = diversity([["a b", "a c", "b c"], ["x", None]])
    >>> round(mean, 4), per.tolist()
    (1.3333, [1.3333333333333333, nan])
    """
    per = np.full(len(counterfactual_sets), np.nan)
    if normalized and originals is None:
        raise ValueError("normalized=True needs originals= (the diversity is divided by the original's token count)")
    for i, cfs in enumerate(counterfactual_sets):
        valid = [c for c in cfs if not _failed_any(c)]
        if len(valid) < 2:
            continue
        pairs = [(j, k) for j in range(len(valid)) for k in range(j + 1, len(valid))]
        dists = [token_distance(valid[j], valid[k]) for j, k in pairs]
        value = float(np.mean(dists))
        if normalized:
            orig = (originals[i],) if isinstance(originals[i], str) else originals[i]
            length = sum(len(_tokens(t)) for t in orig)
            value = value / length if length else float("nan")
        per[i] = value
    valid_rows = ~np.isnan(per)
    mean = float(per[valid_rows].mean()) if valid_rows.any() else float("nan")
    return mean, per


def method_distance_matrix(texts_by_method: Mapping[str, Sequence], normalized: bool = False) -> tuple[list[str], np.ndarray]:
    """Mean token distance between the texts of every two methods, row by row (the paper's Fig. 2).

    ``texts_by_method``: method name -> list of texts, all lists aligned (same originals, same order); include
    the originals as a "method" to see each method's distance to them. Rows where either text failed are
    skipped for that pair. ``normalized`` divides by the first method's token count per row.

    >>> names, m = method_distance_matrix({"original": ["a b c"], "x": ["a b d"], "y": ["a"]})
    >>> names, m.tolist()
    (['original', 'x', 'y'], [[0.0, 1.0, 2.0], [1.0, 0.0, 2.0], [2.0, 2.0, 0.0]])
    """
    if not isinstance(texts_by_method, Mapping) or len(texts_by_method) < 2:
        raise ValueError(f"texts_by_method={short_repr(texts_by_method)}: expected a dict of at least two method names -> lists of texts")
    names = list(texts_by_method)
    lists = [_check_list(texts_by_method[n], f"texts_by_method[{n!r}]") for n in names]
    for n, texts in zip(names[1:], lists[1:]):
        check_same_length(lists[0], texts, f"texts_by_method[{names[0]!r}]", f"texts_by_method[{n!r}]")
    k = len(names)
    matrix = np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            values = [token_distance(x, y, normalized=normalized) for x, y in zip(lists[a], lists[b])
                      if not is_failed(x) and not is_failed(y)]
            matrix[a, b] = matrix[b, a] = float(np.mean(values)) if values else float("nan")
    return names, matrix


# ------------------------------------------------------------------------------ flips and probabilities
def flips(original_labels, counterfactual_labels, failed=None) -> np.ndarray:
    """Per example: did the predicted class change? A failed generation (``failed[i]``) is not flipped."""
    a = np.asarray(original_labels)
    b = np.asarray(counterfactual_labels)
    out = a != b
    if failed is not None:
        out = out & ~np.asarray(failed, dtype=bool)
    return out


def flip_rate(original_labels, counterfactual_labels, failed=None) -> float:
    """Share of examples whose predicted class changed (failed generations count as not flipped)."""
    return float(np.mean(flips(original_labels, counterfactual_labels, failed)))


def contrast_classes(original_probs, counterfactual_probs=None, contrast: str = "argmin", targets=None) -> np.ndarray:
    """The contrast class ``c'`` of each example for ``contrast`` in ``CONTRASTS``.

    >>> contrast_classes([[0.7, 0.2, 0.1]], [[0.1, 0.6, 0.3]], "argmin").tolist()
    [2]
    >>> contrast_classes([[0.7, 0.2, 0.1]], [[0.1, 0.6, 0.3]], "counterfactual_argmax").tolist()
    [1]
    """
    if contrast not in CONTRASTS:
        raise ValueError(f"contrast={short_repr(contrast)}: expected one of {list(CONTRASTS)}")
    if contrast == "target":
        if targets is None:
            raise ValueError("contrast='target' needs targets= (one target class per example)")
        return np.asarray(targets, dtype=np.int64)
    if contrast == "argmin":
        return np.argmin(np.asarray(original_probs, dtype=np.float64), axis=1)
    return np.argmax(np.asarray(counterfactual_probs, dtype=np.float64), axis=1)


def probability_change(original_probs, counterfactual_probs, contrast: str = "argmin", targets=None, failed=None) -> np.ndarray:
    """Per example ``p(c' | x') - p(c' | x)``; 0 for a failed generation (the text is left unchanged).

    >>> probability_change([[0.6, 0.3, 0.1]], [[0.2, 0.7, 0.1]], contrast="target", targets=[1]).round(2).tolist()
    [0.4]
    """
    p = np.asarray(original_probs, dtype=np.float64)
    q = np.asarray(counterfactual_probs, dtype=np.float64)
    c = contrast_classes(p, q, contrast, targets)
    rows = np.arange(len(p))
    out = q[rows, c] - p[rows, c]
    if failed is not None:
        out = np.where(np.asarray(failed, dtype=bool), 0.0, out)
    return out


# --------------------------------------------------------------------------------------- text quality
def quality_prompt(text: str, aspect: str, topic: str = "movie review", index: int = 0) -> str:
    """CEval's prompt for one text and one quality aspect (its wording, as in its ``LLMEvaluator``).

    >>> print(quality_prompt("Great film.", "grammar"))  # doctest: +NORMALIZE_WHITESPACE
    Please rate each movie review
    The goal of this task is to rate each movie review.
    Note: Please take the time to fully read and understand the movie review. We will reject submissions from workers that are clearly spamming the task.
    Movie review 0:
    Great film.
    How grammatically correct is each movie review? (on a scale of 1-5, with 1 being the lowest?).Ignore errors related to uppercase and lowercase letters. Please only return a score for the movie review. The score is:
    """
    if aspect not in QUALITY_ASPECTS:
        raise ValueError(f"aspect={short_repr(aspect)}: expected one of {list(QUALITY_ASPECTS)}")
    if not isinstance(topic, str) or not topic.strip():
        raise ValueError(f"judge_topic={short_repr(topic)}: expected a non-empty string such as 'movie review'")
    title = topic[0].upper() + topic[1:]
    questions = {
        "grammar": f"How grammatically correct is each {topic}? (on a scale of 1-5, with 1 being the lowest?).",
        "cohesiveness": f"How well do the sentences in each {topic} fit together? (on a scale of 1-5, with 1 being the lowest?).",
        "likability": f"How enjoyable do you find each {topic}? (on a scale of 1-5, with 1 being the lowest?).",
        "fluency": f"Question: How natural and fluent each {topic}? (on a scale of 1-5, with 1 being the lowest).",
    }
    if aspect == "fluency":
        start = f"You are given a list of {topic}s. Please read the {topic} and answer the question.\n{title}:\n"
    else:
        start = (f"Please rate each {topic}\nThe goal of this task is to rate each {topic}.\n"
                 f"Note: Please take the time to fully read and understand the {topic}. "
                 f"We will reject submissions from workers that are clearly spamming the task.\n")
    return (f"{start}{title} {index}:\n{text}\n{questions[aspect]}"
            f"Ignore errors related to uppercase and lowercase letters. Please only return a score for the {topic}. The score is:")


_DIGIT = re.compile(r"[1-5]")


def parse_score(reply) -> float:
    """The first digit 1-5 of a judge's reply, NaN when there is none.

    >>> parse_score(" 4"), parse_score("I would say 3/5."), parse_score("none")
    (4.0, 3.0, nan)
    """
    if not isinstance(reply, str):
        return float("nan")
    match = _DIGIT.search(reply)
    return float(match.group()) if match else float("nan")


class _GenerativeJudge:
    """Greedy replies of a causal LM (id, folder, (model, tokenizer) pair, ``textxai.lm.CausalLM`` or pipeline)."""

    def __init__(self, judge, tokenizer=None, device=None, max_new_tokens: int = 4, generate_kwargs=None, seed: int = 0):
        from textxai.validation import check_positive_int

        self.max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
        if generate_kwargs is not None and not isinstance(generate_kwargs, Mapping):
            raise TypeError(f"judge_generate_kwargs={short_repr(generate_kwargs)}: expected a dict of generate() options")
        self.generate_kwargs = {"do_sample": False, **(generate_kwargs or {})}
        self.seed = seed
        self.model, self.tokenizer = _load_causal_lm(judge, tokenizer, device)
        self.device = next(self.model.parameters()).device

    def __call__(self, prompts: list[str], batch_size: int = 8, progress: bool = False) -> list[str]:
        import torch

        from textxai.classifier import frozen_eval

        tok = self.tokenizer
        replies: list[str] = []
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if pad_id is None:
            pad_id = 0
        # one prompt at a time: no padding, so a reply never depends on the other prompts or on batch_size
        if self.generate_kwargs.get("do_sample"):
            torch.manual_seed(self.seed)        # sampling (CEval: do_sample=True, top_k=50, temperature=0.7) repeats
        for prompt in progress_bar(prompts, progress, "judge", unit="prompt"):
            enc = tok(prompt, return_tensors="pt")
            ids = enc["input_ids"].to(self.device)
            max_pos = getattr(self.model.config, "max_position_embeddings", None) or getattr(self.model.config, "n_positions", None)
            if max_pos is not None and ids.shape[1] + self.max_new_tokens > max_pos:
                ids = ids[:, -(max_pos - self.max_new_tokens):]   # keep the question at the end
            with torch.no_grad(), frozen_eval(self.model):
                out = self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=self.max_new_tokens,
                                          pad_token_id=pad_id, **self.generate_kwargs)
            replies.append(tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True))
        return replies


def _load_causal_lm(model, tokenizer=None, device=None):
    """(model, tokenizer) of a judge given as an id, folder, (model, tokenizer), ``CausalLM`` or pipeline."""
    from textxai import lm as _lm

    if hasattr(model, "model") and hasattr(model, "tokenizer") and hasattr(model, "task"):
        model, tokenizer = model.model, model.tokenizer        # a text-generation pipeline
    try:
        loaded = _lm.as_lm(model, tokenizer=tokenizer, device=device)
    except (TypeError, ValueError) as error:
        raise type(error)(str(error).replace("lm=", "judge=", 1)) from error
    if not hasattr(loaded.model, "generate"):
        raise TypeError(f"judge={short_repr(model)}: the model cannot generate text; expected a causal LM or a callable "
                        f"prompts -> replies")
    return loaded.model, loaded.tokenizer


def judge_quality(texts, judge, topic: str = "movie review", tokenizer=None, device=None, batch_size: int = 8,
                  max_new_tokens: int = 4, progress: bool = False, indices=None, generate_kwargs=None,
                  seed: int = 0) -> dict:
    """Ask ``judge`` CEval's four questions about every text; returns per-aspect score arrays and counts.

    ``judge``: a callable ``list[str] prompts -> list[str] replies`` or a causal LM (see ``_load_causal_lm``),
    decoded greedily unless ``generate_kwargs`` says otherwise (e.g. CEval's ``{"do_sample": True,
    "top_k": 50, "temperature": 0.7}``, repeatable under ``seed``). Unparseable replies become NaN and are
    counted in ``num_unparsed``.

    >>> out = judge_quality(["Nice film."], lambda prompts: ["4"] * len(prompts))
    >>> out["grammar"].tolist(), out["num_unparsed"]
    ([4.0], 0)
    """
    texts = list(texts)
    indices = list(range(len(texts))) if indices is None else list(indices)
    if callable(judge) and not hasattr(judge, "generate") and not hasattr(judge, "tokenizer"):
        ask = judge
    else:
        generator = _GenerativeJudge(judge, tokenizer=tokenizer, device=device, max_new_tokens=max_new_tokens,
                                     generate_kwargs=generate_kwargs, seed=seed)

        def ask(prompts):
            return generator(prompts, batch_size=batch_size, progress=progress)

    out: dict = {"prompts": {}, "replies": {}}
    unparsed = 0
    for aspect in QUALITY_ASPECTS:
        prompts = [quality_prompt(t, aspect, topic, i) for t, i in zip(texts, indices)]
        replies = list(ask(prompts)) if prompts else []
        if len(replies) != len(prompts):
            raise ValueError(f"judge returned {len(replies)} replies for {len(prompts)} prompts: expected one reply per prompt")
        scores = np.array([parse_score(r) for r in replies], dtype=np.float64)
        unparsed += int(np.isnan(scores).sum())
        out[aspect] = scores
        out["prompts"][aspect] = prompts
        out["replies"][aspect] = replies
    out["num_unparsed"] = unparsed
    return out


# ------------------------------------------------------------------------------------- the whole score
def _nanmean(values) -> float:
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if arr.size else float("nan")


def _prepare(references, predictions, reference_pairs, prediction_pairs):
    """-> originals (list of tuples), counterfactual sets (list of lists of tuples | None per item), multi?"""
    nli = reference_pairs is not None or prediction_pairs is not None
    refs = _check_originals(references, "references")
    preds = _check_list(predictions, "predictions")
    check_same_length(refs, preds, "references", "predictions")
    multi = any(isinstance(p, (list, tuple)) and len(p) > 1 for p in preds)
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
        pred_pairs = _check_list(prediction_pairs, "prediction_pairs")
        check_same_length(refs, pred_pairs, "references", "prediction_pairs")
        originals = [(p, h) for p, h in zip(refs, ref_pairs)]
    else:
        pred_pairs = None
        originals = [(p,) for p in refs]

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


def score_counterfactuals(references, predictions, reference_pairs=None, prediction_pairs=None, *, model=None,
                          tokenizer=None, lm=None, judge=None, judge_tokenizer=None, judge_topic: str | None = None,
                          targets=None, contrast: str | None = None, original_probs=None, counterfactual_probs=None,
                          original_labels=None, counterfactual_labels=None, batch_size: int = 32, device=None,
                          max_new_tokens: int = 4, judge_generate_kwargs=None, seed: int = 0,
                          return_per_example: bool = False, progress: bool = False) -> dict:
    """All CEval metrics for counterfactuals ``predictions`` of originals ``references``.

    - ``predictions[i]``: one counterfactual (string) or a list of them; with a list the first one is "the"
      counterfactual (flip, probability change, distance, perplexity, quality) and all of them give the
      diversity (CEval's ``gen_text`` / ``gen_text_2``), reported when some example has two or more.
      ``None`` / ``"-1"`` / ``""``: a failed generation.
    - NLI: ``reference_pairs`` (original hypotheses) and ``prediction_pairs`` (counterfactual hypotheses);
      ``references`` / ``predictions`` are then the premises. Edit one side and copy the other.
    - Classifier outputs: ``model`` (anything ``textxai.classifier.as_classifier`` takes), or precomputed
      ``original_probs`` / ``counterfactual_probs`` ([n, C] softmax rows), or just
      ``original_labels`` / ``counterfactual_labels`` (flip rate only).
    - ``contrast``: ``"target"`` (needs ``targets``), ``"argmin"``, ``"counterfactual_argmax"``; default
      ``"target"`` when targets are given, else CEval's choice per task: argmin (texts), counterfactual
      argmax (NLI).
    - ``lm``: causal LM for perplexity (``textxai.lm.perplexity``); ``judge``: instruction-following LM or
      callable for the four text-quality questions, about ``judge_topic``; greedy, up to ``max_new_tokens``
      tokens, unless ``judge_generate_kwargs`` asks for sampling (then repeatable under ``seed``).

    >>> r = score_counterfactuals(["a bad film"], ["a good film"], original_probs=[[0.9, 0.1]],
    ...                           counterfactual_probs=[[0.2, 0.8]])
    >>> r["flip_rate"], round(r["probability_change"], 2), r["token_distance"]
    (1.0, 0.7, 1.0)
    """
    from textxai.validation import check_positive_int

    check_positive_int(batch_size, "batch_size")
    originals, sets, multi, nli = _prepare(references, predictions, reference_pairs, prediction_pairs)
    n = len(originals)
    primary = [s[0] for s in sets]
    failed = np.array([_failed_any(c) for c in primary], dtype=bool)
    if contrast is not None and contrast not in CONTRASTS:
        raise ValueError(f"contrast={short_repr(contrast)}: expected one of {list(CONTRASTS)} or None (CEval's default per task)")
    if targets is not None:
        contrast = contrast or "target"
    contrast = contrast or ("counterfactual_argmax" if nli else "argmin")

    # ---- classifier outputs
    clf = None
    num_classes = None
    p_orig = q_cf = None
    if original_probs is not None:
        p_orig = _check_probs(original_probs, "original_probs", n)
        num_classes = p_orig.shape[1]
    if counterfactual_probs is not None:
        q_cf = _check_probs(counterfactual_probs, "counterfactual_probs", n, num_classes)
        num_classes = q_cf.shape[1]
    need_orig = p_orig is None and original_labels is None
    need_cf = q_cf is None and counterfactual_labels is None
    if model is not None and (need_orig or need_cf):
        from textxai.classifier import as_classifier

        clf = as_classifier(model, tokenizer=tokenizer, device=device)
        if num_classes is not None and clf.num_labels != num_classes:
            raise ValueError(f"model has {clf.num_labels} classes but the given probabilities have {num_classes}: expected the same")
        num_classes = clf.num_labels
        if need_orig:
            texts = [o[0] for o in originals]
            pairs = [o[1] for o in originals] if nli else None
            p_orig = clf.predict_proba(texts, pairs, batch_size=batch_size, progress=progress)
        if need_cf:
            q_cf = np.full((n, num_classes), np.nan) if p_orig is None else p_orig.copy()
            ok = np.where(~failed)[0]
            if len(ok):
                texts = [primary[i][0] for i in ok]
                pairs = [primary[i][1] for i in ok] if nli else None
                q_cf[ok] = clf.predict_proba(texts, pairs, batch_size=batch_size, progress=progress)
    elif need_orig != need_cf:
        missing = "original_probs (or original_labels)" if need_orig else "counterfactual_probs (or counterfactual_labels)"
        raise ValueError(f"{missing} is missing and model=None: expected the classifier outputs of both the originals "
                         f"and the counterfactuals, or a model to compute them")
    if targets is not None:
        if isinstance(targets, (str, bytes)):
            raise TypeError(f"targets={short_repr(targets)}: expected a list of class indices, one per example")
        targets = list(targets)
        if any(isinstance(t, str) for t in targets) and (clf is not None or model is not None):
            if clf is None:
                from textxai.classifier import as_classifier

                clf = as_classifier(model, tokenizer=tokenizer, device=device)
            names = {v: k for k, v in clf.labels.items()}
            targets = [names.get(t, t) if isinstance(t, str) else t for t in targets]
            for i, t in enumerate(targets):
                if isinstance(t, str):
                    raise ValueError(f"targets[{i}]={t!r}: not a label of the model; expected one of {sorted(names)}")
        targets = _check_labels(targets, "targets", n, num_classes)

    have_labels = True
    if original_labels is not None:
        y_orig = _check_labels(original_labels, "original_labels", n, num_classes)
    elif p_orig is not None:
        y_orig = np.argmax(p_orig, axis=1)
    else:
        have_labels = False
    if counterfactual_labels is not None:
        y_cf = _check_labels(counterfactual_labels, "counterfactual_labels", n, num_classes)
    elif q_cf is not None:
        y_cf = np.where(failed, y_orig, np.argmax(np.nan_to_num(q_cf, nan=-1.0), axis=1)) if have_labels else None
    else:
        have_labels = False

    result: dict = {"num_examples": n, "num_failed": int(failed.sum()), "contrast": None}
    per: dict = {}
    flipped = None
    if have_labels:
        flipped = flips(y_orig, y_cf, failed)
        result["num_flipped"] = int(flipped.sum())
        result["flip_rate"] = float(flipped.mean())
        per["original_label"] = y_orig.tolist()
        per["counterfactual_label"] = y_cf.tolist()
        per["flipped"] = flipped.tolist()
    else:
        result["num_flipped"] = None
        result["flip_rate"] = float("nan")
    can_dp = p_orig is not None and q_cf is not None
    if can_dp:
        q_safe = np.where(failed[:, None], p_orig, q_cf)
        c = contrast_classes(p_orig, q_safe, contrast, targets)
        dp = probability_change(p_orig, q_safe, contrast, targets, failed)
        result["contrast"] = contrast
        result["probability_change"] = float(dp.mean())
        result["probability_change_flipped"] = _nanmean(dp[flipped]) if flipped is not None else float("nan")
        per["contrast_class"] = c.tolist()
        per["original_contrast_prob"] = p_orig[np.arange(n), c].tolist()
        per["counterfactual_contrast_prob"] = q_safe[np.arange(n), c].tolist()
        per["probability_change"] = dp.tolist()
    else:
        result["probability_change"] = float("nan")
        result["probability_change_flipped"] = float("nan")

    # ---- distances and diversity
    dist = token_distances(originals, primary)
    dist_norm = token_distances(originals, primary, normalized=True)
    result["token_distance"] = _nanmean(dist)
    result["token_distance_normalized"] = _nanmean(dist_norm)
    if flipped is not None:
        result["token_distance_flipped"] = _nanmean(dist[flipped])
        result["token_distance_normalized_flipped"] = _nanmean(dist_norm[flipped])
    per["token_distance"] = dist.tolist()
    per["token_distance_normalized"] = dist_norm.tolist()
    if nli:
        per["token_distance_premise"] = [float("nan") if f else float(token_distance(o[0], c_[0]))
                                         for o, c_, f in zip(originals, primary, failed)]
        per["token_distance_hypothesis"] = [float("nan") if f else float(token_distance(o[1], c_[1]))
                                            for o, c_, f in zip(originals, primary, failed)]
    if multi:
        div, div_per = diversity(sets)
        div_norm, div_norm_per = diversity(sets, originals=originals, normalized=True)
        result["diversity"] = div
        result["diversity_normalized"] = div_norm
        result["num_diversity_examples"] = int((~np.isnan(div_per)).sum())
        result["num_failed_counterfactuals"] = int(sum(_failed_any(c) for s in sets for c in s))
        per["diversity"] = div_per.tolist()
        per["diversity_normalized"] = div_norm_per.tolist()

    # ---- perplexity
    ok = np.where(~failed)[0]
    joined = [" ".join(primary[i]) for i in ok]
    if lm is not None:
        from textxai import lm as _lm

        ppl = np.full(n, np.nan)
        if len(ok):
            ppl[ok] = np.asarray(_lm.perplexity(joined, lm, batch_size=batch_size, progress=progress), dtype=np.float64)
        result["perplexity"] = _nanmean(ppl)
        if flipped is not None:
            result["perplexity_flipped"] = _nanmean(ppl[flipped])
        per["perplexity"] = ppl.tolist()

    # ---- text quality
    if judge is not None:
        topic = judge_topic or TOPICS["nli" if nli else "text"]
        quality = judge_quality(joined, judge, topic=topic, tokenizer=judge_tokenizer, device=device,
                                batch_size=batch_size, max_new_tokens=max_new_tokens, progress=progress, indices=ok,
                                generate_kwargs=judge_generate_kwargs, seed=seed)
        aspect_means = []
        for aspect in QUALITY_ASPECTS:
            scores = np.full(n, np.nan)
            scores[ok] = quality[aspect]
            result[aspect] = _nanmean(scores)
            aspect_means.append(result[aspect])
            per[aspect] = scores.tolist()
        result["text_quality"] = _nanmean(aspect_means)
        result["num_unparsed_judgements"] = quality["num_unparsed"]
    if return_per_example:
        result["per_example"] = per
    return result


# ---------------------------------------------------------------------------------------------- plots
def plot_probability_histogram(probabilities, bins: int = 20, title: str | None = None,
                               xlabel: str = "p(contrast class | text)"):
    """Histograms of classifier probabilities, one panel per method (the paper's Fig. 1).

    ``probabilities``: one array of probabilities in [0, 1], or a dict method -> array (e.g. the
    originals' and each generator's ``per_example["counterfactual_contrast_prob"]``). Mass near 0.5 means
    texts near the decision boundary; two narrow peaks at 0 and 1, an over-confident classifier.

    >>> fig = plot_probability_histogram({"original": [0.01, 0.02], "mice": [0.6, 0.97]})
    >>> len(fig.axes)
    2
    """
    from matplotlib.figure import Figure

    if not isinstance(probabilities, Mapping):
        probabilities = {"": probabilities}
    if not probabilities:
        raise ValueError("probabilities={}: expected at least one method -> array of probabilities")
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise ValueError(f"bins={short_repr(bins)}: expected a positive integer")
    series = {}
    for name, values in probabilities.items():
        arr = np.asarray(values, dtype=np.float64).ravel()
        arr = arr[~np.isnan(arr)]
        if arr.size and (arr.min() < 0 or arr.max() > 1):
            raise ValueError(f"probabilities[{name!r}] has values in [{arr.min():.3g}, {arr.max():.3g}]: expected probabilities in [0, 1]")
        series[name] = arr
    k = len(series)
    fig = Figure(figsize=(2.6 * k + 0.6, 2.8), layout="constrained")
    axes = fig.subplots(1, k, sharey=True, squeeze=False)[0]
    edges = np.linspace(0, 1, bins + 1)
    for ax, (name, arr) in zip(axes, series.items()):
        weights = np.full(arr.size, 1 / arr.size) if arr.size else None
        ax.hist(arr, bins=edges, weights=weights, color="#4c72b0", edgecolor="white")
        ax.set_title(f"{name} (n={arr.size})" if name else f"n={arr.size}", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xlabel(xlabel, fontsize=8)
    axes[0].set_ylabel("share of texts")
    if title:
        fig.suptitle(title)
    return fig


def plot_method_distances(texts_by_method=None, normalized: bool = False, names=None, matrix=None, title: str | None = None):
    """Heat map of the mean pairwise token distance between methods (the paper's Fig. 2).

    Give ``texts_by_method`` (see :func:`method_distance_matrix`) or a precomputed ``names`` + ``matrix``.

    >>> fig = plot_method_distances({"original": ["a b c"], "x": ["a b d"], "y": ["a"]})
    >>> fig.axes[0].get_title()
    'mean token distance between methods'
    """
    from matplotlib.figure import Figure

    if matrix is None:
        if texts_by_method is None:
            raise ValueError("texts_by_method=None: expected a dict method -> texts, or names= and matrix=")
        names, matrix = method_distance_matrix(texts_by_method, normalized=normalized)
    matrix = np.asarray(matrix, dtype=np.float64)
    names = list(names) if names is not None else [str(i) for i in range(len(matrix))]
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] != len(names):
        raise ValueError(f"matrix has shape {matrix.shape}: expected ({len(names)}, {len(names)}), one row and column per name")
    k = len(names)
    fig = Figure(figsize=(1.0 * k + 2.2, 0.85 * k + 1.2), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(matrix, cmap="viridis")
    ax.set_xticks(range(k), names, rotation=45, ha="right")
    ax.set_yticks(range(k), names)
    top = np.nanmax(matrix) if np.isfinite(matrix).any() else 1.0
    for i in range(k):
        for j in range(k):
            value = matrix[i, j]
            ax.text(j, i, f"{value:.2f}" if normalized else f"{value:.1f}", ha="center", va="center", fontsize=8,
                    color="white" if value < 0.6 * top else "black")
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(title or "mean token distance between methods")
    return fig


# ------------------------------------------------------------------------- baseline counterfactuals
def deletion_candidates(texts, classifier, max_words: int = 3, batch_size: int = 32, progress: bool = False) -> list[list[str]]:
    """A word-deletion baseline generator: candidate counterfactuals of each text.

    Greedy: at each step delete the word whose removal most lowers the probability of the original
    predicted class, until the prediction flips or ``max_words`` words are gone. Candidates: every single
    deletion of the first step (best first), then the texts along the greedy path. Deterministic.
    """
    from textxai.classifier import as_classifier
    from textxai.validation import check_positive_int, check_texts

    texts = check_texts(texts)
    check_positive_int(max_words, "max_words")
    clf = as_classifier(classifier)
    out = []
    for text in progress_bar(texts, progress, "deletion baseline", unit="text"):
        spans = [(s, e) for _, s, e in _words.word_spans(text)]
        if len(spans) < 2:
            out.append([])
            continue
        original_class = int(np.argmax(clf.predict_proba([text], batch_size=batch_size)[0]))
        removed: list[int] = []
        path: list[str] = []
        singles: list[str] = []
        for step in range(min(max_words, len(spans) - 1)):
            options = [i for i in range(len(spans)) if i not in removed]
            candidates = [_delete_words(text, spans, removed + [i]) for i in options]
            probs = clf.predict_proba(candidates, batch_size=batch_size)
            order = np.argsort(probs[:, original_class], kind="stable")
            if step == 0:
                singles = [candidates[j] for j in order]
            best = int(order[0])
            removed.append(options[best])
            path.append(candidates[best])
            if int(np.argmax(probs[best])) != original_class:
                break
        seen, unique = set(), []
        for cand in singles[:5] + path:
            if cand not in seen and cand.strip():
                seen.add(cand)
                unique.append(cand)
        out.append(unique)
    return out


def _delete_words(text: str, spans, indices) -> str:
    pieces, last = [], 0
    for i in sorted(indices):
        start, end = spans[i]
        space_before = start == 0 or text[start - 1].isspace()
        space_after = end < len(text) and text[end] == " "
        if space_after and space_before:                # "a plan x" -> "a x"
            end += 1
        elif not space_after and start > last and text[start - 1] == " ":   # "a plan." -> "a."
            start -= 1                                  # (attached punctuation keeps its neighbours' spaces)
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def pick_counterfactuals(originals, candidates, classifier, k: int = 2, batch_size: int = 32) -> list[list[str]]:
    """The ``k`` best candidates per original: flipping ones first, then smaller token distance, then lower
    probability of the original class. Missing ones are ``"-1"`` (a failed generation)."""
    from textxai.classifier import as_classifier

    clf = as_classifier(classifier)
    originals = list(originals)
    flat = [c for cands in candidates for c in cands]
    p_orig = clf.predict_proba(originals, batch_size=batch_size)
    p_flat = clf.predict_proba(flat, batch_size=batch_size) if flat else np.zeros((0, p_orig.shape[1]))
    out, pos = [], 0
    for i, cands in enumerate(candidates):
        y = int(np.argmax(p_orig[i]))
        scored = []
        for j, cand in enumerate(cands):
            q = p_flat[pos + j]
            scored.append((int(np.argmax(q)) == y, token_distance(originals[i], cand), float(q[y]), j, cand))
        pos += len(cands)
        scored.sort()
        chosen = [s[-1] for s in scored[:k]]
        out.append(chosen + ["-1"] * (k - len(chosen)))
    return out
