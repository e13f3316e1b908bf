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


def test_the_request_budget_holds_inside_the_audits_stages_and_old_reports_are_pruned(app, tiny_bert_folder,
                                                                                      monkeypatch):
    """Each audit stage opened its own work budget, which replaced the Space's per-request one: the request ran
    past its time limit. Nested budgets now charge the enclosing one too. And every report stayed on disk."""
    from textxai import batching, spaces

    monkeypatch.setattr(spaces, "MAX_SECONDS", 0.0)   # the request's wall time is spent before the first batch
    with pytest.raises(spaces.SpaceError, match=r"this request: stopped after 0 s \(its time budget\)"):
        spaces.user_errors(app.run_audit)(tiny_bert_folder, "none", "\n".join(TEXTS), None, ["difficulty"])
    with batching.work_budget(max_evaluations=5, what="outer") as outer:
        with batching.work_budget(what="inner") as inner:
            batching.charge(4)
            with pytest.raises(batching.WorkBudgetExceeded, match="outer: stopped after 4"):
                batching.charge(2)
    assert outer.used == 6 and inner.used == 4

    monkeypatch.setattr(spaces, "MAX_OUTPUT_FILES", 3)
    monkeypatch.setattr(spaces, "output_dir", lambda: _folder(tmp))
    tmp = []
    paths = [spaces.write_output(f"report {i}", "audit", ".html") for i in range(5)]
    kept = sorted(p.name for p in _folder(tmp).iterdir())
    assert len(kept) == 3 and all(p.split("/")[-1] in kept for p in paths[-3:])   # the newest, within the cap


def _folder(tmp: list):
    import tempfile
    from pathlib import Path

    if not tmp:
        tmp.append(Path(tempfile.mkdtemp()))
    return tmp[0]
