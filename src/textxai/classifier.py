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
``logits_from_embeddings``). The embeddings are swapped in at the model's input-embedding layer, so the
model still receives its token ids: encoder-only (BERT, RoBERTa...), decoder-only (GPT-2, Llama...) and
encoder-decoder classifiers (BART, T5...) all work, heads that find a token by its id included (BART's
last ``</s>``, GPT-2's last non-padding token). A model that cannot be fed embeddings this way raises a
``TypeError`` naming its class.

>>> clf = as_classifier("textxai/demo-sentiment")          # doctest: +SKIP
>>> clf.predict_proba(["a wonderful film"]).shape          # doctest: +SKIP
(1, 2)
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from textxai import demo as _demo
from textxai import words as _words
from textxai.batching import CPU_BATCH_TOKENS, length_sorted_batches
from textxai.validation import check_choice, check_positive_int, check_text_pairs, check_texts, short_repr
from textxai.wordview import PERTURBATIONS, WordEncoding, WordView, token_limit

DEMO_MODELS = tuple(_demo.MODEL_IDS.values())
#: Subword conventions of tokenizer vocabularies: the marker, and whether it starts a word (else it
#: marks a continuation piece). WordPiece ``##``; byte-level BPE ``Ġ``; SentencePiece ``▁``.
SUBWORD_MARKERS = {"##": False, "\u0120": True, "\u2581": True}


def word_vocabulary(tokenizer, min_length: int = 2) -> dict[str, int]:
    """The whole-word entries of a tokenizer's vocabulary, ``{word: token id}`` in token-id order.

    The one rule of textxai (random replacement words, embedder vocabularies, substitution candidates):

    1. special tokens are skipped;
    2. the vocabulary's convention is the marker of :data:`SUBWORD_MARKERS` that starts the most entries:
       ``##`` (WordPiece) marks continuation pieces, so every entry without it is a word; ``Ġ`` (byte-level
       BPE) and ``▁`` (SentencePiece) mark word starts, so only entries with the marker are words (the
       marker dropped); a vocabulary with none of them takes every entry as written;
    3. a word has at least ``min_length`` characters, all ASCII letters (case kept).

    Every word comes from one entry, so the mapping is one-to-one.

    >>> from transformers import BertTokenizerFast          # doctest: +SKIP
    >>> word_vocabulary(tokenizer)                           # doctest: +SKIP
    {'the': 1996, 'of': 1997, ...}
    """
    check_positive_int(min_length, "min_length")
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    special = set(getattr(tokenizer, "all_special_tokens", None) or [])
    counts = {marker: sum(token.startswith(marker) for token, _ in vocab) for marker in SUBWORD_MARKERS}
    marker = max(counts, key=counts.get) if any(counts.values()) else None
    words: dict[str, int] = {}
    for token, token_id in vocab:
        if token in special:
            continue
        if marker is not None and token.startswith(marker) != SUBWORD_MARKERS[marker]:
            continue  # a continuation piece
        word = token[len(marker):] if marker is not None and SUBWORD_MARKERS[marker] else token
        if len(word) >= min_length and word.isascii() and word.isalpha() and word not in words:
            words[word] = int(token_id)
    return words


@dataclass
class Encoding:
    """A padded batch on the classifier's device, with each row's word alignment."""

    tensors: dict[str, torch.Tensor]
    word_ids: list[np.ndarray]
    words: list[list[str]]


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


def _load_from_name(name: str, tokenizer, load_kwargs: dict, allow_new_head: bool = False):
    from transformers.utils import logging as hf_logging

    from textxai.loading import is_local_source, with_deadline

    bar_was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar for every model we load
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the load report of missing weights becomes our error, not a log table
    try:
        load = lambda: _load_quietly(name, tokenizer, load_kwargs, allow_new_head)  # noqa: E731
        if name in DEMO_MODELS or is_local_source(name):
            return load()
        return with_deadline(load, f"model={name!r}")
    finally:
        hf_logging.set_verbosity(verbosity)
        if bar_was_on:
            hf_logging.enable_progress_bar()


def _load_quietly(name: str, tokenizer, load_kwargs: dict, allow_new_head: bool = False):
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from textxai.loading import first_line, from_pretrained_checked

    source = name
    if name in DEMO_MODELS:
        source = str(_demo.model_path(name))
    elif not os.path.isdir(name) and (name.startswith((".", "/", "~")) or os.sep + os.sep in name):
        raise ValueError(f"model={name!r}: no such folder; expected a local folder saved with save_pretrained or a Hub id")
    expected = (
        "expected a Hub id of a sequence classifier (reachable now), a local folder saved with save_pretrained, "
        f"a (model, tokenizer) pair, a text-classification pipeline, or one of {list(DEMO_MODELS)}"
    )
    try:
        config = AutoConfig.from_pretrained(source, **{k: v for k, v in load_kwargs.items() if k not in ("dtype", "torch_dtype")})
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(f"model={name!r} could not be loaded ({first_line(error)}); {expected}") from error
    architectures = getattr(config, "architectures", None) or []
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise ValueError(
            f"model={name!r} declares architectures {architectures}, none with a sequence-classification head; "
            "expected a fine-tuned classifier (...ForSequenceClassification)"
        )
    if "dtype" not in load_kwargs and "torch_dtype" not in load_kwargs:
        # textxai computes in float32 (a checkpoint saved in bfloat16 / float16 too: exact probabilities, gradients
        # and FIM everywhere; precision="bfloat16" opts into autocast); dtype=... in load_kwargs keeps another
        load_kwargs = {**load_kwargs, "dtype": torch.float32}
    try:
        model = from_pretrained_checked(AutoModelForSequenceClassification, source, name, "model",
                                        allow_new_weights=allow_new_head, **load_kwargs)
    except (OSError, KeyError, EOFError, RuntimeError, *unreadable_weights_errors()) as error:  # a damaged file too
        raise ValueError(f"model={name!r} has no loadable sequence-classification model ({first_line(error)}); {expected}") from error
    except ValueError as error:
        if str(error).startswith(f"model={name!r}"):
            raise
        raise ValueError(f"model={name!r} has no loadable sequence-classification model ({first_line(error)}); {expected}") from error
    if tokenizer is None:
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
        except Exception as error:  # noqa: BLE001 - OSError, a damaged tokenizer.json (tokenizers' plain Exception)...
            raise ValueError(
                f"model={name!r} has no tokenizer that could be loaded ({first_line(error)}); pass tokenizer=..."
            ) from error
    elif isinstance(tokenizer, str):
        tokenizer = tokenizer_from_name(tokenizer)
    return model, tokenizer


def unreadable_weights_errors() -> tuple[type, ...]:
    """What reading a damaged weights file raises besides OSError: safetensors' header errors, pickle's."""
    import pickle

    errors: list[type] = [pickle.UnpicklingError]
    try:
        from safetensors import SafetensorError

        errors.append(SafetensorError)
    except ImportError:  # pragma: no cover - safetensors comes with transformers
        pass
    return tuple(errors)


def tokenizer_from_name(name: str):
    """``AutoTokenizer.from_pretrained(name)`` (within the Hub deadline when it may reach the Hub); any failure
    is one ``ValueError`` naming ``tokenizer``."""
    from transformers import AutoTokenizer

    from textxai.loading import first_line, is_local_source, with_deadline

    if not name.strip():
        raise ValueError(f"tokenizer={name!r}: expected a Hub id or a local folder of a tokenizer, or a tokenizer object")
    try:
        if is_local_source(name):
            return AutoTokenizer.from_pretrained(name)
        return with_deadline(lambda: AutoTokenizer.from_pretrained(name), f"tokenizer={name!r}")
    except TimeoutError:
        raise
    except Exception as error:  # noqa: BLE001 - OSError, HFValidationError, KeyError...: one message
        raise ValueError(f"tokenizer={name!r:.80} could not be loaded ({first_line(error)}); expected a Hub id or a "
                         "local folder of a tokenizer, or a tokenizer object") from error


def check_device(device):
    """``None`` or a torch device that exists here, else a ``ValueError`` naming it."""
    if device is None:
        return None
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"device={device!r}: expected a torch device such as 'cpu', 'cuda', 'cuda:0' or 'mps'") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: CUDA is not available on this machine; use device='cpu'")
    if parsed.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise ValueError(f"device={device!r}: MPS is not available on this machine; use device='cpu'")
    if parsed.type == "xpu" and not (hasattr(torch, "xpu") and torch.xpu.is_available()):
        raise ValueError(f"device={device!r}: no Intel XPU is available on this machine (or torch was built without "
                         "XPU support); use device='cpu'")
    if parsed.type not in ("cpu", "cuda", "mps", "xpu", "meta") or parsed.type == "meta":
        raise ValueError(f"device={device!r}: expected 'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu'")
    return parsed


