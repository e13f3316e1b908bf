"""The Spaces' input checks (issue 2, item 10): caps on texts and characters, blank and invisible text, numbers
from sliders and API calls, uploads read under a size cap; :class:`SpaceError`, the user-facing error, and
:func:`escape`, the one way user text enters HTML. Importable from :mod:`textxai.spaces` (their public home).

>>> check_inputs(["a fine film", ""], max_texts=5)
['a fine film', '']
"""
from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence

import numpy as np

from textxai.extras import require

gr = require("gradio", "spaces", "textxai's Gradio Spaces")

MAX_TEXTS = 20
MAX_CHARS = 2000
MAX_UPLOAD_BYTES = 2_000_000  # an uploaded file above this is refused before it is read (and by the server: launch)
MAX_PASTE_CHARS = 500_000  # a pasted text box above this is refused before it is split into lines


class SpaceError(gr.Error, ValueError):
    """A user-facing error: a ``ValueError`` for Python callers, shown in Gradio's error modal.

    ``str(error)`` is the plain message; ``error.message`` (what Gradio renders as HTML) is escaped.
    """

    def __init__(self, message: str, title: str = "Error"):
        # < > & escaped (the modal renders HTML); quotes kept, so "model='x'" does not reach visitors as &#x27;
        super().__init__(html.escape(str(message), quote=False), duration=None, title=title, print_exception=False)
        self.plain = message
        self.args = (message,)

    def __str__(self) -> str:
        return self.plain


SpaceError.__module__ = "textxai.spaces"   # its public home (tracebacks and doctests name it there)


def escape(text) -> str:
    """``html.escape`` of ``str(text)`` (quotes included): the one way user text enters rendered HTML."""
    return html.escape(str(text), quote=True)


# --------------------------------------------------------------------------- inputs
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # fillers drawn as nothing (Hangul, Braille blank)


def _invisible(char: str) -> bool:
    import unicodedata

    return char.isspace() or char in _BLANK_LETTERS or unicodedata.category(char) in ("Cf", "Cc", "Zs", "Zl", "Zp")


def is_blank(text: str) -> bool:
    """True when ``text`` shows nothing: only white space and invisible characters (zero-width spaces and joiners,
    byte-order marks, soft hyphens, control characters, blank fillers).

    >>> is_blank("\\u200b\\u200d \\ufeff"), is_blank(" a ")
    (True, False)
    """
    return all(_invisible(c) for c in text)


