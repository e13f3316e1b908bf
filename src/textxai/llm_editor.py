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
PROMPTS = ("ceval", "minimal", "zero_shot")
#: What the audit, the Spaces and ``textxai run inconsistency --editor llm`` use: k candidates (the first greedy, the
#: others sampled), the classifier choosing among them (bench/bench_llm_editor.py measures k = 1, 4, 8).
DEFAULTS = {"num_candidates": 4, "prompt": "ceval"}
FAILURES = ("empty", "identical", "not a rewrite", "about the task")


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


def minimal_request(text: str, label: str, target: str, task: str = "sentiment") -> str:
    """The minimal-edit request: change at most a few words so the ``task`` becomes ``target``, keep the rest verbatim.

    >>> print(minimal_request("A dull film.", "negative", "positive"))
    Change at most three words of the text below so that its sentiment becomes positive instead of negative. Keep every other word exactly as it is. Reply with the changed text only.
    Text: A dull film.
    """
    return (f"Change at most three words of the text below so that its {task} becomes {target.lower()} instead of "
            f"{label.lower()}. Keep every other word exactly as it is. Reply with the changed text only.\nText: {text}")


def edit_messages(text: str, label: str, target: str, prompt="ceval", task: str = "sentiment") -> list[dict]:
    """The chat turns asking for the edit: ``"ceval"`` (CEval's one-shot request; its example as a previous
    exchange when the labels are its two sentiments), ``"minimal"`` (:func:`minimal_request`, with CEval's example
    pair as a previous exchange likewise), ``"zero_shot"`` (CEval's request alone), or a callable
    ``(text, label, target) -> str`` (a user message of your own)."""
    if callable(prompt):
        reply = prompt(text, label, target)
        if not isinstance(reply, str) or not reply.strip():
            raise ValueError(f"prompt returned {short_repr(reply)}: expected a non-empty user message string")
        return [{"role": "user", "content": reply}]
    turns = []
    pair = (label.lower(), target.lower())
    if prompt == "minimal":
        if set(pair) == set(CEVAL_EXAMPLE):
            turns = [{"role": "user", "content": minimal_request(CEVAL_EXAMPLE[pair[0]], label, target, task)},
                     {"role": "assistant", "content": CEVAL_EXAMPLE[pair[1]]}]
        return turns + [{"role": "user", "content": minimal_request(text, label, target, task)}]
    if prompt == "ceval" and set(pair) == set(CEVAL_EXAMPLE):
        turns = [{"role": "user", "content": edit_request(CEVAL_EXAMPLE[pair[0]], label, target, task)},
                 {"role": "assistant", "content": f"{target.capitalize()}: {CEVAL_EXAMPLE[pair[1]]}"}]
    return turns + [{"role": "user", "content": edit_request(text, label, target, task)}]


_MARKER = re.compile(r"\[(?:start|end)[^\]]*\]|#{3,}.*", re.IGNORECASE)
_PREFIX = re.compile(r"^(?:(?:edited|rewritten|new|revised)\s+(?:text|review|version)|text|review|"
                     r"positive|negative|neutral|[A-Z][a-z]+ sentiment)\s*:\s*", re.IGNORECASE)
