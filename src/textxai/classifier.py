"""Any Hugging Face sequence classifier as batched probabilities, with a word view and embedding access.

``TextClassifier`` is the only code in textxai that touches a classifier's tokenizer and model (the
tokenizer side through its word view, :mod:`textxai.wordview`, which needs no model). It is built from a
Hub id, a local folder saved with ``save_pretrained``, a loaded ``(model, tokenizer)`` pair, a
transformers ``text-classification`` pipeline, or one of the embedded demo models
(``"textxai/demo-sentiment"``, ``"textxai/demo-topic"``).

Words and masking are the classifier's word view (:class:`textxai.wordview.WordView`, ``clf.word_view``):
words are the project's word tokens (``textxai.words``, spaCy's blank English tokenizer by default); each
subword token belongs to the word it overlaps most (by characters); special tokens (CLS, SEP, the pair
separator, padding) belong to no word and are never masked. For a sentence pair the words are those of
the first text followed by those of the second. Masking replaces every subword token of a chosen word by
the tokenizer's mask token; a tokenizer with no mask token uses its unk token instead; one with neither
cannot mask (use ``perturbation="delete"``, which removes the words' tokens).

What the outputs mean is read from the head (:func:`output_kind`): softmax over exclusive classes, or for a
multi-label head (``problem_type="multi_label_classification"``) each label's own sigmoid probability;
regression heads are refused. Every batch of logits is checked: NaN or inf is a ``ValueError`` naming the
model. One classifier may be shared by threads: passes on a model take turns (:func:`model_lock`).

Forward passes run in the model's own precision (float32 for the models textxai loads). The sampling
attributions (LIME, Kernel SHAP), which average thousands of random perturbations, may ask for
``precision="bfloat16"``: matrix products in bfloat16 under ``torch.autocast`` (about 3x faster on a CPU
with AVX512-BF16 or AMX, and on recent GPUs). ``"auto"`` picks it only where the hardware has native bfloat16
and a probe pass of the model agrees with float32 (:meth:`TextClassifier.resolve_precision`). ``predict_proba``,
``masked_proba`` and the methods built on them (omission, the editors, the TOKI attack) take the same option
(default float32); the audit runs its many-pass stages (trust, counterfactual) with ``"auto"``.

Gradient methods feed the model embeddings in place of token ids (``input_embeddings`` ->
``logits_from_embeddings``, :mod:`textxai.model.gradients`); a model that cannot be fed embeddings raises a
``TypeError`` naming its class.

This module is the resolver (:func:`as_classifier`: any form of a classifier -> one ``TextClassifier``, names
cached) and the one import path of the model seam; the seam's rooms are :mod:`textxai.model` (``passes``:
frozen eval, locks, precisions, weights digest; ``checks``: loading by name and validation; ``probabilities``:
batched probabilities and masking; ``gradients``: embeddings; ``textclassifier``: the class) and
:mod:`textxai.blackbox` (:class:`FunctionClassifier`). Every name they held here stays importable from here.

>>> clf = as_classifier("textxai/demo-sentiment")          # doctest: +SKIP
>>> clf.predict_proba(["a wonderful film"]).shape          # doctest: +SKIP
(1, 2)
"""
from __future__ import annotations

import torch

from textxai.blackbox import FunctionClassifier
from textxai.model.checks import (DEMO_MODELS, NOT_CLASSIFIER_HEADS, OUTPUT_KINDS, check_classifier_model, check_device,
                                  check_labels, check_vocabulary, output_kind, tokenizer_from_name,
                                  unreadable_weights_errors)
from textxai.model.gradients import Encoding
from textxai.model.passes import (BF16_PROBE_TEXT, BF16_PROBE_TOLERANCE, PRECISIONS, content_digest, frozen_eval,
                                  model_lock, model_logits, native_bfloat16)
from textxai.model.textclassifier import TextClassifier
from textxai.validation import short_repr
from textxai.wordview import PERTURBATIONS, SUBWORD_MARKERS, WordEncoding, word_vocabulary