OUTPUT_KINDS = ("single_label", "multi_label")


def output_kind(config, name: str) -> str:
    """What a classifier's logits mean, from its config: ``"single_label"`` (softmax over exclusive classes:
    ``problem_type`` "single_label_classification", or unset with ``num_labels >= 2``) or ``"multi_label"``
    (``problem_type="multi_label_classification"``: one independent sigmoid per label). A regression head
    (``problem_type="regression"``, or unset with ``num_labels == 1``) or an unknown problem type is a
    ``ValueError`` naming the model: its outputs are not class probabilities.

    >>> from types import SimpleNamespace as C
    >>> output_kind(C(num_labels=3, problem_type=None), "m"), output_kind(C(num_labels=1, problem_type="multi_label_classification"), "m")
    ('single_label', 'multi_label')
    >>> output_kind(C(num_labels=1, problem_type=None), "m")
    Traceback (most recent call last):
    ...
    ValueError: model='m' is a regression model (num_labels=1, problem_type=None): its output is a score, not class probabilities; expected a classifier (num_labels >= 2, or problem_type='multi_label_classification')
    """
    problem = getattr(config, "problem_type", None)
    n = int(getattr(config, "num_labels", 0) or 0)
    if problem == "multi_label_classification":
        return "multi_label"
    if problem == "regression" or (problem is None and n == 1):
        raise ValueError(f"model={name!r} is a regression model (num_labels={n}, problem_type={problem!r}): its output "
                         "is a score, not class probabilities; expected a classifier (num_labels >= 2, or "
                         "problem_type='multi_label_classification')")
    if problem not in (None, "single_label_classification"):
        raise ValueError(f"model={name!r} has problem_type={problem!r}: expected 'single_label_classification' or "
                         "'multi_label_classification' (transformers' classification heads)")
    if n < 2:
        raise ValueError(f"model={name!r} has num_labels={n} with problem_type={problem!r}: expected at least 2 "
                         "exclusive classes")
    return "single_label"


def check_vocabulary(tokenizer, name: str) -> None:
    """A ``ValueError`` naming the model when ``tokenizer`` knows nothing but its special tokens -- what
    transformers loads from a folder that lost its vocabulary (``tokenizer.json``, ``vocab.txt``...): every
    word would become the unk token and every text get the same prediction."""
    try:
        vocab = tokenizer.get_vocab()
    except (AttributeError, NotImplementedError, TypeError):
        return
    special = set(getattr(tokenizer, "all_special_tokens", None) or [])
    if vocab and not any(token not in special for token in vocab):
        raise ValueError(
            f"model={name!r}: its tokenizer ({type(tokenizer).__name__}) knows only its {len(vocab)} special tokens "
            f"{sorted(vocab)[:6]}: every word would become {getattr(tokenizer, 'unk_token', None)!r}. The tokenizer's "
            "vocabulary file (tokenizer.json, vocab.txt, vocab.json + merges.txt, *.model) is missing; expected a "
            "folder saved with tokenizer.save_pretrained, or pass tokenizer=..."
        )


def model_logits(output) -> torch.Tensor:
    """The logits of a classifier's forward output: ``output.logits``, or the first item of the tuple a model whose
    config says ``return_dict=False`` returns."""
    logits = getattr(output, "logits", None)
    if logits is None and isinstance(output, (tuple, list)) and output:
        logits = output[0]
    return logits


#: class-name endings of transformers heads that are not sequence classifiers (a causal or masked LM, a token
#: classifier...): given as the classifier they would produce per-token outputs, not class probabilities
NOT_CLASSIFIER_HEADS = ("ForCausalLM", "LMHeadModel", "ForMaskedLM", "ForConditionalGeneration", "ForTokenClassification",
                        "ForQuestionAnswering", "ForMultipleChoice", "ForPreTraining", "ForNextSentencePrediction",
                        "ForSeq2SeqLM")


