"""One resolution of the model per audit (issue 41, deliverable 3): ``textxai.audit`` resolves the model it is given
once and passes the ``TextClassifier`` down; nothing below resolves it again by name.

A resolution by name is a lookup in the resolver's cache of named classifiers (``textxai.classifier._NAMED``:
every ``as_classifier(name)``, plain or hosted, goes through it); ``as_classifier(clf)`` of a resolved classifier
returns it untouched and is not one. The counter wraps that lookup, so it sees resolutions from every module,
whichever way it imported ``as_classifier``.
"""
from __future__ import annotations

import pytest

from textxai import classifier, demo


@pytest.fixture
def resolutions(monkeypatch):
    """The names resolved while the test runs, in order."""
    seen = []
    real = classifier._NAMED.get_or_create

    def counting(key, *args, **kwargs):
        seen.append(key[0])
        return real(key, *args, **kwargs)

    monkeypatch.setattr(classifier._NAMED, "get_or_create", counting)
    return seen


def test_the_counter_sees_a_resolution_by_name_and_not_a_resolved_classifier(resolutions):
    from textxai.naopc import compute  # a library entry point: a name given there is resolved there, once

    clf = classifier.as_classifier("textxai/demo-sentiment")
    assert classifier.as_classifier(clf) is clf and resolutions == ["textxai/demo-sentiment"]
    texts = ["a wonderful film", "dull and slow"]
    by_object = compute(texts, [[1.0, 0.5, 0.0], [0.2, 0.1, 0.4]], clf, normalization="exact")
    assert resolutions == ["textxai/demo-sentiment"]
    by_name = compute(texts, [[1.0, 0.5, 0.0], [0.2, 0.1, 0.4]], "textxai/demo-sentiment", normalization="exact")
    assert resolutions == ["textxai/demo-sentiment"] * 2
    assert by_name["naopc_comprehensiveness"] == by_object["naopc_comprehensiveness"]


def test_naopc_analyse_given_a_name_resolves_it_once(resolutions):
    from textxai.naopc import analyse

    a = analyse(["a wonderful film"], "textxai/demo-sentiment", attribution_method="omission", intervals=None,
                figures=False)
    assert resolutions == ["textxai/demo-sentiment"]  # was 2: the analysis resolved the name again for its device
    assert a.results["n_texts"] == 1


# One audit resolves its model once: tests/test_audit_run.py counts the resolutions of its audit the same way.
