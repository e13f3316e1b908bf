"""The ceval Space: handlers against the library, escaping, errors, CSV round trip, and a browser run."""
from __future__ import annotations

import csv
import math

import pytest
from helpers import load_space_app

from textxai import ceval
from textxai.classifier import TextClassifier

ORIGINAL = "the movie was wonderful and the acting was great ."
CFS = ["the movie was terrible and the acting was bad .", "the film was terrible and the acting was bad !"]


@pytest.fixture(scope="module")
def app():
    return load_space_app("ceval")


@pytest.fixture(scope="module")
def tiny_folder(tiny_bert_folder):
    return tiny_bert_folder


def _expected(folder, original=ORIGINAL, cfs=CFS):
    return ceval.compute([original] * len(cfs), cfs, model=TextClassifier(folder), return_per_example=True)


def _cell(html: str, key: str) -> str:
    return html.split(f'id="{key}">')[1].split("<")[0]


def test_score_one_matches_library(app, tiny_folder):
    summary, examples, fig = app.score_one(tiny_folder, ORIGINAL, "\n".join(CFS), "none")
    ref = _expected(tiny_folder)
    assert _cell(summary, "flip-rate") == f"{ref['flip_rate']:.3f}"
    assert _cell(summary, "probability-change") == f"{ref['probability_change']:.3f}"
    assert _cell(summary, "token-distance") == f"{ref['token_distance']:.2f}" == "3.00"   # (2 + 4) / 2
    assert _cell(summary, "diversity") == f"{ceval.token_distance(CFS[0], CFS[1]):.2f}" == "2.00"
    assert examples.count('class="cf-row"') == 2 and "<ins" in examples and "<del" in examples
    assert fig is not None and len(fig.axes) == 2


def test_escaping_failed_and_errors(app, tiny_folder):
    summary, examples, _ = app.score_one(tiny_folder, "<b>bold</b> film", "<script>alert(1)</script>\n-1", "none")
    # spaCy splits the markup into tokens ('<', 'script', '>', 'alert(1)</script', '>'), each escaped
    assert "<script" not in examples and "alert(1)&lt;/script" in examples and "<b>bold" not in examples
    assert "failed generation" in examples and "1 failed generation" in summary
    with pytest.raises(ValueError, match="counterfactuals: none given"):
        app.score_one(tiny_folder, ORIGINAL, "  \n ", "none")
    with pytest.raises(ValueError, match="at most 6"):
        app.score_one(tiny_folder, ORIGINAL, "\n".join(["a"] * 7), "none")
    with pytest.raises(ValueError, match="original: no text given"):
        app.score_one(tiny_folder, "   ", "a b", "none")
    with pytest.raises(ValueError, match="lm='../x'"):
        app.score_one(tiny_folder, ORIGINAL, "a b", "../x")


def test_csv_round_trip(app, tiny_folder, tmp_path):
    originals = [ORIGINAL, "a terrible boring film , i hated it !"]
    rows = [(originals[0], CFS[0], CFS[1]), (originals[1], "-1", "a wonderful film , i loved it !")]
    path = tmp_path / "in.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["orig_text", "gen_text", "gen_text_2"])
        writer.writerows(rows)
    summary, out_path, _ = app.score_csv(tiny_folder, str(path), "none")
    ref = ceval.compute(originals, [[r[1], r[2]] for r in rows], model=TextClassifier(tiny_folder),
                        return_per_example=True)
    assert _cell(summary, "flip-rate") == f"{ref['flip_rate']:.3f}" and "2 rows scored" in summary
    with open(out_path, newline="", encoding="utf-8") as handle:
        out = list(csv.DictReader(handle))
    assert [r["orig_text"] for r in out] == originals
    assert float(out[0]["token_distance"]) == ref["per_example"]["token_distance"][0]
    assert out[1]["token_distance"] == "" and math.isnan(ref["per_example"]["token_distance"][1])
    assert [r["flipped"] for r in out] == [str(f) for f in ref["per_example"]["flipped"]]
    bad = tmp_path / "bad.csv"
    bad.write_text("text,cf\na,b\n")
    with pytest.raises(ValueError, match="expected orig_text and gen_text"):
        app.score_csv(tiny_folder, str(bad), "none")


@pytest.mark.browser
def test_browser_pair_shows_numbers(app, tiny_folder, gradio_url, page):
    demo = app.build_demo(default_model=tiny_folder)
    url = gradio_url(demo)
    page.goto(url)
    page.locator("#ceval-original textarea").fill(ORIGINAL)
    page.locator("#ceval-counterfactuals textarea").fill(CFS[0])
    page.locator("#ceval-run").click()
    page.wait_for_selector("#token-distance", timeout=180_000)  # ~46 s idle on 2 cores (the packaged LM loads)
    ref = _expected(tiny_folder, cfs=CFS[:1])
    assert page.locator("#flip-rate").inner_text().strip() == f"{ref['flip_rate']:.3f}"
    assert page.locator("#probability-change").inner_text().strip() == f"{ref['probability_change']:.3f}"
    assert page.locator("#token-distance").inner_text().strip() == "2.00"
    assert page.locator("#ceval-examples ins").count() == 2 and page.locator("#ceval-examples del").count() == 2


@pytest.mark.browser
def test_browser_csv_upload_and_download(app, tiny_folder, gradio_url, page, tmp_path):
    originals = [ORIGINAL, "a terrible boring film , i hated it !"]
    path = tmp_path / "cf.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["orig_text", "gen_text"])
        writer.writerows([(originals[0], CFS[0]), (originals[1], "a wonderful film , i loved it !")])
    demo = app.build_demo(default_model=tiny_folder)
    page.goto(gradio_url(demo))
    page.get_by_role("tab", name="Batch CSV").click()
    page.locator("#ceval-upload input[type=file]").set_input_files(str(path))
    page.locator("#ceval-run-csv").click()
    page.wait_for_selector("#rows-scored")
    ref = ceval.compute(originals, [CFS[0], "a wonderful film , i loved it !"], model=TextClassifier(tiny_folder))
    assert page.locator("#flip-rate").inner_text().strip() == f"{ref['flip_rate']:.3f}"
    assert page.locator("#token-distance").inner_text().strip() == f"{ref['token_distance']:.2f}"
    link = page.locator("#ceval-download a").first
    link.wait_for()
    with page.expect_download() as info:
        link.click()
    with open(info.value.path(), newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["orig_text"] for r in rows] == originals
    assert [float(r["token_distance"]) for r in rows] == [2.0, 3.0]     # terrible->wonderful, -boring, hated->loved


def test_prefilled_example_has_one_flip_and_one_near_miss(app):
    # the Space's example on its default model (demo-sentiment): one counterfactual flips it, one does not
    # although the probability still moves a lot, so flip rate and probability change read differently
    from textxai import ceval
    from textxai.classifier import as_classifier

    cfs = app.EXAMPLE_COUNTERFACTUALS.splitlines()
    res = ceval.compute([app.EXAMPLE_ORIGINAL] * 2, cfs, model=as_classifier("textxai/demo-sentiment"),
                        return_per_example=True)
    assert res["flip_rate"] == 0.5
    assert res["probability_change"] > 0.4
