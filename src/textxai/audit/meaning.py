"""The meaning check of a word swap: an attack's edit counts as a success only when every swap keeps the text's
meaning. No entailment model installs offline (../shared/DESIGN.md), so the check is built from what ships:
the antonym list (``data/antonyms.txt``), LemmInflect's lexicon (parts of speech, lemmas), a list of fixed
expressions, and GloVe's sentiment axis. A swap is rejected, with its reason, when it is

- an antonym (bad -> good);
- another form of the same word (stick -> stuck: ungrammatical in its place) or another part of speech;
- a break of a fixed expression of the text ("instead of" -> "easily of");
- a change of the sentiment's strength: the two words' positions on GloVe's sentiment axis (the mean of strong
  positive words minus the mean of strong negative ones, unit vectors) differ by more than :data:`INTENSITY_LIMIT`
  (brilliant -> pretty, excellent -> decent, terrible -> bad).

Measured on a hand-labelled set of swaps in tests/test_audit_meaning.py (the numbers are there).

>>> check_swap("bad", "good")
'antonym'
>>> check_swap("film", "movie") is None
True
"""
from __future__ import annotations

import functools
import re

import numpy as np

#: A swap moving a word this far along GloVe's sentiment axis changes the sentiment's strength.
INTENSITY_LIMIT = 0.15
#: Words that define the sentiment axis (strong ends only).
POSITIVE = ("excellent", "brilliant", "wonderful", "superb", "outstanding", "great", "amazing", "masterpiece")
NEGATIVE = ("terrible", "awful", "horrible", "dreadful", "atrocious", "worst", "abysmal", "disaster")
#: Fixed expressions whose words cannot be swapped one at a time.
FIXED_EXPRESSIONS = ("instead of", "rather than", "because of", "in spite of", "kind of", "sort of", "as well",
                     "at least", "of course", "according to", "due to", "such as", "a lot", "at all", "even though",
                     "as if", "so that", "in order to", "as long as", "no longer", "at first", "in fact")


@functools.lru_cache(maxsize=1)
def _glove():
    from textxai.embeddings import get_embedders

    return get_embedders(["glove"])[0]


def _unit(words) -> np.ndarray:
    e = np.asarray(_glove().embed(list(words)), dtype=np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    return e / np.where(norms > 0, norms, 1.0)


@functools.lru_cache(maxsize=1)
def _axis() -> np.ndarray:
    return _unit(POSITIVE).mean(0) - _unit(NEGATIVE).mean(0)


def sentiment_position(word: str) -> float:
    """Where ``word`` sits on GloVe's sentiment axis (unit vector dotted with the axis; 0 for unknown words)."""
    return float(_unit([word.lower()])[0] @ _axis())


def _lemmas(word: str) -> set[str]:
    import lemminflect

    return {lemma for lemmas in lemminflect.getAllLemmas(word).values() for lemma in lemmas}


def _in_fixed_expression(word: str, text: str | None) -> str | None:
    if not text:
        return None
    low = " ".join(re.findall(r"[\w']+", text.lower()))
    for expression in FIXED_EXPRESSIONS:
        if word in expression.split() and re.search(rf"\b{re.escape(expression)}\b", low):
            return expression
    return None


def check_swap(word: str, substitute: str, text: str | None = None) -> str | None:
    """Why swapping ``word`` for ``substitute`` (in ``text``, when given) changes the meaning, or None when it keeps it."""
    from textxai.editors import antonym_pairs
    from textxai.words import same_part_of_speech

    w, s = word.lower(), substitute.lower()
    if w == s:
        return None
    if (w, s) in antonym_pairs():
        return "antonym"
    if _lemmas(w) & _lemmas(s):
        return "another form of the same word (ungrammatical in its place)"
    if not same_part_of_speech(w, s):
        return "another part of speech"
    expression = _in_fixed_expression(w, text)
    if expression:
        return f"breaks the fixed expression '{expression}'"
    shift = sentiment_position(s) - sentiment_position(w)
    if abs(shift) > INTENSITY_LIMIT:
        return f"changes the sentiment's strength ({'stronger' if abs(sentiment_position(s)) > abs(sentiment_position(w)) else 'weaker'} or reversed: {shift:+.2f} on GloVe's sentiment axis)"
    return None


def check_edit(original: str, substitutions) -> dict:
    """``{"kept": bool, "reasons": ["word -> substitute: reason", ...]}`` of an edit made of word ``substitutions``."""
    reasons = []
    for word, substitute in substitutions:
        why = check_swap(word, substitute, original)
        if why:
            reasons.append(f"{word} -> {substitute}: {why}")
    return {"kept": not reasons, "reasons": reasons}
