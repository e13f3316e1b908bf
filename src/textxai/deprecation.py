"""Names renamed in this 0.x release, still readable for one release: each read warns and names the new one.

A package lists its renamed names in one dict and serves them from its module ``__getattr__`` (PEP 562), so
``from textxai.naopc import compute_naopc`` keeps working (with a ``DeprecationWarning``) while the public API,
``__all__`` and ``dir()`` hold only the new names. Every deprecated name is listed in ``CHANGELOG.md``.

>>> import warnings, types
>>> mod = types.ModuleType("demo_pkg")
>>> mod.compute = len
>>> mod.__getattr__ = renamed("demo_pkg", {"old_compute": "compute"})
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     import sys; sys.modules["demo_pkg"] = mod
...     mod.old_compute is len, str(caught[0].message)
(True, 'demo_pkg.old_compute is deprecated: use demo_pkg.compute (the same object); it goes in the next release')
"""
from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping


def warn_renamed(old: str, new: str, what: str = "the same object", stacklevel: int = 3) -> None:
    """The one deprecation message: ``"<old> is deprecated: use <new> (<what>); it goes in the next release"``."""
    warnings.warn(f"{old} is deprecated: use {new} ({what}); it goes in the next release", DeprecationWarning,
                  stacklevel=stacklevel)


def renamed(module: str, names: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving ``names`` (old name -> new name in the same module), each with a warning."""

    def __getattr__(name: str):
        if name in names:
            warn_renamed(f"{module}.{name}", f"{module}.{names[name]}")
            return getattr(sys.modules[module], names[name])
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
