"""Issue 41: the audit composes the methods' own analyses. For each method, the audit's section and the method's
``analyse()`` on the same texts with the same options show the same number, the same interval and the same reading
(one cheap audit of 4 demo texts, shared by every test); the audit resolves its model once (a counting resolver),
and learns demo-specific things through the demo package's one function."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from textxai import demo

TEXTS, LABELS = demo.demo_examples("sentiment", 4)
IV = {"confidence_level": 0.95, "n_resamples": 199, "seed": 0, "sample_size_sweep": False}


def _options(train_texts, train_labels) -> dict:
    return {"difficulty": {"hardest": 2, "test_set_size": 1, "strengths": [0.0, 0.5], "bins": 2},
            "faithfulness": {"methods": ["omission", "input_x_gradient"], "max_texts": 3, "max_words": 0,
                             "normalization": "beam", "examples": 1},
            "trust": {"train_texts": train_texts, "train_labels": train_labels, "attack_texts": 0, "shortcuts": 2},
            "counterfactual": {"editors": ["substitution", "deletion"], "max_texts": 3},
            "intervals": {"n_resamples": IV["n_resamples"]}, "run": {"progress": False, "precision": "float32"}}


def _counting(monkeypatch, calls: list) -> None:
    """Every resolver of a model (``as_classifier`` where the library imports it) records what it was asked to
    resolve; a ``TextClassifier`` handed down is no resolution (it is returned as it is)."""
    from textxai import attribution, classifier

    real = classifier.as_classifier

    def counting(model, *args, **kwargs):
        if not isinstance(model, classifier.TextClassifier):
            calls.append(model)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(classifier, "as_classifier", counting)
    monkeypatch.setattr(attribution, "as_classifier", counting)


@pytest.fixture(scope="module")
def audited():
    from textxai import audit
    from textxai.classifier import as_classifier

    corpus = demo.load_corpus("sentiment")
    train = (tuple(corpus["train_texts"][:8]), tuple(corpus["train_labels"][:8]))
    calls: list = []
    with pytest.MonkeyPatch.context() as mp:
        _counting(mp, calls)
        result = audit("textxai/demo-sentiment", TEXTS, LABELS, **_options(*train))
    return result.data, as_classifier("textxai/demo-sentiment"), train, calls


def _same(shown: dict, own: dict, reading: str) -> None:
    """The same number, interval and reading (float64 on both sides: the same function, the same data)."""
    assert (shown["score"], shown["n"]) == pytest.approx((own["score"], own["n"]), rel=1e-9)
    bounds = [np.nan if x is None else x for x in (shown["ci_low"], shown["ci_high"])]   # JSON: NaN -> null
    assert bounds == pytest.approx([own["ci_low"], own["ci_high"]], rel=1e-9, nan_ok=True)
    assert shown["reading"] == reading


def test_fim_section_is_the_fim_analysis(audited):
    from textxai.fim.analysis import analyse

    data, clf, _, _ = audited
    shown = data["models"]["model"]["difficulty"]
    own = analyse(TEXTS, clf, intervals=IV, figures=False, batch_size=16).results
    np.testing.assert_allclose(shown["difficulty"], own["difficulty"], rtol=1e-6)
    _same(shown["mean_log10"], own["mean_log10"], own["mean_log10"]["reading"])
    assert shown["mean_log10"]["reading"].startswith("mean log10 λ_max ") and "too few to conclude (n = 4 < 10)" in \
        shown["mean_log10"]["reading"]


def test_toki_section_is_the_toki_analysis(audited):
    from textxai import toki
    from textxai.audit import trust as audit_trust
    from textxai.audit.options import TrustOptions

    data, clf, (texts, labels), _ = audited
    options = TrustOptions(train_texts=texts, train_labels=labels)
    index, _ = audit_trust.keyword_index(clf, TEXTS, LABELS, options, precision="float32")
    own = toki.analyse(TEXTS, LABELS, model=clf, keyword_index=index, explainer="omission", top_k=options.top_k,
                       explainer_options={"precision": "float32"}, intervals=IV, figures=False).results
    shown = data["models"]["model"]["trust"]["rates"]
    for key, name, _ in toki.analysis.RATES:
        _same(shown[name], own["intervals"][key], own["readings"][key])
    assert shown["TOKI"]["reading"].endswith(f"too few to conclude (n = {own['intervals']['trustworthy_rate']['n']} < 10).")
    assert own["readings"]["trustworthy_rate"] in toki.analyse(
        TEXTS, LABELS, model=clf, keyword_index=index, explainer="omission", explainer_options={"precision": "float32"},
        intervals=IV, figures=False).report   # the method's report says the same sentence


def test_naopc_section_is_the_naopc_analysis(audited):
    from textxai import naopc
    from textxai.naopc.analysis import analyse

    data, clf, _, _ = audited
    f = data["models"]["model"]["faithfulness"]
    sub = [TEXTS[i] for i in f["indices"]]
    a = analyse(sub, clf, {m: None for m in f["methods"]}, options=naopc.NAOPCOptions(normalization="beam",
                max_exact_words=10, precision="float32"), intervals=IV, figures=False)
    for m in f["methods"]:
        own = a.results["methods"][m]
        for key in ("comprehensiveness", "naopc_comprehensiveness", "sufficiency", "naopc_sufficiency"):
            _same(f["scores"][m][key], own["intervals"][key], own["readings"][key])
            assert own["readings"][key] in a.report
    assert "too few to conclude (n = 3 < 10)" in f["scores"]["omission"]["comprehensiveness"]["reading"]


def test_ceval_section_is_the_ceval_analysis(audited):
    from textxai import ceval

    data, clf, _, _ = audited
    for name, e in data["models"]["model"]["counterfactual"]["editors"].items():
        a = ceval.analyse(TEXTS[: e["n_texts"]], e["counterfactuals"], classifier=clf, intervals=IV, figures=False)
        for key in ("flip_rate", "probability_change", "token_distance"):
            _same(e[key], a.results["intervals"][key], a.results["readings"][key])
        assert a.results["readings"]["flip_rate"] in a.report
        assert "(exact 95 %)" in e["flip_rate"]["reading"] and "counterfactuals flip the prediction" in e["flip_rate"]["reading"]


def test_inconsistency_section_is_the_inconsistency_analysis(audited):
    from textxai.inconsistency.analysis import analyse

    data, _, _, _ = audited
    for name, e in data["models"]["model"]["counterfactual"]["editors"].items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the analysis' own warnings (kept in its results)
            a = analyse(chains=e["chains"], labels=e["chain_labels"], n=[1], intervals=IV, figures=False)
        _same(e["inc@1"], a.results["intervals"]["inc@1"], a.results["readings"]["inc@1"])
        assert a.results["readings"]["inc@1"] in a.report
        np.testing.assert_allclose(e["per_example"]["inc@1"], [v[0] if len(v) else np.nan
                                                              for v in a.results["per_example"]["inc"]])


def test_the_audit_resolves_its_model_once(audited):
    # issue 41.3: the model argument resolved once, the TextClassifier passed down to every stage
    _, _, _, calls = audited
    assert calls == ["textxai/demo-sentiment"]


def test_the_audit_resolves_each_of_two_models_once(monkeypatch):
    from textxai import audit

    calls: list = []
    _counting(monkeypatch, calls)
    audit("textxai/demo-sentiment", TEXTS[:2], LABELS[:2], compare="textxai/demo-sentiment",
          sections=["difficulty"], difficulty={"hardest": 1, "test_set_size": 1, "strengths": [0.0]},
          intervals={"n_resamples": 99}, run={"progress": False})
    assert calls == ["textxai/demo-sentiment", "textxai/demo-sentiment"]


def test_demo_knowledge_comes_through_one_function(monkeypatch):
    # the audit's estimate, index and domain warning read the demo package through demo_knowledge alone
    from textxai.audit import plan, trust
    from textxai.audit.options import audit_options
    from textxai.demo import index_texts

    real = index_texts.demo_knowledge
    asked = []

    def one(model, n=index_texts.INDEX_TEXTS):
        asked.append(model)
        return real(model, n)

    def refused(*args, **kwargs):
        raise AssertionError("the audit read the demo corpus around demo_knowledge")

    known = real("textxai/demo-sentiment")
    monkeypatch.setattr(index_texts, "demo_knowledge", one)
    for name in ("index_training", "corpus_texts"):
        monkeypatch.setattr(index_texts, name, refused)
    plan.estimate(TEXTS, 2, audit_options({"sections": ["trust"]}), labels=True, model_name="textxai/demo-sentiment")
    from types import SimpleNamespace

    clf = SimpleNamespace(name="textxai/demo-sentiment")
    assert trust.index_domain_warning(clf, [known.texts[0]], "the demo model's first 60 training texts") is None
    assert "--train-data" in trust.index_domain_warning(clf, ["not a demo text"], "the demo model's first 60 training texts")
    assert asked == ["textxai/demo-sentiment"] * 3
