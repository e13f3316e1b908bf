"""Load the evaluate modules shipped with textxai by name, offline.

>>> sorted(MODULE_NAMES)
['ceval', 'fim_difficulty', 'inconsistency', 'naopc', 'toki_trust']
"""
from __future__ import annotations

import hashlib
import os
import shutil
import warnings
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


def _module_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".") and p.suffix != ".pyc")


def cache_modules(names=None, namespace: str = "textxai") -> list[Path]:
    """Put the shipped module folders where ``evaluate.load("<namespace>/<name>")`` finds them offline.

    Offline, evaluate 0.4.6 resolves a Hub name ``ns/name`` from its modules cache:
    ``$HF_MODULES_CACHE/evaluate_modules/metrics/ns--name/<64-hex hash>/name.py`` (the newest by the script's
    modification time; measurements too sit under ``metrics``). This writes each module there (hash = SHA-256
    of its files) and returns the script paths. Online, evaluate asks the Hub first: the published Space wins.
    ``textxai cache-modules`` runs it; :func:`load` runs it for the module it loads.
    """
    from evaluate.loading import init_dynamic_modules

    names = list_modules() if names is None else [names] if isinstance(names, str) else list(names)
    root = Path(init_dynamic_modules()) / "metrics"
    written = []
    for name in names:
        files = _module_files(module_path(name))
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        target = root / f"{namespace}--{name}" / digest.hexdigest()
        target.mkdir(parents=True, exist_ok=True)
        for init in (target.parent / "__init__.py", target / "__init__.py"):
            init.touch()
        for f in files:
            shutil.copyfile(f, target / f.name)
        script = target / f"{name}.py"
        os.utime(script)  # the newest cached version is the one evaluate picks: this installation's
        written.append(script)
    return written


def load(name: str, **kwargs):
    """``evaluate.load`` of the module folder shipped with textxai (works offline).

    ``textxai.load("naopc")`` is the same module as ``evaluate.load("textxai/naopc")``, which also works
    offline once the module is cached (``textxai cache-modules``, or any ``textxai.load`` of it).
    """
    import evaluate

    if not isinstance(name, str):
        raise TypeError(f"name={name!r}: expected a module name, one of {sorted(MODULE_NAMES)}")
    if name.startswith("textxai/"):
        name = name.split("/", 1)[1]
    folder = module_path(name)
    try:
        cache_modules([name])
    except OSError as err:  # a read-only cache: evaluate.load("textxai/...") stays unavailable offline, this works
        warnings.warn(f"could not cache the module {name!r} for evaluate.load('textxai/{name}'): {err}", stacklevel=2)
    return evaluate.load(str(folder), **kwargs)
