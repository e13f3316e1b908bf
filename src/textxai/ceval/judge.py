"""Text quality by an LLM judge: CEval's four 1-5 questions (grammar, cohesiveness, likability, fluency).

>>> parse_score("I would say 3/5.")
3.0
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from textxai.progress import progress_bar
from textxai.validation import call_user, check_list, check_positive_int, check_same_length, short_repr

QUALITY_ASPECTS = ("grammar", "cohesiveness", "likability", "fluency")
TOPICS = {"text": "movie review", "nli": "natural language inference pair"}


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
        self.max_new_tokens = max_new_tokens  # checked by check_judge
        self.generate_kwargs = {"do_sample": False, **(generate_kwargs or {})}
        self.seed = seed
        self.model, self.tokenizer = _load_causal_lm(judge, tokenizer, device)
        self.device = next(self.model.parameters()).device

    def __call__(self, prompts: list[str], progress: bool = False) -> list[str]:
        import torch

        from textxai.classifier import frozen_eval

        tok = self.tokenizer
        replies: list[str] = []
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if pad_id is None:
            pad_id = 0
        # one prompt at a time: no padding, so a reply never depends on the other prompts
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


def is_callable_judge(judge) -> bool:
    """A plain callable ``prompts -> replies`` (not a model, pipeline or ``CausalLM``)."""
    return callable(judge) and not hasattr(judge, "generate") and not hasattr(judge, "tokenizer")


def check_judge(judge, topic=None, max_new_tokens: int = 4, generate_kwargs=None) -> None:
    """Every check of the judge's settings, before any prompt is built (``topic`` None: the default)."""
    if judge is None:
        raise ValueError("judge=None: expected a causal LM (id, folder, (model, tokenizer)) or a callable prompts -> replies")
    check_positive_int(max_new_tokens, "max_new_tokens")
    if generate_kwargs is not None and not isinstance(generate_kwargs, Mapping):
        raise TypeError(f"judge_generate_kwargs={short_repr(generate_kwargs)}: expected a dict of generate() options")
    if topic is not None and (not isinstance(topic, str) or not topic.strip()):
        raise ValueError(f"judge_topic={short_repr(topic)}: expected a non-empty string such as 'movie review'")
    if not is_callable_judge(judge) and not isinstance(judge, (str, tuple)) \
            and not hasattr(judge, "generate") and not hasattr(judge, "tokenizer"):
        raise TypeError(f"judge={short_repr(judge)} ({type(judge).__name__}): expected a causal LM "
                        "(id, folder, (model, tokenizer), pipeline) or a callable prompts -> replies")


def judge_quality(texts, judge, topic: str = "movie review", tokenizer=None, device=None, max_new_tokens: int = 4,
                  progress: bool = False, indices=None, generate_kwargs=None, seed: int = 0) -> dict:
    """Ask ``judge`` CEval's four questions about every text; returns per-aspect score arrays and counts.

    ``judge``: a callable ``list[str] prompts -> list[str] replies`` or a causal LM (see ``_load_causal_lm``),
    decoded greedily unless ``generate_kwargs`` says otherwise (e.g. CEval's ``{"do_sample": True,
    "top_k": 50, "temperature": 0.7}``, repeatable under ``seed``). Unparseable replies become NaN and are
    counted in ``num_unparsed``. Prompts are asked one at a time (no padding), so a reply never depends on
    the other texts.

    >>> out = judge_quality(["Nice film."], lambda prompts: ["4"] * len(prompts))
    >>> out["grammar"].tolist(), out["num_unparsed"]
    ([4.0], 0)
    """
    texts = check_list(texts, "texts", allow_empty=True)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}]={short_repr(text)} ({type(text).__name__}): expected a string")
    indices = list(range(len(texts))) if indices is None else list(indices)
    check_same_length(texts, indices, "texts", "indices")
    check_judge(judge, topic, max_new_tokens, generate_kwargs)
    if is_callable_judge(judge):
        def ask(prompts):
            return call_user(judge, "judge", f"the {aspect!r} prompts of {len(prompts)} texts", prompts)
    else:
        generator = _GenerativeJudge(judge, tokenizer=tokenizer, device=device, max_new_tokens=max_new_tokens,
                                     generate_kwargs=generate_kwargs, seed=seed)

        def ask(prompts):
            return generator(prompts, progress=progress)

    out: dict = {"prompts": {}, "replies": {}}
    unparsed = 0
    for aspect in QUALITY_ASPECTS:
        prompts = [quality_prompt(t, aspect, topic, i) for t, i in zip(texts, indices)]
        replies = ask(prompts) if prompts else []
        if isinstance(replies, (str, bytes)) or not hasattr(replies, "__len__"):
            raise TypeError(f"judge returned {short_repr(replies)} ({type(replies).__name__}) for {len(prompts)} prompts: "
                            "expected a list of reply strings, one per prompt")
        replies = list(replies)
        if len(replies) != len(prompts):
            raise ValueError(f"judge returned {len(replies)} replies for {len(prompts)} prompts: expected one reply per prompt")
        scores = np.array([parse_score(r) for r in replies], dtype=np.float64)
        unparsed += int(np.isnan(scores).sum())
        out[aspect] = scores
        out["prompts"][aspect] = prompts
        out["replies"][aspect] = replies
    out["num_unparsed"] = unparsed
    return out
