"""The inconsistency Space: handlers against the library, escaping, errors, and a browser run."""
from __future__ import annotations

import math

import pytest
from helpers import load_space_app

from textxai import inconsistency as inc
from textxai import spaces

CHAIN = ["the film was great", "the film was awful", "the film was not awful at all", "the film was great"]


@pytest.fixture(scope="module")
def app():
    return load_space_app("inconsistency")


@pytest.fixture(scope="module")
def tiny_folder(tiny_bert_folder):
    return tiny_bert_folder


def test_score_chains_matches_library(app):
    summary, chains, fig = app.score_chains("\n".join(CHAIN), "1, 2", "spacy", "pooled")
    ref = inc.compute([CHAIN], n=[1, 2])
    assert ref["inc@1"] == 2.0 and ref["inc@2"] == 1.5  # d = [1, 3, 4]; inc = [2, 1]
    assert 'id="inc-at-1">2.000<' in summary and 'id="inc-at-2">1.500<' in summary
    assert chains.count("<tr><td>x") == 4 and "<ins" in chains and "<del" in chains
    assert len(fig.axes) == 2
    # the most inconsistent step explained: x1 -> x2 changed 3 words where x0 was 1 word away
    assert "<b>Chain 1, step 1.</b>" in summary and "inc = 3 - 1 = 2" in summary
    consistent, _, _ = app.score_chains("a b\na c\na b", "1", "spacy", "pooled")
    assert "No step is inconsistent" in consistent


def test_two_chains_and_per_chain_pooling(app):
    text = "\n".join(CHAIN) + "\n\n" + "a b\na c\nd e f\n"
    summary, _, _ = app.score_chains(text, "1", "whitespace", "per_chain")
    ref = inc.compute([CHAIN, ["a b", "a c", "d e f"]], n=[1], pooling="per_chain", word_tokenizer="whitespace")
    assert f'id="inc-at-1">{ref["inc@1"]:.3f}<' in summary and ref["inc@1"] == 2.0


def test_user_text_is_escaped_and_errors_are_clear(app):
    _, chains, _ = app.score_chains("<script>alert(1)</script>\n<b>bold</b>", "1", "spacy", "pooled")
    assert "<script>" not in chains and "&lt;script&gt;" in chains and "<b>bold" not in chains
    with pytest.raises(ValueError, match="chain 1 has 1 text"):
        app.score_chains("just one line", "1", "spacy", "pooled")
    with pytest.raises(ValueError, match="n='0'"):
        app.score_chains("\n".join(CHAIN), "0", "spacy", "pooled")
    with pytest.raises(ValueError, match="at most 5"):
        app.score_chains("\n\n".join(["a\nb"] * 6), "1", "spacy", "pooled")


def test_run_editor_on_a_local_model(app, tiny_folder):
    summary, chains, fig = app.run_editor(tiny_folder, "the movie was wonderful and the acting was great .", 2, "1",
                                          "spacy", "pooled", progress=lambda *a, **k: None)
    assert 'id="inc-at-1">' in summary and "x1" in chains
    value = summary.split('id="inc-at-1">')[1].split("<")[0]
    assert value == "–" or float(value) >= 0


