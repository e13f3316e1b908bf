"""CLI glue of fim_difficulty: run() agrees with the library; --shift-against; the demo section."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from textxai import fim
from textxai.fim import runner
from textxai.fim.analysis import report

TEXTS = ["the movie was wonderful", "a terrible boring film , i hated it !", "good", "it was not good",
         "the food was not good but the service was lovely ."]


def _args(**kw):
    parser = argparse.ArgumentParser()
    runner.add_arguments(parser)
    args = parser.parse_args([])
    for k, v in kw.items():
        setattr(args, k, v)
    args.no_progress = True
    return args


def test_run_matches_library_and_orders(bert_clf, tmp_path):
    shifted = TEXTS[::-1]
    path = tmp_path / "perturbed.jsonl"
    path.write_text("\n".join(json.dumps({"text": t}) for t in shifted))
    args = _args(top=2, min_flip=True, random_flips=True, trials=3, shift_against=str(path), max_strength=1.0, tol=1e-2)
    results, figures = runner.run(args, TEXTS, None, [1, 0, 1, 0, 0], bert_clf)
    d = fim.difficulty(TEXTS, bert_clf)["difficulty"]
    np.testing.assert_allclose(results["difficulty"], d, rtol=1e-5)
    assert [e["index"] for e in results["hardest"]] == list(np.argsort(-d)[:2])
    assert [e["index"] for e in results["easiest"]] == list(np.argsort(d)[:2])
    assert all(len(e["sensitive_words"]) <= 3 for e in results["hardest"])
    np.testing.assert_allclose(results["shift"]["values"], d[::-1] - d, rtol=1e-4, atol=1e-10)
    assert len(results["min_flip_strength"]) == 5 and len(results["random_flip_rate"]) == 5
    assert set(figures) == {"difficulty_histogram", "min_flip_strength", "random_flip_rate", "difficulty_shift",
                            "intervals"}
    assert results["intervals"]["summary.mean"]["score"] == pytest.approx(float(np.mean(d)))
    assert 0 <= results["accuracy"]["all"] <= 1
    text = report(results)
    assert "Hardest" in text and "Difficulty shift" in text


def test_shift_file_errors(bert_clf, tmp_path):
    bad = tmp_path / "x.tsv"
    bad.write_text("Sentiment\tText\nPositive\tgood\n")
    with pytest.raises(ValueError, match="--shift-against has 1 texts but --data has 5"):
        runner.run(_args(shift_against=str(bad), text_column="Text"), TEXTS, None, None, bert_clf)
    with pytest.raises(ValueError, match=r"--shift-against --text-column 'text': no such column .*x.tsv.*did you mean 'Text'"):
        runner.run(_args(shift_against=str(bad)), TEXTS, None, None, bert_clf)  # one table reader: the column as named
    with pytest.raises(ValueError, match="no such file"):
        runner.run(_args(shift_against=str(tmp_path / "missing.jsonl")), TEXTS, None, None, bert_clf)


@pytest.mark.slow
def test_demo_section():
    report, results, figures = runner.demo(progress=False)
    assert "Hardest" in report and len(results["hardest"]) == 3
    assert results["hardest"][0]["difficulty"] >= results["easiest"][0]["difficulty"]
    assert "difficulty_histogram" in figures


def test_label_names_and_limit(bert_clf, tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("Sentiment\tText\n" + "\n".join(f"x\t{t}" for t in TEXTS[::-1]) + "\nx\textra row\n")
    names = [bert_clf.labels[i].upper() for i in (1, 0, 1)]
    results, _ = runner.run(_args(shift_against=str(path), text_column="Text", limit=3), TEXTS[:3], None, names, bert_clf)
    assert len(results["shift"]["values"]) == 3 and "shift_mean" in results
    pred = np.asarray(results["predictions"])
    assert results["accuracy"]["all"] == pytest.approx(np.mean(pred == [1, 0, 1]))
    with pytest.raises(ValueError, match=r"labels\[0\]='pos': expected a class index 0..1 or one of the model's labels"):
        runner.run(_args(), TEXTS[:2], None, ["pos", "neg"], bert_clf)
