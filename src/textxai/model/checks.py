"""Loading a sequence classifier by name, and every check of what was loaded (the seam "loading / validation").

A name is a Hub id, a local folder saved with ``save_pretrained`` or one of the demo models (``DEMO_MODELS``,
built from package data by :mod:`textxai.demo`). What is loaded -- by name or given as objects -- is checked
before any pass: a classification head (not an LM or a bare encoder; weights not on the meta device), one distinct
label per logit column, a regression head refused (:func:`output_kind`), a tokenizer with a vocabulary, a device
that exists here. Each failure is a ``ValueError`` naming the model, the value and what was expected.
"""
from __future__ import annotations

import os

import torch

from textxai import demo as _demo

DEMO_MODELS = tuple(_demo.MODEL_IDS.values())


def load_from_name(name: str, tokenizer, load_kwargs: dict, allow_new_head: bool = False):
    """``(model, tokenizer)`` of a Hub id, a local folder or a demo model (within the Hub deadline when it may
    reach the Hub; transformers' progress bars and load reports silenced: a problem is our ``ValueError``)."""
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



def embedding_rows(model) -> int | None:
    """Rows of the model's input embedding matrix (token ids it can embed), None when it does not expose one."""
    try:
        layer = model.get_input_embeddings()
        return int(layer.weight.shape[0])
    except (AttributeError, NotImplementedError, TypeError):
        return None

