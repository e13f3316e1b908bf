"""Issue 22, item 5 (Spaces half): uploads and pasted texts capped before parsing, numeric inputs checked
(also through the API), invisible texts refused, formula escaping after leading white space and full-width."""
from __future__ import annotations

import csv
import math

import pytest
from helpers import load_space_app

from textxai import spaces, tables
from textxai.classifier import TextClassifier
from textxai.spaces import SpaceError


@pytest.fixture(scope="module")
def apps():
    return {name: load_space_app(name) for name in ("naopc", "ceval", "inconsistency", "toki_trust", "fim_difficulty")}


@pytest.fixture
def no_model_calls(monkeypatch):
    """Any model load or forward pass fails the test: the refusals come first."""
    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded or called before the input was refused")

    monkeypatch.setattr(TextClassifier, "_proba_of_rows", refuse)
    monkeypatch.setattr(spaces, "resolve_model", refuse)


# ------------------------------------------------------------------------------------------ uploads
def test_an_82_mb_upload_is_refused_from_its_size_without_reading_it(apps, tmp_path, monkeypatch, no_model_calls):
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:  # sparse: 82 MB on paper, nothing on disk
        handle.write(b"orig_text,gen_text\n")
        handle.truncate(82_000_000)
    monkeypatch.setattr(tables.Path, "read_bytes", lambda self: pytest.fail("the upload was read"))
    with pytest.raises(SpaceError) as caught:
        spaces.user_errors(apps["ceval"].score_csv)(spaces.DEFAULT_MODEL, str(big), "none")
    message = str(caught.value)
    assert "csv 'big.csv'" in message and "82,000,000 bytes" in message and f"{spaces.MAX_UPLOAD_BYTES:,}" in message
    assert str(tmp_path) not in message  # the server's folder is not shown


def test_an_upload_with_too_many_rows_stops_while_reading(apps, tmp_path, no_model_calls):
    path = tmp_path / "rows.csv"
    path.write_text("orig_text,gen_text\n" + "a film,a movie\n" * 5000)
    with pytest.raises(SpaceError, match=r"csv 'rows.csv': more than 100 rows; at most 100"):
        apps["ceval"].read_csv(str(path))


@pytest.mark.parametrize("content,words", [
    (b"orig_text,gen_text,gen_text\na,b,c\n", ["'gen_text' appears 2 times"]),
    ("orig_text,gen_text\n\"{}\",b\n".format("word " * 40_000).encode(), ["orig_text[0] has 200,000 characters"]),
    (b"orig_text,gen_text\n\"open,b\n", ["rows.csv", "unterminated quote"]),
    (b"\xff\xfeo\x00", ["rows.csv"]),
    ("orig_text,gen_text\ncaf\u00e9,b\n".encode("latin-1"), ["rows.csv", "line 2", "UTF-8"]),
    (b"", ["rows.csv", "empty"]),
])
def test_broken_uploads_are_named(apps, tmp_path, content, words, no_model_calls):
    path = tmp_path / "rows.csv"
    path.write_bytes(content)
    with pytest.raises(SpaceError) as caught:
        spaces.user_errors(apps["ceval"].score_csv)(spaces.DEFAULT_MODEL, str(path), "none")
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))
    assert "malformed" not in str(caught.value) or "unterminated" in words[-1]


def test_pasted_text_is_refused_from_its_size_before_it_is_split(apps, no_model_calls):
    huge = "a fine film\n" * 100_000  # 1.2 M characters, 100,000 lines
    for call, name in [
        (lambda: apps["naopc"].evaluate_texts(spaces.DEFAULT_MODEL, huge, "omission"), "texts"),
        (lambda: apps["ceval"].score_one(spaces.DEFAULT_MODEL, "a film", huge, "none"), "counterfactuals"),
        (lambda: apps["inconsistency"].score_chains(huge, "1", "whitespace", "pooled"), "chains"),
        (lambda: apps["toki_trust"].parse_train("1\t" + huge, None), "training texts"),
    ]:
        with pytest.raises(SpaceError, match=rf"^{name} has 1,200,00\d characters; this Space accepts at most 500,000"):
            call()


