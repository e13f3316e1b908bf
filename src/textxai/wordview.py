"""The word view of a tokenizer: which subword tokens make each word, and the token rows of a text with
words removed -- the perturbation every metric applies.

Model-free (a tokenizer is all it needs), so that both the model seam (:class:`textxai.classifier.TextClassifier`,
which owns one :class:`WordView`) and the demo build (which trains on exactly these perturbed rows, see
``textxai.demo._build``) use the same code without depending on each other.

Words are the project's word tokens (``textxai.words``, spaCy's blank English tokenizer by default). Each
subword token belongs to the word it overlaps most (by characters); special tokens (CLS, SEP, the pair
separator, padding) belong to no word and are never touched. For a sentence pair the words are those of the
first text followed by those of the second. ``"mask"`` replaces every subword token of a removed word by the
tokenizer's mask token (its unk token when there is none); ``"delete"`` drops them.

>>> import numpy as np
>>> encoding = WordEncoding(input_ids=np.array([101, 7, 8, 9, 102]), token_type_ids=None,
...                         word_ids=np.array([-1, 0, 1, 1, -1]), words=["good", "film"])
>>> [ids.tolist() for ids, _ in perturbed_token_rows(encoding, np.array([[False, True]]), "mask", mask_id=103)]
[[101, 7, 103, 103, 102]]
>>> [ids.tolist() for ids, _ in perturbed_token_rows(encoding, np.array([[True, False]]), "delete")]
[[101, 8, 9, 102]]
"""
from __future__ import annotations

import bisect
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from textxai import words as _words
from textxai.validation import check_choice, check_positive_int

PERTURBATIONS = ("mask", "delete")
#: Word encodings kept per view (least recently used dropped first).
CACHE_SIZE = 8192
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



@dataclass(frozen=True)
class WordEncoding:
    """One tokenized input with its word alignment."""

    input_ids: np.ndarray  # [L] token ids, special tokens included
    token_type_ids: np.ndarray | None  # [L] or None when the model has no segment ids
    word_ids: np.ndarray  # [L] index of the word each token belongs to, -1 for special tokens
    words: list[str]  # words of the text (then of the pair)
    #: (token, word): a token that also belongs to a word that has no token of its own (see :meth:`WordView._align`)
    shared: tuple[tuple[int, int], ...] = ()

    @property
    def n_words(self) -> int:
        return len(self.words)

    def tokens_of(self, word: int) -> np.ndarray:
        """The positions of the tokens of word ``word``: its own and those it shares (removing it changes these)."""
        own = self.word_ids == word
        for t, j in self.shared:
            own[t] |= j == word
        return np.flatnonzero(own)

    @property
    def seen_words(self) -> np.ndarray:
        """The words that have a token (their own or a shared one), sorted: those a truncated input still holds."""
        return np.unique(np.r_[self.word_ids[self.word_ids >= 0], [j for _, j in self.shared]].astype(np.int64))


def mask_token_id(tokenizer) -> int | None:
    """The tokenizer's mask token, else its unk token, else None (masking impossible)."""
    for token_id in (tokenizer.mask_token_id, tokenizer.unk_token_id):
        if token_id is not None:
            return int(token_id)
    return None


def token_limit(tokenizer, config) -> int:
    """The most tokens a model (its ``config``) takes with ``tokenizer``: the smaller of the tokenizer's
    ``model_max_length`` and the position table (less RoBERTa's padding offset); 512 when neither is known
    (XLNet: relative positions, no table)."""
    limits = []
    if 0 < getattr(tokenizer, "model_max_length", 0) < 100_000:
        limits.append(int(tokenizer.model_max_length))
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:  # XLNet has no position table (its config says -1)
        offset = config.pad_token_id + 1 if config.model_type in ("roberta", "xlm-roberta", "camembert") else 0
        limits.append(int(positions) - offset)
    return min(limits) if limits else 512


def perturbed_token_rows(encoding: WordEncoding, masks: np.ndarray, perturbation: str, mask_id: int | None = None):
    """``(input_ids, token_type_ids)`` per row of ``masks`` ([k, words], True = word removed): the word's
    subwords replaced by ``mask_id`` (``"mask"``) or dropped (``"delete"``), as every metric perturbs."""
    chosen = np.zeros((masks.shape[0], len(encoding.word_ids)), dtype=bool)
    in_word = encoding.word_ids >= 0
    chosen[:, in_word] = masks[:, encoding.word_ids[in_word]]
    for t, j in encoding.shared:  # a token shared with a word that has none of its own goes with either word
        chosen[:, t] |= masks[:, j]
    if perturbation == "mask":
        if mask_id is None:
            raise ValueError("perturbation='mask': the tokenizer has neither a mask nor an unk token; "
                             "use perturbation='delete'")
        ids = np.where(chosen, mask_id, encoding.input_ids[None, :])
        return [(row, encoding.token_type_ids) for row in ids]
    keep = ~chosen
    types = encoding.token_type_ids
    return [(encoding.input_ids[k], None if types is None else types[k]) for k in keep]


