"""TOKI: is each correct prediction made for the right reasons (words related to its class)?

Moved to :mod:`textxai.toki.runner` (the method's descriptor names it); this module goes with ``textxai/runners``.
"""
from textxai.toki.runner import DATA_PARALLEL, HELP, NAME, add_arguments, demo, run  # noqa: F401
