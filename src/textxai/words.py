"""Word tokenization and word-level edit distance.

The papers' code tokenizes with spaCy's blank English tokenizer (``spacy.blank("en")``: rules only, no
model download). ``"whitespace"`` splits on runs of white space.

>>> tokenize("I don't like it.")
['I', 'do', "n't", 'like', 'it', '.']
>>> word_distance("the film was good", "the film was bad")
1
>>> word_distance_normalized("the film was good", "the film was bad")
0.25
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import Levenshtein

WORD_TOKENIZERS = ("spacy", "whitespace")


@functools.lru_cache(maxsize=1)
def _spacy_tokenizer():
    import spacy

    return spacy.blank("en").tokenizer


def _check_method(method: str) -> None:
    if method not in WORD_TOKENIZERS:
        raise ValueError(f"method={method!r} is not a word tokenizer; expected one of {WORD_TOKENIZERS}")


def _check_text(text, name: str = "text") -> None:
    if not isinstance(text, str):
        raise TypeError(f"{name}={text!r} ({type(text).__name__}) is not a string; expected str")


def word_spans(text: str, method: str = "spacy", keep_whitespace: bool = False) -> list[tuple[str, int, int]]:
    """Words of ``text`` with their character spans ``(word, start, end)``.

    >>> word_spans("Nice  day!")
    [('Nice', 0, 4), ('day', 6, 9), ('!', 9, 10)]
    """
    _check_text(text)
    _check_method(method)
    if method == "whitespace":
        if keep_whitespace:
            return [(m.group(), m.start(), m.end()) for m in re.finditer(r"\s+|\S+", text)]
        return [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    spans = []
    for token in _spacy_tokenizer()(text):
        if keep_whitespace:
            spans.append((token.text, token.idx, token.idx + len(token.text)))
        elif not token.is_space and token.text.strip():
            spans.append((token.text, token.idx, token.idx + len(token.text)))
    return spans


@functools.lru_cache(maxsize=65536)
def _tokenize_cached(text: str, method: str, keep_whitespace: bool) -> tuple[str, ...]:
    return tuple(word for word, _, _ in word_spans(text, method, keep_whitespace))


def tokenize(text: str, method: str = "spacy", keep_whitespace: bool = False) -> list[str]:
    """Split ``text`` into words.

    ``keep_whitespace=True`` keeps spaCy's whitespace tokens (runs of extra spaces, newlines), as CEval's
    distance does; the default drops them, as the inconsistency paper's code does.

    >>> tokenize("a  b", keep_whitespace=True)
    ['a', ' ', 'b']
    >>> tokenize("a  b", method="whitespace")
    ['a', 'b']
    """
    _check_text(text)
    _check_method(method)
    return list(_tokenize_cached(text, method, bool(keep_whitespace)))


def _as_words(x, method: str, keep_whitespace: bool, name: str) -> Sequence[str]:
    if isinstance(x, str):
        return _tokenize_cached(x, method, bool(keep_whitespace))
    if isinstance(x, (list, tuple)) and all(isinstance(w, str) for w in x):
        return x
    raise TypeError(f"{name}={x!r} is neither a string nor a list of word strings")


def word_distance(a, b, method: str = "spacy", keep_whitespace: bool = False) -> int:
    """Levenshtein distance between two texts counted in words (insert, delete, substitute one word).

    ``a`` and ``b`` are strings (tokenized with ``method``) or already tokenized lists of words.

    >>> word_distance(["a", "b", "c"], ["a", "c"])
    1
    """
    _check_method(method)
    return int(Levenshtein.distance(_as_words(a, method, keep_whitespace, "a"), _as_words(b, method, keep_whitespace, "b")))


def word_distance_normalized(a, b, method: str = "spacy", keep_whitespace: bool = False) -> float:
    """``word_distance(a, b)`` divided by the number of words of ``a`` (``nan`` when ``a`` has no words).

    >>> word_distance_normalized("a b c d", "a b")
    0.5
    """
    words_a = _as_words(a, method, keep_whitespace, "a")
    if len(words_a) == 0:
        return float("nan")
    return word_distance(words_a, b, method, keep_whitespace) / len(words_a)
