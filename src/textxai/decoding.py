"""How a causal LM is asked: prompts through its chat template with user text kept plain, and the batched decoding
under :func:`textxai.lm.generate` / :func:`textxai.lm.sample` (left padding, a prompt read once for its rows, each
sampled row drawn by its own seeded generator, replies stopped after their first paragraph). Works on a loaded
:class:`textxai.lm.CausalLM` (anything with ``model``, ``tokenizer``, ``device``, ``max_length``, ``name``); the
public names are importable from :mod:`textxai.lm` too."""
from __future__ import annotations

import re
import warnings

import torch

from textxai.batching import charge
from textxai.classifier import frozen_eval
from textxai.validation import short_repr


def has_chat_template(lm) -> bool:
    """Whether the LM's tokenizer has a chat template (instruct models)."""
    return bool(getattr(lm.tokenizer, "chat_template", None))


def chat_text(lm, messages) -> str:
    """The prompt text of ``messages`` (a user message string, or a list of ``{"role", "content"}`` turns) through
    the tokenizer's chat template, ending where the assistant's reply starts; without a template the turns'
    contents joined by blank lines (a plain completion prompt; a string stays as it is)."""
    turns = [{"role": "user", "content": messages}] if isinstance(messages, str) else list(messages)
    if has_chat_template(lm):
        return lm.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
    return messages if isinstance(messages, str) else "\n\n".join(t["content"] for t in turns) + "\n"


_SLOT = "\ue000textxai-slot-{}\ue001"  # private-use characters: no chat template or user text writes them


def _content_ids(tok, content: str) -> list[int]:
    """Ids of message content: special-token strings in it (``<|im_end|>``, ``</s>``) are split as ordinary text, so
    a text can never close its turn or open another (control tokens come from the chat template only)."""
    return list(tok(content, add_special_tokens=False, split_special_tokens=True)["input_ids"]) if content else []


def _start_ids(tok) -> list[int]:
    """The tokens a tokenizer writes BEFORE a text (a BOS), not those after it: a prompt continues where it ends
    (RoBERTa-style tokenizers wrap a text in ``<s> ... </s>``; an end token before the reply ends it)."""
    probe = "a"
    full = list(tok(probe, add_special_tokens=True)["input_ids"])
    plain = list(tok(probe, add_special_tokens=False)["input_ids"])
    for start in range(len(full) - len(plain) + 1):
        if full[start:start + len(plain)] == plain:
            return full[:start]
    return []


