"""Counterfactual editors: callables ``list[str] -> list[list[str]]`` (candidate edits per input text).

:class:`GradientSubstitutionEditor` is a white-box word-substitution editor built on a
:class:`textxai.classifier.TextClassifier`, in the family of HotFlip (Ebrahimi et al., 2018) and
TextFooler (Jin et al., 2020):

1. one forward/backward pass gives the gradient of log p(current class) with respect to the input
   embeddings; a word's influence is input x gradient summed over its subword tokens;
2. the ``n_words`` most influential (alphabetic) words are the ones to replace;
3. a word's replacements are its ``n_neighbours`` nearest whole-word vocabulary entries in the model's
   own input-embedding space (cosine), ranked by the first-order change of log p(current class),
   ``sum_t g_t . (e_v - e_t)``; only replacements predicted to lower the current class are kept
   (``n_substitutes`` per word);
4. candidates: every single substitution, then the cumulative edits that replace the 2, 3, ...
   ``n_words`` most influential words by their best substitute each.

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
    """Gradient-guided word substitution in the classifier's embedding space (see the module docstring).

    Args:
        classifier: a TextClassifier or anything :func:`textxai.classifier.as_classifier` accepts.
        n_words: how many of the most influential words to replace (at most).
        n_neighbours: nearest vocabulary words (cosine, input embeddings) considered per word.
        n_substitutes: replacements kept per word (those with the most negative first-order score).
        progress: show a progress bar over the texts of each call.

    Calling the editor on a list of texts returns one list of candidate texts per input (possibly empty).
    Candidates are deterministic: no randomness, one text at a time (independent of batching).
    """

    name = "gradient_substitution"

    def __init__(self, classifier, n_words: int = 3, n_neighbours: int = 40, n_substitutes: int = 3,
                 progress: bool = False):
        from textxai.classifier import as_classifier

        self.classifier = as_classifier(classifier)
        self.n_words = check_positive_int(n_words, "n_words")
        self.n_neighbours = check_positive_int(n_neighbours, "n_neighbours")
        self.n_substitutes = check_positive_int(n_substitutes, "n_substitutes")
        self.progress = bool(progress)

    def __repr__(self) -> str:
        return (f"GradientSubstitutionEditor({self.classifier!r}, n_words={self.n_words}, "
                f"n_neighbours={self.n_neighbours}, n_substitutes={self.n_substitutes})")

    # ------------------------------------------------------------------ vocabulary
    @functools.cached_property
    def _vocab(self) -> tuple[np.ndarray, list[str], torch.Tensor, torch.Tensor]:
        clf = self.classifier
        matrix = clf.embedding_matrix.detach().double().cpu()
        vocab = clf.word_vocabulary()  # whole words with a row in the matrix, in token-id order
        ids, words = np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab)), list(vocab)
        vectors = matrix[torch.from_numpy(ids)] if len(ids) else torch.zeros(0, matrix.shape[1], dtype=torch.float64)
        unit = vectors / vectors.norm(dim=1, keepdim=True).clamp_min(1e-12)
        return ids, words, vectors, unit

    @functools.cached_property
    def _vocab_lower(self) -> list[str]:
        return [w.lower() for w in self._vocab[1]]

    def _neighbours(self, sims: torch.Tensor, word_lower: str) -> list[int]:
        """The ``n_neighbours`` most similar vocabulary entries, other than the word itself (any case).

        Ties in similarity go to the lower vocabulary index (a stable order), as a full stable sort would.
        """
        lower = self._vocab_lower
        k = min(len(lower), self.n_neighbours + 8)
        while True:
            # the k-th largest value, then every index at least that similar, in stable order
            threshold = torch.topk(sims, k).values[-1]
            idx = torch.nonzero(sims >= threshold).flatten()
            idx = idx[torch.argsort(-sims[idx], stable=True)].tolist()
            out = [j for j in idx if lower[j] != word_lower][: self.n_neighbours]
            if len(out) == self.n_neighbours or k == len(lower):
                return out
            k = min(len(lower), 2 * k)

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
        ids, vocab_words, vectors, unit = self._vocab
        if len(ids) == 0:
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
        candidates = [w for w in influence if spans[w][0].isalpha()]
        # most influential toward the current class first; ties by position
        candidates.sort(key=lambda w: (-influence[w], w))
        out = []
        for w in candidates:
            if len(out) == self.n_words:
                break
            toks = tokens_of[w]
            e_word = embeds[toks].mean(dim=0)
            g_word = grads[toks].sum(dim=0)
            base = float((grads[toks] * embeds[toks]).sum())
            sims = unit @ (e_word / e_word.norm().clamp_min(1e-12))
            neighbours = self._neighbours(sims, spans[w][0].lower())
            if not neighbours:
                continue
            scores = (vectors[neighbours] @ g_word).numpy() - base
            ranked = sorted(range(len(neighbours)), key=lambda k: (scores[k], k))
            subs = []
            for k in ranked[: self.n_substitutes]:
                if scores[k] >= 0:
                    break
                replacement = vocab_words[neighbours[k]]
                original = spans[w][0]
                if original[:1].isupper():
                    replacement = replacement[:1].upper() + replacement[1:]
                if original.isupper() and len(original) > 1:
                    replacement = replacement.upper()
                subs.append(Substitution(w, original, spans[w][1], spans[w][2], replacement, float(scores[k]),
                                         influence[w]))
            if subs:
                out.append(subs)
        return out

    @staticmethod
    def _apply(text: str, subs: list[Substitution]) -> str:
        for s in sorted(subs, key=lambda s: s.start, reverse=True):
            text = text[: s.start] + s.substitute + text[s.end:]
        return text

    def candidates(self, text: str) -> list[str]:
        """Candidate edits of one text: single substitutions, then cumulative best substitutions."""
        per_word = self.substitutions(text)
        out: list[str] = []
        for subs in per_word:
            for s in subs:
                out.append(self._apply(text, [s]))
        for k in range(2, len(per_word) + 1):
            out.append(self._apply(text, [subs[0] for subs in per_word[:k]]))
        seen, unique = set(), []
        for cand in out:
            if cand != text and cand not in seen:
                seen.add(cand)
                unique.append(cand)
        return unique

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
