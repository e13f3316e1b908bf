"""The naopc Space: handler numbers equal the module's, escaping, errors, and a browser run."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

import textxai
import tiny_models
from textxai.classifier import TextClassifier

APP = Path(__file__).resolve().parents[1] / "spaces" / "naopc" / "app.py"
TEXTS = "the movie was wonderful\ni hated it !"


@pytest.fixture(scope="module")
def app():
    spec = importlib.util.spec_from_file_location("naopc_space_app", APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sharp_folder(tmp_path_factory):
    from transformers import BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("naopc_space_model")
    tokenizer = tiny_models.bert_tokenizer(folder / "tok")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tiny_models.BERT_VOCAB), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64, num_labels=2,
                        initializer_range=0.5)
    BertForSequenceClassification(config).eval().save_pretrained(folder / "model")
    tokenizer.save_pretrained(folder / "model")
    return str(folder / "model")


@pytest.fixture(scope="module")
def expected(sharp_folder):
    return textxai.load("naopc").compute(texts=TEXTS.splitlines(), model=TextClassifier(sharp_folder),
                                         attribution_method="omission", max_exact_words=12)


def _shown(html: str, elem_id: str) -> float:
    return float(html.split(f'id="{elem_id}">')[1].split("<")[0])


def test_handler_matches_module(app, sharp_folder, expected):
    html, words, fig = app.evaluate_texts(sharp_folder, TEXTS, "omission", "auto", 5)
    for elem, key in (("naopc-comp", "comprehensiveness"), ("naopc-suff", "sufficiency"),
                      ("naopc-ncomp", "naopc_comprehensiveness"), ("naopc-nsuff", "naopc_sufficiency")):
        assert _shown(html, elem) == pytest.approx(expected[key], abs=2e-6)
    clf = TextClassifier(sharp_folder)
    assert words.count("textxai-word") == sum(len(clf.words(t)) for t in TEXTS.splitlines())
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 5  # comp, suff, upper, lower, zero line


def test_escaping_and_errors(app, sharp_folder):
    html, words, _ = app.evaluate_texts(sharp_folder, "<script>alert(1)</script> good", "omission", "none", 5)
    assert "<script>" not in words and "&lt;" in words and "<script>" not in html
    with pytest.raises(ValueError, match="no text given"):
        app.evaluate_texts(sharp_folder, "  \n ", "omission")
    with pytest.raises(ValueError, match="at most 5"):
        app.evaluate_texts(sharp_folder, "\n".join(["good film"] * 6), "omission")
    with pytest.raises(ValueError, match="beam_size=0"):
        app.evaluate_texts(sharp_folder, "good film", "omission", "beam", 0)
    with pytest.raises(ValueError, match="method='shap'"):
        app.evaluate_texts(sharp_folder, "good film", "shap")


@pytest.mark.browser
def test_browser_numbers_equal_module(app, sharp_folder, expected, gradio_url, page):
    demo = app.build_demo(default_model=sharp_folder)
    page.goto(gradio_url(demo))
    page.locator("#naopc-text textarea").fill(TEXTS)
    page.locator("#naopc-method input").fill("omission")
    page.keyboard.press("Enter")
    page.locator("#naopc-run").click()
    page.wait_for_selector("#naopc-ncomp")
    for elem, key in (("naopc-comp", "comprehensiveness"), ("naopc-suff", "sufficiency"),
                      ("naopc-ncomp", "naopc_comprehensiveness"), ("naopc-nsuff", "naopc_sufficiency")):
        assert float(page.locator(f"#{elem}").inner_text()) == pytest.approx(expected[key], abs=2e-6)
    assert "omission" in page.locator("#naopc-result").inner_text()
    assert page.locator("#naopc-words .textxai-word").count() == 8
