"""The fim_difficulty Space: handlers against the module, escaping, errors, and a browser run."""
from __future__ import annotations


import numpy as np
import pytest
from helpers import load_space_app

import textxai
from textxai import fim
from textxai.classifier import TextClassifier

TEXT = "the movie was wonderful but the food was bad ."


@pytest.fixture(scope="module")
def app():
    return load_space_app("fim_difficulty")


@pytest.fixture(scope="module")
def tiny_folder(tiny_bert_folder):
    return tiny_bert_folder


def _shown(html: str, elem_id: str) -> str:
    return html.split(f'id="{elem_id}">')[1].split("<")[0]


def test_score_matches_module_and_percentile(app, tiny_folder):
    html, words, probs, slider = app.score(tiny_folder, TEXT)
    clf = TextClassifier(tiny_folder)
    expected = textxai.load("fim_difficulty").compute(texts=[TEXT], model=clf)["difficulty"][0]
    assert float(_shown(html, "fim-score")) == pytest.approx(expected, rel=1e-5)
    ref = np.sort(fim.difficulty(app.corpus_texts(), clf)["difficulty"])
    assert float(_shown(html, "fim-percentile")) == round(100 * np.mean(ref <= expected))
    assert words.count("textxai-word") == len(clf.words(TEXT))
    assert set(probs) == set(clf.labels.values()) and sum(probs.values()) == pytest.approx(1.0)
    assert slider.maximum > 0


def test_push_matches_library(app, tiny_folder):
    clf = TextClassifier(tiny_folder)
    got = app.push(tiny_folder, TEXT, 0.5)
    ref = fim.perturb_along_eigenvector(TEXT, clf, [0.5])[0]
    assert [got[clf.labels[i]] for i in range(2)] == pytest.approx(list(ref), rel=1e-6)


def test_percentile(app):
    ref = np.array([1.0, 2.0, 3.0, 4.0])
    module = app
    assert module.percentile(2.5, ref) == 50.0 and module.percentile(0.0, ref) == 0.0 and module.percentile(9, ref) == 100.0


def test_escaping_and_errors(app, tiny_folder):
    _, words, _, _ = app.score(tiny_folder, "<script>alert(1)</script> good")
    assert "<script>" not in words and "</script" not in words and "&lt;" in words
    with pytest.raises(ValueError, match="no text given"):
        app.score(tiny_folder, "   ")
    with pytest.raises(ValueError, match="at most 1,500"):
        app.score(tiny_folder, "good " * 400)
    with pytest.raises(ValueError, match="strength=-1.0"):
        app.push(tiny_folder, TEXT, -1.0)


@pytest.mark.browser
def test_browser_score_equals_module(app, tiny_folder, gradio_url, page):
    demo = app.build_demo(default_model=tiny_folder)
    url = gradio_url(demo)
    page.goto(url)
    page.locator("#fim-text textarea").fill(TEXT)
    page.locator("#fim-run").click()
    page.wait_for_selector("#fim-score")
    shown = float(page.locator("#fim-score").inner_text())
    expected = textxai.load("fim_difficulty").compute(texts=[TEXT], model=TextClassifier(tiny_folder))["difficulty"][0]
    assert shown == pytest.approx(expected, rel=1e-5)
    assert page.locator("#fim-words .textxai-word").count() == len(TextClassifier(tiny_folder).words(TEXT))
    assert 0 <= float(page.locator("#fim-percentile").inner_text()) <= 100
