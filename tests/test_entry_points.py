"""The naming rule of the paper modules: ``textxai.<paper>.compute`` is what the evaluate module calls; the old
entry names stay as aliases of the same function for one release."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALIASES = {"naopc": "compute_naopc", "ceval": "score_counterfactuals", "toki": "toki_trust",
           "inconsistency": "inconsistency"}
SCRIPTS = {"naopc": "metrics/naopc/naopc.py", "ceval": "metrics/ceval/ceval.py",
           "toki": "metrics/toki_trust/toki_trust.py", "inconsistency": "metrics/inconsistency/inconsistency.py"}


DEPRECATED = {"ceval"}  # the old name is a wrapper that warns (DeprecationWarning) and calls compute
ANALYSE = {"toki"}      # the module calls analyse (issue 23: one analysis); compute is a deprecated wrapper


@pytest.mark.parametrize("paper", sorted(ALIASES))
def test_compute_is_the_entry_point_and_the_old_name_an_alias(paper):
    module = importlib.import_module(f"textxai.{paper}")
    assert callable(module.compute)
    if paper in ANALYSE:
        with pytest.warns(DeprecationWarning, match=f"textxai.{paper}.compute is deprecated"), pytest.raises(ValueError):
            module.compute(["a"], [0], model=None)
        assert callable(module.analyse)
    elif paper in DEPRECATED:
        assert module.compute.__name__ == "compute" and "compute" in getattr(module, ALIASES[paper]).__doc__
    else:
        assert getattr(module, ALIASES[paper]) is module.compute


@pytest.mark.parametrize("paper", sorted(SCRIPTS))
def test_module_script_calls_compute(paper):
    tree = ast.parse((ROOT / SCRIPTS[paper]).read_text())
    called = {node.func.attr for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert {"analyse", "compute"} & called    # issue 23: the one analysis (analyse) or the staged compute
    assert ALIASES[paper] not in called


def test_fim_has_compute():
    from textxai import fim

    assert callable(fim.compute)
