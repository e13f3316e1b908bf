"""A counterfactual editor that asks an instruct language model for a minimal edit flipping the text's label.

:class:`LLMEditor` (``editor="llm"``) is the editor of the LLM era the papers study: CEval benchmarks
LLaMA-2 prompted "with simple one-shot learning", Counterfactuals of Counterfactuals feeds editors their
own output. For each text the classifier gives the current label and the target (the runner-up class, or
the one asked for); the LM gets CEval's one-shot request (:func:`edit_messages`, ``prompt="ceval"``: its
wording and its IMDb example pair, the example sent as a previous chat turn), through the tokenizer's chat
template when there is one. Decoding is greedy unless ``do_sample=True`` (then seeded per text), batched
with the KV cache (:func:`textxai.lm.generate`), with at most ``1.5 x the text's tokens + 8`` new tokens (and half the LM's context).

The reply is cleaned to the rewritten text only (:func:`clean_reply`: the label prefix "Negative:", CEval's
``[Start Edited Text]`` markers, quotes, a "Here is ..." line, anything after a blank line); a reply that is
empty, identical to the input, or not a rewrite of it (under a quarter of its words kept) is a **failed
generation**: the editor returns no candidate for that text, never the input itself (a no-op is not a
counterfactual). ``editor.failures`` counts them per reason; ``editor.replies`` keeps the raw replies of
the last call, ``editor.log`` every ``(input, raw reply, failure reason or None)``. ``num_candidates=k`` asks
for ``k`` distinct rewrites per text (the first decoded as set, the others sampled under the seed).

>>> clean_reply("Negative: The film was dull.", "The film was great.")
'The film was dull.'
>>> clean_reply("[Start Edited Text]\\nThe film was great.\\n[End Edited Text]", "The film was great.") is None
True
>>> failure_reason("Sure! I can help with that.", "The film was great and the cast superb.")
'not a rewrite'
"""
from __future__ import annotations

import re
import weakref
from collections import Counter

from textxai.validation import check_positive_int, check_texts, short_repr

#: CEval's one-shot example (its LLaMA-2 generation prompt for IMDb): the same review in both sentiments.
CEVAL_EXAMPLE = {"negative": "Long, boring, blasphemous. Never have I been so glad to see ending credits roll.",
                 "positive": "Long, fascinating, soulful. Never have I been so sad to see ending credits roll."}
PROMPTS = ("ceval", "zero_shot")
FAILURES = ("empty", "identical", "not a rewrite")


def edit_request(text: str, label: str, target: str, task: str = "sentiment") -> str:
    """CEval's request for one text: change it with minimal edits from ``label`` to ``target``.

    >>> print(edit_request("A dull film.", "negative", "positive"))
    Request: Given a piece of text with the original sentiment in the form of "Sentiment: Text". Change the text with minimal edits to get the Positive sentiment from the Negative sentiment. Do not make any unnecessary changes.
    Negative: A dull film.
    Target: Positive
    """
    name, was, new = task.capitalize(), label.capitalize(), target.capitalize()
    return (f'Request: Given a piece of text with the original {task} in the form of "{name}: Text". Change the text '
            f"with minimal edits to get the {new} {task} from the {was} {task}. Do not make any unnecessary changes.\n"
            f"{was}: {text}\nTarget: {new}")


def edit_messages(text: str, label: str, target: str, prompt="ceval", task: str = "sentiment") -> list[dict]:
    """The chat turns asking for the edit: ``"ceval"`` (CEval's one-shot request; its example as a previous
    exchange when the labels are its two sentiments), ``"zero_shot"`` (the request alone), or a callable
    ``(text, label, target) -> str`` (a user message of your own)."""
    if callable(prompt):
        reply = prompt(text, label, target)
        if not isinstance(reply, str) or not reply.strip():
            raise ValueError(f"prompt returned {short_repr(reply)}: expected a non-empty user message string")
        return [{"role": "user", "content": reply}]
    turns = []
    pair = (label.lower(), target.lower())
    if prompt == "ceval" and set(pair) == set(CEVAL_EXAMPLE):
        turns = [{"role": "user", "content": edit_request(CEVAL_EXAMPLE[pair[0]], label, target, task)},
                 {"role": "assistant", "content": f"{target.capitalize()}: {CEVAL_EXAMPLE[pair[1]]}"}]
    return turns + [{"role": "user", "content": edit_request(text, label, target, task)}]


