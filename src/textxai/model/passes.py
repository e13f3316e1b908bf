"""A pass on any torch model: eval mode with frozen weights under one lock per model, the precisions a pass may
run in, the logits of an output, and a digest of the weights by content.

The seam "precision / model state" of the model seam: nothing here knows a tokenizer or a classification head, so
the causal LMs (:mod:`textxai.lm`) and the Trainer callback use the same pieces as :class:`~textxai.classifier.TextClassifier`.
"""
from __future__ import annotations

import hashlib
import threading
import weakref
from contextlib import contextmanager

import torch

PRECISIONS = ("auto", "float32", "bfloat16")
BF16_PROBE_TEXT = "a probe of the model in bfloat16 , with a few ordinary words ."
BF16_PROBE_TOLERANCE = 0.02  # largest probability change the probe accepts (the demo models: <= 0.004 on it)


def native_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` multiplies bfloat16 matrices in hardware (elsewhere autocast emulates it, slower)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported(including_emulation=False)
    if device.type == "cpu":  # torch's own checks (private; a torch without them: no native bfloat16 assumed)
        return any(getattr(torch.cpu, check, lambda: False)() for check in ("_is_avx512_bf16_supported",
                                                                             "_is_amx_tile_supported"))
    return False


@contextmanager
def frozen_eval(model: torch.nn.Module):
    """Run ``model`` in eval mode with its parameters frozen, then give it back exactly as found.

    Every forward pass of textxai on a model happens inside this block: dropout is off, no
    gradient can reach a parameter (backward passes differentiate inputs only), and on exit each
    submodule's train/eval flag and each parameter's ``requires_grad`` are what they were, so a model
    being trained can be evaluated mid-training. Re-entrant, and held by one thread at a time per model
    (:func:`model_lock`): threads sharing a model take turns instead of resetting each other's flags.

    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5)).train()
    >>> with frozen_eval(model):
    ...     model.training, model[0].weight.requires_grad
    (False, False)
    >>> model.training, model[1].training, model[0].weight.requires_grad
    (True, True, True)
    """
    with model_lock(model):
        modes = [(module, module.training) for module in model.modules()]
        trainable = [param for param in model.parameters() if param.requires_grad]
        model.eval()
        for param in trainable:
            param.requires_grad_(False)
        try:
            yield model
        finally:
            for param in trainable:
                param.requires_grad_(True)
            for module, training in modes:
                module.training = training


_MODEL_LOCKS: "weakref.WeakKeyDictionary[torch.nn.Module, threading.RLock]" = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def model_lock(model: torch.nn.Module) -> threading.RLock:
    """The one re-entrant lock of ``model`` in this process: every textxai pass on a model holds it (inside
    :func:`frozen_eval`), so threads sharing a model never see each other's train/eval flags, frozen parameters
    or embedding hooks; their passes take turns (torch already uses every core within one pass)."""
    with _LOCKS_LOCK:
        lock = _MODEL_LOCKS.get(model)
        if lock is None:
            lock = _MODEL_LOCKS[model] = threading.RLock()
        return lock



def model_logits(output) -> torch.Tensor:
    """The logits of a classifier's forward output: ``output.logits``, or the first item of the tuple a model whose
    config says ``return_dict=False`` returns."""
    logits = getattr(output, "logits", None)
    if logits is None and isinstance(output, (tuple, list)) and output:
        logits = output[0]
    return logits



_DIGESTS: "weakref.WeakKeyDictionary[torch.nn.Module, tuple]" = weakref.WeakKeyDictionary()


def content_digest(model: torch.nn.Module) -> str:
    """A digest of the bytes of every parameter and buffer of ``model`` (names, dtypes, shapes and values): what a
    cache keyed on a model's weights compares. Two checkpoints that differ anywhere -- two head rows swapped
    (a label-order fix), whatever their per-tensor sums -- get different digests.

    Hashing reads every weight once; the digest is then remembered with each tensor's identity and in-place
    version counter (``Tensor._version``: an optimizer step, ``load_state_dict``, ``copy_`` all bump it), so a
    model that did not change is not read again and one that did is.

    >>> layer = torch.nn.Linear(2, 2); before = content_digest(layer)
    >>> with torch.no_grad():
    ...     _ = layer.weight.copy_(layer.weight.flip(0))       # rows swapped: same sums
    >>> content_digest(layer) != before
    True
    """
    tensors = list(model.state_dict(keep_vars=True).items())
    state = tuple((name, id(t), t._version, t.data_ptr() if not t.is_meta else 0) for name, t in tensors)
    with _LOCKS_LOCK:
        known = _DIGESTS.get(model)
    if known is not None and known[0] == state:
        return known[1]
    digest = hashlib.blake2b(digest_size=16)
    with torch.no_grad():
        for name, t in tensors:
            t = t.detach()
            digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
            if t.is_meta:
                continue
            data = t.cpu().contiguous()
            if data.dtype in (torch.bfloat16, torch.float16) or not data.dtype.is_floating_point:
                data = data.view(torch.uint8) if data.dim() else data.reshape(1).view(torch.uint8)
            digest.update(data.numpy().tobytes())
    value = digest.hexdigest()
    with _LOCKS_LOCK:
        _DIGESTS[model] = (state, value)
    return value
