"""Option groups: small frozen dataclasses whose fields are also accepted as plain keywords.

An entry point with many options takes them as a few groups (``run=RunOptions(batch_size=8)``) and,
as a shortcut, each field of each group as a keyword (``batch_size=8``); a keyword overrides the same field
of a group given beside it. :func:`apply_keywords` is the one place that maps the keywords onto the
groups, so every entry point rejects a misspelt option the same way, naming it and listing the valid ones.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Run:
...     batch_size: int = 32
...     progress: bool = False
>>> apply_keywords("demo", {"batch_size": 8}, run=(Run, None))["run"]
Run(batch_size=8, progress=False)
>>> apply_keywords("demo", {"batchsize": 8}, run=(Run, None))
Traceback (most recent call last):
...
TypeError: demo() got an unexpected keyword argument 'batchsize' (did you mean 'batch_size'?): expected one of ['batch_size', 'progress'] (or run=Run(...))
"""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping

from textxai.validation import short_repr


def apply_keywords(where: str, keywords: Mapping, **groups: tuple[type, object]) -> dict:
    """``{group: instance}``: each group's given instance (or its defaults) with the keywords that name its fields.

    ``groups`` maps a parameter name to ``(dataclass, the instance given or None)``. A keyword that is no
    field of any group, or a group that is not an instance of its dataclass, raises ``TypeError``.
    """
    owner: dict[str, str] = {}
    for group, (cls, _) in groups.items():
        for f in dataclasses.fields(cls):
            if f.name in owner:
                raise TypeError(f"{where}: option {f.name!r} is in two groups ({owner[f.name]}, {group})")
            owner[f.name] = group
    for name in keywords:
        if name not in owner:
            spelled = ", ".join(f"{g}={cls.__name__}(...)" for g, (cls, _) in groups.items())
            raise TypeError(f"{where}() got an unexpected keyword argument {name!r}{did_you_mean(name, owner)}: "
                            f"expected one of {sorted(owner)} (or {spelled})")
    out = {}
    for group, (cls, given) in groups.items():
        if given is None:
            given = cls()
        elif not isinstance(given, cls):
            raise TypeError(f"{group}={short_repr(given)} ({type(given).__name__}): expected a {cls.__name__} or None")
        mine = {k: v for k, v in keywords.items() if owner[k] == group}
        out[group] = dataclasses.replace(given, **mine) if mine else given
    return out


def did_you_mean(name: str, valid) -> str:
    """`` (did you mean 'x'?)`` with the valid name closest to a misspelt ``name``, else ``""``.

    >>> did_you_mean("batchsize", ["batch_size", "device"]), did_you_mean("zzz", ["batch_size"])
    (" (did you mean 'batch_size'?)", '')
    """
    close = difflib.get_close_matches(name, list(valid), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def group_fields(group: type) -> dict:
    """``{field: default}`` of an option-group dataclass (``None`` for a field without a plain default).

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run:
    ...     batch_size: int = 32
    ...     progress: bool = False
    >>> group_fields(Run)
    {'batch_size': 32, 'progress': False}
    """
    return {f.name: None if f.default is dataclasses.MISSING else f.default for f in dataclasses.fields(group)}
