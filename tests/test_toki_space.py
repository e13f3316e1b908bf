"""The toki_trust Space: handlers against the module, escaping, errors, and a browser run."""
from __future__ import annotations


import pytest
from helpers import load_space_app

from textxai import toki
from test_toki_pipeline import CLASSES, make_data, shortcut_clf, folder  # noqa: F401  (fixtures)



@pytest.fixture(scope="module")
def app():
    return load_space_app("toki_trust")


@pytest.fixture(scope="module")
def train_text():
    texts, labels = make_data(30, seed=2)
    return "\n".join(f"{CLASSES[y]}\t{t}" for t, y in zip(texts, labels))


def _module_verdict(folder, text, train_text):
    from textxai import spaces

    clf = spaces.resolve_model(folder)
    rows = [line.split("\t") for line in train_text.splitlines()]
    names = {v: k for k, v in clf.labels.items()}
    y = int(clf.predict([text])[0])
    out = toki.toki_trust([text], [y], model=clf, train_texts=[t for _, t in rows], train_labels=[names[n] for n, _ in rows],
                          explainer="omission", embedders=["minilm"], theta_relate=None)
    return out


def test_assess_matches_module(app, folder, train_text):
    texts, _ = make_data(3, seed=9)
    for text in texts:
        html, keywords, figure = app.assess_text(folder, text, "", train_text, "omission", ["minilm"])
        out = _module_verdict(folder, text, train_text)
        expected = "trustworthy" if out["trust_labels"][0] else "untrustworthy"
        assert f"id='toki-verdict'>{expected}<" in html
        assert html.count("toki-related") == len(out["related_words"][0])
        assert html.count("toki-unrelated") == len(out["unrelated_words"][0])
        assert "id='toki-keywords'" in keywords
        assert figure is not None and figure.axes[0].get_ylabel() == "trustworthy share of correct predictions"


def test_wrong_label_escaping_and_errors(app, folder, train_text):
    text = "<script>alert(1)</script> zxq the night"
    html, _, _ = app.assess_text(folder, text, "food", train_text, "omission", ["minilm"])
    assert "not assessed (wrong prediction)" in html or "id='toki-verdict'" in html
    assert "<script>" not in html
    with pytest.raises(ValueError, match="expected 'label<TAB>text'"):
        app.assess_text(folder, "the night", "", "no tab here", "omission", ["minilm"])
    with pytest.raises(ValueError, match=r"true label='cars': expected a class index 0..2 or one of the model's labels \['politics'"):
        app.assess_text(folder, "the night", "cars", train_text, "omission", ["minilm"])
    with pytest.raises(ValueError, match="training line 1: label='cars': expected a class index 0..2"):
        app.assess_text(folder, "the night", "", "cars\tthe match", "omission", ["minilm"])
    with pytest.raises(ValueError, match="choose at least one word embedder"):
        app.assess_text(folder, "the night", "", train_text, "omission", [])
    with pytest.raises(ValueError, match="paste labelled training texts"):
        app.assess_text(folder, "the night", "", "", "omission", ["minilm"])


def test_attack_tab(app, folder, train_text):
    html = app.attack_text(folder, "we talked about soccer at night", train_text, "omission", ["minilm"], 0.4, 0.3)
    assert "id='toki-attack-status'" in html and "id='toki-diff'" in html
    if "succeeded" in html:
        assert "textxai-ins" in html


@pytest.mark.browser
def test_browser_verdict_equals_module(app, folder, train_text, gradio_url, page):
    text = "we saw some zxq on the night"
    demo = app.build_demo(default_model=folder, default_train=train_text, default_text=text, default_embedders=["minilm"])
    page.goto(gradio_url(demo))
    page.locator("#assess-button").click()
    page.wait_for_selector("#toki-verdict")
    shown = page.locator("#toki-verdict").inner_text().strip()
    out = _module_verdict(folder, text, train_text)
    assert shown == ("trustworthy" if out["trust_labels"][0] else "untrustworthy")
    assert page.locator("#toki-words .toki-word").count() == len(out["top_words"][0])


@pytest.fixture(scope="module")
def example_verdicts(app):
    """The prefilled examples on the Space's default model (demo-sentiment; omission, its packaged training
    texts, the default embedders): the verdict HTML of each."""
    from textxai.embeddings import EMBEDDER_NAMES

    return [app.assess_text("textxai/demo-sentiment", text, "", "", "omission", list(EMBEDDER_NAMES))[0]
            for text, _ in app.EXAMPLES]


def test_prefilled_examples_tell_the_story(app, example_verdicts):
    # one prediction made for the right reasons, one resting on words unrelated to its class
    assert [expected for _, expected in app.EXAMPLES] == ["trustworthy", "untrustworthy"]
    right, shortcut = example_verdicts
    assert "id='toki-verdict'>trustworthy<" in right and "id='toki-prediction'>positive<" in right
    assert "id='toki-verdict'>untrustworthy<" in shortcut
    # the words that carry each verdict: "great" / "wonderful" related to positive, "home" not
    assert 'toki-related" title' in right and ">great <" in right
    assert ">home <" in shortcut and shortcut.count("toki-related") < shortcut.count("toki-unrelated")


@pytest.mark.browser
def test_browser_prefilled_examples(app, gradio_url, page):
    from playwright.sync_api import expect

    from textxai.embeddings import EMBEDDER_NAMES

    demo = app.build_demo(default_model="textxai/demo-sentiment", default_embedders=EMBEDDER_NAMES)
    page.goto(gradio_url(demo))
    for text, expected in app.EXAMPLES:
        page.locator("#toki-examples").get_by_text(text, exact=True).click()
        expect(page.locator("#text-box textarea")).to_have_value(text)
        page.locator("#assess-button").click()
        expect(page.locator("#toki-verdict")).to_have_text(expected, timeout=240_000)


def test_prefilled_attack_flips_the_default_model_with_one_close_word(app):
    # the attack tab's example on the Space's defaults (demo-sentiment, its packaged training texts, omission,
    # 20 % of the words, MiniLM similarity >= 0.7): one substitution flips it and the sentence stays close
    from textxai.embeddings import EMBEDDER_NAMES

    html = app.attack_text("textxai/demo-sentiment", app.ATTACK_TEXT, "", "omission", list(EMBEDDER_NAMES), 0.2, 0.7)
    assert "id='toki-attack-status'>succeeded</b>" in html and "1 substitution(s)" in html
    similarity = float(html.split("sentence similarity ")[1].split("<")[0])
    assert similarity >= 0.9
