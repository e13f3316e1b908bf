"""The naopc Space: handler numbers equal the module's, escaping, errors, and a browser run."""
from __future__ import annotations


import pytest
from helpers import load_space_app

import textxai
from textxai.classifier import TextClassifier

TEXTS = "the movie was wonderful\ni hated it !"


@pytest.fixture(scope="module")
def app():
    return load_space_app("naopc")


@pytest.fixture(scope="module")
def sharp_folder(sharp_bert_folder):
    return sharp_bert_folder


@pytest.fixture(scope="module")
def expected(sharp_folder):
    return textxai.load("naopc").compute(texts=TEXTS.splitlines(), model=TextClassifier(sharp_folder),
                                         attribution_method="omission", max_exact_words=12)


def _shown(html: str, elem_id: str) -> float:
    return float(html.split(f'id="{elem_id}">')[1].split("<")[0])


def test_handler_matches_module(app, sharp_folder, expected):
    html, words, fig, scores = app.evaluate_texts(sharp_folder, TEXTS, "omission", "auto", 5)
    for elem, key in (("naopc-comp", "comprehensiveness"), ("naopc-suff", "sufficiency"),
                      ("naopc-ncomp", "naopc_comprehensiveness"), ("naopc-nsuff", "naopc_sufficiency")):
        assert _shown(html, elem) == pytest.approx(expected[key], abs=2e-6)
    clf = TextClassifier(sharp_folder)
    assert words.count("textxai-word") == sum(len(clf.words(t)) for t in TEXTS.splitlines())
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 5  # comp, suff, upper, lower, zero line
    assert len(scores.axes) == 2  # AOPC and NAOPC bars


def test_escaping_and_errors(app, sharp_folder):
    html, words, _, _ = app.evaluate_texts(sharp_folder, "<script>alert(1)</script> good", "omission", "none", 5)
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


def test_texts_with_nearly_coinciding_limits_are_flagged():
    from helpers import load_space_app

    from textxai.naopc.analysis import warnings
    from textxai.registry import Analysis

    app = load_space_app("naopc")
    row = dict(n_words=4, normalization="exact", comprehensiveness=0.1, sufficiency=0.0, naopc_comprehensiveness=0.5,
               naopc_sufficiency=0.0, n_evaluations=16)
    means = dict(comprehensiveness=0.1, sufficiency=0.0, naopc_comprehensiveness=0.5, naopc_sufficiency=0.0)
    results = dict(methods={"omission": means}, narrow_limit_texts=[1],
                   per_example={"omission": [dict(row, lower=0.0, upper=0.4), dict(row, lower=0.2, upper=0.2005)]})
    html = app.summary_html(Analysis("naopc", results, warnings=warnings(results)), "omission")
    assert html.count('class="naopc-narrow"') == 1
    assert "⚠ text(s) 2 have limits closer than 0.001 (upper - lower)" in html
    results["narrow_limit_texts"] = []
    assert "naopc-narrow" not in app.summary_html(Analysis("naopc", results, warnings=warnings(results)), "omission")


def test_prefilled_example_flips_the_ranking_under_normalisation(app):
    """The Space's example (two demo-sentiment texts): AOPC ranks gradient above omission on both metrics, NAOPC
    ranks omission above gradient -- the first text's limits are 0.019 apart, the second's 0.5 (measured)."""
    out = {}
    for method in ("omission", "gradient"):
        summary, _, _, _ = app.evaluate_texts("textxai/demo-sentiment", app.EXAMPLE, method)
        out[method] = {key: float(summary.split(f'id="naopc-{key}">')[1].split("<")[0])
                       for key in ("comp", "suff", "ncomp", "nsuff")}
    om, gr = out["omission"], out["gradient"]
    assert gr["comp"] > om["comp"] and gr["suff"] < om["suff"]          # AOPC: gradient is better
    assert om["ncomp"] > gr["ncomp"] and om["nsuff"] < gr["nsuff"]      # NAOPC: omission is better
