"""One NAOPC analysis on every surface: the evaluate module, `textxai run naopc` (cli.main in-process) and the
Space give the same numbers, warnings and figure names on the same two texts (textxai.naopc.analyse)."""
from __future__ import annotations

import html as html_lib
import json

import pytest
from helpers import load_space_app

import textxai
from textxai.outputs import to_jsonable

TEXTS = ["the movie was wonderful", "i hated it , not good"]
SCORES = ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency")


@pytest.fixture(scope="module")
def app():
    return load_space_app("naopc")


@pytest.fixture(scope="module")
def space(app, sharp_bert_folder):
    """The Space's analysis (the options its widgets give) and its rendered outputs."""
    analysis, _ = app.analyse_texts(sharp_bert_folder, "\n".join(TEXTS), "omission", "auto", 5)
    return analysis, app.evaluate_texts(sharp_bert_folder, "\n".join(TEXTS), "omission", "auto", 5)


@pytest.fixture(scope="module")
def cli_run(sharp_bert_folder, tmp_path_factory):
    """`textxai run naopc` with the Space's options (its beam, its exact-limit cap, every text's curves; the interval
    options are the one default on both); returns the written JSON and the files written."""
    from textxai.cli import main

    folder = tmp_path_factory.mktemp("naopc_surfaces")
    data = folder / "data.jsonl"
    data.write_text("\n".join(json.dumps({"text": t}) for t in TEXTS))
    out = folder / "out"
    assert main(["run", "naopc", "--model", sharp_bert_folder, "--data", str(data), "--attribution-methods",
                 "omission", "--beam-size", "5", "--max-exact-words", "12", "--curve-texts", "2", "--output",
                 str(out), "--no-progress"]) == 0
    return json.loads((out / "naopc.json").read_text()), sorted(p.name for p in out.iterdir())


def test_module_cli_and_space_give_the_same_numbers(space, cli_run, sharp_bert_folder, app):
    analysis, (html, _, _, _) = space
    written, _ = cli_run
    module = textxai.load("naopc").compute(texts=TEXTS, model=sharp_bert_folder, attribution_method="omission",
                                           beam_size=5, max_exact_words=app.MAX_EXACT_WORDS, return_per_example=True)
    assert {k: module[k] for k in SCORES} == analysis.summary  # the module's answer is the analysis's summary
    assert to_jsonable(module["per_example"]) == written["per_example"]["omission"]
    for key in SCORES:
        assert written["methods"]["omission"][key] == module[key] == written[f"omission/{key}"]
        shown = html.split(f'id="naopc-{dict(zip(SCORES, ("comp", "suff", "ncomp", "nsuff")))[key]}">')[1]
        assert shown.split("<")[0] == f"{module[key]:.6f}"
    # the whole run file is the Space's analysis (intervals included), up to the CLI's flat summary keys
    assert {k: v for k, v in written.items() if "/" not in k} == to_jsonable(analysis.results)


def test_the_same_warnings_on_every_surface(space, cli_run, sharp_bert_folder, capsys):
    analysis, (html, _, _, _) = space
    written, _ = cli_run
    assert analysis.warnings and written["warnings"] == analysis.warnings
    assert analysis.warnings[0].startswith("Limits: exact for 2 texts (N <= 12")
    for warning in analysis.warnings:
        assert f"⚠ {warning}" in html_lib.unescape(html)


def test_the_same_figures_on_every_surface(space, cli_run):
    analysis, (_, _, curves, scores) = space
    _, files = cli_run
    assert sorted(analysis.figures) == ["curves", "scores"]
    assert files == sorted(["naopc.json"] + [f"naopc_{name}.png" for name in analysis.figures])
    assert len(curves.axes) == len(TEXTS)  # one panel per text, as the Space asks
    for shown, made in ((curves, analysis.figures["curves"]), (scores, analysis.figures["scores"])):
        assert [a.get_title() for a in shown.axes] == [a.get_title() for a in made.axes]
        assert [list(line.get_ydata()) for a in shown.axes for line in a.lines] == [
            list(line.get_ydata()) for a in made.axes for line in a.lines]


def test_narrow_limits_are_one_warning_in_report_results_and_space(app):
    """A hand-made result whose second text's limits are 5e-4 apart: the run's warning, the report's line and
    the Space's note are the one sentence of textxai.naopc.analysis."""
    from textxai.naopc import analysis as A
    from textxai.registry import Analysis

    row = dict(n_words=4, normalization="exact", comprehensiveness=0.1, sufficiency=0.0, naopc_comprehensiveness=0.5,
               naopc_sufficiency=0.0, n_evaluations=16, lower=0.2, upper=0.2005)
    means = {k: row[k] for k in SCORES}
    results = dict(n_texts=1, mean_words=4.0, normalization_used=["exact"], model_evaluations=16, mean_lower=0.2,
                   mean_upper=0.2005, methods={"omission": means}, per_example={"omission": [row]},
                   narrow_limit_texts=A.narrow_limit_texts([row]), limits_choice="limits: exact for 1 text")
    warnings = A.warnings(results)
    assert warnings == ["Limits: exact for 1 text.", "text(s) 1 have limits closer than 0.001 (upper - lower): the "
                        "model barely reacts to removing words there, so their NAOPC rescales noise."]
    assert "Warning: " + warnings[1] in A.report(results) and warnings[0] in A.report(results)
    html = app.summary_html(Analysis("naopc", results, warnings=warnings), "omission")
    assert all(f"⚠ {w}" in html_lib.unescape(html) for w in warnings)
