"""Input checks shared by every module: each error names the argument, the value and what was expected.

>>> check_texts(["a", ""])
['a', '']
>>> check_positive_int(0, "batch_size")
Traceback (most recent call last):
...
ValueError: batch_size=0: expected a positive integer
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def short_repr(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str, limit: int = 100) -> str:
    """``text`` on one line (white space folded), cut to ``limit`` characters with an ellipsis, for reports."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_list(values, name: str, allow_empty: bool = False) -> list:
    """A list, tuple or array (never a string: a string is not a list of texts), as a list.

    >>> check_list("great", "texts")
    Traceback (most recent call last):
    ...
    TypeError: texts='great' (str): expected a list
    """
    if isinstance(values, (str, bytes)) or not (isinstance(values, Sequence) or hasattr(values, "__array__")):
        raise TypeError(f"{name}={short_repr(values)} ({type(values).__name__}): expected a list")
    if hasattr(values, "ndim") and getattr(values, "ndim") == 0:
        raise TypeError(f"{name}={short_repr(values)}: expected a list, got a scalar array")
    values = list(values)
    if not values and not allow_empty:
        raise ValueError(f"{name}=[]: expected at least one item")
    return values


def check_labels(labels, name: str, n: int | None = None, num_classes: int | None = None) -> np.ndarray:
    """Integer class indices (one per example when ``n`` is given), each in ``[0, num_classes - 1]``.

    >>> check_labels([0, 2], "targets", num_classes=2)
    Traceback (most recent call last):
    ...
    ValueError: targets[1]=2: expected a class index in [0, 1]
    """
    labels = check_list(labels, name)
    if n is not None and len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} items but there are {n} examples: expected one label per example")
    out = np.empty(len(labels), dtype=np.int64)
    hi = f"{num_classes - 1}" if num_classes else "n_classes - 1"
    for i, label in enumerate(labels):
        if isinstance(label, (bool, np.bool_)) or not isinstance(label, (int, np.integer)):
            raise TypeError(f"{name}[{i}]={short_repr(label)} ({type(label).__name__}): expected an integer class index")
        if label < 0 or (num_classes is not None and label >= num_classes):
            raise ValueError(f"{name}[{i}]={label}: expected a class index in [0, {hi}]")
        out[i] = int(label)
    return out


def check_texts(texts, name: str = "texts", allow_empty_list: bool = False) -> list[str]:
    """A non-empty list (or tuple) of strings of valid Unicode (no lone surrogate); an empty string is a valid text."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence) and not hasattr(texts, "__array__"):
        raise TypeError(f"{name}={short_repr(texts)}: expected a list of strings")
    texts = list(texts) if not hasattr(texts, "ndim") or texts.ndim else [texts]
    if not texts and not allow_empty_list:
        raise ValueError(f"{name}=[]: expected at least one text")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}]={short_repr(text)} ({type(text).__name__}): expected a string")
        check_unicode(text, f"{name}[{i}]")
    return [t if type(t) is str else str(t) for t in texts]  # numpy.str_ (np.array of texts): spaCy takes str only


def check_unicode(text: str, name: str) -> str:
    """``text`` when it is valid Unicode, else a ``ValueError``: a lone surrogate (half of an emoji cut by a
    byte-level split, or decoded with ``errors="surrogateescape"``) that no tokenizer or Arrow column takes.

    >>> check_unicode("café 👍", "texts[0]")
    'café 👍'
    >>> try:
    ...     check_unicode("good " + chr(0xD83D) + " film", "texts[0]")
    ... except ValueError as error:
    ...     "lone surrogate" in str(error) and "at character 5" in str(error)
    True
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{name}={short_repr(text)} holds {text[error.start]!r} at character {error.start}, "
                         "a lone surrogate: expected valid Unicode text (tokenizers take UTF-8)") from None
    return text


def check_text_pairs(text_pairs, texts: list[str], name: str = "text_pairs") -> list[str] | None:
    """``None`` or a list of strings as long as ``texts``."""
    if text_pairs is None:
        return None
    pairs = check_texts(text_pairs, name, allow_empty_list=True)
    check_same_length(texts, pairs, "texts", name)
    return pairs


def check_same_length(a, b, name_a: str, name_b: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name_b} has {len(b)} items but {name_a} has {len(a)}: expected the same length")


