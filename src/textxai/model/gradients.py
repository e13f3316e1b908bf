"""Embeddings in, logits out (the seam "embeddings / gradients"): what the gradient explainers and the FIM read.

Gradient methods feed the model embeddings in place of token ids (``input_embeddings`` ->
``logits_from_embeddings``). The embeddings are swapped in at the model's input-embedding layer, so the
model still receives its token ids: encoder-only (BERT, RoBERTa...), decoder-only (GPT-2, Llama...) and
encoder-decoder classifiers (BART, T5...) all work, heads that find a token by its id included (BART's
last ``</s>``, GPT-2's last non-padding token). A model that cannot be fed embeddings this way raises a
``TypeError`` naming its class.

:class:`EmbeddingAccess` is a part of :class:`~textxai.classifier.TextClassifier` (its base): it uses the
batch padding and the logits check of :class:`~textxai.model.probabilities.Probabilities`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from textxai.model.passes import frozen_eval, model_logits
from textxai.validation import check_text_pairs, check_texts


@dataclass
class Encoding:
    """A padded batch on the classifier's device, with each row's word alignment."""

    tensors: dict[str, torch.Tensor]
    word_ids: list[np.ndarray]
    words: list[list[str]]



class EmbeddingAccess:
    """A padded batch with its word alignment, the input embeddings, and logits from embeddings (a base of
    ``TextClassifier``)."""

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
