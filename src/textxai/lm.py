"""Perplexity of texts under any causal language model.

Per text: ``exp(mean NLL of each token given the ones before it)`` with the model's BOS token prepended
(the convention of evaluate's ``perplexity``), so every token of the text is predicted, the first one
from BOS alone. Texts longer than the model's maximum are truncated (one warning per call). Padding is
excluded from the loss, so results do not depend on ``batch_size``. An empty text has no token to
predict: its perplexity is ``nan`` (and it is counted in the warning-free ``n_empty`` of callers).

>>> lm = CausalLM("gpt2")                          # doctest: +SKIP
>>> perplexity(["The cat sat on the mat."], lm)    # doctest: +SKIP
array([...])
"""
from __future__ import annotations

import warnings

import numpy as np
import torch

from textxai.batching import length_sorted_batches
from textxai.classifier import frozen_eval
from textxai.validation import check_positive_int, check_texts


class CausalLM:
    """A causal LM and its tokenizer, from a Hub id, a folder, a loaded model (+ tokenizer) or a pair."""

    def __init__(self, model, tokenizer=None, device=None, **load_kwargs):
        from transformers import PreTrainedModel

        from textxai.classifier import check_device

        device = check_device(device)
        if model is None or isinstance(model, str) and not model.strip():
            raise ValueError(f"lm={model!r}: expected a causal language model (Hub id, folder, loaded model or (model, tokenizer))")
        self.name = model if isinstance(model, str) else type(model).__name__
        if isinstance(model, tuple) and len(model) == 2:
            model, tokenizer = model
        if isinstance(model, str):
            self.name = model.strip()
            model, tokenizer = _load_named(self.name, tokenizer, load_kwargs)
        if not isinstance(model, PreTrainedModel):
            raise TypeError(f"lm={model!r:.80} ({type(model).__name__}): expected a causal LM id, folder, model or (model, tokenizer)")
        if tokenizer is None:
            raise ValueError(f"tokenizer=None: the loaded language model {type(model).__name__} needs its tokenizer")
        if device is None:
            device = model.device
        self.device = torch.device(device)
        self.model = model.to(self.device)  # left in its mode: every pass runs inside frozen_eval
        self.tokenizer = tokenizer
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if bos is None:
            bos = getattr(model.config, "bos_token_id", None)
        if bos is None:
            raise ValueError(f"lm={self.name!r}: its tokenizer has neither a BOS nor an EOS token to start texts with")
        self.bos_token_id = int(bos)
        limit = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", None)
        self.max_length = int(limit) if limit else 1024

    def __repr__(self) -> str:
        return f"CausalLM({self.name!r})"


def _load_named(name: str, tokenizer, load_kwargs: dict):
    """(model, tokenizer) of a causal LM id or folder: newly initialised weights refused, Hub access with a deadline."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from textxai.loading import first_line, from_pretrained_checked, is_local_source, with_deadline

    def load():
        try:
            loaded = from_pretrained_checked(AutoModelForCausalLM, name, name, "lm", **load_kwargs)
            return loaded, tokenizer or AutoTokenizer.from_pretrained(name)
        except (OSError, ValueError, KeyError) as error:
            if isinstance(error, ValueError) and str(error).startswith(f"lm={name!r}"):
                raise
            raise ValueError(
                f"lm={name!r} could not be loaded as a causal language model ({first_line(error)}); expected a Hub id "
                "(reachable now) or a folder of a causal LM, or a loaded (model, tokenizer)"
            ) from error

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        return load() if is_local_source(name) else with_deadline(load, f"lm={name!r}")
    finally:
        hf_logging.set_verbosity(verbosity)


def as_lm(model, tokenizer=None, device=None) -> CausalLM:
    """``model`` itself when it is a ``CausalLM``, else ``CausalLM(model, tokenizer, device)``; names are cached."""
    if isinstance(model, CausalLM):
        return model
    if model is None:
        raise ValueError("lm=None: expected a causal language model (Hub id, folder, loaded model or (model, tokenizer))")
    if isinstance(model, str) and tokenizer is None:
        name = model.strip()
        key = (name, None if device is None else str(device))
        return _NAMED.get_or_create(key, lambda: CausalLM(name, device=device))
    return CausalLM(model, tokenizer, device)


def _named_cache():
    from textxai.loading import LRUCache, cache_size

    return LRUCache(cache_size("TEXTXAI_LM_CACHE", 2))


_NAMED = _named_cache()


def token_nll(texts, model, batch_size: int = 16, progress: bool = False) -> list[np.ndarray]:
    """Per text, the negative log-likelihood of each of its tokens (BOS prepended), in input order."""
    lm = as_lm(model)
    texts = check_texts(texts)
    check_positive_int(batch_size, "batch_size")
    ids = lm.tokenizer(texts, add_special_tokens=False)["input_ids"]
    rows, truncated = [], 0
    for row in ids:
        row = [lm.bos_token_id] + list(row)
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
                for i in chunk:
                    out[i] = np.empty(0)
                continue
            batch = torch.full((len(chunk), length), lm.bos_token_id, dtype=torch.long)
            attention = torch.zeros((len(chunk), length), dtype=torch.long)
            for j, i in enumerate(chunk):
                batch[j, : len(rows[i])] = torch.tensor(rows[i])
                attention[j, : len(rows[i])] = 1
            logits = lm.model(input_ids=batch.to(lm.device), attention_mask=attention.to(lm.device)).logits
            logprobs = torch.log_softmax(logits[:, :-1].double(), dim=-1)
            nll = -logprobs.gather(-1, batch[:, 1:].to(lm.device).unsqueeze(-1)).squeeze(-1).cpu().numpy()
            for j, i in enumerate(chunk):
                out[i] = nll[j, : len(rows[i]) - 1]
    return out


def perplexity(texts, model, batch_size: int = 16, progress: bool = False) -> np.ndarray:
    """Perplexity of each text under the causal LM ``model`` (id, folder, object or ``CausalLM``); ``nan`` for empty texts."""
    return np.array([float(np.exp(nll.mean())) if nll.size else float("nan")
                     for nll in token_nll(texts, model, batch_size, progress)])
