"""A black-box classifier: a plain function from texts to class probabilities (a scikit-learn pipeline's
``predict_proba``, a remote endpoint), behind the same seam as a Hugging Face model: the parts of
:class:`textxai.classifier.FunctionClassifier` (its word view over text pieces, its placeholder model), which
``as_classifier`` builds from a plain function.

Every method that needs only probabilities works on it: NAOPC with omission / LIME / Kernel SHAP attributions,
the perturbation explainers, the editors and the inconsistency / CEval scores. Gradient methods (FIM difficulty,
integrated gradients, gradient x input) need the model's input embeddings, which a function does not have: they
are refused with a ``TypeError`` that says so.

Words are the project's word tokens (``textxai.words``); perturbations happen on the text: ``"delete"`` removes a
word, ``"mask"`` puts ``mask_token`` (default ``"[MASK]"``) in its place; the characters between words are kept,
so the unperturbed text is exactly the text given.

>>> import numpy as np
>>> from textxai.classifier import FunctionClassifier
>>> clf = FunctionClassifier(lambda texts: np.array([[0.2, 0.8] if "good" in t else [0.9, 0.1] for t in texts]),
...                          labels=["negative", "positive"])
>>> clf.predict_proba(["a good film"]).round(2).tolist()
[[0.2, 0.8]]
>>> clf.masked_proba("a good film", [[False, True, False]], perturbation="delete").round(2).tolist()
[[0.9, 0.1]]
"""
from __future__ import annotations

import uuid

import numpy as np
import torch

from textxai import words as _words
from textxai.validation import short_repr
from textxai.wordview import WordEncoding

GRADIENT_REASON = ("is a black-box function (texts -> class probabilities): it has no input embeddings and no "
                   "gradients; {what} needs a model with them (a transformers classifier). Methods that need only "
                   "probabilities work: omission, LIME, Kernel SHAP, NAOPC, the editors, inconsistency, CEval")


class _Placeholder(torch.nn.Module):
    """Stands where a transformers model would be (locks, eval mode); its one buffer makes the weights digest of
    each black-box classifier its own (the function's behaviour cannot be read, so nothing is shared)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("identity", torch.tensor(list(uuid.uuid4().bytes), dtype=torch.uint8))


class _PieceView:
    """The word view of a black box: a text is pieces (its leading characters, then each word with the characters
    up to the next word); a row of piece ids is joined back into a text."""

    uses_token_types = False
    max_length = 10**9

    def __init__(self, word_tokenizer: str, mask_token: str):
        self.word_tokenizer = word_tokenizer
        self.mask_token = mask_token
        self._pieces: list[str] = []
        self._ids: dict[str, int] = {}
        self._cache: dict = {}

    mask_token_id = -1  # never a piece: masking is done by :meth:`perturbed_token_rows`

    def piece_id(self, piece: str) -> int:
        if piece not in self._ids:
            self._ids[piece] = len(self._pieces)
            self._pieces.append(piece)
        return self._ids[piece]

    def text(self, ids) -> str:
        return "".join(self._pieces[int(i)] for i in ids)

    def word_encoding(self, text: str, text_pair: str | None = None) -> WordEncoding:
        if text_pair is not None:
            raise ValueError(f"text_pairs={short_repr(text_pair)}: a black-box function takes single texts; expected "
                             "text_pairs=None (join the pair into one text yourself)")
        if text not in self._cache:
            spans = _words.word_spans(text, self.word_tokenizer)
            starts = [s for _, s, _ in spans] + [len(text)]
            pieces = [(text[: starts[0]], -1)] + [(text[starts[j]: starts[j + 1]], j) for j in range(len(spans))]
            pieces = [(p, w) for p, w in pieces if p or w >= 0] or [("", -1)]
            self._cache[text] = WordEncoding(
                input_ids=np.array([self.piece_id(p) for p, _ in pieces], dtype=np.int64), token_type_ids=None,
                word_ids=np.array([w for _, w in pieces], dtype=np.int64), words=[w for w, _, _ in spans])
        return self._cache[text]

    def word_encodings(self, texts, pairs):
        return [self.word_encoding(t, None if pairs is None else pairs[i]) for i, t in enumerate(texts)]

    def perturbed_token_rows(self, encoding: WordEncoding, masks: np.ndarray, perturbation: str):
        rows = []
        for mask in masks:
            ids = []
            for piece_id, word in zip(encoding.input_ids, encoding.word_ids):
                if word < 0 or not mask[word]:
                    ids.append(int(piece_id))
                elif perturbation == "mask":
                    piece = self._pieces[int(piece_id)]
                    tail = piece[len(encoding.words[word]):]
                    ids.append(self.piece_id(self.mask_token + tail))
            rows.append((np.array(ids or [self.piece_id("")], dtype=np.int64), None))
        return rows
