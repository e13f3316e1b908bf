"""Candidate replacements of a word: the substitute generator shared by the TOKI attack and the built-in
counterfactual editor, and the lexicon it checks against (antonyms shipped in ``data/antonyms.txt``, spaCy's
stop words, forms of one stem).

The seam of :mod:`textxai.editors`: this module proposes and checks words (GloVe neighbours, MiniLM
similarities; no classifier); the editors there score the replacements with the classifier. Every name here is
importable from :mod:`textxai.editors` too.
"""
from __future__ import annotations

import functools

import numpy as np

from textxai.validation import check_positive_int
from textxai.words import same_part_of_speech


@functools.lru_cache(maxsize=1)
def antonyms() -> dict[str, tuple[str, ...]]:
    """Each word of ``data/antonyms.txt`` -> its listed antonyms (file order).

    >>> antonyms()["wonderful"]
    ('awful', 'terrible')
    """
    out: dict[str, list[str]] = {}
    for a, b in _antonym_lines():
        out.setdefault(a, []).append(b)
        out.setdefault(b, []).append(a)
    return {word: tuple(dict.fromkeys(words)) for word, words in out.items()}



def _stop_words() -> frozenset:
    from textxai.toki.core import stop_words  # one list: TOKI's keywords exclude the same words

    return stop_words()


@functools.lru_cache(maxsize=1)
def antonym_pairs() -> frozenset:
    """Antonym pairs shipped with textxai (``data/antonyms.txt``), both orders.

    >>> ("good", "bad") in antonym_pairs() and ("bad", "good") in antonym_pairs()
    True
    """
    return frozenset(p for a, b in _antonym_lines() for p in ((a, b), (b, a)))


@functools.lru_cache(maxsize=1)
def _antonym_lines() -> tuple[tuple[str, str], ...]:
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / "antonyms.txt"
    return tuple(tuple(line.split()) for line in path.read_text(encoding="utf8").splitlines()
                 if line.strip() and not line.lstrip().startswith("#"))


def _same_stem(a: str, b: str) -> bool:
    n = min(len(a), len(b))
    return a[: max(4, n - 2)] == b[: max(4, n - 2)] if n >= 4 else a == b