def check_positive_int(value, name: str) -> int:
    """``value`` as an int when it is a positive integer (not a bool, not a float), else a ``ValueError``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}={short_repr(value)}: expected a positive integer")
    return int(value)


def check_seed(value, name: str = "seed") -> int:
    """``value`` as an int when it is a non-negative integer (not a bool, not None: a result must repeat under its
    seed), else a ``ValueError`` naming ``name``.

    >>> check_seed(3), check_seed(np.int64(0))
    (3, 0)
    >>> check_seed(None)
    Traceback (most recent call last):
    ...
    ValueError: seed=None: expected a non-negative integer
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}={short_repr(value)}: expected a non-negative integer")
    return int(value)


def check_choice(value, name: str, choices: Sequence) -> object:
    if value not in choices:
        raise ValueError(f"{name}={short_repr(value)}: expected one of {list(choices)}")
    return value


def check_finite(values, name: str) -> None:
    for i, v in enumerate(values):
        if not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
            raise TypeError(f"{name}[{i}]={short_repr(v)}: expected a number")
        if not math.isfinite(float(v)):
            raise ValueError(f"{name}[{i}]={v!r}: expected a finite number")


def check_probability(value, name: str, low_open: bool = True) -> float:
    """A number in (0, 1] (``low_open``) or [0, 1]."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (0 < value <= 1 if low_open else 0 <= value <= 1)
    if not ok:
        raise ValueError(f"{name}={short_repr(value)}: expected a number in {'(0, 1]' if low_open else '[0, 1]'}")
    return float(value)


# ------------------------------------------------------------------ argparse adapters
def _argparse_type(check, expected: str):
    """An argparse ``type=`` from a converter + check: a bad value becomes argparse's one-line usage error."""
    import argparse

    def convert(text: str):
        try:
            return check(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{short_repr(text)}: expected {expected}") from None

    convert.__name__ = expected.replace(" ", "_")
    return convert


def _positive_int_text(text: str) -> int:
    return check_positive_int(int(text), "value")


def _nonnegative_int_text(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def number_in(low: float, high: float, integer: bool = False):
    """argparse ``type=`` for a float (``integer``: an int) in ``[low, high]``."""
    def check(text: str):
        value = int(text) if integer else float(text)
        if not low <= value <= high:
            raise ValueError(text)
        return value

    return _argparse_type(check, f"an integer from {low} to {high}" if integer else f"a number in [{low:g}, {high:g}]")


def int_in(low: int, high: int):
    """argparse ``type=`` for an integer in ``[low, high]``."""
    return number_in(low, high, integer=True)


positive_int_arg = _argparse_type(_positive_int_text, "a positive integer")
nonnegative_int_arg = _argparse_type(_nonnegative_int_text, "an integer >= 0")
unit_interval_arg = number_in(0.0, 1.0)


# ------------------------------------------------------------------ user callables
class CallbackError(RuntimeError):
    """An error raised inside a callable the user passed (editor, judge, score function, embedder).

    The message says which callable and which step or text; the original error is its ``__cause__``.
    """


def callable_name(fn) -> str:
    """A short name of a user callable for messages (``my_editor``, ``MyJudge``, ``<lambda>``)."""
    name = getattr(fn, "__qualname__", None) or getattr(type(fn), "__qualname__", None) or type(fn).__name__
    return str(name)


def call_user(fn, argument: str, context: str, *args, **kwargs):
    """``fn(*args, **kwargs)``; any exception becomes a :class:`CallbackError` naming ``argument``, the
    callable and ``context`` (the step / text), chained to the original.

    >>> call_user(lambda x: 1 / x, "score_fn", "text 3", 0)
    Traceback (most recent call last):
    ...
    textxai.validation.CallbackError: score_fn=<lambda> raised ZeroDivisionError on text 3: division by zero
    """
    try:
        return fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - re-raised with context, chained
        raise CallbackError(f"{argument}={callable_name(fn)} raised {type(error).__name__} on {context}: "
                            f"{one_line(str(error), 200)}") from error


class ClassIndices(list):
    """Class indices already read from a user's labels (:meth:`TextClassifier.class_indices`): handed on inside the
    library, they are read again as indices. Read again as labels, the index 3 of a model whose classes 0..4 are
    named '1'..'5' would be the class NAMED '3' (index 2): TOKI's keyword index and the audit's stages were then
    given other classes than the user's. A slice keeps the type.

    >>> ClassIndices([4, 0])[:1], ClassIndices([4, 0]) == [4, 0]
    ([4], True)
    """

    def __getitem__(self, key):
        out = super().__getitem__(key)
        return ClassIndices(out) if isinstance(key, slice) else out
