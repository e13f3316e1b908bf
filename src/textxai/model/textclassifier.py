"""The :class:`TextClassifier` (the seam's core: construction from any form of a classifier, labels, words).

Its passes are its two bases: :class:`~textxai.model.probabilities.Probabilities` (batched probabilities,
precision, masking) and :class:`~textxai.model.gradients.EmbeddingAccess` (embeddings in, logits out); what it
loads and checks is :mod:`textxai.model.checks`. Import it from :mod:`textxai.classifier`.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np
import torch

from textxai import words as _words
from textxai.model.checks import (DEMO_MODELS, check_classifier_model, check_device, check_labels, check_vocabulary,
                                  embedding_rows, load_from_name, output_kind, tokenizer_from_name)
from textxai.model.gradients import EmbeddingAccess
from textxai.model.probabilities import Probabilities
from textxai.validation import ClassIndices, check_choice, check_positive_int, check_text_pairs, check_texts
from textxai.wordview import WordEncoding, WordView, token_limit, word_vocabulary


class TextClassifier(Probabilities, EmbeddingAccess):
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
            model, tokenizer = load_from_name(model, tokenizer, load_kwargs, allow_new_head)
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
        self._embedding_rows = embedding_rows(model)
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
        if isinstance(labels, ClassIndices):  # read once already: indices, whatever the label names
            return check_labels([int(v) for v in values], name, n, self.num_labels)
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