class WordView:
    """Word encodings (cached) and perturbed token rows of one tokenizer.

    Args:
        tokenizer: a fast transformers tokenizer (word alignment needs offset mappings).
        word_tokenizer: ``"spacy"`` (default) or ``"whitespace"``; see ``textxai.words``.
        max_length: the token limit; longer inputs are truncated with one warning per call.
    """

    def __init__(self, tokenizer, word_tokenizer: str = "spacy", max_length: int = 512):
        check_choice(word_tokenizer, "word_tokenizer", _words.WORD_TOKENIZERS)
        self.tokenizer = tokenizer
        self.word_tokenizer = word_tokenizer
        self.max_length = check_positive_int(max_length, "max_length")
        self.uses_token_types = "token_type_ids" in getattr(tokenizer, "model_input_names", [])
        self._cache: OrderedDict = OrderedDict()
        # one thread at a time: a fast tokenizer's truncation setting is state (concurrent calls that change it
        # fail with "Already borrowed"), and so is the cache's order
        self._lock = threading.RLock()

    @property
    def mask_token_id(self) -> int | None:
        return mask_token_id(self.tokenizer)

    def tokenize(self, texts: list[str], pairs: list[str] | None, offsets: bool = False):
        """Unpadded token ids for every input; truncated (one warning per call) when too long."""
        with self._lock:
            return self._tokenize(texts, pairs, offsets)

    def _tokenize(self, texts: list[str], pairs: list[str] | None, offsets: bool = False):
        # user text is text: "[SEP]", "</s>" or "<|endoftext|>" written in it are split as plain characters, never
        # read as the tokenizer's control tokens (a forged separator or eos would move heads that find their token
        # by id -- BART / T5 refuse a batch whose rows have different eos counts -- and could not be masked)
        kwargs = dict(add_special_tokens=True, return_offsets_mapping=offsets, return_token_type_ids=self.uses_token_types,
                      split_special_tokens=True)
        call = self.tokenizer
        encoded = call(texts, pairs, truncation=False, **kwargs) if pairs is not None else call(texts, truncation=False, **kwargs)
        too_long = [i for i, ids in enumerate(encoded["input_ids"]) if len(ids) > self.max_length]
        if too_long:
            warnings.warn(
                f"{len(too_long)} of {len(texts)} inputs are longer than the model's maximum of {self.max_length} tokens "
                "and were truncated", stacklevel=4,
            )
            sub_texts = [texts[i] for i in too_long]
            sub_pairs = [pairs[i] for i in too_long] if pairs is not None else None
            trunc = call(sub_texts, sub_pairs, truncation=True, max_length=self.max_length, **kwargs)
            for j, i in enumerate(too_long):
                for key in encoded.keys():
                    encoded[key][i] = trunc[key][j]
                if getattr(encoded, "_encodings", None) is not None:  # offsets, sequence ids of the cut row
                    encoded._encodings[i] = trunc._encodings[j]
        self._no_control_tokens(encoded)
        return encoded

    def _no_control_tokens(self, encoded) -> None:
        """Text tokens that are still a special token's id (a SentencePiece vocabulary may spell '</s>' from the
        characters themselves) become the unk token, in place: only the tokenizer's own additions are control tokens."""
        special = set(getattr(self.tokenizer, "all_special_ids", None) or [])
        unk = self.tokenizer.unk_token_id
        special.discard(unk)
        if not special or unk is None or not getattr(self.tokenizer, "is_fast", False):
            return
        for i, ids in enumerate(encoded["input_ids"]):
            for t, seq in zip(range(len(ids)), encoded.sequence_ids(i)):
                if seq is not None and ids[t] in special:
                    ids[t] = unk

    def word_encoding(self, text: str, text_pair: str | None = None) -> WordEncoding:
        """Token ids of one input and the word each token belongs to (cached)."""
        key = (text, text_pair)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            return self.word_encodings([text], None if text_pair is None else [text_pair])[0]

    def word_encodings(self, texts: list[str], pairs: list[str] | None) -> list[WordEncoding]:
        """:meth:`word_encoding` of many (checked) inputs: one tokenizer call for the uncached ones."""
        with self._lock:
            return self._word_encodings(texts, pairs)

    def _word_encodings(self, texts: list[str], pairs: list[str] | None) -> list[WordEncoding]:
        keys = [(t, None if pairs is None else pairs[i]) for i, t in enumerate(texts)]
        found = {key: self._cache[key] for key in keys if key in self._cache}
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            if not getattr(self.tokenizer, "is_fast", False):
                raise ValueError(
                    f"tokenizer={type(self.tokenizer).__name__}: word alignment needs a fast tokenizer (offset mappings); "
                    "load it with use_fast=True"
                )
            sub_texts = [texts[i] for i in missing]
            sub_pairs = [pairs[i] for i in missing] if pairs is not None else None
            encoded = self._tokenize(sub_texts, sub_pairs, offsets=True)
            for j, i in enumerate(missing):
                found[keys[i]] = self._cache[keys[i]] = self._align(encoded, j, *keys[i])
                if len(self._cache) > CACHE_SIZE:  # more texts than the cache holds: answered from ``found``
                    self._cache.popitem(last=False)
        return [found[key] for key in keys]

    def _align(self, encoded, row: int, text: str, pair: str | None) -> WordEncoding:
        spans = [_words.word_spans(text, self.word_tokenizer)]
        if pair is not None:
            spans.append(_words.word_spans(pair, self.word_tokenizer))
        starts = [[s for _, s, _ in seq] for seq in spans]
        first_word = [0, len(spans[0])]
        sequence_ids = encoded.sequence_ids(row)
        offsets = encoded["offset_mapping"][row]
        word_ids = np.full(len(offsets), -1, dtype=np.int64)
        for t, ((a, b), seq) in enumerate(zip(offsets, sequence_ids)):
            if seq is None or b <= a:
                continue
            seq_spans = spans[seq]
            j = max(bisect.bisect_right(starts[seq], a) - 1, 0)
            best, best_overlap = -1, 0
            while j < len(seq_spans) and seq_spans[j][1] < b:
                overlap = min(b, seq_spans[j][2]) - max(a, seq_spans[j][1])
                if overlap > best_overlap:
                    best, best_overlap = j, overlap
                j += 1
            if best >= 0:
                word_ids[t] = first_word[seq] + best
        shared = self._shared(word_ids, offsets, sequence_ids, spans, first_word, (text, pair))
        token_types = encoded["token_type_ids"][row] if "token_type_ids" in encoded else None
        return WordEncoding(
            input_ids=np.asarray(encoded["input_ids"][row], dtype=np.int64),
            token_type_ids=None if token_types is None else np.asarray(token_types, dtype=np.int64),
            word_ids=word_ids,
            words=[w for seq in spans for w, _, _ in seq],
            shared=shared,
        )

    @staticmethod
    def _shared(word_ids, offsets, sequence_ids, spans, first_word, texts) -> tuple:
        """``(token, word)`` for every word that no token belongs to although a token covers some of its characters
        across a boundary with punctuation or white space: a Metaspace BPE token ``ing,`` of ``acting,`` belongs to
        ``acting`` (the larger overlap) and also to ``,``, so removing either word removes that token and ``,`` is
        no longer a word that removing changes nothing. Between two letters or digits (spaCy's ``can`` + ``not``
        inside WordPiece's one token ``cannot``) nothing is shared: the word stays without tokens, as before."""
        owned = set(word_ids[word_ids >= 0].tolist())
        shared = []
        for seq, seq_spans in enumerate(spans):
            text = texts[seq]
            for j, (_, start, end) in enumerate(seq_spans):
                word = first_word[seq] + j
                if word in owned:
                    continue
                for t, ((a, b), s) in enumerate(zip(offsets, sequence_ids)):
                    if s != seq or b <= a or min(b, end) <= max(a, start) or word_ids[t] < 0:
                        continue
                    # the boundary the token crosses into this word: before it (an earlier word's token), or after
                    edge = start if word_ids[t] < word else end
                    if 0 < edge < len(text) and text[edge - 1].isalnum() and text[edge].isalnum():
                        continue
                    shared.append((t, word))
        return tuple(shared)

    def perturbed_token_rows(self, encoding: WordEncoding, masks: np.ndarray, perturbation: str):
        """:func:`perturbed_token_rows` with this tokenizer's mask token."""
        return perturbed_token_rows(encoding, masks, perturbation, self.mask_token_id)
