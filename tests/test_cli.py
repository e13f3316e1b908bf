import json
import subprocess
import sys

import pytest

from textxai import cli


def test_list_shows_every_module(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("naopc", "ceval", "inconsistency", "fim_difficulty", "toki_trust"):
        assert name in out


def test_to_jsonable_handles_numpy_and_nan():
    import numpy as np

    assert cli.to_jsonable({"a": np.float32(1.5), "b": np.array([1, 2]), "c": float("nan"), 3: (np.int64(2),)}) == \
        {"a": 1.5, "b": [1, 2], "c": None, "3": [2]}


def test_load_table_reads_csv_jsonl_and_names_bad_columns(tmp_path):
    (tmp_path / "d.csv").write_text("text,label,hyp\ngood film,1,x\nbad film,0,y\n")
    texts, pairs, labels = cli.load_table(str(tmp_path / "d.csv"), "text", "hyp", "label", "test", None)
    assert texts == ["good film", "bad film"] and pairs == ["x", "y"] and labels == [1, 0]
    (tmp_path / "d.jsonl").write_text(json.dumps({"review": "ok"}) + "\n" + json.dumps({"review": "meh"}) + "\n")
    texts, _, _ = cli.load_table(str(tmp_path / "d.jsonl"), "review", None, None, "test", 1)
    assert texts == ["ok"]
    with pytest.raises(SystemExit, match="--text-column 'text': no such column"):
        cli.load_table(str(tmp_path / "d.jsonl"), "text", None, None, "test", None)
    with pytest.raises(SystemExit, match="unsupported file type"):
        (tmp_path / "d.xml").write_text("<a/>")
        cli.load_table(str(tmp_path / "d.xml"), "text", None, None, "test", None)


def test_entry_point_help_runs():
    done = subprocess.run([sys.executable, "-m", "textxai", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "demo" in done.stdout and "run" in done.stdout
