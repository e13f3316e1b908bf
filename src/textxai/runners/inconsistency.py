"""``textxai run inconsistency``: the CLI glue lives in :mod:`textxai.inconsistency.runner` (this module is
read by ``textxai.cli.runner`` until it reads the registry's ``runner``)."""
from textxai.inconsistency.runner import *  # noqa: F401,F403
from textxai.inconsistency.runner import __all__  # noqa: F401
