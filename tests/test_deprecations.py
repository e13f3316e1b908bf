"""Every name renamed in this release (CHANGELOG.md, "Deprecated"): still readable, with a DeprecationWarning that
names the new one; gone from ``__all__``; the new name is the same object. And nothing else warns."""
from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import pytest

RENAMED = [  # (module, old name, new name), as listed in CHANGELOG.md
    ("textxai.naopc", "compute_naopc", "compute"),
    ("textxai.toki", "compute", "toki_trust"),
    ("textxai.ceval", "score_counterfactuals", "compute"),
    ("textxai.inconsistency", "inconsistency", "compute"),
    ("textxai.editors", "GradientSubstitutionEditor", "SubstitutionEditor"),
]


@pytest.mark.parametrize("module_name, old, new", RENAMED)
def test_old_name_warns_naming_the_new_one(module_name, old, new):
    module = importlib.import_module(module_name)
    with pytest.warns(DeprecationWarning, match=rf"^{module_name}\.{old} is deprecated: use {module_name}\.{new} "):
        value = getattr(module, old)
    assert value is getattr(module, new)
    assert old not in getattr(module, "__all__", ()) and old not in vars(module)
    with pytest.warns(DeprecationWarning, match=rf"use {module_name}\.{new}"):
        exec(f"from {module_name} import {old}", {})  # the import form too
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(module, new)  # the new name is silent
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name


def test_renamed_editor_name_warns_and_builds_the_same_editor():
    from textxai import editors

    assert "gradient_substitution" not in editors.EDITORS and "gradient_substitution" not in editors.EDITOR_NAMES
    made = []

    class Fake:
        def __init__(self, classifier, **options):
            made.append((classifier, options))

    editors.EDITORS["substitution"], real = Fake, editors.EDITORS["substitution"]
    try:
        with pytest.warns(DeprecationWarning, match=r"editor='gradient_substitution' is deprecated: use "
                                                    r"editor='substitution'"):
            assert isinstance(editors.get_editor("gradient_substitution", "clf", n_words=2), Fake)
    finally:
        editors.EDITORS["substitution"] = real
    assert made == [("clf", {"n_words": 2})]


def test_every_deprecated_name_is_in_the_changelog():
    text = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
    section = text.split("### Deprecated", 1)[1].split("\n### ", 1)[0]
    for module_name, old, new in RENAMED:
        assert re.search(rf"`{re.escape(module_name)}\.{old}` -> `({re.escape(module_name)}\.)?{new}`", section), old
    assert "`gradient_substitution`" in section