class SubstituteGenerator:
    """Candidate replacements of one word, shared by the TOKI attack and the built-in counterfactual editor.

    The ``n_neighbours`` nearest common words in GloVe 6B-50d (:class:`textxai.embeddings.GloVeEmbedder`),
    ranked by their mean cosine with the word over all ``embedders`` (GloVe and MiniLM by default) and kept
    when that mean is at least ``min_word_similarity``; never a stop word (spaCy's list), never a form of
    the same word ("awful" -> "awfully"), never a word of another case or with non-letters. With
    ``keep_meaning=True`` (the attack) a replacement may not be an antonym of the word (``data/antonyms.txt``)
    nor a word that ``forbidden`` marks (the attack forbids words related to another class: antonyms of
    the original class's keywords), and must be able to play a part of speech the word can play
    (:func:`textxai.words.same_part_of_speech`: no "stick" -> "instead"). Sentence similarity (MiniLM, as
    A2T) is checked by the caller on whole texts, see :meth:`similar_texts`.

    >>> gen = SubstituteGenerator()
    >>> [w for w, _ in gen("film", 3)]
    ['movie', 'movies', 'cinema']
    >>> "bad" in [w for w, _ in SubstituteGenerator(keep_meaning=True)("good", 10)]
    False
    >>> plain, kept = SubstituteGenerator()("stick", 30), SubstituteGenerator(keep_meaning=True)("stick", 30)
    >>> "instead" in [w for w, _ in plain], "instead" in [w for w, _ in kept]
    (True, False)
    """

    def __init__(self, n_neighbours: int = 30, min_word_similarity: float = 0.5, keep_meaning: bool = False,
                 embedders=None, sentence_embedder=None):
        from textxai.embeddings import GloVeEmbedder, get_embedders

        self.glove = GloVeEmbedder()
        self.embedders = get_embedders(embedders if embedders is not None else ["glove", "minilm"])
        self.sentence_embedder = sentence_embedder
        self.n_neighbours = check_positive_int(n_neighbours, "n_neighbours")
        self.min_word_similarity = float(min_word_similarity)
        self.keep_meaning = bool(keep_meaning)
        self.stop_words = _stop_words()
        self._cache: dict[str, list[tuple[str, float]]] = {}

    def _ranked(self, word: str) -> list[tuple[str, float]]:
        if word not in self._cache:
            out = []
            if word.isalpha() and word not in self.stop_words and self.glove.known(word):
                out = self._checked(word, [w for w, _ in self.glove.neighbours(word, self.n_neighbours)])
            self._cache[word] = out
        return self._cache[word]

    def _checked(self, word: str, candidates: list[str]) -> list[tuple[str, float]]:
        """The candidates (lower case) that pass the word-level rules for ``word``, most similar first."""
        from textxai.toki.core import cosine_matrix

        near = list(dict.fromkeys(w for w in candidates if w.isalpha() and w != word and w not in self.stop_words
                                  and not _same_stem(w, word)))
        if not near:
            return []
        sims = np.mean([cosine_matrix(e.embed([word]), e.embed(near))[0] for e in self.embedders], axis=0)
        return sorted(((w, float(s)) for w, s in zip(near, sims) if s >= self.min_word_similarity),
                      key=lambda p: (-p[1], p[0]))

    def _meaning_kept(self, word: str, out: list[tuple[str, float]], forbidden) -> list[tuple[str, float]]:
        if self.keep_meaning:  # no antonym, and a substitute that can play the word's part of speech
            pairs = antonym_pairs()
            out = [(s, x) for s, x in out if (word, s) not in pairs and same_part_of_speech(word, s)]
            if forbidden is not None and out:
                banned = forbidden([s for s, _ in out])
                out = [p for p, b in zip(out, banned) if not b]
        return out

    def __call__(self, word: str, k: int | None = None, forbidden=None) -> list[tuple[str, float]]:
        """Up to ``k`` replacements ``(substitute, mean cosine)`` of ``word``, most similar first."""
        w = word.lower()
        out = self._meaning_kept(w, self._ranked(w), forbidden)
        out = [(_match_case(word, s), x) for s, x in out]
        return out[:k] if k is not None else out

    def check(self, word: str, candidates, forbidden=None) -> list[tuple[str, float]]:
        """Those of ``candidates`` (any words, e.g. TOKI's pool words) that pass the same rules as the
        neighbours (similarity to ``word``, no stop word, no form of ``word``, and with ``keep_meaning`` no
        antonym, nothing ``forbidden``), as ``(substitute, mean cosine)``, most similar first.

        >>> [w for w, _ in SubstituteGenerator().check("film", ["movie", "the", "banana", "films"])]
        ['movie']
        """
        w = word.lower()
        if not (w.isalpha() and w not in self.stop_words):
            return []
        out = self._meaning_kept(w, self._checked(w, [str(c).lower() for c in candidates]), forbidden)
        return [(_match_case(word, s), x) for s, x in out]

    def similar_texts(self, original: str, texts: list[str], min_similarity: float) -> list[float | None]:
        """Sentence cosine (MiniLM) of each text with ``original``, None where below ``min_similarity``."""
        from textxai.embeddings import MiniLMEmbedder

        if self.sentence_embedder is None:
            self.sentence_embedder = MiniLMEmbedder()
        if not texts:
            return []
        from textxai.loading import LRUCache

        known = self.__dict__.setdefault("_originals", LRUCache(256))   # the attack asks about one original per step
        first = known.get(original)
        if first is not None:
            vecs = self.sentence_embedder.sentences(list(texts))
        else:
            vecs = self.sentence_embedder.sentences([original] + list(texts))
            first, vecs = vecs[0], vecs[1:]
            known.put(original, first)
        sims = vecs @ first
        return [float(s) if s >= min_similarity else None for s in sims]


def _match_case(original: str, replacement: str) -> str:
    if original.isupper() and len(original) > 1:
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


_GENERATORS: dict = {}


def editor_generator() -> SubstituteGenerator:
    """The counterfactual editor's generator: GloVe neighbours checked by GloVe alone (the editor checks every
    replacement with the classifier, so the MiniLM word check of the attack's generator is not needed)."""
    if "editor" not in _GENERATORS:
        _GENERATORS["editor"] = SubstituteGenerator(keep_meaning=False, embedders=["glove"])
    return _GENERATORS["editor"]


def shared_generator(keep_meaning: bool) -> SubstituteGenerator:
    """One generator per process and mode (its neighbour cache is shared by every caller)."""
    if keep_meaning not in _GENERATORS:
        _GENERATORS[keep_meaning] = SubstituteGenerator(keep_meaning=keep_meaning)
    return _GENERATORS[keep_meaning]
