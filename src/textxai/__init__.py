"""textxai: evaluate modules that tell whether a text classifier is right for the right reasons.

>>> import textxai
>>> "naopc" in textxai.MODULE_NAMES
True
"""
from textxai.modules import MODULE_NAMES, cache_modules, list_modules, load, module_path

__version__ = "0.1.0"
__all__ = ["MODULE_NAMES", "cache_modules", "list_modules", "load", "module_path", "__version__"]
