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


def check_texts(texts, name: str = "texts", allow_empty_list: bool = False) -> list[str]:
    """A non-empty list (or tuple) of strings; an empty string is a valid text."""
    if isinstance(texts, str) or not isinstance(texts, Sequence) and not hasattr(texts, "__array__"):
        raise TypeError(f"{name}={short_repr(texts)}: expected a list of strings")
    texts = list(texts)
    if not texts and not allow_empty_list:
        raise ValueError(f"{name}=[]: expected at least one text")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}]={short_repr(text)} ({type(text).__name__}): expected a string")
    return texts


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
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}={short_repr(value)}: expected a positive integer")
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


def number_in(low: float, high: float):
    """argparse ``type=`` for a float in ``[low, high]``."""
    def check(text: str) -> float:
        value = float(text)
        if not low <= value <= high:
            raise ValueError(text)
        return value

    return _argparse_type(check, f"a number in [{low:g}, {high:g}]")


positive_int_arg = _argparse_type(_positive_int_text, "a positive integer")
nonnegative_int_arg = _argparse_type(_nonnegative_int_text, "an integer >= 0")
unit_interval_arg = number_in(0.0, 1.0)