#: a word: a run of letters / digits in any script; each CJK / kana / hangul character and each symbol (emoji) alone
_WORD = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]|[^\W_]+(?:'[^\W_]+)*|[^\w\s]")
#: words of the request itself: a reply that brings them in (and the text did not have them) talks about the task
_TASK_WORDS = frozenset({"sentiment", "request", "target", "edited", "rewritten", "minimal", "edits"})


def words_of(text: str) -> list[str]:
    """The words the rewrite check compares (any script; CJK characters and emoji one by one; no punctuation).

    >>> words_of("Great film, 好看! 👍👍"), words_of("فيلم رائع")
    (['great', 'film', '好', '看', '👍', '👍'], ['فيلم', 'رائع'])
    """
    import unicodedata

    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 or not unicodedata.category(w).startswith("P")]


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
    words, kept = set(words_of(text)), set(words_of(rewrite))
    if words and len(words & kept) < 0.25 * len(words) or not words and not set(rewrite.split()) & set(text.split()):
        return "not a rewrite"
    if (kept - words) & _TASK_WORDS:
        return "about the task"
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
    set (greedy by default); the other ``k - 1`` are sampled with CEval's settings (:data:`SAMPLING`) in one
    batched call per text under the text's own seed (:func:`text_seed`: repeatable, independent of the other
    texts); failed rewrites (:func:`failure_reason`) and repeats of an earlier one (``"duplicate"``) are
    dropped, so a text gives at most ``num_candidates`` distinct candidates. ``rank`` (default True): the
    classifier chooses: candidates are returned in the order of :meth:`choose` (those that flip it first, each
    group closest to the text first), so the first is the chosen counterfactual. ``replies`` keeps the first
    candidates' raw replies, ``log`` all, ``cost`` the prompts, replies and new-token bounds asked.
    """

    name = "llm"
    #: the classifier picks among the candidates (flipping first, then the smallest word distance); set False on an
    #: instance to get every candidate in the LM's order
    rank = True

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
        #: what the calls asked of the LM: prompts, replies asked (k per prompt), the bound on new tokens they allowed
        self.cost: Counter = Counter()

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
        seeds = [text_seed(self.seed, text) for text in texts]
        first = _cached_generate(self.lm, messages, limits, self.do_sample, seeds, self.batch_size, self.progress, texts)
        more = (_cached_sample(self.lm, messages, limits, self.num_candidates - 1, seeds, self.progress, texts)
                if self.num_candidates > 1 else [[] for _ in texts])
        self.replies = list(first)
        self.cost["prompts"] += len(texts)
        self.cost["replies"] += len(texts) * self.num_candidates
        self.cost["new_token_bound"] += sum(limits) * self.num_candidates
        out: list[list[str]] = [[] for _ in texts]
        for i, text in enumerate(texts):
            for reply in [first[i]] + list(more[i]):
                rewrite = _strip_reply(reply, names.values())
                reason = failure_reason(rewrite, text)
                if reason is None and any(_normal(rewrite) == _normal(c) for c in out[i]):
                    reason = "duplicate"
                self.failures[reason or "ok"] += 1
                self.log.append((text, reply, reason))
                if reason is None:
                    out[i].append(rewrite)
        return [self.choose(text, cands, p) for text, cands, p in zip(texts, out, probs)] if self.rank else out

    def choose(self, text: str, candidates: list[str], probs=None) -> list[str]:
        """``candidates`` ordered by the selection rule of the inconsistency paper (as
        :func:`textxai.inconsistency.feedback_chains` applies it): those that flip the classifier's prediction of
        ``text`` first, each group by word distance to ``text`` (spaCy words), ties in the order generated; the
        first is the chosen counterfactual. One classifier call for all of them."""
        import numpy as np

        from textxai.words import tokenize, word_distance

        if len(candidates) < 2:
            return list(candidates)
        if probs is None:
            probs = _checked_probs(self.classifier, [text])[0]
        labels = np.argmax(_checked_probs(self.classifier, list(candidates)), axis=1)
        words = tokenize(text)
        key = [(int(labels[j] == int(np.argmax(probs))), word_distance(words, tokenize(c)), j)
               for j, c in enumerate(candidates)]
        return [candidates[j] for _, _, j in sorted(key)]


def text_seed(seed: int, text: str) -> int:
    """The sampling seed of one text: ``seed`` mixed with the text's CRC-32, so a text's candidates do not depend on
    the other texts of the call, their order or the batch (a feedback chain calls the editor on varying lists).

    >>> text_seed(0, "a") == text_seed(0, "a") != text_seed(1, "a")
    True
    """
    import zlib

    return (int(seed) * 1_000_003 + zlib.crc32(text.encode("utf-8", "surrogatepass"))) % (2 ** 63)


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
#: model -> {(weights digest, prompt, bound, ...): replies}; weak: a freed model's replies go with it (an id() key was
#: reused by the next model loaded at the same address, which then got the old model's edits)
_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MEMO_SIZE = 4096


def _memoised(lm, keys: list, compute) -> list:
    """Values for ``keys`` from the per-model memo, keyed by the weights' content too
    (:func:`textxai.classifier.content_digest`: read once, then remembered while no tensor changes; an optimizer step
    or ``load_state_dict`` of other values is another key), ``compute(indices)`` for the rest."""
    from textxai.classifier import content_digest

    memo = _MEMO.setdefault(lm.model, {})
    stamp = content_digest(lm.model)
    keys = [(stamp,) + tuple(k) for k in keys]
    found = {k: memo[k] for k in keys if k in memo}
    todo = [i for i, k in enumerate(keys) if k not in found]
    if todo:
        values = compute(todo)
        if len(memo) + len(todo) > _MEMO_SIZE:
            memo.clear()  # (what this call found is kept in `found`)
        for i, value in zip(todo, values):
            found[keys[i]] = memo[keys[i]] = value
    return [found[k] for k in keys]


def _cached_generate(lm, messages, limits, do_sample, seeds, batch_size, progress, texts=None) -> list[str]:
    """The first candidate of each text (:func:`textxai.lm.generate`; greedy unless ``do_sample``, then under the
    text's seed), remembered per (model weights, prompt, bound, seed) in this process: the demo's inconsistency and
    CEval sections, and a feedback chain that returns to a text, ask for the same edit."""
    from textxai.lm import generate, sample

    def compute(todo):
        some = None if texts is None else [texts[i] for i in todo]
        if do_sample:
            return [r[0] for r in sample(lm, [messages[i] for i in todo], 1, [limits[i] for i in todo],
                                         [seeds[i] for i in todo], some, SAMPLING, progress, "paragraph")]
        return generate(lm, [messages[i] for i in todo], [limits[i] for i in todo], batch_size=batch_size,
                        progress=progress, texts=some, stop="paragraph")

    return _memoised(lm, [(repr(m), n, do_sample and s) for m, n, s in zip(messages, limits, seeds)], compute)


def _cached_sample(lm, messages, limits, n, seeds, progress, texts) -> list[list[str]]:
    """``n`` sampled candidates per text (:func:`textxai.lm.sample`, CEval's :data:`SAMPLING`), one batched call per
    text under its seed; each remembered by its index (a reply does not depend on how many are asked): ``k = 8``
    after ``k = 4`` samples only the 4 new ones."""
    from textxai.lm import sample

    keys = [(repr(m), b, "sampled", j, s) for m, b, s in zip(messages, limits, seeds) for j in range(n)]

    def compute(todo):
        first: dict = {}
        for index in todo:
            first.setdefault(index // n, index % n)   # todo is in order: each text's first missing reply
        made: dict = {}
        for start in sorted(set(first.values())):
            some = [i for i in first if first[i] == start]
            extra = {"start": start} if start else {}
            replies = sample(lm, [messages[i] for i in some], n - start, [limits[i] for i in some],
                             [seeds[i] + 1 for i in some], [texts[i] for i in some], SAMPLING, progress, "paragraph",
                             **extra)
            for i, reps in zip(some, replies):
                for j, reply in enumerate(reps, start):
                    made[i * n + j] = reply
        return [made[index] for index in todo]

    flat = _memoised(lm, keys, compute)
    return [flat[i * n:(i + 1) * n] for i in range(len(messages))]
