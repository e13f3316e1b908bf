"""`textxai run ceval`, the baseline generators and the demo section."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from textxai import ceval
from textxai.words import word_spans

TEXTS = ["the movie was wonderful and the acting was great .", "a terrible boring film , i hated it !",
         "the food was not good but the service was lovely ."]


def test_deletion_candidates_are_deletions(bert_clf):
    cands = ceval.deletion_candidates(TEXTS, bert_clf, max_words=2)
    for text, cs in zip(TEXTS, cands):
        words = [w for w, _, _ in word_spans(text)]
        singles = {" ".join(words[:i] + words[i + 1:]) for i in range(len(words))}
        assert cs, text
        for c in cs:
            left = [w for w, _, _ in word_spans(c)]
            # every candidate is the text with one or two of its words removed, order kept
            assert len(words) - 2 <= len(left) < len(words)
            it = iter(words)
            assert all(w in it for w in left)
        # the first candidate is the single deletion that lowers p(original class) the most (brute force)
        y = int(bert_clf.predict_proba([text])[0].argmax())
        single_texts = [c for c in cs if " ".join(w for w, _, _ in word_spans(c)) in singles]
        all_singles = [ceval._delete_words(text, [(s, e) for _, s, e in word_spans(text)], [i]) for i in range(len(words))]
        best = all_singles[int(np.argmin(bert_clf.predict_proba(all_singles)[:, y]))]
        assert single_texts[0] == best


def test_pick_counterfactuals_orders_flips_then_distance(bert_clf):
    text = TEXTS[0]
    cands = ceval.deletion_candidates([text], bert_clf, max_words=3)[0]
    picked = ceval.pick_counterfactuals([text], [cands], bert_clf, k=2)[0]
    y = int(bert_clf.predict_proba([text])[0].argmax())
    q = bert_clf.predict_proba(cands)
    key = [(int(q[j].argmax()) == y, ceval.token_distance(text, c), float(q[j, y])) for j, c in enumerate(cands)]
    assert picked == [cands[j] for j in sorted(range(len(cands)), key=lambda j: (key[j], j))[:2]]
    assert ceval.pick_counterfactuals([text], [[]], bert_clf, k=2) == [["-1", "-1"]]


def test_cli_run_with_counterfactual_columns(tmp_path, bert_parts, bert_clf):
    from textxai import cli

    model, tokenizer = bert_parts
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    cfs = ["the movie was terrible and the acting was bad .", "a wonderful film , i loved it !", "-1"]
    cfs2 = ["the movie was good and the acting was great .", "a lovely film , i loved it !", "the food was good ."]
    data = tmp_path / "cf.csv"
    pd.DataFrame({"orig_text": TEXTS, "gen_text": cfs, "gen_text_2": cfs2}).to_csv(data, index=False)
    out = tmp_path / "out"
    assert cli.main(["run", "ceval", "--model", str(folder), "--data", str(data), "--text-column", "orig_text",
                     "--counterfactual-column", "gen_text", "gen_text_2", "--output", str(out), "--no-progress"]) == 0
    results = json.loads((out / "ceval.json").read_text())
    ref = ceval.compute(TEXTS, [list(x) for x in zip(cfs, cfs2)], model=bert_clf)
    assert results["num_failed"] == 1 and results["num_examples"] == 3
    assert results["flip_rate"] == ref["flip_rate"]
    assert results["token_distance"] == ref["token_distance"] and results["diversity"] == ref["diversity"]
    assert results["probability_change"] == pytest.approx(ref["probability_change"], abs=1e-6)
    assert (out / "ceval_probability_histogram.png").stat().st_size > 0
    assert (out / "ceval_method_distances.png").stat().st_size > 0


def test_cli_nli_needs_counterfactual_pairs(tmp_path, bert_parts):
    from textxai import cli

    model, tokenizer = bert_parts
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    data = tmp_path / "nli.csv"
    pd.DataFrame({"p": ["a man is sleeping ."], "h": ["nobody is sleeping ."], "gp": ["a man is running ."]}).to_csv(data, index=False)
    with pytest.raises(ValueError, match="--counterfactual-pair-column"):
        cli.main(["run", "ceval", "--model", str(folder), "--data", str(data), "--text-column", "p", "--pair-column", "h",
                  "--counterfactual-column", "gp", "--output", str(tmp_path / "o"), "--no-progress"])
    pd.DataFrame({"p": ["a man is sleeping ."], "h": ["nobody is sleeping ."], "gp": ["a man is running ."],
                  "gh": ["nobody is sleeping ."]}).to_csv(data, index=False)
    assert cli.main(["run", "ceval", "--model", str(folder), "--data", str(data), "--text-column", "p", "--pair-column", "h",
                     "--counterfactual-column", "gp", "--counterfactual-pair-column", "gh",
                     "--output", str(tmp_path / "o"), "--no-progress"]) == 0
    results = json.loads((tmp_path / "o" / "ceval.json").read_text())
    assert results["contrast"] == "counterfactual_argmax" and results["token_distance"] == 1.0


def test_generate_with_both_generators(bert_clf):
    from textxai.ceval import runner as glue

    for editor in glue.GENERATORS:
        cfs = ceval.generate(TEXTS[:2], bert_clf, editor, k=2)
        assert len(cfs) == 2 and all(len(c) == 2 for c in cfs)
        analysis = ceval.analyse(TEXTS[:2], cfs, bert_clf)
        assert analysis.results["num_examples"] == 2 and "method_distances" in analysis.figures


@pytest.mark.long
@pytest.mark.slow
def test_demo_section():
    from textxai.ceval import runner as glue
    from textxai.lm import packaged_lm_file

    report, results, figures = glue.demo(progress=False)
    assert "CEval" in report and set(results) == set(glue.GENERATORS) | ({"llm"} if packaged_lm_file() else set())
    if packaged_lm_file():  # perplexity under the packaged LM, its start token stated; the LLM's edits scored
        assert all(r["perplexity_start_token"] == "'<|im_start|>' (id 1)" for r in results.values())
        assert "perplexity start token" in report and "llm counterfactuals" in report
    for res in results.values():
        assert res["num_examples"] == 8 and 0 <= res["flip_rate"] <= 1
    assert "method_distances" in figures


def test_delete_words_keeps_spacing():
    text = "to a plan. Clean design"
    spans = [(s, e) for _, s, e in word_spans(text)]          # to, a, plan, ., Clean, design
    assert [ceval._delete_words(text, spans, [i]) for i in range(len(spans))] == [
        "a plan. Clean design", "to plan. Clean design", "to a. Clean design", "to a plan Clean design",
        "to a plan. design", "to a plan. Clean"]
    assert ceval._delete_words(text, spans, [2, 3]) == "to a Clean design"


def test_cli_lm_and_judge_from_a_gguf_file(tiny_bert_folder, tiny_gguf_file, tmp_path):
    """`textxai run ceval --lm x.gguf --judge x.gguf`: perplexity under the file with its BOS stated; the tiny random
    judge answers noise, so its replies are unparsed, counted, shown and warned about."""
    import json

    from textxai.cli import main
    from textxai.lm import perplexity

    data = tmp_path / "cf.jsonl"
    rows = [{"orig_text": "the movie was wonderful", "gen_text": "the movie was awful"},
            {"orig_text": "a dull film", "gen_text": "a fine film"}]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "out"
    assert main(["run", "ceval", "--model", tiny_bert_folder, "--data", str(data), "--text-column", "orig_text",
                 "--counterfactual-column", "gen_text", "--lm", str(tiny_gguf_file), "--judge", str(tiny_gguf_file),
                 "--output", str(out), "--no-progress"]) == 0
    res = json.loads((out / "ceval.json").read_text())
    assert res["perplexity_start_token"] == "'<s>' (id 0)"
    assert res["perplexity"] == pytest.approx(perplexity([r["gen_text"] for r in rows], str(tiny_gguf_file)).mean(), rel=1e-6)
    assert res["num_judgements"] == 8 and len(res["unparsed_judgements"]) == res["num_unparsed_judgements"]
