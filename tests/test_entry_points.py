"""The naming rule of the paper modules: ``textxai.<paper>.compute`` (toki: ``toki_trust``, the module's output;
every package: ``analyse``, the one analysis) is what the evaluate module calls; the former entry names are
deprecated (reading one warns and gives the new object, ``textxai.deprecation``; tests/test_deprecations.py)."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RENAMED = {"naopc": ("compute_naopc", "compute"), "ceval": ("score_counterfactuals", "compute"),
           "toki": ("compute", "toki_trust"), "inconsistency": ("inconsistency", "compute")}
SCRIPTS = {"naopc": "metrics/naopc/naopc.py", "ceval": "metrics/ceval/ceval.py",
           "toki": "metrics/toki_trust/toki_trust.py", "inconsistency": "metrics/inconsistency/inconsistency.py"}


@pytest.mark.parametrize("paper", sorted(RENAMED))
def test_the_entry_point_is_public_and_the_former_name_deprecated(paper):
    module = importlib.import_module(f"textxai.{paper}")
    old, new = RENAMED[paper]
    assert callable(getattr(module, new)) and new in module.__all__ and old not in module.__all__
    assert callable(module.analyse)
    with pytest.warns(DeprecationWarning, match=rf"textxai.{paper}.{old} is deprecated: use textxai.{paper}.{new}"):
        assert getattr(module, old) is getattr(module, new)


@pytest.mark.parametrize("paper", sorted(SCRIPTS))
def test_module_script_calls_compute(paper):
    tree = ast.parse((ROOT / SCRIPTS[paper]).read_text())
    called = {node.func.attr for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert {"analyse", "compute"} & called    # issue 23: the one analysis (analyse) or the staged compute
    assert RENAMED[paper][0] not in called


def test_fim_has_compute():
    from textxai import fim

    assert callable(fim.compute)