def check_classifier_model(model, name: str) -> None:
    """A ``ValueError`` naming the model when ``model`` (a loaded ``PreTrainedModel``) cannot give class
    probabilities: a head of :data:`NOT_CLASSIFIER_HEADS`, a bare encoder (``BertModel``: no head at all), or
    weights on the meta device (an empty shell: ``from_config`` under ``torch.device("meta")``, an offloaded model)."""
    cls = type(model).__name__
    bare = cls.endswith("Model") and type(model).__module__.startswith("transformers.")  # BertModel: no head
    if cls.endswith(NOT_CLASSIFIER_HEADS) or bare:
        raise ValueError(f"model={name!r} is a {cls}, not a sequence classifier: its outputs are not class "
                         "probabilities; expected a ...ForSequenceClassification model (a causal LM belongs in lm=, "
                         "e.g. textxai.lm.CausalLM)")
    if any(param.is_meta for param in model.parameters()):
        raise ValueError(f"model={name!r} ({cls}) has weights on the meta device (an empty shell without values, "
                         "e.g. built under torch.device('meta') or offloaded); expected a model with its weights "
                         "loaded (from_pretrained, or model.to_empty(...) and load_state_dict)")


def check_labels(config, name: str) -> None:
    """A ``ValueError`` naming the model when ``config.id2label`` is not one distinct name per logit column
    ``0..num_labels-1``: ids numbered from 1 (``{1: '1 star', ..., 5: '5 stars'}``) leave column 0 without a name and
    name a column the head does not have; two classes of the same name (case aside) would make a label given by
    name silently mean the first of them."""
    id2label = getattr(config, "id2label", None) or {}
    n = int(getattr(config, "num_labels", 0) or 0)
    try:
        ids = sorted(int(k) for k in id2label)
    except (TypeError, ValueError):
        raise ValueError(f"model={name!r} has config.id2label keys {list(id2label)[:8]}: expected the class indices "
                         f"0..{n - 1}") from None
    if ids != list(range(n)):
        raise ValueError(f"model={name!r} has config.id2label ids {ids[:8]} for its {n} output columns: expected ids "
                         f"0..{n - 1}, one per column (fix config.id2label / label2id, e.g. renumber from 0 in column "
                         "order)")
    seen: dict[str, int] = {}
    for k in ids:
        label = str(id2label[k] if k in id2label else id2label[str(k)]).strip().lower()
        if label in seen:
            raise ValueError(f"model={name!r} names classes {seen[label]} and {k} both {label!r} in config.id2label: "
                             "expected distinct label names (a label given by name would silently mean the first); "
                             "rename one in config.id2label")
        seen[label] = k


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


def _embedding_rows(model) -> int | None:
    try:
        layer = model.get_input_embeddings()
        return int(layer.weight.shape[0])
    except (AttributeError, NotImplementedError, TypeError):
        return None


