"""Load the evaluate modules shipped with textxai by name, offline.

>>> sorted(MODULE_NAMES)
['ceval', 'fim_difficulty', 'inconsistency', 'naopc', 'toki_trust']
"""
from __future__ import annotations

from pathlib import Path

MODULE_NAMES = {
    "inconsistency": "metrics",
    "fim_difficulty": "measurements",
    "toki_trust": "metrics",
    "naopc": "metrics",
    "ceval": "metrics",
}


def _roots() -> list[Path]:
    here = Path(__file__).resolve().parent
    # a built wheel carries the module folders inside the package; an editable install finds the repo root
    return [here / "_modules", here.parents[1]]


def module_path(name: str) -> Path:
    """The folder of module ``name`` (it holds ``<name>.py`` and its metric card)."""
    if name not in MODULE_NAMES:
        raise ValueError(f"name={name!r} is not a textxai module; expected one of {sorted(MODULE_NAMES)}")
    for root in _roots():
        folder = root / MODULE_NAMES[name] / name
        if (folder / f"{name}.py").is_file():
            return folder
    raise FileNotFoundError(
        f"name={name!r}: the module folder {MODULE_NAMES[name]}/{name} is not present in this installation "
        f"(available: {list_modules()})"
    )


def list_modules() -> list[str]:
    """Names of the modules present in this installation."""
    present = []
    for name, kind in MODULE_NAMES.items():
        if any((root / kind / name / f"{name}.py").is_file() for root in _roots()):
            present.append(name)
    return sorted(present)


def load(name: str, **kwargs):
    """``evaluate.load`` of the module folder shipped with textxai (works offline).

    ``textxai.load("naopc")`` is the same module as ``evaluate.load("textxai/naopc")`` once published.
    """
    import evaluate

    if name.startswith("textxai/"):
        name = name.split("/", 1)[1]
    return evaluate.load(str(module_path(name)), **kwargs)
