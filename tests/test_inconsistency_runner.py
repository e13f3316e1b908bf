"""`textxai run inconsistency` and the demo section."""
from __future__ import annotations

import json

import pytest

from textxai import inconsistency as inc
from textxai import render
from textxai.cli import main

TEXTS = ["the movie was wonderful and the acting was great .", "a terrible boring film , i hated it !",
         "the food was not good but the service was lovely"]


@pytest.fixture(scope="module")
def tiny_folder(tiny_bert_folder):
    return tiny_bert_folder


def test_cli_runs_the_editor_and_scores_its_chains(tiny_folder, tmp_path, capsys):
    data = tmp_path / "texts.jsonl"
    data.write_text("\n".join(json.dumps({"text": t}) for t in TEXTS) + "\n")
    out = tmp_path / "out"
    assert main(["run", "inconsistency", "--model", tiny_folder, "--data", str(data), "--steps", "3", "--n", "1", "2",
                 "--n-words", "2", "--output", str(out), "--no-progress"]) == 0
    results = json.loads((out / "inconsistency.json").read_text())
    assert (out / "inconsistency_steps.png").is_file()
    chains, labels = results["chains"], results["labels"]
    assert [c[0] for c in chains] == TEXTS
    ref = inc.compute(chains, n=[1, 2], labels=labels)
    for key in ("inc@1", "inc@2", "minimality@1", "flip_rate@1", "inc@1_chains"):
        assert results[key] == (None if ref[key] != ref[key] else pytest.approx(ref[key]))
    printed = capsys.readouterr().out
    assert "inc@1" in printed and "Chain 0:" in printed


def test_cli_scores_given_chains(tiny_folder, tmp_path):
    chains = tmp_path / "chains.jsonl"
    rows = [{"edits": ["a b c d", "a x c d", "p q c d", "p q r s t"], "labels": [0, 1, 0, 1]},
            {"edits": ["a b", "a c", "x y z", None], "labels": [0, 1, 0, None]}]
    chains.write_text("\n".join(json.dumps(r) for r in rows))
    data = tmp_path / "unused.csv"
    data.write_text("text\nunused\n")
    out = tmp_path / "out"
    assert main(["run", "inconsistency", "--model", tiny_folder, "--data", str(data), "--chains", str(chains),
                 "--n", "1", "2", "--output", str(out), "--no-progress"]) == 0
    results = json.loads((out / "inconsistency.json").read_text())
    # chain 1: d = [1, 2, 3], inc = [1, 1]; chain 2: d = [1, 3], inc = [2]
    assert results["inc@1"] == pytest.approx(1.5) and results["inc@2"] == pytest.approx(4 / 3)
    assert results["flip_rate@2"] == pytest.approx(1.0) and results["flip_rate@2_chains"] == 2


def test_report_explains_the_most_inconsistent_step():
    from textxai.inconsistency import analyse, most_inconsistent, report

    chains = [["a b c d", "a x c d", "a b c d", "a x c d"],                 # inc = [0, 0]
              ["good film", "bad film", "good movie here now"]]             # d = [1, 4]: inc = [3]
    analysis = analyse(chains, [[1, 0, 1, 0], [1, 0, 1]], n=[1, 2], intervals=None, max_chains=1)
    results = analysis.results
    assert most_inconsistent(results) == (1, 1)
    text = report(results, [1, 2], max_chains=1)
    assert text == analysis.report
    assert "Chain 0:" not in text and "Chain 1:  (inc per step: [3])" in text   # the inconsistent chain is shown
    assert "Chain 0:" in report(results, [1, 2], max_chains=2)
    assert "Why chain 1 is inconsistent at step 1" in text and "changed 4 words" in text
    assert "x0 itself was only 1 word away with the other label" in text and "inc = 4 - 1 = 3" in text
    consistent = analyse(chains[:1], [[1, 0, 1, 0]], n=[1], intervals=None).results
    assert most_inconsistent(consistent) is None and "No step of any chain is inconsistent" in report(consistent, [1])


def test_cli_bad_chains_file(tiny_folder, tmp_path):
    data = tmp_path / "unused.csv"
    data.write_text("text\nunused\n")
    with pytest.raises(ValueError, match="--chains="):
        main(["run", "inconsistency", "--model", tiny_folder, "--data", str(data), "--chains", str(tmp_path / "nope.jsonl"),
              "--output", str(tmp_path / "o")])


@pytest.fixture(scope="module")
def demo_run():
    """The inconsistency demo section, run once for the tests below (with the packaged LM where it is installed)."""
    from textxai.inconsistency.runner import demo

    return demo(progress=False)