class TextClassifier:
    """Batched probabilities, word masking and embedding access for one sequence classifier.

    Args:
        model: Hub id, local folder, ``"textxai/demo-sentiment"`` / ``"textxai/demo-topic"``, a loaded
            ``PreTrainedModel`` (then ``tokenizer`` is required), a ``(model, tokenizer)`` pair, or a
            text-classification pipeline.
        tokenizer: the tokenizer (object or id) when ``model`` is a loaded model.
        device: ``"cpu"``, ``"cuda"``, ... ; default: the loaded model's device, else cuda when available.
        word_tokenizer: ``"spacy"`` (default) or ``"whitespace"``; see ``textxai.words``.
        max_length: token limit; default the model's maximum. Longer inputs are truncated with a warning.
        allow_new_head: load a checkpoint even when transformers initialises some weights anew (by default
            that is an error: an untrained head gives random results). Only for code that trains the head.
        load_kwargs: passed to ``from_pretrained`` (e.g. ``use_safetensors=True``).
    """

    def __init__(self, model, tokenizer=None, device=None, word_tokenizer: str = "spacy", max_length: int | None = None,
                 allow_new_head: bool = False, **load_kwargs):
        from transformers import PreTrainedModel

        check_choice(word_tokenizer, "word_tokenizer", _words.WORD_TOKENIZERS)
        device = check_device(device)
        if max_length is not None:
            check_positive_int(max_length, "max_length")
        if model is None:
            raise ValueError("model=None: expected a classifier (Hub id, folder, loaded model, pipeline or 'textxai/demo-sentiment')")
        if isinstance(model, str):
            model = model.strip()
            if not model:
                raise ValueError("model='': expected a Hub id, a local folder or one of " + str(list(DEMO_MODELS)))
        inner = model[0] if isinstance(model, tuple) and model else getattr(model, "model", model)
        self.name = model if isinstance(model, str) else type(inner).__name__
        user_object = not isinstance(model, str)
        if isinstance(model, tuple) and len(model) == 2:
            model, tokenizer = model
        elif hasattr(model, "task") and hasattr(model, "model") and hasattr(model, "tokenizer"):
            if model.task not in ("text-classification", "sentiment-analysis"):
                raise ValueError(f"model=<pipeline task={model.task!r}>: expected a text-classification pipeline")
            model, tokenizer = model.model, tokenizer or model.tokenizer
        elif isinstance(model, str):
            model, tokenizer = _load_from_name(model, tokenizer, load_kwargs, allow_new_head)
        if not isinstance(model, PreTrainedModel):
            raise TypeError(
                f"model={model!r:.80} ({type(model).__name__}): expected a Hub id, a folder, a PreTrainedModel, "
                "a (model, tokenizer) pair or a text-classification pipeline"
            )
        if tokenizer is None:
            raise ValueError(f"tokenizer=None: a loaded model ({type(model).__name__}) needs its tokenizer; pass tokenizer=...")
        if isinstance(tokenizer, str):
            tokenizer = tokenizer_from_name(tokenizer)
        if not callable(getattr(tokenizer, "__call__", None)) or not hasattr(tokenizer, "convert_tokens_to_ids"):
            raise TypeError(f"tokenizer={tokenizer!r:.80}: expected a transformers tokenizer")
        check_classifier_model(model, self.name)
        if not getattr(model.config, "num_labels", None):
            raise ValueError(f"model={self.name!r} has no classification labels (config.num_labels)")
        check_labels(model.config, self.name)
        #: "single_label" (softmax over exclusive classes) or "multi_label" (one sigmoid per label)
        self.output_kind = output_kind(model.config, self.name)
        check_vocabulary(tokenizer, self.name)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        if tokenizer.pad_token_id is None:  # nothing to pad a batch with: say so here, not in numpy at the first batch
            raise ValueError(f"tokenizer={type(tokenizer).__name__} has no pad token, and no eos or unk token to pad "
                             "with; expected a tokenizer with a pad token (set tokenizer.pad_token = ... to one of its "
                             "tokens; padded positions are masked out)")
        if getattr(model.config, "pad_token_id", None) is None:
            model.config.pad_token_id = tokenizer.pad_token_id
        if device is None:
            device = model.device if user_object else ("cuda" if torch.cuda.is_available() else "cpu")
        self.device = torch.device(device)
        self.model = model.to(self.device)  # left in its mode: every pass runs inside frozen_eval
        self.tokenizer = tokenizer
        #: the word view (``textxai.wordview``): word encodings and perturbed token rows of this tokenizer
        limit = token_limit(tokenizer, model.config)
        if max_length is not None and max_length > limit:
            raise ValueError(f"max_length={max_length}: model {self.name!r} takes at most {limit} tokens (its position "
                             f"embeddings / tokenizer limit); expected max_length <= {limit}")
        self.word_view = WordView(tokenizer, word_tokenizer, max_length or limit)
        self._embedding_rows = _embedding_rows(model)
        self._vocabularies: dict = {}
        self._auto_precision: str | None = None

    # ------------------------------------------------------------------ basics
    @property
    def labels(self) -> dict[int, str]:
        """Class index -> label name (the model's ``id2label``)."""
        return {int(k): str(v) for k, v in self.model.config.id2label.items()}

    @property
    def num_labels(self) -> int:
        return int(self.model.config.num_labels)

    def class_index(self, value, name: str = "label") -> int:
        """A class given as a label name or as an index -> its index; else a ``ValueError`` naming ``name``, the
        value and the model's labels.

        The rule (one for every type, so the same label never means two classes): a value equal to a label name
        (compared as text, any case: ``3``, ``3.0`` and ``"3"`` alike) is that class; else a whole number (``1``,
        ``"1"``, ``"1.0"``, ``1.0`` as a CSV / JSONL file may hold it) is a class index -- unless the model's label
        names are themselves numbers other than their indices (star ratings ``'1'..'5'`` on classes 0..4): then
        a number that is no label name is ambiguous and refused.

        >>> clf = as_classifier("textxai/demo-sentiment")                              # doctest: +SKIP
        >>> clf.class_index("Positive"), clf.class_index(0), clf.class_index(" 1 ")    # doctest: +SKIP
        (1, 0, 1)
        """
        labels = self.labels
        by_name = {str(v).strip().lower(): k for k, v in labels.items()}
        number = None
        if isinstance(value, str):
            key = value.strip().lower()
            if key in by_name:
                return by_name[key]
            try:
                number = float(key)
            except ValueError:
                number = None
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, (float, np.floating)):
            number = float(value)
        index = None
        if number is not None and np.isfinite(number) and number.is_integer():
            index = int(number)
            if str(index) in by_name:  # the number is a label name (3.0 and "3" as the name '3')
                return by_name[str(index)]
            if self._numeric_label_names:
                raise ValueError(
                    f"{name}={value!r:.60}: the model's labels are themselves numbers {list(labels.values())} on "
                    f"classes 0..{self.num_labels - 1}, and {index} is none of them: expected one of those label names "
                    "(a number that is no label name is not read as a class index here: it would be ambiguous)")
        if index is None or not 0 <= index < self.num_labels:
            raise ValueError(f"{name}={value!r:.60}: expected a class index 0..{self.num_labels - 1} or one of the "
                             f"model's labels {list(labels.values())}")
        return index

    def class_indices(self, labels, name: str = "labels", n: int | None = None) -> np.ndarray:
        """Gold labels (one per example when ``n`` is given) as class indices ``[n]``, read by the one rule of
        :meth:`class_index`: label names (strings) matched to the model's labels; integers are indices, except
        on a model whose label names are numbers other than their indices (classes 0..4 named '1'..'5'), where
        every label, whatever its type, is read as a name -- 1 and '1' are the same class."""
        from textxai.validation import check_labels, check_list

        values = check_list(labels, name)
        if not self._numeric_label_names and not any(isinstance(v, str) for v in values):
            return check_labels(values, name, n, self.num_labels)
        out = np.empty(len(values), dtype=np.int64)
        for i, value in enumerate(values):
            if isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name}[{i}]={value!r} (bool): expected a class index or a label name")
            out[i] = self.class_index(value, f"{name}[{i}]")
        if n is not None and len(values) != n:
            raise ValueError(f"{name} has {len(values)} items but there are {n} examples: expected one label per example")
        return out

    @property
    def _numeric_label_names(self) -> bool:
        """Whether some label name is a whole number other than its own class index (classes named '1'..'5')."""
        for k, v in self.labels.items():
            try:
                number = float(str(v).strip())
            except ValueError:
                continue
            if number != k:
                return True
        return False

    @property
    def word_tokenizer(self) -> str:
        """How texts are split into words: ``"spacy"`` or ``"whitespace"`` (``textxai.words``)."""
        return self.word_view.word_tokenizer

    @property
    def max_length(self) -> int:
        """The token limit; longer inputs are truncated with a warning."""
        return self.word_view.max_length

    @property
    def fingerprint(self) -> str:
        """A digest of the model's name, labels and parameter count: what a saved result is tied to."""
        name = getattr(self.model.config, "_name_or_path", "") or self.name
        n_params = sum(p.numel() for p in self.model.parameters())
        text = json.dumps([str(name), sorted(self.labels.items()), int(n_params)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def word_view_key(self) -> tuple:
        """What the words and token rows of a text depend on besides the model: the word tokenizer, the token limit
        and the tokenizer (class, source, size, mask token). A result remembered per text is keyed on it too: the
        same model read with another word tokenizer or ``max_length`` has other words."""
        tokenizer = self.tokenizer
        return (self.word_tokenizer, self.max_length, type(tokenizer).__name__,
                str(getattr(tokenizer, "name_or_path", "")), len(tokenizer), self.mask_token_id)

    @property
    def input_names(self) -> tuple[str, ...]:
        """The tensors of every padded batch (``encode(...).tensors``), in the order forward functions take them."""
        return ("input_ids", "attention_mask") + (("token_type_ids",) if self.word_view.uses_token_types else ())

    def word_vocabulary(self, min_length: int = 2) -> dict[str, int]:
        """Whole-word entries of the tokenizer's vocabulary, ``{word: token id}`` (rule: :func:`word_vocabulary`).

        Only ids with a row in the input embedding matrix are kept (when the model exposes one).
        """
        key = check_positive_int(min_length, "min_length")
        if key not in self._vocabularies:
            words = word_vocabulary(self.tokenizer, key)
            try:
                rows = int(self.embedding_layer.weight.shape[0])
            except (TypeError, AttributeError):
                rows = None
            self._vocabularies[key] = {w: i for w, i in words.items() if rows is None or i < rows}
        return dict(self._vocabularies[key])

    def __repr__(self) -> str:
        return f"TextClassifier({self.name!r}, labels={self.labels}, device={self.device})"

    # ------------------------------------------------------------- tokenizing
    def word_encodings(self, texts, text_pairs=None) -> list[WordEncoding]:
        """:meth:`word_encoding` of many inputs at once (one tokenizer call for the uncached ones)."""
        texts = check_texts(texts)
        return self.word_view.word_encodings(texts, check_text_pairs(text_pairs, texts))

    def word_encoding(self, text: str, text_pair: str | None = None) -> WordEncoding:
        """Token ids of one input and the word each token belongs to (cached)."""
        return self.word_view.word_encoding(text, text_pair)

    def words(self, text: str, text_pair: str | None = None) -> list[str]:
        """The words of ``text`` (then of ``text_pair``), the features of every word-level method."""
        check_texts([text], "text")
        if text_pair is not None:
            check_texts([text_pair], "text_pair")
        words = _words.tokenize(text, self.word_tokenizer)
        return words + (_words.tokenize(text_pair, self.word_tokenizer) if text_pair is not None else [])

    # --------------------------------------------------------------- forward
    def _pad(self, rows: list[tuple[np.ndarray, np.ndarray | None]]) -> dict[str, torch.Tensor]:
        length = max(len(ids) for ids, _ in rows)
        if min(len(ids) for ids, _ in rows) == 0:  # GPT-2-like tokenizers add no special token to an empty input
            raise ValueError(f"model={self.name!r}: an input has no tokens at all (an empty text, or every word "
                             "deleted, with a tokenizer that adds no special tokens): expected at least one token "
                             "per input (give non-empty texts; perturbation='mask' keeps one token per word)")
        ids = np.full((len(rows), length), self.tokenizer.pad_token_id, dtype=np.int64)
        attention = np.zeros((len(rows), length), dtype=np.int64)
        types = np.zeros((len(rows), length), dtype=np.int64)
        left = self.left_padded
        for i, (row_ids, row_types) in enumerate(rows):
            place = slice(length - len(row_ids), length) if left else slice(0, len(row_ids))
            ids[i, place] = row_ids
            attention[i, place] = 1
            if row_types is not None:
                types[i, place] = row_types
        rows_known = getattr(self, "_embedding_rows", None)
        if rows_known is not None and ids.size and int(ids.max()) >= rows_known:
            raise ValueError(
                f"tokenizer={type(self.tokenizer).__name__} gives token id {int(ids.max())} but model {self.name!r} "
                f"embeds only {rows_known} tokens: expected the tokenizer the model was trained with"
            )
        tensors = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(attention)}
        if self.word_view.uses_token_types:
            tensors["token_type_ids"] = torch.from_numpy(types)
        return {k: v.to(self.device) for k, v in tensors.items()}

    @property
    def left_padded(self) -> bool:
        """Whether batches pad on the left (the tokenizer's ``padding_side``: XLNet, whose head reads the last
        position, and left-padded decoders); ``encode(...).word_ids`` rows then cover the padded length (-1 at
        padding), else each row's own tokens."""
        return getattr(self.tokenizer, "padding_side", "right") == "left"

    def _proba_of_rows(self, rows: list[tuple[np.ndarray, np.ndarray | None]], batch_size: int, progress: bool = False,
                       precision: str = "float32", fill_tokens: int | None = None) -> np.ndarray:
        """Probabilities of token-id rows, batched by similar length (``fill_tokens``: see
        :func:`~textxai.batching.length_sorted_batches`), returned in input order; ``precision`` "bfloat16" runs
        the passes under ``torch.autocast`` (resolve "auto" first)."""
        out = np.empty((len(rows), self.num_labels), dtype=np.float64)
        lower = torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=precision == "bfloat16")
        with torch.inference_mode(), frozen_eval(self.model), lower:
            for chunk in length_sorted_batches([len(ids) for ids, _ in rows], batch_size, progress, "classifier",
                                               fill_tokens, self.batch_tokens):
                logits = self.checked_logits(model_logits(self.model(**self._pad([rows[i] for i in chunk]))))
                out[chunk] = self.probabilities(logits.double()).cpu().numpy()
        return out

    @property
    def batch_tokens(self) -> int | None:
        """The most padded tokens per batch of this model's passes: :data:`~textxai.batching.CPU_BATCH_TOKENS` on a
        CPU (long inputs in fewer rows stay in the caches), None (``batch_size`` rows) elsewhere."""
        return CPU_BATCH_TOKENS if self.device.type == "cpu" else None

    def rows_per_batch(self, batch_size: int, length: int) -> int:
        """Rows of ``length`` tokens per pass: ``batch_size``, within :attr:`batch_tokens` (one row at least)."""
        cap = self.batch_tokens
        return max(batch_size, 1) if cap is None else max(1, min(batch_size, cap // max(length, 1)))

    @property
    def multi_label(self) -> bool:
        """Whether the labels are independent (``problem_type="multi_label_classification"``: one sigmoid per label)."""
        return getattr(self, "output_kind", "single_label") == "multi_label"

    def probabilities(self, logits: torch.Tensor) -> torch.Tensor:
        """Class probabilities from logits ``[B, C]``: softmax over exclusive classes, or for a multi-label
        model the probability of each label on its own (sigmoid; rows need not sum to 1). Differentiable."""
        return torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, dim=-1)

    def require_single_label(self, method: str) -> "TextClassifier":
        """``self``, or a ``ValueError`` naming the model when it is multi-label and ``method`` needs exclusive classes."""
        if self.multi_label:
            raise ValueError(
                f"model={self.name!r} is a multi-label classifier (problem_type='multi_label_classification', "
                f"{self.num_labels} independent labels): {method} is defined for exclusive classes (softmax) only; "
                "expected a single-label classifier"
            )
        return self

    def checked_logits(self, logits: torch.Tensor) -> torch.Tensor:
        """``logits`` ``[B, C]`` when they have that shape and every value is finite, else a ``ValueError`` naming the
        model (once per batch: a diverged model must not turn into a hang or a NaN summary downstream)."""
        if logits.dim() != 2 or logits.shape[1] != self.num_labels:
            raise ValueError(f"model={self.name!r} returned logits of shape {tuple(logits.shape)}: expected [batch, "
                             f"{self.num_labels}] (one logit per label of config.num_labels) from a sequence classifier")
        finite = torch.isfinite(logits.detach())
        if not bool(finite.all()):
            bad = (~finite).reshape(len(logits), -1).any(dim=1)
            raise ValueError(
                f"model={self.name!r} returned non-finite logits (NaN or inf) for {int(bad.sum())} of {len(logits)} "
                "inputs of a batch: its weights or inputs have diverged; expected finite outputs (check the "
                "checkpoint, e.g. torch.isfinite on its parameters)"
            )
        return logits

    def resolve_precision(self, precision: str) -> str:
        """``precision`` ("auto" | "float32" | "bfloat16") as the forward passes will run it.

        "auto" is "bfloat16" when the model computes in float32, the device multiplies bfloat16 natively (a CPU
        with AVX512-BF16 or AMX; a CUDA GPU that supports it) and a probe pass over ``BF16_PROBE_TEXT`` in
        bfloat16 gives probabilities within ``BF16_PROBE_TOLERANCE`` of float32 (an error, or a model whose
        outputs move more, keeps float32); else "float32". The probe runs once per classifier.
        """
        check_choice(precision, "precision", PRECISIONS)
        if precision != "auto":
            return precision
        if self._auto_precision is None:
            self._auto_precision = "bfloat16" if self._bfloat16_agrees() else "float32"
        return self._auto_precision

    def _bfloat16_agrees(self) -> bool:
        if not native_bfloat16(self.device) or next(self.model.parameters()).dtype != torch.float32:
            return False
        encoding = self.word_view.word_encoding(BF16_PROBE_TEXT, None)
        rows = [(np.asarray(encoding.input_ids), encoding.token_type_ids)]
        try:
            lower = self._proba_of_rows(rows, 1, precision="bfloat16")
        except (RuntimeError, TypeError, ValueError):  # an op of this model without a bfloat16 kernel
            return False
        return bool(np.abs(lower - self._proba_of_rows(rows, 1)).max() <= BF16_PROBE_TOLERANCE)

    def predict_proba(self, texts, text_pairs=None, batch_size: int = 32, progress: bool = False,
                      precision: str = "float32") -> np.ndarray:
        """Class probabilities ``[n, C]`` of ``texts`` (and ``text_pairs`` for NLI-style pairs); ``precision`` of
        the forward passes: see :meth:`resolve_precision` (default the model's exact float32)."""
        texts = check_texts(texts)
        pairs = check_text_pairs(text_pairs, texts)
        check_positive_int(batch_size, "batch_size")
        precision = self.resolve_precision(precision)
        encoded = self.word_view.tokenize(texts, pairs)
        empty = next((i for i, ids in enumerate(encoded["input_ids"]) if not len(ids)), None)
        if empty is not None:
            raise ValueError(f"texts[{empty}]={texts[empty]!r:.40}: model {self.name!r}'s tokenizer gives no tokens for "
                             "it (and adds no special tokens): expected a text with at least one token")
        types = encoded.get("token_type_ids")
        rows = [(np.asarray(ids), None if types is None else np.asarray(types[i])) for i, ids in enumerate(encoded["input_ids"])]
        return self._proba_of_rows(rows, batch_size, progress, precision)

    def predict(self, texts, text_pairs=None, batch_size: int = 32) -> np.ndarray:
        """Predicted class index per text."""
        return self.predict_proba(texts, text_pairs, batch_size).argmax(axis=1)

    # ---------------------------------------------------------------- masking
    @property
    def mask_token_id(self) -> int | None:
        """The mask token, else the unk token, else None (masking impossible)."""
        return self.word_view.mask_token_id

    def perturbed_token_rows(self, encoding: WordEncoding, masks: np.ndarray, perturbation: str):
        """``(input_ids, token_type_ids)`` per row of ``masks`` ([k, words], True = word removed): the word's
        subwords replaced by the mask token (``"mask"``) or dropped (``"delete"``), as every metric perturbs
        (:func:`textxai.wordview.perturbed_token_rows`; the demo build trains on these same rows)."""
        return self.word_view.perturbed_token_rows(encoding, masks, perturbation)

    def _check_masks(self, masks, n_words: int, name: str) -> np.ndarray:
        array = np.asarray(masks)
        if array.ndim == 1 and array.size == n_words:
            array = array[None, :]
        if array.ndim != 2 or array.shape[1] != n_words:
            raise ValueError(f"{name} has shape {array.shape}: expected [k, {n_words}] (k masks over the {n_words} words)")
        if array.dtype != bool:
            if not np.isin(array, (0, 1)).all():
                raise ValueError(f"{name}: expected booleans (True = word removed)")
            array = array.astype(bool)
        return array

    def masked_proba_many(self, texts, masks_list, text_pairs=None, batch_size: int = 32, perturbation: str = "mask",
                          progress: bool = False, precision: str = "float32",
                          fill_tokens: int | None = None) -> list[np.ndarray]:
        """``masked_proba`` for many texts at once, all perturbed inputs batched together (``precision``: see
        :meth:`resolve_precision`; ``fill_tokens``: batches of short inputs take more than ``batch_size`` up to
        this many padded tokens)."""
        texts = check_texts(texts)
        pairs = check_text_pairs(text_pairs, texts)
        check_positive_int(batch_size, "batch_size")
        check_choice(perturbation, "perturbation", PERTURBATIONS)
        if fill_tokens is not None:
            check_positive_int(fill_tokens, "fill_tokens")
        precision = self.resolve_precision(precision)
        if len(masks_list) != len(texts):
            raise ValueError(f"masks_list has {len(masks_list)} items but texts has {len(texts)}: expected the same length")
        if perturbation == "mask" and self.mask_token_id is None:
            raise ValueError(
                f"perturbation='mask': the tokenizer of model {self.name!r} has neither a mask nor an unk token; "
                "use perturbation='delete'"
            )
        encodings = self.word_view.word_encodings(texts, pairs)
        rows, sizes = [], []
        for i, (encoding, masks) in enumerate(zip(encodings, masks_list)):
            masks = self._check_masks(masks, encoding.n_words, f"masks_list[{i}]" if len(texts) > 1 else "masks")
            rows.extend(self.perturbed_token_rows(encoding, masks, perturbation))
            sizes.append(masks.shape[0])
        if not rows:
            return [np.empty((0, self.num_labels)) for _ in texts]
        probs = self._proba_of_rows(rows, batch_size, progress, precision, fill_tokens)
        return np.split(probs, np.cumsum(sizes)[:-1])

    def masked_proba(self, text: str, masks, text_pair: str | None = None, batch_size: int = 32,
                     perturbation: str = "mask", precision: str = "float32") -> np.ndarray:
        """Probabilities ``[k, C]`` with the words chosen by each row of ``masks`` ([k, n_words], True = removed).

        ``perturbation="mask"`` replaces every subword token of a chosen word by the mask token (the unk
        token when there is none); ``"delete"`` removes them. Special tokens are never touched.
        """
        pairs = None if text_pair is None else [text_pair]
        return self.masked_proba_many([text], [masks], pairs, batch_size, perturbation, precision=precision)[0]

    # ------------------------------------------------------------ embeddings
    def encode(self, texts, text_pairs=None) -> Encoding:
        """A padded batch of ``texts`` on the device, with the word alignment of every row."""
        texts = check_texts(texts)
        pairs = check_text_pairs(text_pairs, texts)
        encodings = self.word_view.word_encodings(texts, pairs)
        tensors = self._pad([(e.input_ids, e.token_type_ids) for e in encodings])
        word_ids = [e.word_ids for e in encodings]
        if self.left_padded:  # each row's word ids at its tensor positions: padding (first) belongs to no word
            length = tensors["input_ids"].shape[1]
            word_ids = [np.concatenate([np.full(length - len(w), -1, dtype=np.int64), w]) for w in word_ids]
        return Encoding(tensors=tensors, word_ids=word_ids, words=[e.words for e in encodings])

    @property
    def embedding_layer(self) -> torch.nn.Module:
        try:  # transformers' default raises NotImplementedError for a model it cannot look into
            layer = self.model.get_input_embeddings()
        except (AttributeError, NotImplementedError):
            layer = None
        if layer is None:
            raise TypeError(f"model class {type(self.model).__name__} does not expose its input embeddings "
                            "(get_input_embeddings); gradient methods need them")
        return layer

    @property
    def embedding_matrix(self) -> torch.Tensor:
        """The input (word-piece) embedding matrix ``[V, d]``."""
        return self.embedding_layer.weight

    def input_embeddings(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """Output of the model's input embedding layer for a padded batch ``[B, L, d]``."""
        with frozen_eval(self.model):
            return self.embedding_layer(tensors["input_ids"])

    @functools.cached_property
    def _embedding_modules(self) -> list[torch.nn.Module]:
        """The input embedding layer and every embedding module sharing its weight (tied encoder/decoder tables)."""
        layer = self.embedding_layer
        weight = getattr(layer, "weight", None)
        return [m for m in self.model.modules()
                if m is layer or (weight is not None and isinstance(m, torch.nn.Embedding) and m.weight is weight)]

    def logits_from_embeddings(self, embeds: torch.Tensor, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits ``[B, C]`` of the model fed ``embeds`` in place of the embeddings of ``tensors["input_ids"]``.

        ``embeds`` ``[B, L, d]`` replaces the output of the input embedding layer (``input_embeddings``) while
        the model still receives ``tensors`` (token ids included), so heads that locate tokens by id work.
        An encoder-decoder model whose decoder embeds the right-shifted input with the same (tied) table gets
        ``embeds`` shifted right there too, after its own start token: its logits are a function of
        ``embeds`` alone. Differentiable in ``embeds``. ``TypeError`` naming the model class when the model
        does not embed its ``input_ids`` that way.
        """
        ids = tensors.get("input_ids")
        if ids is None:
            raise ValueError(f"tensors has keys {sorted(tensors)}: expected the tensors of encode(...), 'input_ids' included")
        if tuple(embeds.shape[:2]) != tuple(ids.shape):
            raise ValueError(f"embeds has shape {tuple(embeds.shape)}: expected [{ids.shape[0]}, {ids.shape[1]}, d] "
                             "(one vector per token of tensors['input_ids'])")
        model_class = type(self.model).__name__
        encoder_decoder = bool(getattr(self.model.config, "is_encoder_decoder", False))
        calls: list[int] = []

        def swap(module, args, kwargs, output):
            seen = args[0] if args else next(iter(kwargs.values()), None)
            calls.append(1)
            if len(calls) == 1 and isinstance(seen, torch.Tensor) and torch.equal(seen, ids):
                return embeds
            if (len(calls) == 1 and isinstance(seen, torch.Tensor) and seen.dim() == 2 and ids.dim() == 2
                    and tuple(seen.shape) == tuple(ids.shape[::-1]) and torch.equal(seen, ids.T)):
                return embeds.transpose(0, 1)  # XLNet embeds its ids time-major ([L, B])
            if (len(calls) == 2 and encoder_decoder and isinstance(seen, torch.Tensor) and seen.shape == ids.shape
                    and torch.equal(seen[:, 1:], ids[:, :-1])):
                return torch.cat([output[:, :1], embeds[:, :-1]], dim=1)
            raise TypeError(f"model class {model_class} calls its input embedding layer on other ids than its input "
                            "(and, for an encoder-decoder, the input shifted right); it cannot be fed embeddings")

        with frozen_eval(self.model):  # holds the model's lock: no other thread's forward meets this hook
            handles = [m.register_forward_hook(swap, with_kwargs=True) for m in self._embedding_modules]
            try:
                logits = model_logits(self.model(**tensors))
            finally:
                for handle in handles:
                    handle.remove()
        if not calls:
            raise TypeError(f"model class {model_class} never calls its input embedding layer (get_input_embeddings) "
                            "on its input_ids; it cannot be fed embeddings")
        return self.checked_logits(logits)


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


_FUNCTION_SERIALS = itertools.count()


class FunctionClassifier(TextClassifier):
    """A :class:`~textxai.classifier.TextClassifier` over ``fn(texts) -> probabilities [n, C]``.

    Args:
        fn: called with a list of strings; returns an array-like ``[n, C]`` of class probabilities (rows summing
            to 1; with ``multi_label=True`` each in [0, 1]).
        labels: class names (a list or ``{index: name}``); default ``LABEL_0``... from the first call.
        word_tokenizer: ``"spacy"`` (default) or ``"whitespace"``.
        mask_token: what ``perturbation="mask"`` puts in place of a word.
        multi_label: the columns are independent labels (sigmoids), not exclusive classes.
    """

    def __init__(self, fn, labels=None, word_tokenizer: str = "spacy", mask_token: str = "[MASK]",
                 multi_label: bool = False, name: str | None = None):
        from textxai.blackbox import _Placeholder, _PieceView

        if not callable(fn):
            raise TypeError(f"model={short_repr(fn)}: expected a function from a list of texts to probabilities")
        check_choice(word_tokenizer, "word_tokenizer", _words.WORD_TOKENIZERS)
        if not isinstance(mask_token, str):
            raise TypeError(f"mask_token={short_repr(mask_token)}: expected a string")
        self.fn = fn
        self.name = name or f"<function {getattr(fn, '__qualname__', type(fn).__name__)}>"
        self.output_kind = "multi_label" if multi_label else "single_label"
        self.device = torch.device("cpu")
        self.model = _Placeholder()
        self.tokenizer = None
        self.word_view = _PieceView(word_tokenizer, mask_token)
        self._embedding_rows = None
        self._vocabularies: dict = {}
        self._auto_precision = "float32"
        self._serial = next(_FUNCTION_SERIALS)
        if labels is None:
            n = self._call(["a probe text"]).shape[1]
            labels = [f"LABEL_{i}" for i in range(n)]
        names = dict(labels) if isinstance(labels, dict) else dict(enumerate(labels))
        self._labels = {int(k): str(v) for k, v in names.items()}
        if sorted(self._labels) != list(range(len(self._labels))) or len(self._labels) < 2:
            raise ValueError(f"labels={short_repr(labels)}: expected at least 2 class names, indexed 0..C-1")
        if len({v.strip().lower() for v in self._labels.values()}) != len(self._labels):
            raise ValueError(f"labels={short_repr(labels)}: expected distinct class names")

    # ----------------------------------------------------------------- basics
    @property
    def labels(self) -> dict[int, str]:
        return dict(self._labels)

    @property
    def num_labels(self) -> int:
        return len(self._labels)

    @property
    def fingerprint(self) -> str:
        return f"function:{self.name}:{self._serial}:{sorted(self._labels.items())}"

    @property
    def word_view_key(self) -> tuple:
        return (self.word_tokenizer, "function", self.word_view.mask_token)

    @property
    def left_padded(self) -> bool:
        return False

    def resolve_precision(self, precision: str) -> str:
        check_choice(precision, "precision", PRECISIONS)
        return "float32"  # the function computes as it does

    def word_vocabulary(self, min_length: int = 2) -> dict[str, int]:
        raise TypeError(f"model={self.name!r} is a black-box function: it has no tokenizer vocabulary; expected a "
                        "transformers classifier for methods that draw replacement words from the model's vocabulary")

    def __repr__(self) -> str:
        return f"FunctionClassifier({self.name!r}, labels={self.labels})"

    # ----------------------------------------------------------- probabilities
    def _call(self, texts: list[str]) -> np.ndarray:
        try:
            out = self.fn(list(texts))
        except Exception as error:
            raise ValueError(f"model={self.name!r} (a function) failed on {len(texts)} texts: "
                             f"{type(error).__name__}: {error}") from error
        try:
            probs = np.asarray(out.detach().cpu() if isinstance(out, torch.Tensor) else out, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"model={self.name!r} returned {short_repr(out)}: expected class probabilities "
                             "[n_texts, n_classes]") from None
        if probs.ndim != 2 or probs.shape[0] != len(texts) or (hasattr(self, "_labels") and probs.shape[1] != self.num_labels):
            want = f"[{len(texts)}, {self.num_labels if hasattr(self, '_labels') else 'n_classes'}]"
            raise ValueError(f"model={self.name!r} returned shape {probs.shape} for {len(texts)} texts: expected {want}")
        if not np.isfinite(probs).all():
            raise ValueError(f"model={self.name!r} returned NaN or inf: expected finite class probabilities")
        if (probs < -1e-6).any() or (probs > 1 + 1e-6).any():
            raise ValueError(f"model={self.name!r} returned values outside [0, 1]: expected probabilities (apply "
                             "softmax to logits)")
        if self.output_kind == "single_label" and not np.allclose(probs.sum(1), 1.0, atol=1e-4):
            raise ValueError(f"model={self.name!r} returned rows summing to {probs.sum(1)[:3].round(4).tolist()}: "
                             "expected exclusive class probabilities summing to 1 (or multi_label=True)")
        return probs

    def _batched(self, texts: list[str], batch_size: int) -> np.ndarray:
        if not texts:
            return np.empty((0, self.num_labels))
        return np.vstack([self._call(texts[i: i + batch_size]) for i in range(0, len(texts), batch_size)])

    def predict_proba(self, texts, text_pairs=None, batch_size: int = 32, progress: bool = False,
                      precision: str = "float32") -> np.ndarray:
        texts = check_texts(texts)
        if text_pairs is not None:
            self.word_view.word_encoding("", text_pairs)  # the ValueError naming text_pairs
        check_positive_int(batch_size, "batch_size")
        self.resolve_precision(precision)
        return self._batched(texts, batch_size)

    def _proba_of_rows(self, rows, batch_size: int, progress: bool = False, precision: str = "float32",
                       fill_tokens: int | None = None) -> np.ndarray:
        return self._batched([self.word_view.text(ids) for ids, _ in rows], batch_size)

    # ------------------------------------------------------------ no gradients
    @property
    def embedding_layer(self):
        from textxai.blackbox import GRADIENT_REASON

        raise TypeError(f"model={self.name!r} " + GRADIENT_REASON.format(what="this method (FIM, gradient explainers)"))

    def encode(self, texts, text_pairs=None):
        from textxai.blackbox import GRADIENT_REASON

        raise TypeError(f"model={self.name!r} " + GRADIENT_REASON.format(what="this method (FIM, gradient explainers)"))

    def logits_from_embeddings(self, embeds, tensors):
        from textxai.blackbox import GRADIENT_REASON

        raise TypeError(f"model={self.name!r} " + GRADIENT_REASON.format(what="this method (FIM, gradient explainers)"))
