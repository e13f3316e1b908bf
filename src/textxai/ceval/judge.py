"""Text quality by an LLM judge: CEval's four 1-5 questions (grammar, cohesiveness, likability, fluency).

A judge given as a causal LM is **read from its probabilities** (G-Eval, Liu et al. 2023): after CEval's prompt
in its chat template, the next-token distribution over the score tokens "1" ... "5" (every token of its
vocabulary that reads as one of them: "1", " 1", "▁1", "Ġ1"), renormalised over the five; the score is the
probability-weighted mean and the distribution's entropy (nats, 0 to ln 5) says how sure the judge is. One
forward pass per (text, aspect), batched; every text gets a score, nothing is parsed (:func:`probability_scores`).

A judge without logits (a callable ``prompts -> replies``, e.g. a remote API) is read by **parsing its replies**
(``judge_method="parsed_replies"``, :func:`parse_score`), as is an LM asked to generate
(``judge_method="generate"``: CEval's own reading, kept for comparison). The parse cannot be fooled by echoes:
one text per prompt with no index in it, a score read from the reply only and only when it is one score on the scale.

>>> parse_score("I would say 3/5.")
3.0
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from textxai.validation import call_user, check_list, check_positive_int, one_line, short_repr

QUALITY_ASPECTS = ("grammar", "cohesiveness", "likability", "fluency")
TOPICS = {"text": "movie review", "nli": "natural language inference pair"}
#: New tokens of a judge's reply. CEval asked Mistral-7B for 2 (and read the last character); a small chatty judge
#: opens a list ("1. The movie review is ...") or enumerates ("The movie review is 1.\nThe movie review is 2."), and
#: 8 tokens cut that after its first number, which then looked like one score; 32 show the list for what it is.
MAX_NEW_TOKENS = 32


def quality_prompt(text: str, aspect: str, topic: str = "movie review") -> str:
    """CEval's prompt for one text and one quality aspect (its wording, as in its ``LLMEvaluator``), one text per
    prompt and labelled without an index: CEval numbers the text ("Movie review 0:"), and a small judge that
    echoes that line would have its position read as its score.

    >>> print(quality_prompt("Great film.", "grammar"))  # doctest: +NORMALIZE_WHITESPACE
    Please rate each movie review
    The goal of this task is to rate each movie review.
    Note: Please take the time to fully read and understand the movie review. We will reject submissions from workers that are clearly spamming the task.
    Movie review:
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
        start = f"You are given a list of {topic}s. Please read the {topic} and answer the question.\n"
    else:
        start = (f"Please rate each {topic}\nThe goal of this task is to rate each {topic}.\n"
                 f"Note: Please take the time to fully read and understand the {topic}. "
                 f"We will reject submissions from workers that are clearly spamming the task.\n")
    return (f"{start}{title}:\n{text}\n{questions[aspect]}"
            f"Ignore errors related to uppercase and lowercase letters. Please only return a score for the {topic}. The score is:")


