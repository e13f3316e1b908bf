"""Counterfactual editors: callables ``list[str] -> list[list[str]]`` (candidate edits per input text).

:class:`GradientSubstitutionEditor` is a white-box word-substitution editor built on a
:class:`textxai.classifier.TextClassifier`, in the family of HotFlip (Ebrahimi et al., 2018) and
TextFooler (Jin et al., 2020):

1. one forward/backward pass gives the gradient of log p(current class) with respect to the input
   embeddings; a word's influence is input x gradient summed over its subword tokens;
2. the ``n_words`` most influential words that have replacements are the ones to replace;
3. a word's replacements come from :class:`SubstituteGenerator` (shared with the TOKI attack): its GloVe
   neighbours among common words, checked by GloVe and MiniLM, never a stop word or a form of the same
   word; they are ranked by the first-order change of log p(current class), ``sum_t g_t . (e_v - e_t)``
   with ``e_v`` the mean input embedding of the replacement's tokens; only replacements predicted to lower
   the current class are kept (``n_substitutes`` per word). Unlike the attack, the editor may use
   opposites ("boring" -> "funny"): a counterfactual is meant to change the label;
4. candidates: every single substitution, then the cumulative edits that replace the 2, 3, ...
   ``max_words`` most influential words by their best substitute each; candidates whose MiniLM sentence
   cosine with the input is below ``min_similarity`` (0.6) are dropped.

The editor does not check whether a candidate flips the prediction: :func:`textxai.inconsistency.feedback_chains`
asks the classifier and picks the smallest flipping candidate. A text with no usable replacement gets no
candidate (the feedback chain stops there).

>>> from textxai.editors import EDITORS
>>> sorted(EDITORS)
['gradient_substitution']
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from textxai.progress import progress_bar
from textxai.validation import short_repr, check_positive_int, check_texts
from textxai.words import word_spans


@dataclass(frozen=True)
class Substitution:
    """One proposed replacement: word ``index`` (``word`` at characters ``start:end``) -> ``substitute``.

    ``score`` is the first-order change of log p(current class) (negative: predicted to lower it);
    ``influence`` the word's input x gradient toward the current class.
    """

    index: int
    word: str
    start: int
    end: int
    substitute: str
    score: float
    influence: float


class GradientSubstitutionEditor:
    """Gradient-guided word substitution with the shared substitute generator (see the module docstring).

    Args:
        classifier: a TextClassifier or anything :func:`textxai.classifier.as_classifier` accepts.
        n_words: how many of the most influential words get replacements.
        max_words: the most words one candidate changes (cumulative edits of the best replacement of the
            2, 3, ... ``max_words`` most influential words); default ``n_words``; larger values make larger
            edits (and inc@n > 2 possible).
        n_neighbours: GloVe neighbours considered per word (:class:`SubstituteGenerator`).
        n_substitutes: replacements kept per word (those with the most negative first-order score).
        min_similarity: candidates whose MiniLM sentence cosine with the input is below this are dropped.
        progress: show a progress bar over the texts of each call.

    Calling the editor on a list of texts returns one list of candidate texts per input (possibly empty).
    Candidates are deterministic: no randomness, one text at a time (independent of batching).
    """

    name = "gradient_substitution"

    def __init__(self, classifier, n_words: int = 3, n_neighbours: int = 30, n_substitutes: int = 3,
                 progress: bool = False, max_words: int | None = None, min_similarity: float = 0.6):
        from textxai.classifier import as_classifier

        self.classifier = as_classifier(classifier)
        self.n_words = check_positive_int(n_words, "n_words")
        self.max_words = check_positive_int(max_words if max_words is not None else n_words, "max_words")
        self.n_words = max(self.n_words, self.max_words)
        self.n_neighbours = check_positive_int(n_neighbours, "n_neighbours")
        self.n_substitutes = check_positive_int(n_substitutes, "n_substitutes")
        if isinstance(min_similarity, bool) or not isinstance(min_similarity, (int, float)) or not -1 <= min_similarity <= 1:
            raise ValueError(f"min_similarity={short_repr(min_similarity)}: expected a number in [-1, 1]")
        self.min_similarity = float(min_similarity)
        self.progress = bool(progress)
        self.generator = shared_generator(keep_meaning=False)

    def __repr__(self) -> str:
        return (f"GradientSubstitutionEditor({self.classifier!r}, n_words={self.n_words}, max_words={self.max_words}, "
                f"n_neighbours={self.n_neighbours}, n_substitutes={self.n_substitutes})")

    @functools.cached_property
    def _matrix(self) -> torch.Tensor:
        return self.classifier.embedding_matrix.detach().double().cpu()

    def _word_vectors(self, words: list[str]) -> torch.Tensor:
        """Mean input embedding of each word's subword tokens (as the word would be written mid-sentence)."""
        ids = self.classifier.tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"]
        return torch.stack([self._matrix[i].mean(dim=0) if i else torch.zeros(self._matrix.shape[1], dtype=torch.float64)
                            for i in ids])

    # ------------------------------------------------------------------ one text
    def _gradients(self, text: str):
        """(word_ids [L], embeddings [L, d], gradients [L, d], current class) for one text, float64 on CPU."""
        clf = self.classifier
        enc = clf.encode([text])
        with torch.enable_grad():
            embeds = clf.input_embeddings(enc.tensors).detach().requires_grad_(True)
            logits = clf.logits_from_embeddings(embeds, enc.tensors)
            current = int(logits[0].argmax())
            # autograd.grad: only the input gradient is computed; the model's .grad fields stay untouched
            (grad,) = torch.autograd.grad(torch.log_softmax(logits.double(), dim=-1)[0, current], embeds)
        return (enc.word_ids[0], embeds[0].detach().double().cpu(), grad[0].detach().double().cpu(), current)

    def substitutions(self, text: str) -> list[list[Substitution]]:
        """For each chosen word (most influential first), its replacements, best (most negative score) first."""
        check_texts([text], "text")
        if not text.strip():
            return []
        word_ids, embeds, grads, _ = self._gradients(text)
        spans = word_spans(text, self.classifier.word_tokenizer)
        per_token = (embeds * grads).sum(dim=1).numpy()  # input x gradient of log p(current)
        influence: dict[int, float] = {}
        tokens_of: dict[int, list[int]] = {}
        for t, w in enumerate(word_ids.tolist()):
            if w < 0 or w >= len(spans):
                continue
            influence[w] = influence.get(w, 0.0) + float(per_token[t])
            tokens_of.setdefault(w, []).append(t)
        candidates = [w for w in influence if spans[w][0].isalpha() and self.generator(spans[w][0], 1)]
        candidates.sort(key=lambda w: (-influence[w], w))  # most influential toward the current class first
        out = []
        for w in candidates[: self.n_words]:
            toks = tokens_of[w]
            original = spans[w][0]
            near = [x for x, _ in self.generator(original, self.n_neighbours)]
            # first-order change of log p(current) when the word's tokens become the replacement's
            base = float((grads[toks] * embeds[toks]).sum())
            scores = (self._word_vectors(near) @ grads[toks].sum(dim=0)).numpy() - base
            ranked = sorted(range(len(near)), key=lambda k: (scores[k], k))
            subs = [Substitution(w, original, spans[w][1], spans[w][2], near[k], float(scores[k]), influence[w])
                    for k in ranked[: self.n_substitutes] if scores[k] < 0]
            if subs:
                out.append(subs)
        return out

    @staticmethod
    def _apply(text: str, subs: list[Substitution]) -> str:
        for s in sorted(subs, key=lambda s: s.start, reverse=True):
            text = text[: s.start] + s.substitute + text[s.end:]
        return text

    def candidates(self, text: str) -> list[str]:
        """Candidate edits of one text: single substitutions, then the cumulative best substitutions of the
        2 .. ``max_words`` most influential words; those below ``min_similarity`` (MiniLM) dropped."""
        per_word = self.substitutions(text)
        out: list[str] = []
        for subs in per_word:
            for s in subs:
                out.append(self._apply(text, [s]))
        for k in range(2, min(len(per_word), self.max_words) + 1):
            out.append(self._apply(text, [subs[0] for subs in per_word[:k]]))
        unique = list(dict.fromkeys(c for c in out if c != text))
        sims = self.generator.similar_texts(text, unique, self.min_similarity)
        return [c for c, s in zip(unique, sims) if s is not None]

    def __call__(self, texts) -> list[list[str]]:
        texts = check_texts(texts)
        return [self.candidates(t) for t in progress_bar(texts, self.progress, "editor", unit="text")]


