"""Issue 22, item 5 (CLI half): outputs replaced together or not at all; one table reader without the csv
field limit, refusing duplicated headers; every message names the flag the user passed."""
from __future__ import annotations

import errno
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from textxai import cli, outputs, tables  # noqa: E402


def _figure(value: float):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, value])
    return fig


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def old_run(tmp_path):
    """An output folder holding a complete previous run of stem naopc (a JSON and two PNGs)."""
    out = tmp_path / "out"
    cli.write_outputs(out, "naopc", {"score": 1.0}, {"curve": _figure(1), "hist": _figure(2)})
    return out, _snapshot(out)


class Boom(Exception):
    pass


@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt(), Boom("x")])
def test_a_write_failing_after_the_first_file_leaves_the_old_outputs(old_run, failure, monkeypatch):
    out, before = old_run
    assert sorted(before) == ["naopc.json", "naopc_curve.png", "naopc_hist.png"]
    new_figures = {"curve": _figure(3), "hist": _figure(4)}
    calls = []

    def savefig(self, *args, **kwargs):  # the JSON is already written; the first PNG fails
        calls.append(args[0])
        raise failure

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    with pytest.raises(type(failure)) as caught:
        cli.write_outputs(out, "naopc", {"score": 2.0}, new_figures)
    assert calls and _snapshot(out) == before  # old JSON and PNGs byte for byte; no staging folder left
    if isinstance(failure, OSError):
        assert f"--output {str(out)!r}" in str(caught.value) and "unchanged" in str(caught.value)
    assert not plt.get_fignums() or all(plt.figure(n) not in new_figures.values() for n in plt.get_fignums())


def test_a_rename_failing_midway_rolls_back(old_run, monkeypatch):
    out, before = old_run
    real, moved, failed = outputs._move, [], []

    def move(src, dst):
        if ".textxai-partial" in str(src) and len(moved) == 1 and not failed:
            failed.append(dst)
            raise OSError(errno.EIO, "I/O error")  # the second new file cannot be moved into place
        if ".textxai-partial" in str(src):
            moved.append(dst)
        return real(src, dst)

    monkeypatch.setattr(outputs, "_move", move)
    with pytest.raises(OSError):
        cli.write_outputs(out, "naopc", {"score": 2.0}, {"curve": _figure(3), "hist": _figure(4)})
    assert len(moved) == 1 and failed and _snapshot(out) == before


def test_a_complete_run_replaces_every_output_of_its_stem_and_no_other(old_run):
    out, _ = old_run
    (out / "ceval.json").write_text("{}")  # another module's results stay
    (out / "notes.txt").write_text("mine")
    written = cli.write_outputs(out, "naopc", {"score": 3.0}, {"curve": _figure(5)})
    assert [p.name for p in written] == ["naopc.json", "naopc_curve.png"]
    assert sorted(_snapshot(out)) == ["ceval.json", "naopc.json", "naopc_curve.png", "notes.txt"]  # old hist gone
    assert json.loads((out / "naopc.json").read_text()) == {"score": 3.0}


def test_demo_sections_are_replaced_together(tmp_path, monkeypatch):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "models.json").write_text('{"old": true}')
    (out / "index.json").write_text('{"old": true}')

    def first(progress):
        return "first", {"a": 1}, {}

    def second(progress):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "demo_models_section", first)
    monkeypatch.setattr(cli.runner("naopc"), "demo", second)
    assert cli.main(["demo", "--output", str(out), "--modules", "naopc"], one_line_errors=True) == 130
    assert _snapshot(out) == {"index.json": b'{"old": true}', "models.json": b'{"old": true}'}


def test_cli_run_reports_a_full_disk_in_one_line_and_keeps_old_results(tmp_path, tiny_bert_folder, monkeypatch, capsys):
    data = tmp_path / "d.csv"
    data.write_text("text\na fine film\na dull film\n")
    out = tmp_path / "out"
    argv = ["run", "fim_difficulty", "--model", tiny_bert_folder, "--data", str(data), "--output", str(out),
            "--no-progress"]
    assert cli.main(argv, one_line_errors=True) == 0
    before = _snapshot(out)
    assert "fim_difficulty.json" in before and any(n.endswith(".png") for n in before)

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    capsys.readouterr()
    assert cli.main(argv, one_line_errors=True) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "--output" in err[0] and "unchanged" in err[0]
    assert _snapshot(out) == before


