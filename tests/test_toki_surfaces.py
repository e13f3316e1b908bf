"""One TOKI analysis on every surface: the evaluate module, `textxai run toki_trust` and the Space's assess tab
give the same numbers, warnings and figures on the same input (they all call textxai.toki.analyse).

The shortcut model of test_toki_pipeline (a local folder), 30 training texts, omission explanations, MiniLM
alone: one text, labelled with its true class (a verdict, and the few-verdicts warning) or with a wrong one (no
correct prediction: the rates are undefined, said once per surface).
"""
from __future__ import annotations

import csv
import json

import pytest
from helpers import load_space_app

import textxai
from textxai import cli, toki
from textxai.spaces import escape
from textxai.outputs import to_jsonable
from test_toki_pipeline import CLASSES, make_data, shortcut_clf, folder  # noqa: F401  (fixtures)


@pytest.fixture(scope="module")
def train():
    return make_data(30, seed=2)


def _csv(path, texts, labels):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        w.writerows([t, CLASSES[y]] for t, y in zip(texts, labels))
    return str(path)


def _cli(folder, train, text, label, tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["run", "toki_trust", "--model", folder, "--data", _csv(tmp_path / "test.csv", [text], [label]),
                     "--label-column", "label", "--train-data", _csv(tmp_path / "train.csv", *train),
                     "--explainer", "omission", "--embedders", "minilm", "--confidence-level", "0",
                     "--output", str(out), "--no-progress"])
    assert code == 0
    figures = sorted(p.name.removeprefix("toki_trust_").removesuffix(".png") for p in out.glob("toki_trust_*.png"))
    return json.loads((out / "toki_trust.json").read_text()), figures, capsys.readouterr()


@pytest.mark.parametrize("wrong", [False, True], ids=["true label", "wrong label"])
def test_module_cli_and_space_show_one_analysis(folder, train, wrong, tmp_path, capsys):
    texts, labels = make_data(3, seed=9)
    text, label = texts[1], (labels[1] + 1) % 3 if wrong else labels[1]
    module = textxai.load("toki_trust").compute(texts=[text], references=[label], model=folder, train_texts=train[0],
                                                train_labels=train[1], explainer="omission", embedders=["minilm"])
    results, cli_figures, printed = _cli(folder, train, text, label, tmp_path, capsys)
    app, train_text = load_space_app("toki_trust"), "\n".join(f"{CLASSES[y]}\t{t}" for t, y in zip(*train))
    space, _, _, _ = app.assess_analysis(folder, text, CLASSES[label], train_text, "omission", ["minilm"])
    shown, _, figure = app.assess_text(folder, text, CLASSES[label], train_text, "omission", ["minilm"])

    # the same numbers: the module's output, the run's results reshaped by the one reshaping, the Space's summary
    assert module == {**to_jsonable(toki.summary_of(results)), "warnings": results["warnings"]}
    assert to_jsonable(space.summary) == module
    assert module["n_correct"] == (0 if wrong else 1) and (module["trust_labels"][0] is None) == wrong
    # the same warnings, printed by the run
    expected = (["no prediction is correct: TOKI labels correct predictions only, so the trustworthy rates are undefined"]
                if wrong else ["only 1 correct prediction(s) with a verdict: each moves the trustworthy rates by 100%; read "
                               "them with their intervals"])
    assert space.warnings == results["warnings"] == module["warnings"]
    assert [w for w in space.warnings if not w.startswith("class ")] == expected
    assert all(f"warning: {w}" in printed.err for w in space.warnings)
    assert all(f"<p class='textxai-warning'>⚠ {escape(w)}</p>" in shown for w in space.warnings)
    # the same figures
    assert cli_figures == sorted(space.figures) == ["trust_rates"]
    bars = lambda fig: [p.get_height() for p in fig.axes[0].patches]  # noqa: E731
    assert bars(figure) == bars(space.figures["trust_rates"]) and sum(bars(figure)) == sum(
        module[k][0] is True for k in ("trust_labels", "naive_labels", "no_ki_labels"))   # one text: its verdicts
    assert space.report in printed.out    # and the same report