def encode_prompt(lm, messages, text: str | None = None) -> tuple[list[int], tuple[int, int] | None]:
    """``(ids, span)`` of a prompt (a user message or chat turns) as :func:`chat_text` writes it, the chat template's
    own special tokens as control tokens and everything else -- every message's content above all -- as plain text
    (:func:`_content_ids`): the text between two control tokens is tokenized in one piece, as the template's
    rendering would be, so only user text that holds a special-token string is tokenized differently (split).
    ``span``: where ``text`` (the user text inside the last message holding it) lies in ``ids`` (None when not
    given / not found). Without a chat template: the tokenizer's own start tokens, then the prompt as plain text."""
    tok = lm.tokenizer
    turns = [{"role": "user", "content": messages}] if isinstance(messages, str) else [dict(t) for t in messages]
    contents = [str(t.get("content", "")) for t in turns]
    holder = max((i for i, c in enumerate(contents) if text and text in c), default=None)
    if has_chat_template(lm):
        slotted = [{**t, "content": _SLOT.format(i)} for i, t in enumerate(turns)]
        rendered = tok.apply_chat_template(slotted, tokenize=False, add_generation_prompt=True)
        pieces = re.split(re.escape(_SLOT).replace(r"\{\}", r"(\d+)"), rendered)
        order = [int(x) for x in pieces[1::2]]
        if sorted(order) != list(range(len(turns))):
            raise ValueError(f"the chat template of lm={lm.name!r} does not write each message once, as given; expected a "
                             "template that places every message's content verbatim (or an LM without a chat template)")
        markup, ids = pieces[0::2], []
    else:
        order = list(range(len(turns)))
        markup = [""] + ["\n\n"] * (len(turns) - 1) + ["" if isinstance(messages, str) else "\n"]
        ids = _start_ids(tok)
    specials = sorted({t for t in getattr(tok, "all_special_tokens", []) if t}, key=len, reverse=True)
    split = re.compile("(" + "|".join(map(re.escape, specials)) + ")") if specials else None
    run, span_chars = "", None   # plain text since the last control token; the user text's characters in it

    def flush():
        nonlocal run, span_chars
        span = None
        if span_chars is not None:
            start = len(ids) + len(_content_ids(tok, run[: span_chars[0]]))
            span = (start, len(ids) + len(_content_ids(tok, run[: span_chars[1]])))
        ids.extend(_content_ids(tok, run))
        run, span_chars = "", None
        return span

    found = None
    for k in range(len(markup)):
        for j, part in enumerate(split.split(markup[k]) if split else [markup[k]]):
            if j % 2:                          # a special token the template wrote: a control token
                found = flush() or found
                ids.extend(tok.convert_tokens_to_ids([part]))
            else:
                run += part
        if k < len(order):
            content = contents[order[k]]
            if order[k] == holder:
                at = len(run) + content.rindex(text)
                span_chars = (at, at + len(text))
            run += content
    found = flush() or found
    return ids, found


def _prompt_ids(lm, prompts: list, max_new_tokens: list[int], texts=None, what: str = "prompts") -> list[list[int]]:
    """The prompts' ids, each fitting ``lm.max_length - max_new_tokens``: a prompt too long has its user text (``texts[i]``)
    cut at its end, the instruction around it kept, with one warning per call saying how many; without a known text
    the prompt's start is cut (warned likewise)."""
    out, cut_text, cut_start = [], 0, 0
    for i, (prompt, new) in enumerate(zip(prompts, max_new_tokens)):
        ids, span = encode_prompt(lm, prompt, None if texts is None else texts[i])
        room = lm.max_length - new
        if len(ids) > room > 0:
            over = len(ids) - room
            if span is not None and span[1] - span[0] > over:
                ids = ids[: span[1] - over] + ids[span[1]:]
                cut_text += 1
            else:
                ids = ids[-room:]  # keep the end: the question
                cut_start += 1
        out.append(ids)
    if cut_text:
        warnings.warn(f"{cut_text} of {len(prompts)} {what} were longer than the language model's context of "
                      f"{lm.max_length} tokens (with room for the reply): their text was cut at its end to fit, the "
                      "instruction around it kept", stacklevel=3)
    if cut_start:
        warnings.warn(f"{cut_start} of {len(prompts)} {what} were longer than the language model's context of "
                      f"{lm.max_length} tokens (with room for the reply) even without their text, or had no text "
                      "marked: their start was cut", stacklevel=3)
    return out


#: generate() options textxai sets itself (the prompt, its padding, the reply's length, one reply per prompt)
RESERVED_GENERATE_KWARGS = {"input_ids": "the prompts", "attention_mask": "the prompts", "inputs": "the prompts",
                            "max_new_tokens": "max_new_tokens=", "max_length": "max_new_tokens=",
                            "pad_token_id": "the tokenizer's pad or EOS token",
                            "use_cache": "always on", "num_return_sequences": "one reply per prompt",
                            "return_dict_in_generate": "the reply text"}


