"""One analysis on every surface: the evaluate module, `textxai run inconsistency` and the Space give the same
numbers, intervals, warnings and figures on the same input (textxai.inconsistency.analyse, computed once)."""
from __future__ import annotations

import json
import warnings

import pytest
from helpers import load_space_app

import textxai
from textxai import inconsistency as inc
from textxai.cli import main
from textxai.outputs import to_jsonable

TEXTS = ["the movie was wonderful and the acting was great .", "a terrible boring film , i hated it !"]
N = [1, 2, 5]  # the editor runs 2 steps: nothing reaches x5, so minimality@5 and flip_rate@5 are undefined (warned)


@pytest.fixture(scope="module")
def surfaces(tiny_bert_folder, tmp_path_factory):
    """The built-in substitution editor (2 steps, at most 4 words an edit) through the CLI and the Space, and the
    module on the chains and labels the CLI wrote."""
    tmp = tmp_path_factory.mktemp("surfaces")
    data = tmp / "texts.jsonl"
    data.write_text("\n".join(json.dumps({"text": t}) for t in TEXTS) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["run", "inconsistency", "--model", tiny_bert_folder, "--data", str(data), "--steps", "2",
                     "--max-words", "4", "--n", *map(str, N), "--output", str(tmp / "out"),
                     "--no-progress"]) == 0
    cli = json.loads((tmp / "out" / "inconsistency.json").read_text())
    cli_figures = {p.stem.removeprefix("inconsistency_") for p in (tmp / "out").glob("inconsistency_*.png")}
    app = load_space_app("inconsistency")
    space, _ = app.analyse_editor(tiny_bert_folder, "\n".join(TEXTS), 2, ", ".join(map(str, N)), "spacy", "pooled",
                                  "substitution")
    html, _, _ = app.render(space, N)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = textxai.load("inconsistency").compute(edits=cli["chains"], labels=cli["labels"], n=N)
    module_warnings = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return {"cli": cli, "cli_figures": cli_figures, "space": space, "html": html, "module": module,
            "module_warnings": module_warnings}


def test_the_same_chains_and_numbers_on_every_surface(surfaces):
    cli, space, module = surfaces["cli"], surfaces["space"], surfaces["module"]
    assert cli["chains"] == space.results["chains"] and cli["labels"] == space.results["labels"]
    assert [c[0] for c in cli["chains"]] == TEXTS
    summary = to_jsonable(space.summary)
    assert module == summary  # the module returns the analysis' summary
    for key, value in module.items():
        assert cli[key] == value, key
    assert module["minimality@5_chains"] == 0 and module["minimality@5"] is None  # undefined, not 0
    assert module["inc@1_chains"] >= 1
    for k in N:  # the Space shows the same inc@n
        shown = "–" if module[f"inc@{k}"] is None else f"{module[f'inc@{k}']:.3f}"
        assert f'id="inc-at-{k}">{shown}<' in surfaces["html"]


def test_the_same_intervals_warnings_and_figures_on_every_surface(surfaces):
    cli, space = surfaces["cli"], surfaces["space"]
    assert cli["intervals"] == to_jsonable(space.results["intervals"]) and cli["intervals"]["inc@1"]["unit"] == "chain"
    expected = ["no chain contributes to flip_rate@5, minimality@5: those values are NaN (chains too short for that n)"]
    assert cli["warnings"] == space.warnings == surfaces["module_warnings"] == expected
    assert "flip_rate@5, minimality@5" in surfaces["html"]  # the Space shows the warning
    assert surfaces["cli_figures"] == set(space.figures) == {"steps", "intervals"}


def test_the_report_is_the_analysis_report():
    """The CLI prints, and the demo composes, ``Analysis.report``: the text of :func:`inc.report` on its results."""
    chains = [["a b c d", "a x c d", "a b c d"], ["good film", "bad film", "good movie here now"]]
    analysis = inc.analyse(chains, [[1, 0, 1], [1, 0, 1]], n=[1], intervals=None, figures=False, title="T")
    assert analysis.report == inc.report(analysis.results, [1], "T")
    assert analysis.figures == {} and "intervals" not in analysis.results
    assert "Why chain 1 is inconsistent at step 1" in analysis.report


def test_pasted_chains_give_the_cli_intervals(tiny_bert_folder, tmp_path):
    """Five pasted chains (the Space shows intervals from 5 on) and the same chains through `textxai run --chains`:
    the same inc@n and minimality@n with the same intervals (one interval default), shown in the Space's table."""
    from textxai.render import format_interval

    chains = [["a b c d", "a x c d", "p q c d", "p q r s t"], ["a b", "a c", "x y z"], ["good film", "bad film",
              "good movie here now"], ["one two", "one three", "one two"], ["x y z w", "x y", "x y z w v", "x"]]
    path = tmp_path / "chains.jsonl"
    path.write_text("\n".join(json.dumps({"edits": c}) for c in chains) + "\n")
    data = tmp_path / "unused.csv"
    data.write_text("text\nunused\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["run", "inconsistency", "--model", tiny_bert_folder, "--data", str(data), "--chains", str(path),
                     "--n", "1", "2", "--output", str(tmp_path / "out"), "--no-progress"]) == 0
    cli = json.loads((tmp_path / "out" / "inconsistency.json").read_text())
    app = load_space_app("inconsistency")
    text = "\n\n".join("\n".join(c) for c in chains)
    space = app.analyse_chains(text, "1, 2", "spacy", "pooled")
    html = app.score_chains(text, "1, 2", "spacy", "pooled")[0]
    for key in ("inc@1", "inc@2", "minimality@1", "minimality@2"):
        assert cli[key] == space.summary[key] and cli["intervals"][key] == to_jsonable(space.results["intervals"][key])
    for key in ("inc@1", "inc@2"):
        assert cli["intervals"][key]["n"] == 5 and format_interval(cli["intervals"][key]) in html