_OUT_OF_FIVE = re.compile(r"\b([1-5])\s*(?:/|out of|of)\s*5\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_INDEX_LABEL = re.compile(r"\b(?:review|text|pair|example|sentence|number|no\.?|item)\s*#?\s*\d", re.IGNORECASE)
_RANGE = re.compile(r"\d\s*(?:-|–|to)\s*\d")
#: a list item's number at the start of a line: "1. The movie ...", '1. "Title"', "2) It ..." (words after it on its line)
_NUMBERING = re.compile(r"^[ \t]*\(?\d+[ \t]*[.)][ \t]*(?=[^\W\d_]|[\"'“‘*(\[])", re.MULTILINE)


def parse_score(reply) -> float:
    """The score of a judge's reply when it holds exactly one score on the 1-5 scale, else NaN (unparsed).

    Unparsed: no number, several numbers (a list, "3 or 4", the rubric "on a scale of 1-5, with 1 being the
    lowest"), a range ("4-5"), a number off the scale or not whole, a number that labels something ("Movie
    review 4:", an echo of a prompt header), and **list numbering**: a line that opens with "N." or "N)"
    followed by words ("1. The movie review is grammatically", what SmolLM2-135M-Instruct often replies) is a
    list item, not a score. "4/5" and "4 out of 5" are one score; a number
    alone on its line ("4", "4.", "4.\\nThe review reads well") is one.

    >>> parse_score(" 4"), parse_score("4."), parse_score("Score: 4"), parse_score("4/5. Clear and correct.")
    (4.0, 4.0, 4.0, 4.0)
    >>> parse_score("I would say 3/5."), parse_score("The score is: 5 out of 5.")
    (3.0, 5.0)
    >>> [parse_score(r) for r in ("1-5", "3 or 4", "Movie review 4:", "on a scale of 1-5", "6", "4.5", "none", None)]
    [nan, nan, nan, nan, nan, nan, nan, nan]
    >>> [parse_score(r) for r in ("1. The movie review is grammatically", '1. "Houseboat Horror"', "Notes:\\n2) It reads")]
    [nan, nan, nan]
    """
    if not isinstance(reply, str) or _NUMBERING.search(reply):
        return float("nan")
    text = _OUT_OF_FIVE.sub(r"\1", reply.strip())
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1 or _RANGE.search(text) or _INDEX_LABEL.search(text):
        return float("nan")
    value = float(numbers[0].replace(",", "."))
    return value if value in (1.0, 2.0, 3.0, 4.0, 5.0) else float("nan")


class _GenerativeJudge:
    """Replies of a causal LM (any form :func:`textxai.lm.as_lm` takes), through its chat template when it has one."""

    def __init__(self, judge, tokenizer=None, device=None, max_new_tokens: int = MAX_NEW_TOKENS, generate_kwargs=None, seed: int = 0,
                 batch_size: int = 8):
        self.max_new_tokens = max_new_tokens  # checked by check_judge
        options = dict(generate_kwargs or {})
        self.do_sample = bool(options.pop("do_sample", False))
        self.generate_kwargs = options
        self.seed = seed
        self.batch_size = batch_size
        self.lm = _load_causal_lm(judge, tokenizer, device)

    def __call__(self, prompts: list[str], progress: bool = False, texts=None) -> list[str]:
        from textxai.lm import generate

        return generate(self.lm, prompts, self.max_new_tokens, do_sample=self.do_sample, seed=self.seed,
                        batch_size=self.batch_size, progress=progress, generate_kwargs=self.generate_kwargs, texts=texts)


def _load_causal_lm(model, tokenizer=None, device=None):
    """The ``textxai.lm.CausalLM`` of a judge given as an id, folder, .gguf, (model, tokenizer), ``CausalLM`` or pipeline."""
    from textxai import lm as _lm

    try:
        loaded = _lm.as_lm(model, tokenizer=tokenizer, device=device)
    except (TypeError, ValueError) as error:
        raise type(error)(str(error).replace("lm=", "judge=", 1)) from error
    if not hasattr(loaded.model, "generate"):
        raise TypeError(f"judge={short_repr(model)}: the model cannot generate text; expected a causal LM or a callable "
                        f"prompts -> replies")
    return loaded


def is_callable_judge(judge) -> bool:
    """A plain callable ``prompts -> replies`` (not a model, pipeline or ``CausalLM``)."""
    return callable(judge) and not hasattr(judge, "generate") and not hasattr(judge, "tokenizer")


def check_judge(judge, topic=None, max_new_tokens: int = MAX_NEW_TOKENS, generate_kwargs=None) -> None:
    """Every check of the judge's settings, before any prompt is built (``topic`` None: the default)."""
    if judge is None:
        raise ValueError("judge=None: expected a causal LM (id, folder, (model, tokenizer)) or a callable prompts -> replies")
    check_positive_int(max_new_tokens, "max_new_tokens")
    if generate_kwargs is not None and not isinstance(generate_kwargs, Mapping):
        raise TypeError(f"judge_generate_kwargs={short_repr(generate_kwargs)}: expected a dict of generate() options")
    if generate_kwargs:
        from textxai.lm import check_generate_kwargs

        check_generate_kwargs(generate_kwargs, "judge_generate_kwargs")
    if topic is not None and (not isinstance(topic, str) or not topic.strip()):
        raise ValueError(f"judge_topic={short_repr(topic)}: expected a non-empty string such as 'movie review'")
    if not is_callable_judge(judge) and not isinstance(judge, (str, tuple)) \
            and not hasattr(judge, "generate") and not hasattr(judge, "tokenizer"):
        raise TypeError(f"judge={short_repr(judge)} ({type(judge).__name__}): expected a causal LM "
                        "(id, folder, (model, tokenizer), pipeline) or a callable prompts -> replies")


SCORES = (1, 2, 3, 4, 5)
#: How a judge is read: "auto" (an LM: its probabilities; a callable: its parsed replies), or one of these.
JUDGE_METHODS = ("auto", "probabilities", "generate", "parsed_replies")


def score_token_ids(lm) -> dict[int, list[int]]:
    """Score -> the ids of every (non-special) token of the LM's vocabulary that reads as that digit alone once
    stripped of spaces and word markers ("1", " 1", "▁1", "Ġ1"). Cached on the ``CausalLM``."""
    cached = getattr(lm, "_score_token_ids", None)
    if cached is not None:
        return cached
    tok = lm.tokenizer
    special = set(getattr(tok, "all_special_ids", []) or [])
    found: dict[int, list[int]] = {s: [] for s in SCORES}
    for token, index in tok.get_vocab().items():
        if index in special or len(token) > 4:
            continue
        text = tok.convert_tokens_to_string([token]).strip().lstrip("▁Ġ").strip()
        if len(text) == 1 and text in "12345":
            found[int(text)].append(int(index))
    missing = [s for s, ids in found.items() if not ids]
    if missing:
        raise ValueError(f"judge={lm.name!r}: its vocabulary has no token for the score(s) {missing}; expected an LM whose "
                         "tokenizer writes each digit 1-5 as a token (or judge_method='generate')")
    lm._score_token_ids = {s: sorted(ids) for s, ids in found.items()}
    return lm._score_token_ids


def probability_scores(lm, prompts: list, texts=None, batch_size: int = 8, progress: bool = False) -> dict:
    """The judge's reading of each prompt from its next-token probabilities (see the module docstring):
    ``score`` (expected score, 1-5), ``entropy`` (nats), ``distribution`` ([n, 5], summing to 1) and ``score_mass``
    (the probability of any score token before renormalising: how much the judge answers with a score at all)."""
    from textxai.lm import next_token_probs

    ids = score_token_ids(lm)
    flat = [i for s in SCORES for i in ids[s]]
    probs = next_token_probs(lm, prompts, flat, texts=texts, batch_size=batch_size, progress=progress)
    per_score = np.zeros((len(prompts), len(SCORES)))
    pos = 0
    for k, s in enumerate(SCORES):
        per_score[:, k] = probs[:, pos: pos + len(ids[s])].sum(axis=1)
        pos += len(ids[s])
    mass = per_score.sum(axis=1)
    dist = per_score / np.where(mass > 0, mass, 1.0)[:, None]
    dist[mass <= 0] = 1.0 / len(SCORES)  # an LM that gives every score token probability 0 (underflow): uniform
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(dist > 0, dist * np.log(dist), 0.0).sum(axis=1)
    return {"score": dist @ np.array(SCORES, dtype=np.float64), "entropy": entropy, "distribution": dist,
            "score_mass": mass}


def judge_quality(texts, judge, topic: str = "movie review", device=None, max_new_tokens: int = MAX_NEW_TOKENS,
                  progress: bool = False, generate_kwargs=None, seed: int = 0, batch_size: int = 8,
                  method: str = "auto") -> dict:
    """Ask ``judge`` CEval's four questions about every text (one text per prompt); per-aspect score arrays and counts.

    ``judge``: a causal LM (see ``_load_causal_lm``; a ``(model, tokenizer)`` pair or a loaded ``CausalLM`` for a model
    with its own tokenizer) or a callable ``list[str] prompts -> list[str] replies``.
    ``method``: ``"auto"`` reads an LM from its probabilities (:func:`probability_scores`; the result's
    ``"entropy"``, ``"distribution"`` and ``"score_mass"`` hold per aspect what it read, ``num_unparsed`` is 0)
    and a callable from its parsed replies; ``"generate"`` asks an LM to generate a reply and parses it
    (CEval's reading: greedy unless ``generate_kwargs`` says otherwise, e.g. CEval's
    ``{"do_sample": True, "top_k": 50, "temperature": 0.7}``, repeatable under ``seed``).
    ``result["method"]`` says which reading was used. Only the reply is parsed, never the prompt, by :func:`parse_score`; an unparsed reply is NaN,
    counted in ``num_unparsed`` and listed with its raw text in ``unparsed`` (``(aspect, text index, reply)``);
    when more than half the replies are unparsed, ``warning`` says so (the judge does not answer the question).

    >>> out = judge_quality(["Nice film."], lambda prompts: ["4"] * len(prompts))
    >>> out["grammar"].tolist(), out["num_unparsed"], out["warning"]
    ([4.0], 0, None)
    >>> print(judge_quality(["Nice film."], lambda prompts: ["1-5"] * len(prompts))["warning"])
    the judge left 4 of its 4 replies unparsed (no single score 1-5 in them, e.g. '1-5'): its text-quality scores are not reliable
    """
    texts = check_list(texts, "texts", allow_empty=True)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}]={short_repr(text)} ({type(text).__name__}): expected a string")
    check_judge(judge, topic, max_new_tokens, generate_kwargs)
    check_positive_int(batch_size, "batch_size")
    if method not in JUDGE_METHODS:
        raise ValueError(f"judge_method={short_repr(method)}: expected one of {list(JUDGE_METHODS)}")
    callable_judge = is_callable_judge(judge)
    if method == "auto":
        method = "parsed_replies" if callable_judge else "probabilities"
    if callable_judge and method != "parsed_replies":
        raise ValueError(f"judge_method={method!r}: the judge is a callable prompts -> replies, without logits; expected "
                         "'auto' or 'parsed_replies' (or a causal LM as the judge)")
    if not callable_judge and method == "parsed_replies":
        method = "generate"
    if method == "probabilities":
        if generate_kwargs:
            raise ValueError(f"judge_generate_kwargs={short_repr(dict(generate_kwargs))}: the judge is read from its "
                             "probabilities and generates nothing; expected None, or judge_method='generate'")
        return _judge_by_probabilities(texts, _load_causal_lm(judge, None, device), topic, batch_size, progress)
    if callable_judge:
        def ask(prompts):
            return call_user(judge, "judge", f"the {aspect!r} prompts of {len(prompts)} texts", prompts)
    else:
        generator = _GenerativeJudge(judge, device=device, max_new_tokens=max_new_tokens,
                                     generate_kwargs=generate_kwargs, seed=seed, batch_size=batch_size)

        def ask(prompts):
            return generator(prompts, progress=progress, texts=texts)

    out: dict = {"method": method, "prompts": {}, "replies": {}, "unparsed": []}
    for aspect in QUALITY_ASPECTS:
        prompts = [quality_prompt(t, aspect, topic) for t in texts]
        replies = ask(prompts) if prompts else []
        if isinstance(replies, (str, bytes)) or not hasattr(replies, "__len__"):
            raise TypeError(f"judge returned {short_repr(replies)} ({type(replies).__name__}) for {len(prompts)} prompts: "
                            "expected a list of reply strings, one per prompt")
        replies = list(replies)
        if len(replies) != len(prompts):
            raise ValueError(f"judge returned {len(replies)} replies for {len(prompts)} prompts: expected one reply per prompt")
        scores = np.array([parse_score(r) for r in replies], dtype=np.float64)
        out["unparsed"] += [(aspect, i, replies[i]) for i in np.where(np.isnan(scores))[0].tolist()]
        out[aspect] = scores
        out["prompts"][aspect] = prompts
        out["replies"][aspect] = replies
    out["num_unparsed"] = len(out["unparsed"])
    out["warning"] = judge_warning(out["num_unparsed"], len(texts) * len(QUALITY_ASPECTS), out["unparsed"])
    return out


