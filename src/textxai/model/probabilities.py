"""Batched probabilities of one classifier (the seam "probabilities / batching"): token rows padded into
length-sorted batches, logits checked and turned into probabilities by the head's kind, the precision of the
passes (``"auto"``: the bfloat16 probe), and the masking of words.

:class:`Probabilities` is a part of :class:`~textxai.classifier.TextClassifier` (its base): it reads what the
classifier's construction set (``model``, ``tokenizer``, ``word_view``, ``device``, ``name``, ``num_labels``,
``output_kind``, ``_embedding_rows``, ``_auto_precision``).
"""
from __future__ import annotations

import hashlib

import numpy as np
import torch

from textxai.batching import CPU_BATCH_TOKENS, length_sorted_batches, row_memory
from textxai.model.passes import BF16_PROBE_TEXT, BF16_PROBE_TOLERANCE, PRECISIONS, frozen_eval, model_logits, native_bfloat16
from textxai.validation import check_choice, check_positive_int, check_text_pairs, check_texts
from textxai.wordview import PERTURBATIONS, WordEncoding


def _row_key(ids, types, precision: str) -> tuple:
    """What a row's probabilities depend on besides the model: its token ids and segment ids, the precision."""
    digest = hashlib.blake2b(np.ascontiguousarray(ids, dtype=np.int64).tobytes(), digest_size=16)
    if types is not None:
        digest.update(b"|" + np.ascontiguousarray(types, dtype=np.int64).tobytes())
    return precision, len(ids), digest.digest()


class Probabilities:
    """Probabilities of texts and of texts with words removed, in batches (a base of ``TextClassifier``)."""

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
        the passes under ``torch.autocast`` (resolve "auto" first). Inside
        :func:`~textxai.batching.remembered_rows` a row scored before (or twice in ``rows``) is computed once."""
        memory = row_memory(self.model)
        if memory is None:
            return self._forward_rows(rows, batch_size, progress, precision, fill_tokens)
        keys = [_row_key(ids, types, precision) for ids, types in rows]
        found, first = {}, {}   # remembered rows; each new row's first position
        for i, key in enumerate(keys):
            if key not in found and key not in first:
                hit = memory.get(key)
                if hit is None:
                    first[key] = i
                else:
                    found[key] = hit
        if first:
            todo = list(first.values())
            for i, p in zip(todo, self._forward_rows([rows[i] for i in todo], batch_size, progress, precision, fill_tokens)):
                found[keys[i]] = p.copy()
                memory.put(keys[i], found[keys[i]])
        return np.array([found[key] for key in keys], dtype=np.float64).reshape(len(rows), self.num_labels)

    def _forward_rows(self, rows, batch_size: int, progress: bool, precision: str, fill_tokens: int | None) -> np.ndarray:
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

    def require_single_label(self, method: str):
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
