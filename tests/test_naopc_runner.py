"""`textxai run naopc` on a saved tiny model: the JSON it writes equals naopc.compute."""
from __future__ import annotations

import json

import pytest

from textxai import naopc as N


@pytest.fixture(scope="module")
def model_folder(sharp_bert_folder):
    return sharp_bert_folder


def test_cli_run(model_folder, tmp_path, capsys):
    from textxai.classifier import TextClassifier
    from textxai.cli import main

    data = tmp_path / "data.jsonl"
    rows = [{"text": "the movie was wonderful", "scores": [0.1, 0.5, 0.0, 0.9]},
            {"text": "i hated it !", "scores": [0.0, 0.8, 0.1, 0.2]}]
    data.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "out"
    assert main(["run", "naopc", "--model", str(model_folder), "--data", str(data), "--attributions-column", "scores",
                 "--output", str(out), "--no-progress"]) == 0
    written = json.loads((out / "naopc.json").read_text())
    # "auto" says which limits it chose and why (4-word texts: exact, within the CPU budget of 2^12 inputs)
    choice = "limits: exact for 2 texts (N <= 12: 2^N <= 4,096 model inputs per text, the 'auto' budget on cpu)"
    assert written["limits_choice"] == choice
    assert written["warnings"] == ["L" + choice[1:] + "."]  # the analysis's warnings, printed on stderr
    assert f"textxai run naopc: L{choice[1:]}." in capsys.readouterr().err
    clf = TextClassifier(str(model_folder), device="cpu")
    direct = N.compute([r["text"] for r in rows], [r["scores"] for r in rows], clf)
    for key in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency"):
        assert written["methods"]["scores"][key] == pytest.approx(direct[key], abs=1e-6)
    assert (out / "naopc_curves_first_text.png").is_file() and (out / "naopc_scores.png").is_file()
    with pytest.raises(SystemExit):
        main(["run", "naopc", "--model", str(model_folder), "--data", str(data), "--normalization", "minmax"])


def test_demo_section(model_folder, monkeypatch):
    """The `textxai demo` section on a stand-in classifier (the demo model is built elsewhere)."""
    import textxai.classifier
    from textxai.classifier import TextClassifier
    from textxai.naopc import runner

    clf = TextClassifier(str(model_folder), device="cpu")
    monkeypatch.setattr(textxai.classifier, "as_classifier", lambda *a, **k: clf)
    assert len(runner._demo_texts()) == 6  # the real section: the 6 shortest demo test texts
    monkeypatch.setattr(runner, "_demo_texts", lambda: ["the movie was wonderful", "i hated it , not good"])
    report, results, figures = runner.demo(progress=False)
    assert list(results["methods"]) == list(runner.DEMO_METHODS)
    assert len(results["per_example"]["omission"]) == 2
    for method, m in results["methods"].items():
        assert f"{method}" in report
        rows = results["per_example"][method]
        # exact limits for <= 10 words: every score inside its limits, NAOPC in [0, 1]
        for row in rows:
            if row["normalization"] == "exact":
                assert row["lower"] - 1e-12 <= row["comprehensiveness"] <= row["upper"] + 1e-12
                assert -1e-9 <= row["naopc_comprehensiveness"] <= 1 + 1e-9
    assert {"scores", "curves_first_text"} <= set(figures)


def test_report_warns_about_texts_with_nearly_coinciding_limits():
    from textxai.naopc import analysis

    results = dict(n_texts=2, mean_words=4.0, normalization_used=["exact"], model_evaluations=32, mean_lower=0.1,
                   mean_upper=0.3, methods={"omission": dict(comprehensiveness=0.1, sufficiency=0.0,
                                                             naopc_comprehensiveness=0.5, naopc_sufficiency=0.0)},
                   narrow_limit_texts=[1])
    assert "Warning: text(s) 2 have limits closer than 0.001" in analysis.report(results)
    results["narrow_limit_texts"] = []
    assert "Warning" not in analysis.report(results)


def test_report_names_a_ranking_flip_after_normalization():
    """A hand-made result: AOPC ranks b ahead on comprehensiveness, NAOPC ranks a ahead; sufficiency agrees."""
    from textxai.naopc.analysis import ranking_flips

    methods = {"a": {"comprehensiveness": 0.20, "naopc_comprehensiveness": 0.80, "sufficiency": 0.1, "naopc_sufficiency": 0.2},
               "b": {"comprehensiveness": 0.25, "naopc_comprehensiveness": 0.60, "sufficiency": 0.3, "naopc_sufficiency": 0.5}}
    test = {"n": 20, "ci_low": 0.05, "ci_high": 0.35, "p_value": 0.03, "confidence_level": 0.95}
    results = {"methods": methods, "comparisons": {"a vs b": {"naopc_comprehensiveness": test}}}
    lines = ranking_flips(results)
    assert len(lines) == 1 and lines[0].startswith("Ranking flip (comprehensiveness): AOPC rates b better than a")
    assert "p = 0.03)" in lines[0] and "within noise" not in lines[0]
    test.update(ci_low=-0.05, p_value=0.2)   # issue 41: no flip claimed from point estimates the test cannot tell apart
    assert ranking_flips(results)[0].startswith("Point estimates (comprehensiveness): AOPC rates b better than a")
    assert "no ranking flip is claimed" in ranking_flips(results)[0]
    methods["b"]["naopc_comprehensiveness"] = 0.9   # now both agree: no flip
    assert ranking_flips(results) == []
