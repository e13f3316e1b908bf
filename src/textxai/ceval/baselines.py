"""A word-deletion baseline generator and the choice of the best candidates per original."""
from __future__ import annotations

import numpy as np

from textxai import words as _words
from textxai.ceval.distances import token_distance
from textxai.progress import progress_bar


def deletion_candidates(texts, classifier, max_words: int = 3, batch_size: int = 32, progress: bool = False,
                        precision: str = "float32") -> list[list[str]]:
    """A word-deletion baseline generator: candidate counterfactuals of each text.

    Greedy: at each step delete the word whose removal most lowers the probability of the original
    predicted class, until the prediction flips or ``max_words`` words are gone. Candidates: every single
    deletion of the first step (best first), then the texts along the greedy path. Deterministic.
    ``precision`` of its forward passes: see ``TextClassifier.resolve_precision`` (the audit uses "auto").
    """
    from textxai.classifier import as_classifier
    from textxai.validation import check_positive_int, check_texts

    texts = check_texts(texts)
    check_positive_int(max_words, "max_words")
    clf = as_classifier(classifier)
    precision = clf.resolve_precision(precision)
    out = []
    for text in progress_bar(texts, progress, "deletion baseline", unit="text"):
        spans = [(s, e) for _, s, e in _words.word_spans(text)]
        if len(spans) < 2:
            out.append([])
            continue
        original_class = int(np.argmax(clf.predict_proba([text], batch_size=batch_size, precision=precision)[0]))
        removed: list[int] = []
        path: list[str] = []
        singles: list[str] = []
        for step in range(min(max_words, len(spans) - 1)):
            options = [i for i in range(len(spans)) if i not in removed]
            candidates = [_delete_words(text, spans, removed + [i]) for i in options]
            probs = clf.predict_proba(candidates, batch_size=batch_size, precision=precision)
            order = np.argsort(probs[:, original_class], kind="stable")
            if step == 0:
                singles = [candidates[j] for j in order]
            best = int(order[0])
            removed.append(options[best])
            path.append(candidates[best])
            if int(np.argmax(probs[best])) != original_class:
                break
        seen, unique = set(), []
        for cand in singles[:5] + path:
            if cand not in seen and cand.strip():
                seen.add(cand)
                unique.append(cand)
        out.append(unique)
    return out


def _delete_words(text: str, spans, indices) -> str:
    pieces, last = [], 0
    for i in sorted(indices):
        start, end = spans[i]
        space_before = start == 0 or text[start - 1].isspace()
        space_after = end < len(text) and text[end] == " "
        if space_after and space_before:                # "a plan x" -> "a x"
            end += 1
        elif not space_after and start > last and text[start - 1] == " ":   # "a plan." -> "a."
            start -= 1                                  # (attached punctuation keeps its neighbours' spaces)
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def pick_counterfactuals(originals, candidates, classifier, k: int = 2, batch_size: int = 32) -> list[list[str]]:
    """The ``k`` best candidates per original: flipping ones first, then smaller token distance, then lower
    probability of the original class. Missing ones are ``"-1"`` (a failed generation)."""
    from textxai.classifier import as_classifier

    clf = as_classifier(classifier)
    originals = list(originals)
    flat = [c for cands in candidates for c in cands]
    p_orig = clf.predict_proba(originals, batch_size=batch_size)
    p_flat = clf.predict_proba(flat, batch_size=batch_size) if flat else np.zeros((0, p_orig.shape[1]))
    out, pos = [], 0
    for i, cands in enumerate(candidates):
        y = int(np.argmax(p_orig[i]))
        scored = []
        for j, cand in enumerate(cands):
            q = p_flat[pos + j]
            scored.append((int(np.argmax(q)) == y, token_distance(originals[i], cand), float(q[y]), j, cand))
        pos += len(cands)
        scored.sort()
        chosen = [s[-1] for s in scored[:k]]
        out.append(chosen + ["-1"] * (k - len(chosen)))
    return out
