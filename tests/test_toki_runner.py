"""`textxai run toki_trust` end to end on the shortcut model (a local folder)."""
from __future__ import annotations

import csv
import json

import pytest

from textxai import cli
from test_toki_pipeline import CLASSES, make_data, shortcut_clf, folder  # noqa: F401  (fixtures)


def _write(path, texts, labels, human=None):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"] + (["human"] if human else []))
        for i, (t, y) in enumerate(zip(texts, labels)):
            w.writerow([t, CLASSES[y]] + ([int(human[i])] if human else []))


def test_cli_run(folder, tmp_path, capsys):
    train, train_labels = make_data(30, seed=2)
    texts, labels = make_data(9, seed=8)
    _write(tmp_path / "train.csv", train, train_labels)
    _write(tmp_path / "test.csv", texts, labels, human=[y != 0 for y in labels])
    out = tmp_path / "out"
    code = cli.main(["run", "toki_trust", "--model", folder, "--data", str(tmp_path / "test.csv"), "--label-column", "label",
                     "--train-data", str(tmp_path / "train.csv"), "--explainer", "omission", "--perturbation", "delete",
                     "--embedders", "minilm", "--theta-relate", "0.33", "--human-trust-column", "human", "--attack", "2", "--max-rate", "0.4",
                     "--min-similarity", "0.3", "--save-index", str(tmp_path / "idx"), "--output", str(out),
                     "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "keywords of 'politics'" in printed and "trustworthy_rate" in printed
    results = json.loads((out / "toki_trust.json").read_text())
    assert results["n_correct"] == 9
    assert [e["label"] for e in results["examples"]] == [y != 0 for y in labels]
    assert results["evaluation"]["toki"]["accuracy"] == 1.0
    assert (tmp_path / "idx" / "keyword_index.json").is_file()
    assert "attack_success_rate" in results["attack"]
    # the saved index is reused, and another model's index is refused
    code = cli.main(["run", "toki_trust", "--model", folder, "--data", str(tmp_path / "test.csv"), "--label-column", "label",
                     "--keyword-index", str(tmp_path / "idx"), "--explainer", "omission", "--perturbation", "delete",
                     "--embedders", "minilm",
                     "--output", str(tmp_path / "out2"), "--no-progress"])
    assert code == 0
    with pytest.raises(SystemExit, match="--train-data or --keyword-index"):
        cli.main(["run", "toki_trust", "--model", folder, "--data", str(tmp_path / "test.csv"), "--label-column", "label",
                  "--output", str(tmp_path / "out3"), "--no-progress"])


def test_save_index_onto_a_file_is_refused_before_the_index_is_built(folder, tmp_path, monkeypatch):
    """`--save-index` naming an existing file failed with FileExistsError only after the whole index was built."""
    from textxai.toki import trust

    train, train_labels = make_data(30, seed=2)
    texts, labels = make_data(6, seed=8)
    _write(tmp_path / "train.csv", train, train_labels)
    _write(tmp_path / "test.csv", texts, labels)
    (tmp_path / "taken").write_text("a file of mine")
    monkeypatch.setattr(trust, "cached_keyword_index", lambda *a, **k: pytest.fail("the index was built"))
    argv = ["run", "toki_trust", "--model", folder, "--data", str(tmp_path / "test.csv"), "--label-column", "label",
            "--train-data", str(tmp_path / "train.csv"), "--embedders", "minilm", "--output", str(tmp_path / "out"),
            "--no-progress", "--save-index"]
    with pytest.raises(ValueError, match=r"--save-index: save_index='.*taken': is a file; expected a folder"):
        cli.main([*argv, str(tmp_path / "taken")])
    assert (tmp_path / "taken").read_text() == "a file of mine"
    with pytest.raises(SystemExit, match="2"):
        cli.main([*argv[:-1], "--attack", "-3"])
