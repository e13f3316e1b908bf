import json
import subprocess
import sys

import pytest

from textxai import cli, tables


def test_list_shows_every_module(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("naopc", "ceval", "inconsistency", "fim_difficulty", "toki_trust"):
        assert name in out


def test_to_jsonable_handles_numpy_and_nan():
    import numpy as np

    from textxai.outputs import to_jsonable

    assert to_jsonable({"a": np.float32(1.5), "b": np.array([1, 2]), "c": float("nan"), 3: (np.int64(2),)}) == \
        {"a": 1.5, "b": [1, 2], "c": None, "3": [2]}


def test_float_label_columns_read_as_class_indices_and_fractions_are_refused(tmp_path):
    """A label column pandas wrote as floats ("1.0", "0.0": an int column with a missing value) stayed strings, and
    `textxai run ceval --target-column` refused them ("targets[0]='1.0': not a label of the model"). Whole numbers
    are class indices now, an empty cell is None; "0.5" is an error naming the flag, column, file, row and value."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "f.csv").write_text("text,label\ngood film,1.0\nbad film,0.0\nmeh,\nok, 2 \n")
    assert tables.load_table(str(tmp_path / "f.csv"), "text", None, "label", "test", None)[2] == [1, 0, None, 2]
    assert tables.load_column(str(tmp_path / "f.csv"), "label", "--target-column", kind="label") == [1, 0, None, 2]
    pq.write_table(pa.table({"text": ["a", "b", "c"], "label": [1.0, 0.0, None]}), tmp_path / "f.parquet")
    labels = tables.load_table(str(tmp_path / "f.parquet"), "text", None, "label", "test", None)[2]
    assert labels == [1, 0, None] and all(type(v) is int for v in labels[:2])
    (tmp_path / "h.csv").write_text("text,label\ngood film,1.0\nbad film,0.5\n")
    with pytest.raises(ValueError, match=r"^--target-column 'label': --data '.*h\.csv' row 2 holds '0\.5': expected a "
                                         r"whole number \(a class index\) or a class name$"):
        tables.load_column(str(tmp_path / "h.csv"), "label", "--target-column", kind="label")
    pq.write_table(pa.table({"text": ["a"], "label": [0.5]}), tmp_path / "h.parquet")
    with pytest.raises(ValueError, match=r"--label-column 'label': .*row 1 holds 0\.5: expected a whole number"):
        tables.load_table(str(tmp_path / "h.parquet"), "text", None, "label", "test", None)
    (tmp_path / "n.csv").write_text("text,label\ngood film,positive\nbad film,negative\n")   # class names: as given
    assert tables.load_table(str(tmp_path / "n.csv"), "text", None, "label", "test", None)[2] == ["positive", "negative"]


def test_load_table_reads_csv_jsonl_and_names_bad_columns(tmp_path):
    (tmp_path / "d.csv").write_text("text,label,hyp\ngood film,1,x\nbad film,0,y\n")
    texts, pairs, labels = tables.load_table(str(tmp_path / "d.csv"), "text", "hyp", "label", "test", None)
    assert texts == ["good film", "bad film"] and pairs == ["x", "y"] and labels == [1, 0]
    (tmp_path / "d.jsonl").write_text(json.dumps({"review": "ok"}) + "\n" + json.dumps({"review": "meh"}) + "\n")
    texts, _, _ = tables.load_table(str(tmp_path / "d.jsonl"), "review", None, None, "test", 1)
    assert texts == ["ok"]
    with pytest.raises(ValueError, match="--text-column 'text': no such column"):
        tables.load_table(str(tmp_path / "d.jsonl"), "text", None, None, "test", None)
    with pytest.raises(ValueError, match="unsupported file type"):
        (tmp_path / "d.xml").write_text("<a/>")
        tables.load_table(str(tmp_path / "d.xml"), "text", None, None, "test", None)


def test_entry_point_help_runs():
    done = subprocess.run([sys.executable, "-m", "textxai", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "demo" in done.stdout and "run" in done.stdout


BAD_FILES = {  # name -> (bytes, words the one-line message must contain)
    "empty.csv": (b"", ["empty"]),
    "blank.csv": (b"\n \n", ["empty"]),
    "header_only.csv": (b"text,label\n", ["no data rows"]),
    "latin1.csv": ("text\ncaf\u00e9 au lait\n".encode("latin-1"), ["line 2", "UTF-8"]),
    "quote.csv": (b'text\n"unterminated film review\n', ["line", "unterminated quote"]),
    "nul.csv": (b"text\nabc\x00def\n", ["line 2", "NUL"]),
    "ragged.csv": (b"text,label\na,1,extra\n", ["line 2", "3 fields", "header has 2"]),
    "empty.jsonl": (b"", ["empty"]),
    "number.jsonl": (b'{"text": "fine"}\n{"text": 5}\n', ["row 2", "'text'", "int", "expected a text"]),
    "null.jsonl": (b'{"text": null}\n', ["row 1", "'text'", "None"]),
    "broken.jsonl": (b'{"text": "a"}\n{"text": \n', ["line 2", "invalid JSON"]),
    "list.jsonl": (b'["a", "b"]\n', ["row 1", "JSON object"]),
    "missing.jsonl": (b'{"review": "a"}\n', ["--text-column 'text'", "no such column", "review"]),
    "bad.parquet": (b"PAR1 not really parquet", ["parquet"]),
    "data.xml": (b"<a/>", ["unsupported file type"]),
    # issue 22: duplicated headers, encodings and byte-order marks, late faults, wrong cell types
    "dup_header.csv": (b"text,label,text\na,1,b\n", ["'text' appears 2 times", "line 1"]),
    "dup_header.tsv": (b"text\ttext\na\tb\n", ["'text' appears 2 times"]),
    "dup_key.jsonl": (b'{"text": "a", "text": "b"}\n', ["line 1", "'text' appears 2 times"]),
    "dup_key.json": (b'[{"text": "a"}, {"text": "b", "text": "c"}]', ["'text' appears 2 times"]),
    "utf16_no_bom.csv": ("text\na film\n".encode("utf-16-le"), ["NUL", "UTF-8"]),
    "bad_utf16.csv": (b"\xff\xfet\x00\x00\xd8", ["not valid UTF-16"]),
    "only_bom.csv": (b"\xef\xbb\xbf", ["empty"]),
    "only_bom_header.csv": (b"\xef\xbb\xbftext\n", ["no data rows"]),
    "late_latin1.csv": (b"text\nok\nok\nok\ncaf\xe9\n", ["line 5", "UTF-8"]),
    "late_nul.csv": (b"text\nok\nb\x00\n", ["line 3", "NUL"]),
    "ragged.tsv": (b"text\tlabel\na\n", ["line 2", "1 fields", "header has 2"]),
    "crlf_quote.csv": (b'text\r\n"abc\r\n', ["unterminated quote"]),
    "strings.json": (b'["a", "b"]', ["row 1", "JSON object"]),
    "scalar.json": (b"42", ["row 1", "JSON object"]),
    "empty_array.json": (b"[]", ["no rows"]),
    "bool.jsonl": (b'{"text": true}\n', ["row 1", "'text'", "bool", "expected a text"]),
    "nested.jsonl": (b'{"text": {"a": 1}}\n', ["row 1", "dict", "expected a text"]),
    "nan.jsonl": (b'{"text": NaN}\n', ["row 1", "float", "expected a text"]),
    "spaced_header.csv": (b" text ,label\na,1\n", ["--text-column 'text'", "no such column", "did you mean ' text '"]),
    "upper_header.csv": (b"Text,label\na,1\n", ["--text-column 'text'", "did you mean 'Text'"]),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_malformed_files_are_one_clear_line(name, tmp_path):
    content, words = BAD_FILES[name]
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ValueError) as caught:
        tables.load_table(str(tmp_path / name), "text", None, None, "test", None)
    message = str(caught.value)
    assert "\n" not in message and (name in message or "--text-column" in message)
    for word in words:
        assert word in message, (word, message)


def test_empty_and_header_only_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tmp_path / "e.parquet")
    with pytest.raises(ValueError, match="e.parquet.*no rows"):
        tables.load_table(str(tmp_path / "e.parquet"), "text", None, None, "test", None)
    pq.write_table(pa.table({"text": ["a", None]}), tmp_path / "n.parquet")
    with pytest.raises(ValueError, match="row 2: column 'text' holds None"):
        tables.load_table(str(tmp_path / "n.parquet"), "text", None, None, "test", None)
    pq.write_table(pa.table({"text": ["a", "b"], "label": [1, 0]}), tmp_path / "ok.parquet")
    assert tables.load_table(str(tmp_path / "ok.parquet"), "text", None, "label", "test", 1) == (["a"], None, [1])


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "textxai", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def good_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "good.csv"
    path.write_text("text,label\na wonderful film,1\na dull film,0\n")
    return path


def _cli_cases(tmp, good):
    (tmp / "empty.csv").write_bytes(b"")
    (tmp / "latin1.csv").write_bytes("text\ncaf\u00e9\n".encode("latin-1"))
    (tmp / "quote.csv").write_bytes(b'text\n"open\n')
    (tmp / "nul.csv").write_bytes(b"text\na\x00b\n")
    (tmp / "afile").write_text("x")
    base = ["run", "naopc", "--model", "textxai/demo-sentiment", "--no-progress", "--output", str(tmp / "out")]
    return [  # (argv, exit code, words of the one line)
        (base + ["--data", str(tmp / "empty.csv")], 2, ["empty.csv", "empty"]),
        (base + ["--data", str(tmp / "latin1.csv")], 2, ["latin1.csv", "line 2", "UTF-8"]),
        (base + ["--data", str(tmp / "quote.csv")], 2, ["quote.csv", "unterminated quote"]),
        (base + ["--data", str(tmp / "nul.csv")], 2, ["nul.csv", "NUL"]),
        (base + ["--data", str(good), "--limit", "0"], 2, ["--limit", "'0'", "positive integer"]),
        (base + ["--data", str(good), "--batch-size", "0"], 2, ["--batch-size", "'0'", "positive integer"]),
        (base + ["--data", str(good), "--batch-size", "x"], 2, ["--batch-size", "'x'", "positive integer"]),
        (base + ["--data", str(tmp / "missing.csv")], 2, ["--data", "missing.csv", "no such file"]),
        (base + ["--data", str(good), "--text-column", "review"], 2, ["--text-column 'review'", "no such column"]),
        (["run", "naopc", "--model", "textxai/demo-sentiment", "--data", str(good), "--output", str(tmp / "afile")], 2,
         ["--output", "afile", "is a file"]),
        (base + ["--data", str(good), "--model", "/no/such/folder"], 2, ["--model '/no/such/folder'", "no such folder"]),
        (base + ["--data", str(good), "--device", "tpu"], 2, ["--device 'tpu'", "expected"]),
        (["run", "nosuch"], 2, ["invalid choice", "nosuch"]),
        (["run", "naopc", "--data", str(good)], 2, ["--model"]),
        # issue 22: every message names the flag passed; numbers of every option checked
        (_run("ceval", tmp, good, "--counterfactual-column", "nope"), 2, ["--counterfactual-column 'nope'", "no such column"]),
        (_run("ceval", tmp, good, "--counterfactual-column", "text", "--target-column", "nope"), 2, ["--target-column 'nope'"]),
        (_run("naopc", tmp, good, "--attributions-column", "nope"), 2, ["--attributions-column 'nope'"]),
        (_run("naopc", tmp, good, "--attributions-column", "text"), 2, ["--attributions-column 'text'", "row 1",
                                                                          "list of numbers"]),
        (_run("toki_trust", tmp, good, "--label-column", "label", "--train-data", str(tmp / "nope.csv")), 2,
         ["--train-data", "nope.csv", "no such file"]),
        (_run("inconsistency", tmp, good, "--chains", str(tmp / "nope.jsonl")), 2, ["--chains", "no such file"]),
        (_run("fim_difficulty", tmp, good, "--shift-against", str(tmp / "nope.csv")), 2, ["--shift-against", "no such file"]),
        (_run("fim_difficulty", tmp, good, "--max-strength", "nan"), 2, ["--max-strength", "'nan'"]),
        (_run("fim_difficulty", tmp, good, "--fraction", "2"), 2, ["--fraction", "'2'"]),
        (_run("naopc", tmp, good, "--max-exact-words", "100000"), 2, ["--max-exact-words", "'100000'", "1 to 64"]),
        (_run("naopc", tmp, good, "--seed", "-1"), 2, ["--seed", "'-1'"]),
        (_run("toki_trust", tmp, good, "--attack", "-1"), 2, ["--attack", "'-1'"]),
        (_run("naopc", tmp, good, "--limit", "1e3"), 2, ["--limit", "'1e3'"]),
        (_run("naopc", tmp, good, "--batch-size", "2.7"), 2, ["--batch-size", "'2.7'"]),
        (_run("naopc", tmp, good, "--max-evaluations", "-5"), 2, ["--max-evaluations", "'-5'"]),
        (_run("naopc", tmp, good, "--label-column", "nope"), 2, ["--label-column 'nope'"]),
        (_run("naopc", tmp, good, "--pair-column", "nope"), 2, ["--pair-column 'nope'"]),
        (_run("naopc", tmp, good, "--output", ""), 2, ["--output ''", "expected a folder"]),
        (_run("naopc", tmp, good, "--output", str(tmp / "afile" / "sub")), 2, ["--output", "cannot write there"]),
        (_run("naopc", tmp, tmp, "--text-column", "text"), 2, ["--data", "unsupported file type"]),
    ]


def _run(module, tmp, data, *extra):
    """argv of ``textxai run module`` on the demo model with ``extra`` options (later ones win)."""
    return ["run", module, "--model", "textxai/demo-sentiment", "--no-progress", "--output", str(tmp / "out"),
            "--data", str(data), *extra]


def _main(argv, capsys):
    try:
        code = cli.main(argv, one_line_errors=True)
    except SystemExit as stop:  # argparse's own usage errors
        code = stop.code
    return code, capsys.readouterr().err


def test_cli_user_mistakes_are_one_line_exit_2(tmp_path, good_csv, capsys):
    for argv, code, words in _cli_cases(tmp_path, good_csv):
        got, err = _main(argv, capsys)
        lines = err.strip().splitlines()
        assert got == code, (argv, err)
        assert len(lines) == 1, (argv, err)
        for word in words:
            assert word in lines[0], (argv, word, lines[0])


def test_cli_subprocess_no_traceback_unless_debug(tmp_path, good_csv):
    cases = _cli_cases(tmp_path, good_csv)
    for argv, code, words in (cases[1], cases[4]):
        done = _cli(*argv)
        assert done.returncode == code and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert words[0] in done.stderr
    debug = _cli("--debug", *cases[0][0])
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_cli_failure_exit_1_one_line(monkeypatch, capsys, good_csv, tmp_path):
    def broken(args):
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(cli, "cmd_list", broken)
    assert cli.main(["list"], one_line_errors=True) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "RuntimeError: disk on fire" in err[0] and "--debug" in err[0]
    with pytest.raises(RuntimeError):
        cli.main(["list", "--debug"], one_line_errors=True)
    with pytest.raises(RuntimeError):
        cli.main(["list"])  # called from Python with argv: errors are raised


# ------------------------------------------------------------------ a fast first screen, loading by name
_HEAVY = ("torch", "transformers", "numpy", "pandas", "evaluate", "matplotlib", "scipy", "gradio")


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["cache-modules", "--help"]])
def test_help_and_list_import_no_method_and_no_torch(argv):
    """`textxai --help` / `textxai list` built every run sub-parser, importing each method and torch (~7 s idle
    on 2 cores): counted, not timed, here — the modules a fresh interpreter holds after the command."""
    code = ("import sys\nfrom textxai.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('MODULES', len(sys.modules), *sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{_HEAVY!r} and '.' not in m or m.startswith('textxai.') and m.count('.') == 1 and m.split('.')[1] in "
            f"{[name for name, *_ in cli.BUILTIN_METHODS]!r}))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    line = next(line for line in out.stdout.splitlines() if line.startswith("MODULES")).split()
    assert line[2:] == [], f"{argv} imported {line[2:]}"
    assert int(line[1]) < 150   # the interpreter's own ~60 and argparse's; 1,250 with torch


def test_builtin_listing_is_the_registry():
    from textxai import registry

    assert [(n, k, h) for n, k, h in cli.BUILTIN_METHODS] == [(m.name, m.kind, m.help) for m in registry.methods()]
    assert [(n, present) for n, _, _, present in cli.method_listing()] == [(m.name, True) for m in registry.methods()]


def test_bare_cache_modules_caches_all_five(tmp_path):
    """Bare `textxai cache-modules` exited 2 ("invalid choice: []": argparse checks an empty nargs='*' list against
    its choices); it caches all five now, and a wrong name is one line naming it and the known ones."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_HOME=str(tmp_path / "hf_home"))
    run = subprocess.run([sys.executable, "-m", "textxai", "cache-modules"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert sorted(line.split()[0] for line in run.stdout.splitlines()) == sorted(
        f"textxai/{name}" for name, *_ in cli.BUILTIN_METHODS)
    assert all(os.path.isfile(line.split()[1]) for line in run.stdout.splitlines())
    wrong = subprocess.run([sys.executable, "-m", "textxai", "cache-modules", "nope"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert wrong.returncode == 2 and "cache-modules 'nope': not a textxai module; expected some of" in wrong.stderr


def test_compare_tells_files_of_one_name_apart_and_names_a_file_that_is_not_json(tmp_path, capsys):
    """`textxai compare A/naopc.json B/naopc.json` labelled both by the stem: B's result replaced A's silently (one
    result left, or A's methods dropped); a file that is not JSON failed with json's message and no file name."""
    import doctest

    from textxai import cli_intervals

    rows = {"A": [[2.0, 1.0]] * 5 + [[1.0, 0.0]], "B": [[0.0, 1.0]] * 5 + [[1.0, 1.0]]}
    for folder, incs in rows.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "inconsistency.json").write_text(json.dumps(_inconsistency(incs)))
    files = [str(tmp_path / f / "inconsistency.json") for f in rows]
    assert cli.main(["compare", *files, "--module", "inconsistency", "--n-resamples", "99"]) == 0
    text = capsys.readouterr().out
    assert "== A/inconsistency" in text and "== B/inconsistency" in text and "A/inconsistency vs B/inconsistency" in text
    with pytest.raises(SystemExit, match=r"both give a result named 'x'; pass --names with one distinct name"):
        cli.main(["compare", *files, "--module", "inconsistency", "--names", "x", "x"])
    (tmp_path / "notes.json").write_text("text,label\na film,1\n")
    with pytest.raises(SystemExit, match=r"results file '.*notes.json': not JSON \(Expecting value"):
        cli.main(["compare", files[0], str(tmp_path / "notes.json"), "--module", "inconsistency"])
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(SystemExit, match=r"list.json': holds a JSON list; expected the object"):
        cli.main(["compare", files[0], str(tmp_path / "list.json"), "--module", "inconsistency"])
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(cli_intervals.file_labels, "file_labels"):
        runner.run(test)
    assert runner.failures == 0 and runner.tries == 1
    assert cli_intervals.file_labels(["a/x.json", "a/x.json"]) == ["a/x", "a/x"]  # the same file twice: refused later


def _inconsistency(incs):
    from test_stats import _inconsistency_result

    from textxai.outputs import to_jsonable

    return to_jsonable(_inconsistency_result(incs, ks=(2,)))


def test_the_first_screen_warnings_one_line_once_and_no_third_party_bars():
    """`textxai demo` opened with Python warnings printed with the file, line and source line that raised them
    (again from every call site) and GGUF de-quantization bars between the method bars."""
    code = ("import warnings, sys\nfrom textxai import cli\n"
            "def noisy(args):\n"
            "    from tqdm.auto import tqdm\n"
            "    for _ in tqdm(range(3), desc='Converting and de-quantizing GGUF tensors'): pass\n"
            "    from textxai.progress import progress_bar\n"
            "    for _ in progress_bar(range(2), enabled=True, desc='ours'): pass\n"
            "    for _ in range(3):\n        warnings.warn('the weights of layer 3 are\\n  tied', UserWarning)\n"
            "    warnings.warn('the weights of layer 3 are\\n  tied', UserWarning)\n    return 0\n"
            "cli.cmd_list = noisy\nsys.exit(cli.main(['list']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in __import__("os").environ.items() if k != "TQDM_DISABLE"})
    assert out.returncode == 0, out.stderr
    lines = out.stderr.replace("\r", "\n").splitlines()
    assert [line for line in lines if "warning" in line] == [
        "textxai: warning: the weights of layer 3 are tied (UserWarning)"]
    assert not any("de-quantizing" in line for line in lines) and any(line.startswith("ours") for line in lines)
    assert "warnings.warn(" not in out.stderr
