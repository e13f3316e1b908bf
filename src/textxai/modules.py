"""Load the evaluate modules shipped with textxai by name, offline.

The modules are the registered methods (:mod:`textxai.registry`); each one's folder is its descriptor's
``folder`` or ``metrics/<name>`` / ``measurements/<name>``.

>>> list_modules()
['ceval', 'fim_difficulty', 'inconsistency', 'naopc', 'toki_trust']
"""
from __future__ import annotations

import hashlib
import os
import shutil
import warnings
from pathlib import Path

def __getattr__(name: str):
    """``MODULE_NAMES``: ``{name: "metrics" | "measurements"}`` of every registered method (read from
    :mod:`textxai.registry` on each access, so a method registered at run time is in it)."""
    if name == "MODULE_NAMES":
        from textxai import registry

        return {m.name: m.folder_kind for m in registry.methods()}
    raise AttributeError(f"module 'textxai.modules' has no attribute {name!r}")


def _roots() -> list[Path]:
    here = Path(__file__).resolve().parent
    # a built wheel carries the module folders inside the package; an editable install finds the repo root
    return [here / "_modules", here.parents[1]]


def _folders(method) -> list[Path]:
    """Where method's module folder may be: its descriptor's ``folder``, else ``<kind>s/<name>`` under each root."""
    if method.folder is not None:
        return [Path(method.folder)]
    return [root / method.folder_kind / method.name for root in _roots()]


def _method(name):
    from textxai import registry

    names = registry.names()
    if name not in names:
        raise ValueError(f"name={name!r} is not a textxai module; expected one of {sorted(names)}")
    return registry.get(name)


def module_path(name: str) -> Path:
    """The folder of module ``name`` (it holds ``<name>.py`` and its metric card)."""
    method = _method(name)
    for folder in _folders(method):
        if (folder / f"{name}.py").is_file():
            return folder
    raise FileNotFoundError(
        f"name={name!r}: the module folder {method.folder or Path(method.folder_kind) / name} is not present in "
        f"this installation (available: {list_modules()})"
    )


def list_modules() -> list[str]:
    """Names of the modules present in this installation."""
    from textxai import registry

    return sorted(m.name for m in registry.methods()
                  if any((folder / f"{m.name}.py").is_file() for folder in _folders(m)))


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
        from textxai import registry

        raise TypeError(f"name={name!r}: expected a module name, one of {sorted(registry.names())}")
    if name.startswith("textxai/"):
        name = name.split("/", 1)[1]
    folder = module_path(name)
    try:
        cache_modules([name])
    except OSError as err:  # a read-only cache: evaluate.load("textxai/...") stays unavailable offline, this works
        warnings.warn(f"could not cache the module {name!r} for evaluate.load('textxai/{name}'): {err}", stacklevel=2)
    return evaluate.load(str(folder), **kwargs)