# ---------------------------------------------------------------------------------------------- tables
def test_a_cell_longer_than_the_csv_modules_default_limit_is_read(tmp_path):
    long = "word " * 60_000  # 300,000 characters, over csv's 131,072
    for suffix, sep in ((".csv", ","), (".tsv", "\t")):
        path = tmp_path / f"long{suffix}"
        path.write_text(f'text{sep}label\n"{long}"{sep}1\nshort{sep}0\n')
        texts, _, labels = tables.load_table(str(path), "text", None, "label", "test", None)
        assert texts == [long, "short"] and labels == [1, 0]
    import csv

    assert csv.field_size_limit() == 131072  # the process-wide limit is restored


@pytest.mark.parametrize("content,suffix,words", [
    (b"text,label,text\na,1,b\n", ".csv", ["'text' appears 2 times", "fields 1, 3", "line 1"]),
    (b"text\tlabel\tlabel\na\t1\t0\n", ".tsv", ["'label' appears 2 times"]),
    (b'{"text": "a", "text": "b"}\n', ".jsonl", ["line 1", "'text' appears 2 times"]),
    (b'[{"text": "a", "label": 1, "label": 0}]', ".json", ["'label' appears 2 times"]),
])
def test_duplicated_headers_are_refused_naming_the_column(tmp_path, content, suffix, words):
    path = tmp_path / f"dup{suffix}"
    path.write_bytes(content)
    with pytest.raises(ValueError) as caught:
        tables.load_table(str(path), "text", None, None, "test", None)
    for word in words + [f"--data {str(path)!r}"]:
        assert word in str(caught.value), (word, str(caught.value))


def test_duplicated_parquet_columns_are_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["text", "text"]), tmp_path / "d.parquet")
    with pytest.raises(ValueError, match="'text' appears 2 times"):
        tables.load_table(str(tmp_path / "d.parquet"), "text", None, None, "test", None)


def test_byte_order_marks_and_utf16_files_are_read(tmp_path):
    for encoding in ("utf-8-sig", "utf-16", "utf-32"):
        path = tmp_path / f"{encoding}.csv"
        path.write_bytes("text,label\ncafé crème,1\n".encode(encoding))
        assert tables.load_table(str(path), "text", None, "label", "test", None) == (["café crème"], None, [1])