def check_generate_kwargs(options, name: str = "generate_kwargs") -> dict:
    """``options`` (a mapping of ``generate()`` options, or None) without the keys textxai sets itself, else a
    ``ValueError`` naming the key (a duplicate was a TypeError inside transformers; ``max_length`` cut every reply).

    >>> check_generate_kwargs({"do_sample": True, "top_k": 50})
    {'do_sample': True, 'top_k': 50}
    """
    from collections.abc import Mapping

    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"{name}={short_repr(options)}: expected a dict of generate() options")
    for key in options:
        if key in RESERVED_GENERATE_KWARGS:
            raise ValueError(f"{name}={short_repr(dict(options))}: {key!r} is set by textxai ({RESERVED_GENERATE_KWARGS[key]}); "
                             "expected other generate() options, such as do_sample, top_k, temperature")
    return dict(options)


def _pad_id(tok) -> int:
    for value in (tok.pad_token_id, tok.eos_token_id):
        if value is not None:
            return int(value)
    return 0


def _first_paragraph_done(text: str) -> bool:
    r"""Whether a reply has written a first paragraph and started another (a blank line after text whose last line is
    not a lead-in ending with ':'): what the editor keeps of a reply is that paragraph, so the rest need not be made.

    >>> _first_paragraph_done("A fine film.\n\nNote:"), _first_paragraph_done("Here it is:\n\nA fine"), _first_paragraph_done("A fine")
    (True, False, False)
    """
    parts = re.split(r"\n[ \t]*\n", text.lstrip(), maxsplit=1)
    return len(parts) == 2 and bool(parts[0].strip()) and not parts[0].rstrip().endswith(":")


def _paragraph_stop(lm, prompt_length: int):
    """A ``generate`` stopping criterion ending each row at :func:`_first_paragraph_done` (per row)."""
    from transformers import StoppingCriteria

    class _Stop(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            tails = input_ids[:, prompt_length:].tolist()
            done = [_first_paragraph_done(lm.tokenizer.decode(t, skip_special_tokens=True)) for t in tails]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return _Stop()


def _generate_batch(lm, rows: list[list[int]], new_tokens: int, do_sample: bool, options: dict,
                    stop: str | None = None, row_seeds=None, repeat: int = 1, charged: int | None = None) -> list[list[int]]:
    """Left-padded rows -> the generated ids of each (the KV cache of ``generate`` reused at every step); ``stop=
    "paragraph"`` ends each row once its first paragraph is written (:func:`_first_paragraph_done`). ``row_seeds``:
    each row sampled by its own generator (:class:`_SeededRows`, ``options``' temperature / top_k / top_p), so a
    row's reply does not depend on the other rows. ``repeat``: the rows are each prompt ``repeat`` times in a row, and
    each prompt is read once for its rows (:func:`_shared_prompt`). ``charged``: the evaluations counted (default each
    row's ``new_tokens``; rows batched with a larger bound than their own count their own)."""
    length = max(len(r) for r in rows)
    pad = _pad_id(lm.tokenizer)
    ids = torch.full((len(rows), length), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), length), dtype=torch.long)
    for j, row in enumerate(rows):
        ids[j, length - len(row):] = torch.tensor(row)
        mask[j, length - len(row):] = 1
    charge(len(rows) * new_tokens if charged is None else charged)
    with torch.inference_mode(), frozen_eval(lm.model):
        if stop == "paragraph":
            from transformers import StoppingCriteriaList

            options = {**options, "stopping_criteria": StoppingCriteriaList(
                list(options.get("stopping_criteria") or []) + [_paragraph_stop(lm, length)])}
        if row_seeds is not None:
            from transformers import LogitsProcessorList

            sampling = {k: options.pop(k) for k in list(options) if k in _SAMPLING_KEYS}
            options["logits_processor"] = LogitsProcessorList(
                list(options.get("logits_processor") or []) + [_SeededRows(row_seeds, lm.device, **sampling)])
            do_sample = False   # the processor has drawn each row's token: generate's argmax takes it
        ids, mask = ids.to(lm.device), mask.to(lm.device)
        if repeat > 1:
            options = {**options, **_shared_prompt(lm, ids[::repeat], mask[::repeat], repeat)}
        out = lm.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens,
                                do_sample=do_sample, pad_token_id=pad, use_cache=True, **options)
    return [r.tolist() for r in out[:, length:].cpu()]


