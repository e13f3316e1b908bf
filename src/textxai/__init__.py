"""textxai: evaluate modules that tell whether a text classifier is right for the right reasons.

>>> import textxai
>>> "naopc" in textxai.MODULE_NAMES
True
"""
from textxai import modules as _modules
from textxai.modules import cache_modules, list_modules, load, module_path

__version__ = "0.1.0"
__all__ = ["MODULE_NAMES", "cache_modules", "list_modules", "load", "module_path", "__version__", "audit"]


def __getattr__(name: str):
    """``textxai.audit(...)``: the audit package (callable), and ``textxai.MODULE_NAMES`` (the registered methods,
    :mod:`textxai.registry`), read on first use so ``import textxai`` stays light."""
    if name == "MODULE_NAMES":
        return _modules.MODULE_NAMES
    if name == "audit":
        import importlib

        return importlib.import_module("textxai.audit")
    raise AttributeError(f"module 'textxai' has no attribute {name!r}")