def test_a_header_with_stray_spaces_is_named_with_a_hint(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(" Text ,label\na,1\n")
    with pytest.raises(ValueError, match=r"--text-column 'text': no such column.*did you mean ' Text '\?"):
        tables.load_table(str(path), "text", None, None, "test", None)


def test_the_runners_read_no_csv_of_their_own():
    """One table reader: no runner parses csv or json files itself (textxai.tables does)."""
    import inspect

    from textxai import registry

    for module in (m.runner_module() for m in registry.methods() if m.runner is not None):  # each method's CLI glue
        source = inspect.getsource(module)
        for needle in ("csv.DictReader", "csv.reader", "json.loads(line", "load_dataset(builder"):
            assert needle not in source, (module.__name__, needle)


# ------------------------------------------------------------------------------------- flags named
@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flags")
    (tmp / "d.csv").write_text("text,cf,label,h,scores,human\na fine film,a dull film,1,x,\"[0.1, 0.2, 0.3]\",1\n"
                               "a dull film,a fine film,0,y,oops,maybe\n")
    (tmp / "d.jsonl").write_text(json.dumps({"text": "a film", "cf": 5, "label": 1}) + "\n")
    (tmp / "chains.jsonl").write_text('{"edits": ["a b", "a c"]}\n{"edits": \n')
    (tmp / "shift.csv").write_text("review\nx\ny\n")
    (tmp / "dup.csv").write_text("a,a\nx,y\n")
    return tmp


def _flag_cases(tmp, model):
    base = ["--model", model, "--no-progress", "--output", str(tmp / "out")]
    d, j = str(tmp / "d.csv"), str(tmp / "d.jsonl")
    return [  # (argv, words the one-line message must contain)
        (["run", "ceval", "--data", d, "--counterfactual-column", "nope", *base], ["--counterfactual-column 'nope'", "no such column"]),
        (["run", "ceval", "--data", d, "--counterfactual-column", "cf", "nope", *base], ["--counterfactual-column 'nope'"]),
        (["run", "ceval", "--data", j, "--counterfactual-column", "cf", *base], ["--counterfactual-column 'cf'", "row 1", "int"]),
        (["run", "ceval", "--data", d, "--pair-column", "h", "--counterfactual-column", "cf", "--counterfactual-pair-column",
          "nope", *base], ["--counterfactual-pair-column 'nope'"]),
        (["run", "ceval", "--data", d, "--counterfactual-column", "cf", "--target-column", "nope", *base], ["--target-column 'nope'"]),
        (["run", "naopc", "--data", d, "--attributions-column", "nope", *base], ["--attributions-column 'nope'", "no such column"]),
        (["run", "naopc", "--data", d, "--attributions-column", "scores", *base], ["--attributions-column 'scores'", "row 2", "'oops'"]),
        (["run", "naopc", "--data", d, "--label-column", "nope", *base], ["--label-column 'nope'"]),
        (["run", "naopc", "--data", d, "--pair-column", "nope", *base], ["--pair-column 'nope'"]),
        (["run", "toki_trust", "--data", d, "--label-column", "label", "--train-data", str(tmp / "nope.csv"), *base],
         ["--train-data", "nope.csv", "no such file"]),
        (["run", "toki_trust", "--data", d, "--label-column", "label", "--train-data", str(tmp / "shift.csv"), *base],
         ["--text-column 'text'", "shift.csv"]),
        (["run", "toki_trust", "--data", d, "--label-column", "label", "--train-data", d, "--human-trust-column", "nope",
          "--explainer", "omission", *base], ["--human-trust-column 'nope'"]),
        (["run", "toki_trust", "--data", d, "--label-column", "label", "--train-data", d, "--explainer", "omission",
          "--embedders", "minilm", *base], ["--class-names: class_names=None"]),
        (["run", "toki_trust", "--data", d, "--label-column", "label", "--train-data", str(tmp / "dup.csv"),
          "--max-evaluations", "100000", *base], ["--train-data", "dup.csv", "'a' appears 2 times"]),  # in the estimate
        (["run", "inconsistency", "--data", d, "--chains", str(tmp / "chains.jsonl"), *base], ["--chains", "line 2", "invalid JSON"]),
        (["run", "fim_difficulty", "--data", d, "--shift-against", str(tmp / "shift.csv"), *base],
         ["--shift-against", "shift.csv", "'text'"]),
    ]


def test_every_column_message_names_the_flag_passed(data_files, tiny_bert_folder, capsys):
    for argv, words in _flag_cases(data_files, tiny_bert_folder):
        code = cli.main(argv, one_line_errors=True)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, (argv, err)
        for word in words:
            assert word in err[0], (argv, word, err[0])
        assert "--text-column" not in err[0] or "--text-column" in words[0] or "'text'" in words[-1], err[0]


def test_concurrent_runs_into_one_folder_leave_one_complete_set(tmp_path):
    """Four runs writing the same stem at once: the folder ends with one run's JSON and exactly its pictures."""
    import threading

    out = tmp_path / "out"
    figures = {name: _figure(i) for i, name in enumerate("abcd")}  # made here: pyplot is not thread-safe

    def one(name):
        cli.write_outputs(out, "naopc", {"run": name}, {name: figures[name]})

    threads = [threading.Thread(target=one, args=(name,)) for name in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    files = sorted(p.name for p in out.iterdir())
    run = json.loads((out / "naopc.json").read_text())["run"]
    assert files == ["naopc.json", f"naopc_{run}.png"], files


def test_compare_outputs_are_replaced_together(tmp_path, monkeypatch):
    """textxai compare writes through the same stage: a failing picture leaves the previous comparison."""
    from textxai import cli_intervals

    run = {"methods": {m: {"comprehensiveness": 0.5, "sufficiency": 0.1} for m in ("ig", "omission")},
           "per_example": {m: [{"comprehensiveness": v, "sufficiency": 0.1, "naopc_comprehensiveness": v,
                                "naopc_sufficiency": 0.0} for v in (0.2, 0.4, 0.6, 0.8, 0.5)] for m in ("ig", "omission")}}
    (tmp_path / "naopc.json").write_text(json.dumps(run))
    argv = ["compare", str(tmp_path / "naopc.json"), "--module", "naopc", "--n-resamples", "99", "--output",
            str(tmp_path / "out")]
    assert cli.main(argv) == 0
    before = _snapshot(tmp_path / "out")
    assert sorted(before) == ["compare_naopc.json", "compare_naopc_intervals.png"]
    real = cli_intervals.compare_files
    monkeypatch.setattr(cli_intervals, "compare_files", lambda *a, **k: (lambda text, out: (text, {**out, "changed": True}))(
        *real(*a, **k)))  # a different result, whose picture then fails
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert cli.main(argv) == 130  # interrupted while drawing the new picture
    assert _snapshot(tmp_path / "out") == before