def check_size(text, name: str = "text", max_chars: int | None = None) -> str:
    """``text`` (a string; None is empty) when at most ``max_chars`` characters (default ``MAX_PASTE_CHARS``), checked
    before anything splits or parses it."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise SpaceError(f"{name}={text!r:.60} ({type(text).__name__}): expected a string")
    limit = MAX_PASTE_CHARS if max_chars is None else max_chars
    if len(text) > limit:
        raise SpaceError(f"{name} has {len(text):,} characters; this Space accepts at most {limit:,} here — "
                         "shorten it or run textxai locally (`textxai run`)")
    return text


def split_lines(text: str | None, name: str = "text", max_chars: int | None = None) -> list[str]:
    """The non-blank lines of a textbox, stripped: one text per line. Lines that show nothing (white space,
    zero-width characters) are blank; the whole box is refused above ``max_chars`` before it is split."""
    text = check_size(text, name, max_chars)
    return [line.strip() for line in text.splitlines() if not is_blank(line)]


def _number(value, name: str, low: float, high: float, integer: bool):
    expected = f"{'an integer' if integer else 'a number'} from {low:g} to {high:g}"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise SpaceError(f"{name}={value!r:.40}: expected {expected}") from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SpaceError(f"{name}={value!r:.40} ({type(value).__name__}): expected {expected}")
    if not math.isfinite(value) or not low <= value <= high:
        raise SpaceError(f"{name}={value!r}: expected {expected}")
    if integer and value != int(value):
        raise SpaceError(f"{name}={value!r}: expected {expected} (a whole number)")
    return int(value) if integer else float(value)


def integer_input(value, name: str, low: int = 1, high: int = 10**6) -> int:
    """A whole number from a slider or an API call, in ``[low, high]``: text that is no number, NaN, inf, 1e30,
    2.7 or a bool is a :class:`SpaceError` naming the input. Positive ones pass the library's check too.

    >>> integer_input(5.0, "beam_size", 1, 20), integer_input("3", "steps", 1, 5)
    (5, 3)
    >>> integer_input(2.7, "beam_size", 1, 20)
    Traceback (most recent call last):
    ...
    textxai.spaces.SpaceError: beam_size=2.7: expected an integer from 1 to 20 (a whole number)
    """
    from textxai.validation import check_positive_int

    value = _number(value, name, low, high, integer=True)
    return check_positive_int(value, name) if low >= 1 else value


def number_input(value, name: str, low: float, high: float) -> float:
    """A finite number in ``[low, high]`` from a slider or an API call, else a :class:`SpaceError` naming it.

    >>> number_input("nan", "max_rate", 0, 1)
    Traceback (most recent call last):
    ...
    textxai.spaces.SpaceError: max_rate=nan: expected a number from 0 to 1
    """
    return _number(value, name, low, high, integer=False)


def slider(minimum: float, maximum: float, *args, name: str = "value", integer: bool = False, **kwargs) -> gr.Slider:
    """``gr.Slider`` whose value, also when sent through the API, is checked by :func:`integer_input` /
    :func:`number_input` (``name`` in the message) before the handler runs. (A wrapped ``preprocess``, not a
    subclass: gradio writes a ``.pyi`` stub beside the module of every Component subclass.)"""
    component = gr.Slider(minimum, maximum, *args, **kwargs)
    check = integer_input if integer else number_input
    component.preprocess = lambda payload: check(payload, name, component.minimum, component.maximum)
    return component


def read_upload(path, name: str = "csv", max_rows: int | None = None, max_bytes: int | None = None) -> list[dict]:
    """The rows of an uploaded csv / tsv / jsonl / json / parquet file, read by :mod:`textxai.tables` (the CLI's
    reader: no cell length limit, duplicated headers refused) after its size is checked (``MAX_UPLOAD_BYTES``)
    and stopping after ``max_rows`` rows; errors name the input and the file (not the server's folder)."""
    from pathlib import Path

    from textxai import tables

    if path is None:
        raise SpaceError(f"{name}: no file uploaded")
    path = Path(getattr(path, "name", path))
    try:
        return tables.read_rows(path, name, MAX_UPLOAD_BYTES if max_bytes is None else max_bytes, max_rows)
    except (ValueError, OSError) as error:
        message = str(error).replace(repr(str(path)), repr(path.name)).replace(str(path.parent) + os.sep, "")
        raise SpaceError(message) from None


def check_inputs(texts, max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS, name: str = "texts") -> list[str]:
    """``texts`` as a list of strings within the Space's caps, else a :class:`SpaceError` saying what to do.

    A single string counts as one text. At least one text must be non-blank; at most ``max_texts`` texts of
    at most ``max_chars`` characters each (run textxai locally, ``textxai run``, for more).
    """
    if isinstance(texts, str):
        texts = [texts]
    if texts is None or not isinstance(texts, Sequence):
        raise SpaceError(f"{name}={texts!r:.60}: expected a list of texts")
    texts = list(texts)
    from textxai.validation import check_unicode

    def field(i: int) -> str:  # the visitor's field: "original", not "original[0]" (nor the library's references[0])
        return name if max_texts == 1 else f"{name}[{i}]"

    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise SpaceError(f"{field(i)}={text!r:.60} ({type(text).__name__}): expected a string")
        try:
            check_unicode(text, field(i))
        except ValueError as error:
            raise SpaceError(str(error)) from None
    if not any(not is_blank(text) for text in texts):
        raise SpaceError(f"{name}: no text given; enter at least one text (zero-width and white space characters "
                         "alone are no text)" if any(texts) else f"{name}: no text given; enter at least one text")
    for i, text in enumerate(texts):
        if text.strip() and is_blank(text):
            codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in text if not c.isspace()}))
            raise SpaceError(f"{field(i)} holds only invisible characters ({codes}); expected a visible text")
    if len(texts) > max_texts:
        raise SpaceError(f"{name}: {len(texts)} texts given; this Space accepts at most {max_texts} — "
                         "run textxai locally (`textxai run`) for more")
    for i, text in enumerate(texts):
        if len(text) > max_chars:
            raise SpaceError(f"{field(i)} has {len(text):,} characters; this Space accepts at most {max_chars:,} "
                             "per text — shorten it or run textxai locally")
    return texts