def test_prefilled_editor_example_tells_the_story(app):
    """The Space's prefilled texts on the default demo model: the substitution editor flips both with a listed
    antonym and answers its own edit by swapping back (inc@1 = 0); the deletion editor, on the same texts,
    cannot restore what it deleted (inc@1 > 0, the inconsistent step explained)."""
    from textxai import spaces
    from textxai.editors import antonym_pairs, get_editor

    quiet = lambda *a, **k: None  # noqa: E731
    summary, chains, _ = app.run_editor(spaces.DEFAULT_MODEL, app.EXAMPLE_TEXTS, 3, "1", "spacy", "pooled",
                                        "substitution", progress=quiet)
    assert summary.split('id="inc-at-1">')[1].split("<")[0] == "0.000"
    clf = spaces.resolve_model(spaces.DEFAULT_MODEL)
    editor = get_editor("substitution", clf, max_words=app.EDITOR_MAX_WORDS)
    texts = app.EXAMPLE_TEXTS.splitlines()
    found, labels = inc.feedback_chains(editor, texts, clf, steps=1, progress=False)
    for (x0, x1), (y0, y1) in zip(found, labels):
        changed = [(a, b) for a, b in zip(x0.split(), x1.split()) if a != b]
        assert y0 != y1 and len(changed) == 1 and (changed[0][0].strip(",;").lower(),
                                                    changed[0][1].strip(",;").lower()) in antonym_pairs()
    summary, chains, _ = app.run_editor(spaces.DEFAULT_MODEL, app.EXAMPLE_TEXTS, 3, "1", "spacy", "pooled",
                                        "deletion", progress=quiet)
    assert float(summary.split('id="inc-at-1">')[1].split("<")[0]) > 0   # measured: 2.500
    assert "smaller" in summary or "inc =" in summary
    with pytest.raises(spaces.SpaceError, match="editor='mice'"):
        app.run_editor(spaces.DEFAULT_MODEL, app.EXAMPLE_TEXTS, 1, "1", "spacy", "pooled", "mice", progress=quiet)


@pytest.mark.browser
def test_browser_paste_chain_shows_inc(app, gradio_url, page):
    url = gradio_url(app.demo)
    page.goto(url)
    page.locator("#chain-box textarea").fill("\n".join(CHAIN))
    page.locator("#n-box textarea, #n-box input").first.fill("1, 2")
    page.locator("#score-button").click()
    page.wait_for_selector("#inc-at-2")
    assert page.locator("#inc-at-1").inner_text().strip() == "2.000"
    assert page.locator("#inc-at-2").inner_text().strip() == "1.500"
    assert page.locator("#chains ins").count() > 0
    assert "inc = 3 - 1 = 2" in page.locator("#why").inner_text()
    assert not math.isnan(float(page.locator("#inc-at-2").inner_text()))


@pytest.mark.parametrize("before, after, method", [
    ("The movie was fantastic!", "The film was not awful, truly fantastic !", "spacy"),
    ("a <b> c", "a <i>  c d", "whitespace"),
    ("x y z", "z", "spacy"),
    ("x y z", "x", "spacy"),
    ("same text", "same text", "spacy"),
])
def test_diff_keeps_the_text_and_marks_every_edit(app, before, after, method):
    import html
    import re

    from textxai.words import tokenize, word_distance

    out = spaces.diff_html(before, after, method)  # the Spaces' one diff (the chain table shows it)
    kept = re.sub(r"<del[^>]*>[^<]*</del> ", "", re.sub(r" <del[^>]*>[^<]*</del>$", "", out))
    assert html.unescape(re.sub(r"<[^>]+>", "", kept)) == after
    deleted = sum(len(m.split()) for m in re.findall(r"<del[^>]*>([^<]*)</del>", out))
    inserted = len(re.findall(r"<ins", out))
    # substitutions show as one deletion + one insertion: the marks bound the word distance
    d = word_distance(before, after, method)
    assert max(deleted, inserted) <= d <= deleted + inserted
    kept_words = len(tokenize(after, method)) - inserted
    assert kept_words == len(tokenize(before, method)) - deleted  # the unmarked words are shared by both texts


def test_a_step_returning_its_input_is_shown_as_the_failed_end_of_the_chain(app):
    """A chain whose editor answered with its input: the table stops there (x2 is the failure row, no distance
    0 and no inc shown for it), as the library counts it (an IndexError before)."""
    html = app.chains_html([["k l", "k m", "k m"]], word_tokenizer="whitespace")
    assert html.count("<tr><td>x") == 3 and "input returned unchanged" in html
    assert inc.step_distances(["k l", "k m", "k m"], "whitespace").tolist() == [1]
