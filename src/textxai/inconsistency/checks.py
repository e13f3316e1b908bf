"""Checks of the inconsistency method's inputs: chains, ``n``, labels, choices (one place, at the entry)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from textxai.validation import check_choice, check_unicode, short_repr
from textxai.words import WORD_TOKENIZERS

DEFAULT_N = (1, 2, 3, 5, 9)
POOLINGS = ("pooled", "per_chain")
SELECTIONS = ("flip_then_min_distance", "min_distance", "first")


def unchanged(before: str, after: str) -> bool:
    """An "edit" that returns its input (up to whitespace): a failed step, never a perfect one.

    >>> unchanged("a  film", "a film "), unchanged("a film", "A film")
    (True, False)
    """
    return " ".join(before.split()) == " ".join(after.split())


def blank(item) -> bool:
    """``None``, ``""`` or white space only: a failed step (CEval's ``is_failed`` and the LLM editor agree).

    >>> blank(None), blank(" \\n"), blank("a")
    (True, True, False)
    """
    return item is None or isinstance(item, str) and not item.strip()


def check_chain(chain, name: str = "chain") -> list[str]:
    """The texts of a chain, without the trailing ``None`` / ``""`` (or white space only) that marks a failed step.
    A step that returns its input unchanged (:func:`unchanged`) is a failed step too: the chain ends before it (an
    editor that answers with its input would otherwise score the best inc@n and minimality 0).

    >>> check_chain(["a", "b", None])
    ['a', 'b']
    >>> check_chain(["a", "b", "b", "c"])
    ['a', 'b']
    >>> check_chain(["a"])
    Traceback (most recent call last):
    ...
    ValueError: chain=['a'] has 1 item: expected the original text and at least one edit
    """
    if isinstance(chain, str) or not isinstance(chain, Sequence) and not hasattr(chain, "__array__"):
        raise TypeError(f"{name}={short_repr(chain)}: expected a list of texts [original, edit 1, edit 2, ...]")
    chain = list(chain)
    if len(chain) < 2:
        raise ValueError(
            f"{name}={short_repr(chain)} has {len(chain)} item{'s' * (len(chain) != 1)}: "
            "expected the original text and at least one edit"
        )
    texts: list[str] = []
    ended_at = None
    for i, item in enumerate(chain):
        if item is not None and not isinstance(item, str):
            raise TypeError(
                f"{name}[{i}]={short_repr(item)} ({type(item).__name__}): expected a string "
                "(or a trailing None / empty string when the editor failed)"
            )
        if item is not None:
            check_unicode(item, f"{name}[{i}]")
        empty = blank(item)
        if i == 0 and empty:
            raise ValueError(f"{name}[0]={item!r}: expected the original text (a non-empty string)")
        if ended_at is not None:
            if not empty and blank(chain[ended_at]):
                raise ValueError(
                    f"{name}[{i}]={short_repr(item)} follows {name}[{ended_at}]={chain[ended_at]!r}: a None or empty "
                    "string ends a chain, so only None / empty strings may follow it"
                )
            continue
        if empty or texts and unchanged(texts[-1], item):
            ended_at = i
        else:
            texts.append(item)
    return texts


def check_chains(chains, name: str = "chains") -> list[list[str]]:
    """A non-empty list of chains (see :func:`check_chain`)."""
    if isinstance(chains, str) or not isinstance(chains, Sequence) and not hasattr(chains, "__array__"):
        raise TypeError(f"{name}={short_repr(chains)}: expected a list of chains (each a list of texts)")
    chains = list(chains)
    if not chains:
        raise ValueError(f"{name}=[]: expected at least one chain")
    return [check_chain(chain, f"{name}[{i}]") for i, chain in enumerate(chains)]


def check_n(n, name: str = "n") -> list[int]:
    """``n`` as a list of distinct positive integers (an int is one value).

    >>> check_n([1, 3, 3])
    [1, 3]
    """
    values = [n] if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else n
    if isinstance(values, np.ndarray) and values.ndim == 1:  # np.array([1, 3]): a list of them
        values = values.tolist()
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name}={short_repr(n)}: expected a positive integer or a non-empty list of them")
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={short_repr(n)}: {v!r} is not a positive integer; expected every n >= 1")
        if int(v) not in out:
            out.append(int(v))
    return out


def _check_word_tokenizer(word_tokenizer) -> str:
    return check_choice(word_tokenizer, "word_tokenizer", WORD_TOKENIZERS)


def _check_pooling(pooling) -> str:
    return check_choice(pooling, "pooling", POOLINGS)


def _check_labels(labels, texts_per_chain: list[list[str]], raw_lengths: list[int]) -> list[list[int]]:
    if isinstance(labels, str) or not isinstance(labels, Sequence) and not hasattr(labels, "__array__"):
        raise TypeError(f"labels={short_repr(labels)}: expected one list of integer labels per chain")
    labels = list(labels)
    if len(labels) != len(texts_per_chain):
        raise ValueError(
            f"labels has {len(labels)} lists but there are {len(texts_per_chain)} chains: expected one list per chain"
        )
    out = []
    for i, (lab, texts, raw) in enumerate(zip(labels, texts_per_chain, raw_lengths)):
        if isinstance(lab, str) or not isinstance(lab, Sequence) and not hasattr(lab, "__array__"):
            raise TypeError(f"labels[{i}]={short_repr(lab)}: expected a list of integer labels, one per text of the chain")
        lab = list(lab)
        if len(lab) not in (raw, len(texts)):
            raise ValueError(
                f"labels[{i}] has {len(lab)} labels but chain {i} has {raw} items ({len(texts)} texts): "
                "expected one label per item of the chain"
            )
        lab = lab[: len(texts)]
        for j, v in enumerate(lab):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"labels[{i}][{j}]={short_repr(v)} ({type(v).__name__}): expected an integer label")
        out.append([int(v) for v in lab])
    return out


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={short_repr(value)}: expected True or False")
    return bool(value)


def read_chains(path: str) -> tuple[list[list], list[list] | None]:
    """Chains (and labels when every line has them) from a .jsonl / .json file (``textxai run inconsistency --chains``):
    one ``{"edits": [...], "labels": [...]}`` object (or one list of texts) per line."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--chains={path!r}: no such file; expected a .jsonl file with an 'edits' list per line")
    from textxai.tables import read_json_rows

    rows = read_json_rows(p, lines=p.suffix.lower() != ".json", name="--chains", objects=False)
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"--chains={path!r}: expected at least one chain")
    chains, labels = [], []
    for i, row in enumerate(rows):
        if isinstance(row, list):
            row = {"edits": row}
        if not isinstance(row, dict) or "edits" not in row:
            raise ValueError(f"--chains={path!r}: line {i + 1} has no 'edits' list")
        chains.append(row["edits"])
        labels.append(row.get("labels"))
    return chains, (labels if all(lab is not None for lab in labels) else None)


@contextmanager
def argument_named(library: str, caller: str):
    """Inside, a ``ValueError`` / ``TypeError`` about the library's argument ``library`` names the caller's own name
    for it instead (the evaluate module's ``edits`` are the library's ``chains``).

    >>> with argument_named("chains", "edits"):
    ...     check_chains([["a"]])
    Traceback (most recent call last):
    ...
    ValueError: edits[0]=['a'] has 1 item: expected the original text and at least one edit
    """
    try:
        yield
    except (ValueError, TypeError) as error:
        if type(error) in (ValueError, TypeError) and re.match(rf"{re.escape(library)}(?![\w])", str(error)):
            raise type(error)(caller + str(error)[len(library):]) from None
        raise