@pytest.mark.long
@pytest.mark.slow
def test_demo_section(demo_run):
    """The demo's story: the substitution editor answers its own edit with one of the same size (swaps a word
    back), the deletion baseline cannot restore what it deleted and shows inc > 0 on the same texts; the
    report explains the most inconsistent step and compares the editors paired."""
    from textxai.lm import packaged_lm_file

    report, results, figures = demo_run
    sub, dele = results["substitution"], results["deletion"]
    names = ("substitution", "deletion") + (("llm",) if packaged_lm_file() else ())
    assert set(figures) == {f"{e}_{k}" for e in names for k in ("steps", "intervals")}
    assert len(sub["chains"]) == len(dele["chains"]) == 8
    assert [c[0] for c in sub["chains"]] == [c[0] for c in dele["chains"]]        # the same originals
    for res in (sub, dele):
        e = res["intervals"]["inc@1"]  # intervals over the chains that reach step 2, shown in the report
        assert e["n"] == res["inc@1_chains"] and e["unit"] == "chain" and e["ci_low"] <= res["inc@1"] <= e["ci_high"]
        assert render.format_interval(e) in report
        ref = inc.compute(res["chains"], n=[1, 2], labels=res["labels"])
        assert res["inc@1"] == ref["inc@1"] and res["flip_rate@1"] == ref["flip_rate@1"]
    # measured: substitution inc@1 0.000 (5 chains reach step 2), deletion 0.625 (8); flip rate@1 0.50 vs 1.00
    assert sub["inc@1"] < dele["inc@1"] and sub["flip_rate@1"] > 0
    assert report.count("Why chain") == (sub["inc@2"] > 0) + (dele["inc@2"] > 0) >= 1
    assert "a better counterfactual existed" in report and "Paired comparison of the editors" in report
    comparison = results["comparison"]["substitution_vs_deletion"]["1"]
    assert comparison["test"] == "wilcoxon signed-rank" and comparison["mean_a"] <= comparison["mean_b"]
    # every edit of the substitution editor a reader can follow: each changed word a listed antonym or a
    # modifier replaced by a modifier (no "Clean design" -> "Clean faulty")
    from textxai.editors import antonym_pairs
    from textxai.words import parts_of_speech

    for chain in sub["chains"]:
        texts = [t for t in chain if t is not None]
        for a, b in zip(texts, texts[1:]):
            changed = [(x, y) for x, y in zip(a.split(), b.split()) if x != y]
            assert 1 <= len(changed) <= 4
            for x, y in changed:
                x, y = x.strip(".,;").lower(), y.strip(".,;").lower()
                assert (x, y) in antonym_pairs() or parts_of_speech(x) & parts_of_speech(y) & {"ADJ", "ADV"}, (x, y)


@pytest.mark.long
@pytest.mark.slow
def test_demo_section_with_the_llm_editor(smollm2, demo_run):
    """With the packaged LM: the LLM editor's chains on the same originals, perplexity@n of every editor under it
    (its start token stated), ten LLM edits shown as they came out, paired comparisons against both editors."""
    report, results, _ = demo_run
    llm = results["llm"]
    assert [c[0] for c in llm["chains"]] == [c[0] for c in results["substitution"]["chains"]]
    for name in ("substitution", "deletion", "llm"):
        assert results[name]["perplexity_start_token"] == "'<|im_start|>' (id 1)" and results[name]["perplexity@1_chains"] > 0
    for chain in llm["chains"]:  # a failed generation ends the chain; no step returns its input
        texts = [t for t in chain if t is not None]
        assert all(a != b for a, b in zip(texts, texts[1:]))
    assert "of the LLM editor's" in report and report.count("  in : ") == min(10, report.count("  out: "))
    assert set(results["comparison"]) == {"substitution_vs_deletion", "llm_vs_substitution", "llm_vs_deletion"}
    table = report.split("Editors on the same texts")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in table[2:5]] == ["substitution", "deletion", "llm"]


def test_cli_llm_editor_and_gguf_perplexity(tiny_folder, tiny_gguf_file, tmp_path):
    """`--editor llm --editor-model x.gguf --lm x.gguf --bos none`: the LLM editor's chains (a failed generation ends
    a chain, never an unchanged step), perplexity@n under the .gguf LM with the start token stated."""
    from textxai.lm import as_lm, perplexity

    data = tmp_path / "texts.jsonl"
    data.write_text("\n".join(json.dumps({"text": t}) for t in TEXTS) + "\n")
    out = tmp_path / "out"
    assert main(["run", "inconsistency", "--model", tiny_folder, "--data", str(data), "--steps", "2", "--n", "1",
                 "--editor", "llm", "--editor-model", str(tiny_gguf_file), "--lm", str(tiny_gguf_file), "--bos", "none",
                 "--output", str(out), "--no-progress"]) == 0
    results = json.loads((out / "inconsistency.json").read_text())
    assert results["perplexity_start_token"].startswith("none")
    for chain in results["chains"]:
        texts = [t for t in chain if t is not None]
        assert texts[0] in TEXTS and all(a != b for a, b in zip(texts, texts[1:]))
    steps = [c[1] for c in results["chains"] if len(c) > 1 and c[1] is not None]
    if steps:
        expected = perplexity(steps, as_lm(str(tiny_gguf_file), bos=None)).mean()
        assert results["perplexity@1"] == pytest.approx(expected, rel=1e-6)