#: generate() options a row's own sampler reads (:class:`_SeededRows`); the others still go to generate
_SAMPLING_KEYS = ("temperature", "top_k", "top_p")


def _shared_prompt(lm, ids, mask, n: int) -> dict:
    """The KV cache of each (left-padded) prompt read once (all but its last token) and repeated for its ``n`` rows, as
    generate's cache keyword (generate then reads the last token alone): ``n`` replies to a prompt cost one prompt pass,
    not ``n``. Positions as generate counts them (from the attention mask). Empty (generate reads the prompts itself)
    for a model whose cache cannot be repeated so."""
    import inspect

    from transformers import DynamicCache

    if ids.shape[1] < 2:
        return {}
    params = inspect.signature(lm.model.forward).parameters
    name = "cache" if "cache" in params else "past_key_values"
    positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)
    try:
        cache = DynamicCache(config=lm.model.config)
        lm.model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], **{name: cache},
                 use_cache=True)
        cache.batch_repeat_interleave(n)
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return {}
    return {name: cache}


class _SeededRows:
    """A logits processor that draws each row's next token with its own ``torch.Generator`` (seeded by ``seeds[row]``)
    from the ``temperature`` / ``top_k`` / ``top_p`` distribution (transformers' warpers, in their order), and returns
    scores that leave only that token: a row's draws depend on its seed and its own logits only, not on how many rows
    share the batch (``sample(n=3)`` is the first 3 replies of ``sample(n=7)``)."""

    def __init__(self, seeds, device, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0):
        if not (isinstance(temperature, (int, float)) and temperature > 0):
            raise ValueError(f"temperature={short_repr(temperature)}: expected a positive number")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
            raise ValueError(f"top_k={short_repr(top_k)}: expected a whole number >= 0 (0: no top-k cut)")
        if not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
            raise ValueError(f"top_p={short_repr(top_p)}: expected a number in (0, 1]")
        dev = torch.device(device)
        self.generators = [torch.Generator(device=dev).manual_seed(int(s) % (2 ** 63)) for s in seeds]
        self.temperature, self.top_k, self.top_p = float(temperature), int(top_k), float(top_p)

    def __call__(self, input_ids, scores):
        s = scores.float() / self.temperature
        if self.top_k:
            kth = torch.topk(s, min(self.top_k, s.shape[-1])).values[..., -1:]
            s = s.masked_fill(s < kth, -float("inf"))
        if self.top_p < 1.0:
            ordered, index = torch.sort(s, descending=False)
            cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
            remove = cumulative <= 1 - self.top_p
            remove[..., -1:] = False
            s = s.masked_fill(remove.scatter(1, index, remove), -float("inf"))
        probs = s.softmax(dim=-1)
        chosen = torch.cat([torch.multinomial(probs[r], 1, generator=g) for r, g in enumerate(self.generators)])
        out = torch.full_like(scores, -float("inf"))
        out[torch.arange(len(chosen), device=scores.device), chosen] = 0.0
        return out


def row_seed(seed: int, row: int) -> int:
    """The seed of the ``row``-th sampled reply to a prompt whose seed is ``seed`` (:func:`sample`).

    >>> row_seed(5, 0) == row_seed(5, 0) != row_seed(5, 1)
    True
    """
    return (int(seed) * 1_000_003 + 7919 * int(row) + 1) % (2 ** 63)


def _within_context(lm, chunk: list[int], rows: list[list[int]], limits: list[int]) -> list[list[int]]:
    """``chunk`` as batches that fit the LM's context: a batch writes its largest bound for every row, so a row that
    would then pass ``max_length`` (a long prompt kept for its own small bound) goes alone, with its own bound."""
    new = max(limits[i] for i in chunk)
    fits = [i for i in chunk if len(rows[i]) + new <= lm.max_length]
    return ([fits] if fits else []) + [[i] for i in chunk if i not in fits]