# ------------------------------------------------------------------------------------------ numbers
BAD_NUMBERS = ["abc", "", float("nan"), float("inf"), -float("inf"), 1e30, -2, True, None, [3], "1e400"]


@pytest.mark.parametrize("value", BAD_NUMBERS + [2.7])
def test_integer_inputs_are_checked_and_named(apps, value, no_model_calls):
    for call, name in [
        (lambda: apps["naopc"].evaluate_texts(spaces.DEFAULT_MODEL, "a fine film", "omission", "auto", value), "beam_size"),
        (lambda: apps["inconsistency"].run_editor(spaces.DEFAULT_MODEL, "a fine film", value, "1", "whitespace", "pooled",
                                                  progress=lambda *a, **k: None), "steps"),
    ]:
        with pytest.raises(SpaceError) as caught:
            spaces.user_errors(call)()
        assert str(caught.value).startswith(f"{name}="), str(caught.value)
        assert "expected an integer from 1 to" in str(caught.value)


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_real_inputs_are_checked_and_named(apps, value, no_model_calls):
    for call, name in [
        (lambda: apps["toki_trust"].attack_text(spaces.DEFAULT_MODEL, "a fine film", "", "omission", ["minilm"], value, 0.5),
         "max_rate"),
        (lambda: apps["toki_trust"].attack_text(spaces.DEFAULT_MODEL, "a fine film", "", "omission", ["minilm"], 0.2, value),
         "min_similarity"),
    ]:
        with pytest.raises(SpaceError) as caught:
            spaces.user_errors(call)()
        assert str(caught.value).startswith(f"{name}=") and "expected a number from" in str(caught.value), str(caught.value)


def test_fim_strength_is_checked_and_named(apps, tiny_bert_folder):
    push = spaces.user_errors(apps["fim_difficulty"].push)
    for value in BAD_NUMBERS:
        with pytest.raises(SpaceError, match=r"^strength=.*expected a number from 0 to 100"):
            push(tiny_bert_folder, "a fine film", value)
    assert sum(push(tiny_bert_folder, "a fine film", 0.5).values()) == pytest.approx(1.0)


def test_integral_floats_and_numeric_strings_are_taken():
    assert spaces.integer_input(5.0, "beam_size", 1, 20) == 5 and spaces.integer_input(" 3 ", "steps", 1, 5) == 3
    assert spaces.number_input("0.25", "max_rate", 0, 1) == 0.25 and math.isclose(spaces.number_input(1, "x", 0, 1), 1.0)


def test_the_toki_embedders_input_is_checked(apps, no_model_calls):
    with pytest.raises(SpaceError, match=r"embedders=\['glove300'\]: expected some of"):
        apps["toki_trust"].settings("omission", ["glove300"])
    assert apps["toki_trust"].settings("omission", "minilm")[2] == ["minilm"]  # one name, not its letters


def test_numbers_sent_through_the_api_are_refused_by_name(apps, monkeypatch):
    """gradio_client against the launched NAOPC Space: the slider's own check names beam_size; an upload above
    MAX_UPLOAD_BYTES is refused by the server (HTTP 413) before it is stored."""
    import httpx
    from gradio_client import Client

    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    demo = apps["naopc"].build_demo()
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        assert demo.max_file_size == spaces.MAX_UPLOAD_BYTES
        client = Client(demo.local_url, verbose=False)
        for value in ("abc", 2.7, 1e30, -3, True):
            with pytest.raises(Exception) as caught:
                client.predict(spaces.DEFAULT_MODEL, "a fine film", "omission", "auto", value, api_name="/evaluate_texts")
            assert "beam_size=" in str(caught.value), (value, str(caught.value))
        files = {"files": ("big.csv", b"x" * (spaces.MAX_UPLOAD_BYTES + 1), "text/csv")}
        response = httpx.post(demo.local_url.rstrip("/") + "/gradio_api/upload", files=files, timeout=30)
        assert response.status_code == 413, response.text
    finally:
        demo.close()