def _judge_by_probabilities(texts: list, lm, topic: str, batch_size: int, progress: bool) -> dict:
    """:func:`judge_quality` read from ``lm``'s next-token probabilities (:func:`probability_scores`), per aspect."""
    out = {"method": "probabilities", "prompts": {}, "entropy": {}, "distribution": {}, "score_mass": {},
           "replies": {}, "unparsed": [], "num_unparsed": 0, "warning": None}
    for aspect in QUALITY_ASPECTS:
        prompts = [quality_prompt(t, aspect, topic) for t in texts]
        read = probability_scores(lm, prompts, texts, batch_size, progress) if prompts else \
            {"score": np.zeros(0), "entropy": np.zeros(0), "distribution": np.zeros((0, 5)), "score_mass": np.zeros(0)}
        out[aspect] = read["score"]
        out["prompts"][aspect] = prompts
        for key in ("entropy", "distribution", "score_mass"):
            out[key][aspect] = read[key]
    return out


def judge_warning(unparsed: int, total: int, examples=()) -> str | None:
    """The warning of a judge that left more than half of its ``total`` replies unparsed, else None."""
    if total == 0 or 2 * unparsed <= total:
        return None
    shown = ", ".join(list(dict.fromkeys(repr(one_line(r, 60)) for _, _, r in examples))[:2])
    listed = sum(1 for _, _, r in examples if isinstance(r, str) and _NUMBERING.search(r))
    lists = f"; {listed} of them open a numbered list ('1. The ...'), whose numbers are not scores" if listed else ""
    return (f"the judge left {unparsed} of its {total} replies unparsed (no single score 1-5 in them"
            f"{', e.g. ' + shown if shown else ''}{lists}): its text-quality scores are not reliable")
