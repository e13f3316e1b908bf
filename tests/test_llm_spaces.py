"""The CEval and inconsistency Spaces offer the LLM editor (k = 4 candidates, the classifier choosing) and the LLM
judge read from its probabilities, with their work in the Space's up-front budget (issue 40, deliverable 5). The
packaged SmolLM2-135M-Instruct, one short text."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import load_space_app

from textxai import lm as lm_module
from textxai.batching import work_budget

TEXT = "the movie was wonderful ."


@pytest.fixture(scope="module")
def ceval_app():
    return load_space_app("ceval")


def _counting(monkeypatch):
    """Rows the judge reads (``next_token_probs`` prompts) and replies the LLM editor generates."""
    seen = {"judge": 0, "replies": 0}
    judge, generate, sample = lm_module.next_token_probs, lm_module.generate, lm_module.sample

    def counted_judge(model, prompts, *args, **kwargs):
        seen["judge"] += len(prompts)
        return judge(model, prompts, *args, **kwargs)

    def counted_generate(model, prompts, *args, **kwargs):
        seen["replies"] += len(prompts)
        return generate(model, prompts, *args, **kwargs)

    def counted_sample(model, prompts, n, *args, **kwargs):
        seen["replies"] += n * len(prompts)
        return sample(model, prompts, n, *args, **kwargs)

    monkeypatch.setattr(lm_module, "next_token_probs", counted_judge)
    monkeypatch.setattr(lm_module, "generate", counted_generate)
    monkeypatch.setattr(lm_module, "sample", counted_sample)
    return seen


@pytest.mark.long
def test_ceval_space_generates_with_the_llm_editor_and_judges_within_its_estimate(ceval_app, smollm2, tiny_bert_folder,
                                                                                   monkeypatch):
    """'Generate with the editor and score': the LLM editor asked for its 4 candidates (1 greedy + 3 sampled), the
    judge reads 4 aspects of each counterfactual from its probabilities (text quality 1-5, every one scored); the
    budget the Space checks first counts both, and the work done stays within it."""
    from textxai.ceval.method import ceval_evaluations
    from textxai.estimates import approx_words
    from textxai.llm_editor import _MEMO

    _MEMO.clear()
    seen = _counting(monkeypatch)
    with work_budget() as budget:
        analysis, original, cfs, _ = ceval_app.analyse_generated(tiny_bert_folder, TEXT, "llm", 1, "none",
                                                                 lm_module.PACKAGED_LM)
    estimate = ceval_evaluations(1, 1, [approx_words(TEXT)], judge=True, editor="llm", editor_candidates=4)
    assert seen["replies"] == 4 and budget.used <= estimate
    scored = sum(1 for c in cfs if c != "-1")
    assert seen["judge"] == 4 * scored and len(cfs) == 1
    if scored:
        assert 1.0 <= analysis.results["text_quality"] <= 5.0
        assert analysis.results["judge_method"] == "probabilities" and analysis.results["num_unparsed_judgements"] == 0
    without = ceval_evaluations(1, 1, [approx_words(TEXT)], editor="llm", editor_candidates=4)
    assert estimate - without == 4                      # one forward per aspect, nothing generated
    summary = ceval_app.summary_html(analysis)
    assert "Text quality (LLM judge" in summary       # NaN ("–") when no counterfactual was made


def test_ceval_space_judge_scores_given_counterfactuals_and_refuses_unknown_editor(ceval_app, smollm2, tiny_bert_folder):
    from textxai import ceval, spaces

    summary, examples, _ = ceval_app.score_one(tiny_bert_folder, TEXT, "the movie was awful .", "none",
                                               lm_module.PACKAGED_LM)
    ref = ceval.compute([TEXT], ["the movie was awful ."], model=tiny_bert_folder, judge=smollm2)
    assert f'id="text-quality">{ref["text_quality"]:.2f}<' in summary
    with pytest.raises(spaces.SpaceError, match=r"editor='gpt': expected one of \['substitution', 'deletion', 'llm'\]"):
        ceval_app.analyse_generated(tiny_bert_folder, TEXT, "gpt", 1)


def test_inconsistency_space_llm_editor_within_its_estimate(smollm2, tiny_bert_folder, monkeypatch):
    """The inconsistency Space's LLM editor: k = 4 candidates per step (the classifier choosing), the work counted
    within the estimate the Space checked first."""
    from textxai.inconsistency import EditorOptions
    from textxai.inconsistency.method import feedback_evaluations
    from textxai.estimates import approx_words
    from textxai.llm_editor import _MEMO

    app = load_space_app("inconsistency")
    _MEMO.clear()
    seen = _counting(monkeypatch)
    with work_budget() as budget:
        analysis, _ = app.analyse_editor(tiny_bert_folder, TEXT, 1, "1", "spacy", "pooled", "llm")
    assert EditorOptions().editor_candidates == 4 and seen["replies"] == 4
    assert budget.used <= feedback_evaluations([approx_words(TEXT)], 1, max_words=app.EDITOR_MAX_WORDS, editor="llm",
                                               candidates=4)
    assert len(analysis.results["chains"] if "chains" in analysis.results else [1]) == 1
