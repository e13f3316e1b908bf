"""Moved to :mod:`textxai.fim.runner` (the method's CLI glue lives in its package); this name stays only until
``textxai.cli`` finds runners through the registry (``Method.runner``)."""
from textxai.fim.runner import DATA_PARALLEL, HELP, NAME, add_arguments, demo, run

__all__ = ["DATA_PARALLEL", "HELP", "NAME", "add_arguments", "demo", "run"]