EDITORS = {"gradient_substitution": GradientSubstitutionEditor}


def get_editor(editor, classifier=None, **options):
    """An editor from a name in :data:`EDITORS` (built on ``classifier``) or any callable, returned as is."""
    if callable(editor) and not isinstance(editor, str):
        return editor
    if not isinstance(editor, str) or editor not in EDITORS:
        raise ValueError(f"editor={short_repr(editor)}: expected a callable list[str] -> list[list[str]] or one of {sorted(EDITORS)}")
    if classifier is None:
        raise ValueError(f"classifier=None: the built-in editor {editor!r} needs a classifier")
    return EDITORS[editor](classifier, **options)


# ----------------------------------------------------------------------------- the shared substitute generator
def _stop_words() -> frozenset:
    from textxai.toki.core import stop_words  # one list: TOKI's keywords exclude the same words

    return stop_words()


@functools.lru_cache(maxsize=1)
def antonym_pairs() -> frozenset:
    """Antonym pairs shipped with textxai (``data/antonyms.txt``), both orders.

    >>> ("good", "bad") in antonym_pairs() and ("bad", "good") in antonym_pairs()
    True
    """
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / "antonyms.txt"
    pairs = set()
    for line in path.read_text(encoding="utf8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            a, b = line.split()
            pairs |= {(a, b), (b, a)}
    return frozenset(pairs)


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
    the original class's keywords). Sentence similarity (MiniLM, as A2T) is checked by the caller on
    whole texts, see :meth:`similar_texts`.

    >>> gen = SubstituteGenerator()
    >>> [w for w, _ in gen("film", 3)]
    ['movie', 'movies', 'cinema']
    >>> "bad" in [w for w, _ in SubstituteGenerator(keep_meaning=True)("good", 10)]
    False
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
        if self.keep_meaning:
            pairs = antonym_pairs()
            out = [(s, x) for s, x in out if (word, s) not in pairs]
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
        vecs = self.sentence_embedder.sentences([original] + list(texts))
        sims = vecs[1:] @ vecs[0]
        return [float(s) if s >= min_similarity else None for s in sims]


def _match_case(original: str, replacement: str) -> str:
    if original.isupper() and len(original) > 1:
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


_GENERATORS: dict = {}


def shared_generator(keep_meaning: bool) -> SubstituteGenerator:
    """One generator per process and mode (its neighbour cache is shared by every caller)."""
    if keep_meaning not in _GENERATORS:
        _GENERATORS[keep_meaning] = SubstituteGenerator(keep_meaning=keep_meaning)
    return _GENERATORS[keep_meaning]