_MARKER = re.compile(r"\[(?:start|end)[^\]]*\]|#{3,}.*", re.IGNORECASE)
_PREFIX = re.compile(r"^(?:(?:edited|rewritten|new|revised)\s+(?:text|review|version)|text|review|"
                     r"positive|negative|neutral|[A-Z][a-z]+ sentiment)\s*:\s*", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9']+")


def _normal(text: str) -> str:
    return " ".join(text.split())


def _strip_reply(reply: str, labels=()) -> str:
    """The rewrite inside a reply: markers, label prefixes, a lead-in line, quotes and any later paragraph removed."""
    text = _MARKER.sub("\n\n", reply or "").strip()
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    while len(paragraphs) > 1 and paragraphs[0].endswith(":"):
        paragraphs.pop(0)                      # "Sure! Here is the edited review:"
    lines = [line.strip() for line in (paragraphs[0] if paragraphs else "").splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        lines = lines[1:]
    text = " ".join(lines)
    for _ in range(2):
        text = _PREFIX.sub("", text).strip()
        for label in labels:
            if text.lower().startswith(f"{label.lower()}:"):
                text = text[len(label) + 1:].strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def failure_reason(rewrite: str, text: str) -> str | None:
    """Why a cleaned rewrite is not a counterfactual of ``text`` (one of :data:`FAILURES`), None when it is one."""
    if not rewrite.strip():
        return "empty"
    if _normal(rewrite) == _normal(text):
        return "identical"
    words, kept = set(_WORD.findall(text.lower())), set(_WORD.findall(rewrite.lower()))
    if words and len(words & kept) < 0.25 * len(words):
        return "not a rewrite"
    return None


def clean_reply(reply: str, text: str, labels=()) -> str | None:
    """The rewritten text of an LM reply, or None when the reply is not a counterfactual of ``text``."""
    rewrite = _strip_reply(reply, labels)
    return None if failure_reason(rewrite, text) else rewrite


class LLMEditor:
    """Counterfactual editor ``list[str] -> list[list[str]]`` by an instruct LM (see the module docstring).

    ``classifier``: gives each text's label and the target class (its ``labels`` names are put in the prompt);
    ``lm``: any form :func:`textxai.lm.as_lm` takes (default: the packaged SmolLM2-135M-Instruct);
    ``prompt``: ``"ceval"`` (default), ``"zero_shot"`` or a callable ``(text, label, target) -> str``;
    ``target``: a class index to edit towards (default the runner-up class of each text);
    ``do_sample`` / ``seed``: seeded sampling instead of greedy decoding; ``task``: the word for what the
    labels are ("sentiment"); ``num_candidates``: rewrites asked per text (default 1). The first is decoded as
    set (greedy by default); each further one is sampled with CEval's settings (:data:`SAMPLING`) under its own
    seed (``seed + j * 1_000_003``, repeatable), as CEval's two LLaMA-2 counterfactuals per review; failed
    rewrites and repeats of an earlier one (counted as ``"duplicate"``) are dropped, so a text gives at most
    ``num_candidates`` distinct candidates. ``replies`` keeps the first round's raw replies, ``log`` all.
    """

    name = "llm"

    def __init__(self, classifier, lm=None, prompt="ceval", target: int | None = None, do_sample: bool = False,
                 seed: int = 0, batch_size: int = 8, progress: bool = False, task: str = "sentiment",
                 num_candidates: int = 1):
        from textxai.classifier import as_classifier
        from textxai.lm import PACKAGED_LM, as_lm

        if not callable(prompt) and prompt not in PROMPTS:
            raise ValueError(f"prompt={short_repr(prompt)}: expected one of {list(PROMPTS)} or a callable "
                             "(text, label, target) -> str")
        if not isinstance(task, str) or not task.strip():
            raise ValueError(f"task={short_repr(task)}: expected a word such as 'sentiment'")
        # a TextClassifier's input, or any object with predict_proba (and num_labels, labels) used as it is
        self.classifier = classifier if hasattr(classifier, "predict_proba") else as_classifier(classifier)
        if target is not None and (isinstance(target, bool) or not isinstance(target, int)
                                   or not 0 <= target < self.classifier.num_labels):
            raise ValueError(f"target={short_repr(target)}: expected None or a class index in "
                             f"[0, {self.classifier.num_labels})")
        self.lm = as_lm(PACKAGED_LM if lm is None else lm)
        self.prompt, self.target, self.task = prompt, target, task
        self.do_sample, self.seed = bool(do_sample), int(seed)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.num_candidates = check_positive_int(num_candidates, "num_candidates")
        self.progress = bool(progress)
        self.failures: Counter = Counter()
        self.replies: list[str] = []
        self.log: list[tuple[str, str, str | None]] = []  # (input, raw reply, failure reason or None), every call

    def __repr__(self) -> str:
        return f"LLMEditor({self.classifier!r}, lm={self.lm.name!r}, prompt={self.prompt!r})"

    def _label_names(self) -> dict[int, str]:
        names = dict(getattr(self.classifier, "labels", {}) or {})
        return {i: str(names.get(i, f"class {i}")) for i in range(self.classifier.num_labels)}

    def __call__(self, texts) -> list[list[str]]:
        import numpy as np

        from textxai.lm import new_token_limit

        texts = check_texts(texts)
        if not texts:
            return []
        probs = _checked_probs(self.classifier, texts)
        names = self._label_names()
        messages, limits = [], []
        for text, p in zip(texts, probs):
            current = int(np.argmax(p))
            target = self.target if self.target is not None and self.target != current else \
                int(np.argsort(-p, kind="stable")[1])
            messages.append(edit_messages(text, names[current], names[target], self.prompt, self.task))
            limits.append(new_token_limit(self.lm, text, cap=min(256, self.lm.max_length // 2)))  # room for the prompt
        rounds = [_cached_generate(self.lm, messages, limits, self.do_sample, self.seed, self.batch_size, self.progress)]
        for j in range(1, self.num_candidates):  # further candidates: sampled, each round under its own seeds
            rounds.append(_cached_generate(self.lm, messages, limits, True, self.seed + j * _ROUND_SEEDS,
                                           self.batch_size, self.progress))
        self.replies = list(rounds[0])
        out: list[list[str]] = [[] for _ in texts]
        for replies in rounds:
            for i, (text, reply) in enumerate(zip(texts, replies)):
                rewrite = _strip_reply(reply, names.values())
                reason = failure_reason(rewrite, text)
                if reason is None and any(_normal(rewrite) == _normal(c) for c in out[i]):
                    reason = "duplicate"
                self.failures[reason or "ok"] += 1
                self.log.append((text, reply, reason))
                if reason is None:
                    out[i].append(rewrite)
        return out


def _checked_probs(classifier, texts: list[str]):
    """``classifier.predict_proba(texts)`` as ``[n, num_labels]`` finite rows (a classifier object of one's own may
    return NaN, which argmax would read as class 0)."""
    import numpy as np

    probs = np.asarray(classifier.predict_proba(texts), dtype=np.float64)
    if probs.shape != (len(texts), classifier.num_labels):
        raise ValueError(f"classifier.predict_proba returned shape {probs.shape} for {len(texts)} texts: expected "
                         f"({len(texts)}, {classifier.num_labels})")
    bad = int((~np.isfinite(probs)).any(axis=1).sum())
    if bad:
        raise ValueError(f"classifier.predict_proba returned non-finite probabilities for {bad} of {len(texts)} texts: "
                         "expected finite probabilities (a diverged model?)")
    return probs


#: Sampling settings of CEval's generation and judge (``do_sample=True, top_k=50, temperature=0.7``).
SAMPLING = {"top_k": 50, "temperature": 0.7}
#: Seed offset between rounds of candidates (text i of round j is sampled under ``seed + j * _ROUND_SEEDS + i``).
_ROUND_SEEDS = 1_000_003
#: model -> {(prompt, bound): greedy reply}; weak: a freed model's replies go with it (an id() key was reused by the
#: next model loaded at the same address, which then got the old model's edits)
_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MEMO_SIZE = 4096


def _cached_generate(lm, messages, limits, do_sample, seed, batch_size, progress) -> list[str]:
    """:func:`textxai.lm.generate`, greedy replies remembered per (model, prompt, bound) in this process: the
    demo's inconsistency and CEval sections, and a feedback chain that returns to a text, ask for the same edit."""
    from textxai.lm import generate

    if do_sample:  # seeded per position in the call: not memoised
        return generate(lm, messages, limits, do_sample=True, seed=seed, batch_size=batch_size, progress=progress,
                        generate_kwargs=SAMPLING)
    memo = _MEMO.setdefault(lm.model, {})
    keys = [(repr(m), n) for m, n in zip(messages, limits)]
    found = {k: memo[k] for k in keys if k in memo}
    todo = [i for i, k in enumerate(keys) if k not in found]
    if todo:
        replies = generate(lm, [messages[i] for i in todo], [limits[i] for i in todo], batch_size=batch_size,
                           progress=progress)
        if len(memo) + len(todo) > _MEMO_SIZE:
            memo.clear()  # (what this call found is kept in `found`)
        for i, reply in zip(todo, replies):
            found[keys[i]] = memo[keys[i]] = reply
    return [found[k] for k in keys]
