"""``textxai.audit``: one call, one report -- is my classifier right for the right reasons?

The five methods run on the same texts and speak to each other: Overview (accuracy, calibration), Difficulty
(FIM), Faithfulness (NAOPC), Trust (TOKI), Counterfactual robustness (CEval + inconsistency), Connections
(hardest vs untrustworthy, shortcut words attacked) and, with ``compare``, paired differences of two models.

    import textxai
    result = textxai.audit("textxai/demo-sentiment", texts, labels)     # textxai.audit is also callable
    print(result.summary); result.to_html("audit/index.html"); result.to_json("audit/audit.json")

The package is split at its seams: ``options`` (per-stage options, config files), ``numbers`` (intervals and
readings), ``sections`` / ``trust`` / ``robustness`` / ``compare`` (each section a function returning plain
data), ``plan`` (work estimate, stage cache), ``run`` (the orchestration), ``report`` / ``figures`` (HTML), ``cli``.
"""
from __future__ import annotations

import sys
import types

from textxai.audit.options import (SECTIONS, AuditOptions, CounterfactualOptions, DifficultyOptions,
                                   FaithfulnessOptions, RunOptions, TrustOptions, audit_options, read_config)
from textxai.audit.numbers import Intervals
from textxai.audit.run import AuditResult, audit

__all__ = ["audit", "AuditResult", "AuditOptions", "DifficultyOptions", "FaithfulnessOptions", "TrustOptions",
           "CounterfactualOptions", "RunOptions", "Intervals", "SECTIONS", "audit_options", "read_config"]


class _CallableModule(types.ModuleType):
    """``textxai.audit(...)`` calls :func:`textxai.audit.run.audit` (the package is also the function)."""

    def __call__(self, *args, **kwargs) -> AuditResult:
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
