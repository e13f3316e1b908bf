"""The audit Space: its report is the library's audit of the same texts (in an isolated frame and as a download),
texts are capped, visitors' text is escaped, an over-budget request is refused before any model call."""
from __future__ import annotations

import html
import re

import numpy as np
import pytest
from helpers import load_space_app

from textxai import fim
from textxai.classifier import TextClassifier

TEXTS = ["the movie was wonderful\t1", "a terrible boring film\t0", "the food was not good\t0",
         "<script>alert(1)</script> the service was lovely\t1"]


@pytest.fixture(scope="module")
def app():
    return load_space_app("audit")


def test_report_in_frame_and_download_match_the_library(app, tiny_bert_folder):
    summary, frame, path = app.run_audit(tiny_bert_folder, "none", "\n".join(TEXTS), None, ["difficulty"])
    page = open(path, encoding="utf-8").read()
    assert f'srcdoc="{html.escape(page, quote=True)}"' in frame and 'sandbox=""' in frame
    texts = [t.split("\t")[0] for t in TEXTS]
    lam = fim.difficulty(texts, TextClassifier(tiny_bert_folder))["difficulty"]
    shown = re.findall(r"<tr><td>([0-9.e+-]+)</td>", page)          # the hardest examples' lambda_max column
    assert [float(x) for x in shown] == pytest.approx(sorted(lam, reverse=True)[:3], rel=1e-3)
    assert "<script" not in page and "<script" not in frame and "<script" not in summary   # the visitor's text, escaped
    assert "predictions are correct" in summary           # labels read from the tab-separated lines
    assert 'id="difficulty"' in page and 'id="trust"' not in page


def test_caps_and_budget(app, tiny_bert_folder, monkeypatch):
    from textxai import spaces

    with pytest.raises(spaces.SpaceError, match="at most 20"):
        app.run_audit(tiny_bert_folder, "none", "\n".join(f"text {i}" for i in range(21)), None, ["difficulty"])
    monkeypatch.setattr(spaces, "MAX_EVALUATIONS", 10)
    monkeypatch.setattr(TextClassifier, "predict_proba", lambda *a, **k: pytest.fail("a model was called"))
    with pytest.raises(spaces.SpaceError, match="this request needs about"):
        app.run_audit(tiny_bert_folder, "none", "\n".join(TEXTS), None, ["difficulty", "faithfulness"])


def test_parse_lines(app):
    assert app.parse_lines("a\t1\nb\t0\n\n") == (["a", "b"], ["1", "0"])
    assert app.parse_lines("a\t1\nb") == (["a\t1", "b"], None)
    assert np.all([t for t in app.parse_lines("x\ny")[0]] == np.array(["x", "y"]))


def test_upload(app, tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text("text,label\na fine film,positive\n\"dull, slow\",negative\n")
    assert app.read_upload(str(path)) == (["a fine film", "dull, slow"], ["positive", "negative"])
    (tmp_path / "nolabel.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n')
    assert app.read_upload(str(tmp_path / "nolabel.jsonl")) == (["a", "b"], None)
    (tmp_path / "other.csv").write_text("sentence\nx\n")
    with pytest.raises(ValueError, match="expected a column named 'text'"):
        app.read_upload(str(tmp_path / "other.csv"))
