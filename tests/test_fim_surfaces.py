"""One analysis, three surfaces: the evaluate module, ``textxai run fim_difficulty`` (cli.main in-process) and the
Space give the same numbers, warnings and figure names on the same input (issue 23)."""
from __future__ import annotations

import json

import pytest
from helpers import load_space_app

import textxai
from textxai import cli, fim
from textxai.classifier import TextClassifier
from textxai.outputs import to_jsonable

TEXT = "the movie was wonderful but the food was bad ."
TEXTS = [TEXT, "a terrible boring film , i hated it !", "good", "it was not good"]


@pytest.fixture(scope="module")
def app():
    return load_space_app("fim_difficulty")


@pytest.fixture(scope="module")
def module():
    return textxai.load("fim_difficulty")


def _cli(folder, texts, tmp_path, *flags):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    out = tmp_path / "out"
    assert cli.main(["run", "fim_difficulty", "--model", folder, "--data", str(data), "--output", str(out),
                     "--no-progress", *flags]) == 0
    figures = sorted(p.stem.removeprefix("fim_difficulty_") for p in out.glob("fim_difficulty_*.png"))
    return json.loads((out / "fim_difficulty.json").read_text()), figures


@pytest.mark.parametrize("max_flip", [None, 1e-4], ids=["flips", "never-flips"])
def test_module_cli_and_space_agree_on_one_text(app, module, tiny_bert_folder, tmp_path, monkeypatch, max_flip):
    if max_flip is not None:  # a search range too short for any flip: the warning on every surface
        monkeypatch.setattr(app, "MAX_FLIP", max_flip)
    opts = app.options()
    clf, space = app.analyse(tiny_bert_folder, TEXT)
    summary = module.compute(texts=[TEXT], model=TextClassifier(tiny_bert_folder), options=opts)
    results, figures = _cli(tiny_bert_folder, [TEXT], tmp_path, "--min-flip", "--max-strength", str(opts.max_strength),
                            "--confidence-level", "0")
    assert summary["difficulty"] == results["difficulty"] == space.results["difficulty"]
    assert summary["predictions"] == results["predictions"] == space.results["predictions"]
    assert summary["summary"] == results["summary"] == space.results["summary"] == space.summary["summary"]
    assert summary["min_flip_strength"] == results["min_flip_strength"] == to_jsonable(space.results["min_flip_strength"])
    assert summary["words"] == space.summary["words"] and results["hardest"] == space.results["hardest"]
    assert summary.get("warnings", []) == results["warnings"] == space.warnings
    flips = max_flip is None
    assert bool(space.warnings) is not flips and (results["min_flip_strength"][0] is None) is not flips
    if not flips:
        assert space.warnings == [f"1 of 1 texts do not flip within max_strength={max_flip:g}: their min_flip_strength "
                                  "is inf, and the correlation leaves them out."]
    html, words, _, _ = app.score(tiny_bert_folder, TEXT)  # what the Space shows is that analysis
    assert f'id="fim-score">{space.results["difficulty"][0]:.6g}<' in html
    assert ("fim-warnings" in html) is not flips and all(app.spaces.escape(w) in html for w in space.warnings)
    assert words.count("textxai-word") == len(space.summary["words"][0])
    # the figures the CLI writes are the analysis' (the Space scores one text: it draws none)
    assert figures == sorted(fim.analyse([TEXT], clf, options=opts, intervals=None).figures) == \
        ["difficulty_histogram", "min_flip_strength"]


def test_module_and_cli_agree_with_intervals_and_warnings(module, tiny_bert_folder, tmp_path):
    """Several texts, the random-flip experiment with one trial at a tiny fraction, intervals on: the CLI's JSON is
    the analysis' results, the module's output its summary, the figures its figures."""
    flags = ["--min-flip", "--max-strength", "0.001", "--random-flips", "--trials", "1", "--n-resamples", "199"]
    results, figures = _cli(tiny_bert_folder, TEXTS, tmp_path, *flags)
    clf = TextClassifier(tiny_bert_folder)
    options = dict(min_flip=True, max_strength=0.001, random_flips=True, trials=1)
    summary = module.compute(texts=TEXTS, model=clf, **options)
    analysis = fim.analyse(TEXTS, clf, intervals={"n_resamples": 199}, **options)
    assert results == json.loads(json.dumps(to_jsonable(analysis.results)))
    assert {k: summary[k] for k in ("difficulty", "predictions", "summary", "random_flip_rate")} == \
        {k: results[k] for k in ("difficulty", "predictions", "summary", "random_flip_rate")}
    assert summary["warnings"] == results["warnings"] == analysis.warnings
    constant = len(set(results["random_flip_rate"])) == 1  # no rank correlation with a constant: a third warning
    assert len(analysis.warnings) == 2 + constant
    assert analysis.warnings[0].startswith("4 of 4 texts do not flip within max_strength=0.001")
    assert "min flip strength is undetermined (nan): 0 usable texts" in analysis.warnings[1]
    assert constant is ("random flip rate is undetermined (nan): 4 usable texts" in analysis.warnings[-1])
    assert figures == sorted(analysis.figures) == ["difficulty_histogram", "intervals", "min_flip_strength",
                                                   "random_flip_rate"]
    assert analysis.report.endswith("Warnings:\n  " + "\n  ".join(analysis.warnings) + "\n")
