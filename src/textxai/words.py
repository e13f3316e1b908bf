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
import threading
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


def separated(text: str, start: int, end: int, word: str) -> str:
    """``word`` to put in place of ``text[start:end]`` (a word of :func:`word_spans`), with a space on a side where
    it would otherwise glue to a letter or digit of the neighbouring word: spaCy splits "don't" into "do" + "n't",
    and "film" in place of "n't" must give "do film", not the one word "dofilm" (a substitution that changes two
    words and the word count).

    >>> text = "i don't know"
    >>> [text[:a] + separated(text, a, b, "film") + text[b:] for _, a, b in word_spans(text)[1:3]]
    ["i film n't know", 'i do film know']
    """
    before = " " if start > 0 and text[start - 1].isalnum() and word[:1].isalnum() else ""
    after = " " if end < len(text) and text[end].isalnum() and word[-1:].isalnum() else ""
    return before + word + after


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


_VOCAB: dict[str, int] = {}
_VOCAB_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1 << 16)
def _codes(text: str, method: str, keep_whitespace: bool) -> str | None:
    """The tokens of ``text`` as one string, one code point per distinct token (None past 1.1M distinct tokens).

    ``Levenshtein.distance`` of two such strings equals the word-level distance and runs on its fast string
    path, several times faster than on tuples of words.
    """
    out = []
    for token in _tokenize_cached(text, method, keep_whitespace):
        code = _VOCAB.get(token)
        if code is None:
            with _VOCAB_LOCK:
                code = _VOCAB.get(token)
                if code is None:
                    code = len(_VOCAB) + 1
                    if code >= 0xD800:          # skip the surrogate block
                        code += 0x800
                    if code > 0x10FFFF:
                        return None
                    _VOCAB[token] = code
        out.append(chr(code))
    return "".join(out)


def word_distance(a, b, method: str = "spacy", keep_whitespace: bool = False) -> int:
    """Levenshtein distance between two texts counted in words (insert, delete, substitute one word).

    ``a`` and ``b`` are strings (tokenized with ``method``) or already tokenized lists of words.

    >>> word_distance(["a", "b", "c"], ["a", "c"])
    1
    """
    _check_method(method)
    if isinstance(a, str) and isinstance(b, str):
        code_a, code_b = _codes(a, method, bool(keep_whitespace)), _codes(b, method, bool(keep_whitespace))
        if code_a is not None and code_b is not None:
            return int(Levenshtein.distance(code_a, code_b))
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


@functools.lru_cache(maxsize=1)
def _special_case_junctions() -> frozenset | None:
    """Character pairs at which spaCy's special-case matcher could join tokens across white space.

    spaCy cuts a text at white space, tokenizes every piece on its own (prefixes, suffixes, infixes, cached
    special cases), then runs a matcher of multi-token special cases (their affix split, e.g. ":)" = ":" +
    ")") over the whole token sequence. A match that crosses white space is dropped but can block another
    match, so tokenizing pieces separately is exact unless a piece ends and the next one begins with the
    two sides of some junction of a special case: returns those ``(last char, first char)`` pairs, or None
    (no shortcut) when they cannot be derived.
    """
    try:
        from spacy.tokenizer import Tokenizer

        tok = _spacy_tokenizer()
        bare = Tokenizer(tok.vocab, rules={}, prefix_search=tok.prefix_search, suffix_search=tok.suffix_search,
                         infix_finditer=tok.infix_finditer, token_match=tok.token_match, url_match=tok.url_match)
        pairs = set()
        for key in tok.rules:
            if key.isspace():
                continue
            if any(c.isspace() for c in key):
                return None
            pieces = [t.text for t in bare(key)]
            pairs.update((a[-1], b[0]) for a, b in zip(pieces, pieces[1:]) if a and b)
        return frozenset(pairs)
    except Exception:  # noqa: BLE001 - any doubt: tokenize whole texts
        return None


def tokenize_many(texts: Sequence[str], method: str = "spacy") -> list[list[str]]:
    """``tokenize(text, method)`` (whitespace dropped) for every text, fast and exact.

    spaCy: each distinct whitespace piece is tokenized once and the pieces' words are concatenated, except
    for texts with two neighbouring pieces that could meet in a special case (see
    ``_special_case_junctions``), which are tokenized whole.
    """
    _check_method(method)
    junctions = _special_case_junctions() if method == "spacy" else None
    if junctions is None:
        return [tokenize(t, method) for t in texts]
    cache: dict[str, list[str]] = {}
    out = []
    for text in texts:
        parts = text.split()
        if any((a[-1], b[0]) in junctions for a, b in zip(parts, parts[1:])):
            out.append(list(_tokenize_cached(text, "spacy", False)))
            continue
        words: list[str] = []
        for piece in parts:
            tokens = cache.get(piece)
            if tokens is None:
                tokens = cache[piece] = list(_tokenize_cached(piece, "spacy", False))
            words.extend(tokens)
        out.append(words)
    return out


@functools.lru_cache(maxsize=65536)
def parts_of_speech(word: str) -> frozenset:
    """The parts of speech (universal tags: NOUN, VERB, ADJ, ADV, ...) ``word`` can have, from LemmInflect's
    English lexicon (MIT licence, shipped on PyPI); empty for words the lexicon does not know.

    >>> sorted(parts_of_speech("design")), sorted(parts_of_speech("faulty")), sorted(parts_of_speech("Stick"))
    (['NOUN', 'VERB'], ['ADJ'], ['NOUN', 'VERB'])
    """
    import lemminflect

    return frozenset(lemminflect.getAllLemmas(word.lower()) or lemminflect.getAllLemmas(word))


def same_part_of_speech(word: str, replacement: str) -> bool:
    """Whether ``replacement`` can play a part of speech ``word`` can (a context-free stand-in for a tagger:
    "design" -> "faulty" is refused, "design" -> "layout" kept). A word the lexicon does not know passes.

    >>> same_part_of_speech("design", "faulty"), same_part_of_speech("design", "layout")
    (False, True)
    >>> same_part_of_speech("stick", "instead"), same_part_of_speech("wonderful", "awful")
    (False, True)
    """
    a, b = parts_of_speech(word), parts_of_speech(replacement)
    return not a or not b or bool(a & b)