# ------------------------------------------------------------------------------------------ invisible texts
INVISIBLE = ["\u200b", "\u200b\u200c\u200d", " \ufeff \u2060 ", "\u3164", "\u00ad\u200b", "\u2800\u2800"]


@pytest.mark.parametrize("text", INVISIBLE)
def test_texts_of_only_invisible_characters_are_refused(apps, text, no_model_calls):
    with pytest.raises(SpaceError, match="no text given"):
        spaces.user_errors(apps["naopc"].evaluate_texts)(spaces.DEFAULT_MODEL, f"{text}\n{text}", "omission")
    with pytest.raises(SpaceError, match=r"original(\[0\] holds only invisible characters| *: no text given)"):
        spaces.user_errors(apps["ceval"].score_one)(spaces.DEFAULT_MODEL, text, "a fine film", "none")
    with pytest.raises(SpaceError, match=r"texts\[1\] holds only invisible characters \(U\+"):
        spaces.check_inputs(["a fine film", text])
    assert spaces.split_lines(f"a film\n{text}\nb film") == ["a film", "b film"]


# ------------------------------------------------------------------------------------------ formulas
@pytest.mark.parametrize("cell", [" =1+1", "\n=cmd|' /C calc'!A0", "\r\n+1", "\t@SUM(A1)", "\u00a0-2", "\u200b=1",
                                  "\uff1dHYPERLINK(\"x\")", "\uff0b1", "\uff0d1", "\uff20SUM(A1)", "  \n \uff1d1"])
def test_formulas_after_leading_space_and_full_width_are_escaped(cell):
    assert spaces.csv_cell(cell) == "'" + cell


def test_written_csv_cells_never_start_a_formula(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTXAI_CACHE", str(tmp_path / "cache"))
    cells = [" =1+1", "\n+1", "\uff1d1", "fine", "a = b"]
    path = spaces.write_csv([cells], ["a", "b", "c", "d", "e"], "t")
    with open(path, newline="", encoding="utf-8") as handle:
        row = list(csv.reader(handle))[1]
    assert row == ["' =1+1", "'\n+1", "'\uff1d1", "fine", "a = b"]


def test_written_files_are_ones_gradio_serves_wherever_the_cache_is(monkeypatch):
    # a Space returns write_csv's path to a gr.File: gradio serves files from the working folder or the temporary
    # one only; with the cache in the home folder (a user's default, a hosted Space's) the download failed
    from pathlib import Path

    import os
    import tempfile

    from gradio.utils import abspath, is_allowed_file

    monkeypatch.setenv("TEXTXAI_CACHE", str(Path.home() / ".cache" / "textxai-not-served"))
    monkeypatch.chdir(Path(__file__).parent)
    path = spaces.write_csv([["a"]], ["x"], "t")
    # the rule gradio.processing_utils._check_allowed applies to a launched app's returned files
    allowed, reason = is_allowed_file(abspath(path), blocked_paths=[], allowed_paths=[os.getcwd(), tempfile.gettempdir()],
                                      created_paths=[])
    assert allowed, (path, reason)


def test_importing_the_spaces_writes_no_file_into_the_package(apps):
    """gradio writes a ``.pyi`` stub beside the module of any Component subclass: the checked slider is not one."""
    from pathlib import Path

    assert not Path(spaces.__file__).with_suffix(".pyi").exists()
    demo = apps["naopc"].build_demo()
    beam = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "naopc-beam"]
    assert len(beam) == 1 and type(beam[0]) is spaces.gr.Slider