__all__ = [  # the public names of the model seam, wherever they live
    "TextClassifier", "FunctionClassifier", "as_classifier", "clear_cache", "Encoding", "WordEncoding",
    "frozen_eval", "model_lock", "content_digest", "model_logits", "native_bfloat16",
    "PRECISIONS", "BF16_PROBE_TEXT", "BF16_PROBE_TOLERANCE", "PERTURBATIONS", "DEMO_MODELS", "SUBWORD_MARKERS",
    "word_vocabulary", "check_device", "check_classifier_model", "check_labels", "check_vocabulary", "output_kind",
    "OUTPUT_KINDS", "NOT_CLASSIFIER_HEADS", "tokenizer_from_name", "unreadable_weights_errors",
]


def as_classifier(model, tokenizer=None, device=None, safe=None, **kwargs) -> TextClassifier:
    """``model`` itself when it is a ``TextClassifier``, else ``TextClassifier(model, tokenizer, device, ...)``.

    Classifiers built from names are cached in a bounded LRU cache (``TEXTXAI_MODEL_CACHE`` entries,
    default 4), shared with the Spaces, so repeated calls with the same id reuse one model. A local folder is
    reused only while its files are unchanged (:func:`textxai.loading.folder_fingerprint`: name, size and
    modification time of each file), so a training loop that saves a new checkpoint there gets the new model.
    ``safe``: a :class:`textxai.loading.SafeLoad` (hosted mode: a name a visitor gave) loads ``model`` (a name)
    under its rules; the demo models, built locally, are shared with plain loads. A plain function from texts to
    class probabilities is a black-box model (:class:`textxai.blackbox.FunctionClassifier`; ``kwargs``: its
    ``labels``, ``mask_token``...): every method that needs no gradients takes it.
    """
    if isinstance(model, TextClassifier):
        return model
    if model is None:
        raise ValueError("model=None: expected a classifier (Hub id, folder, loaded model, pipeline or 'textxai/demo-sentiment')")
    if safe is not None:
        return _load_safe(model, device, safe)
    if _is_plain_function(model):  # a black box: texts -> probabilities (textxai.blackbox)
        return FunctionClassifier(model, **kwargs)
    if isinstance(model, str) and tokenizer is None and not kwargs:
        from textxai.loading import folder_fingerprint

        check_device(device)
        name = model.strip()
        key = (name, None if device is None else str(device))
        # a local folder rewritten since it was loaded (a training loop saved a new checkpoint): loaded again
        return _NAMED.get_or_create(key, lambda: TextClassifier(name, device=device), stamp=folder_fingerprint(name))
    return TextClassifier(model, tokenizer, device, **kwargs)


def _is_plain_function(model) -> bool:
    """A callable that is neither a transformers model, a pipeline, a tuple nor a name: a black-box function."""
    if isinstance(model, (str, tuple, torch.nn.Module)) or not callable(model):
        return False
    return not (hasattr(model, "task") and hasattr(model, "model") and hasattr(model, "tokenizer"))


def _load_safe(name, device, safe) -> TextClassifier:
    """:func:`as_classifier` in hosted mode (``safe``: a :class:`textxai.loading.SafeLoad`)."""
    from textxai import loading

    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"model={short_repr(name)}: expected a model name (a Hub id, a folder or a demo model) "
                         "with safe=")
    if not isinstance(safe, loading.SafeLoad):
        raise TypeError(f"safe={short_repr(safe)}: expected a textxai.loading.SafeLoad or None")
    name = name.strip()
    demo = name in DEMO_MODELS
    key = (name, None if device is None else str(device)) if demo else (name, "safe", None if device is None else str(device))
    build = lambda load_kwargs: TextClassifier(name, device=device, **load_kwargs)  # noqa: E731
    hub = not demo and not loading.is_local_source(name)
    return _NAMED.get_or_create(key, lambda: loading.load_safely(name, build, safe, "model", hub),
                                stamp=loading.folder_fingerprint(name))  # a rewritten local folder is loaded again


def clear_cache() -> None:
    """Forget the classifiers loaded by name (memory, tests)."""
    _NAMED.clear()


def _named_cache():
    from textxai.loading import LRUCache, cache_size

    return LRUCache(cache_size("TEXTXAI_MODEL_CACHE", 4))


_NAMED = _named_cache()
