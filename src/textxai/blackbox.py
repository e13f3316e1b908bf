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

import itertools
import uuid

import numpy as np
import torch

from textxai import words as _words
from textxai.model.passes import PRECISIONS
from textxai.model.textclassifier import TextClassifier
from textxai.validation import check_choice, check_positive_int, check_texts, short_repr
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
        raise TypeError(f"model={self.name!r} " + GRADIENT_REASON.format(what="this method (FIM, gradient explainers)"))

    def encode(self, texts, text_pairs=None):
        raise TypeError(f"model={self.name!r} " + GRADIENT_REASON.format(what="this method (FIM, gradient explainers)"))

    def logits_from_embeddings(self, embeds, tensors):
        raise TypeError(f"model={self.name!r} " + GRADIENT_REASON.format(what="this method (FIM, gradient explainers)"))
