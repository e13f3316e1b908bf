"""One CEval analysis on every surface: the evaluate module, `textxai run ceval` (cli.main in-process) and the
Space give the same numbers, warnings and figure names on the same three originals (textxai.ceval.analyse)."""
from __future__ import annotations

import csv
import html as html_lib
import json

import pytest
from helpers import load_space_app

import textxai
from textxai.outputs import to_jsonable

ROWS = [("the movie was wonderful and the acting was great .", "the movie was terrible and the acting was bad .",
         "the film was terrible and the acting was bad !"),
        ("a terrible boring film , i hated it !", "-1", "a wonderful film , i loved it !"),
        ("the food was not good .", "the food was good .", "the food was very good .")]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("ceval_surfaces") / "cf.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["orig_text", "gen_text", "gen_text_2"])
        writer.writerows(ROWS)
    return path


@pytest.fixture(scope="module")
def space(table, tiny_bert_folder):
    """The Space's analysis of the uploaded table and its rendered outputs."""
    app = load_space_app("ceval")
    analysis, _, _ = app.analyse_csv(tiny_bert_folder, str(table), "none")
    return analysis, app.score_csv(tiny_bert_folder, str(table), "none")


@pytest.fixture(scope="module")
def cli_run(table, tiny_bert_folder, tmp_path_factory):
    """`textxai run ceval` on the same table (the Space's interval options are the one default): JSON and files."""
    from textxai.cli import main

    out = tmp_path_factory.mktemp("ceval_surfaces_out")
    assert main(["run", "ceval", "--model", tiny_bert_folder, "--data", str(table), "--text-column", "orig_text",
                 "--counterfactual-column", "gen_text", "gen_text_2", "--output", str(out),
                 "--no-progress"]) == 0
    return json.loads((out / "ceval.json").read_text()), sorted(p.name for p in out.iterdir())


def test_module_cli_and_space_give_the_same_numbers(space, cli_run, tiny_bert_folder):
    analysis, (summary_html, _, _) = space
    written, _ = cli_run
    module = textxai.load("ceval").compute(references=[r[0] for r in ROWS], predictions=[list(r[1:]) for r in ROWS],
                                           model=tiny_bert_folder)
    assert module == to_jsonable(analysis.summary) and "per_example" not in module
    assert written == to_jsonable(analysis.results)  # the whole run file, intervals included
    for key, elem, digits in (("flip_rate", "flip-rate", 3), ("probability_change", "probability-change", 3),
                              ("token_distance", "token-distance", 2), ("diversity", "diversity", 2)):
        assert module[key] == written[key]
        assert summary_html.split(f'id="{elem}">')[1].split("<")[0] == f"{module[key]:.{digits}f}"


def test_the_same_warnings_on_every_surface(space, cli_run):
    analysis, (summary_html, _, _) = space
    written, _ = cli_run
    assert written["warnings"] == analysis.warnings
    assert analysis.warnings[0].startswith("1 failed generation(s) of 3: counted as not flipped")
    for warning in analysis.warnings:
        assert f"⚠ {warning}" in html_lib.unescape(summary_html)


def test_the_same_figures_on_every_surface(space, cli_run):
    analysis, (_, _, histogram) = space
    _, files = cli_run
    assert sorted(analysis.figures) == ["intervals", "method_distances", "probability_histogram"]
    assert files == sorted(["ceval.json"] + [f"ceval_{name}.png" for name in analysis.figures])
    assert [a.get_title() for a in histogram.axes] == [a.get_title() for a in analysis.figures["probability_histogram"].axes]


def test_warnings_name_every_documented_nan_once():
    """No classifier outputs but labels: nothing flipped, so the flipped-only means are NaN; each is one warning
    on every surface (the module's RuntimeWarning says the same notes)."""
    from textxai import ceval

    with pytest.warns(RuntimeWarning) as caught:
        analysis = ceval.analyse(["a bad film", "a dull film"], ["a good film", "-1"], original_labels=[0, 0],
                                 counterfactual_labels=[0, 0], intervals=None, figures=False)
    assert analysis.warnings == [
        "1 failed generation(s) of 2: counted as not flipped (probability change 0), left out of distance, "
        "diversity, perplexity and quality.",
        "Nothing to average for probability_change (= NaN: no probabilities (model= or original_probs / "
        "counterfactual_probs), num_flipped=0).",
        "Nothing to average for probability_change_flipped (= NaN: no counterfactual flipped the prediction, "
        "num_flipped=0).",
        "Nothing to average for token_distance_flipped (= NaN: no counterfactual flipped the prediction, "
        "num_flipped=0)."]
    message = str(caught[0].message)
    assert all(w[len("Nothing to average for "):-1] in message for w in analysis.warnings[1:])
    assert analysis.figures == {} and "intervals" not in analysis.results
