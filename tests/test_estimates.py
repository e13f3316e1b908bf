"""textxai.estimates against the work really done by the built-in editor (textxai.editors.SubstitutionEditor),
counted row by row by textxai.batching.work_budget (classifier and MiniLM rows alike): the estimate of one editor
call and of whole feedback chains is an upper bound, and the editor really reaches its replacement and
similarity stages in these runs (not only the occlusion), so the bound is tested where it matters."""
from __future__ import annotations

import inspect

import pytest

from textxai import estimates
from textxai.batching import work_budget
from textxai.inconsistency.method import feedback_evaluations

TEXTS = ["the movie was wonderful and the acting was great", "a terrible boring film , i hated it !",
         "the plot was thin and dull", "good", "it was fine"]
OPTIONS = [{}, {"n_words": 1, "n_neighbours": 8}, {"max_words": 4, "n_substitutes": 1, "n_neighbours": 12}]


@pytest.fixture(scope="module")
def editors(bert_clf):
    """One editor per option set; a low similarity floor so that the tiny random model's edits are kept."""
    from textxai.editors import SubstitutionEditor

    return [SubstitutionEditor(bert_clf, min_similarity=-1.0, **options) for options in OPTIONS]


def test_the_estimate_reads_the_editors_defaults():
    from textxai.editors import SubstitutionEditor, antonyms

    params = inspect.signature(SubstitutionEditor.__init__).parameters
    k, subs, near = params["n_words"].default, params["n_substitutes"].default, params["n_neighbours"].default
    longest = max(len(v) for v in antonyms().values())
    n = 7
    assert estimates.editor_evaluations(n) == ((n + 1) + k * (longest + near) + 1 + k * subs + k - 1, k * subs + k - 1)
    assert estimates.editor_evaluations(n, n_words=2, max_words=5) == \
        ((n + 1) + 5 * (longest + near) + 1 + 5 * subs + 4, 5 * subs + 4)


@pytest.mark.parametrize("which", range(len(OPTIONS)))
def test_one_editor_call_costs_at_most_its_estimate(bert_clf, editors, which):
    editor, options = editors[which], OPTIONS[which]
    proposed = 0
    for text in TEXTS:
        with work_budget() as budget:
            candidates = editor([text])[0]
        work, most = estimates.editor_evaluations(estimates.approx_words(text), **options)
        n = bert_clf.word_encoding(text).n_words
        assert n + 1 <= budget.used <= work, (text, budget.used, work)
        assert len(candidates) <= most
        if candidates:  # then the replacements were scored and the candidates embedded by MiniLM too
            assert budget.used >= n + 1 + 1 + 1 + len(candidates)
        proposed += len(candidates)
    assert proposed > 0


def test_feedback_chains_cost_at_most_their_estimate(bert_clf, editors):
    from textxai import inconsistency

    with work_budget() as budget:
        chains, _ = inconsistency.feedback_chains(editors[0], TEXTS, bert_clf, steps=2, progress=False)
    estimate = feedback_evaluations([estimates.approx_words(t) for t in TEXTS], 2)
    assert any(len([t for t in chain if t is not None]) == 3 for chain in chains)  # some chain was edited twice
    assert budget.used <= estimate, (budget.used, estimate)


@pytest.mark.parametrize("max_words", [1, 3])
def test_deletion_editor_costs_at_most_its_estimate(bert_clf, max_words):
    """The word-deletion editor (CEval's baseline): one call exactly as estimated on texts longer than
    max_words (every greedy step runs when no deletion flips the tiny model), and whole chains within."""
    from textxai import inconsistency
    from textxai.editors import DeletionEditor

    editor = DeletionEditor(bert_clf, max_words=max_words)
    for text in TEXTS:
        with work_budget() as budget:
            candidates = editor([text])[0]
        n = bert_clf.word_encoding(text).n_words
        work, most = estimates.deletion_evaluations(estimates.approx_words(text), max_words)
        assert budget.used <= work and len(candidates) <= most, (text, budget.used, work)
        if n == estimates.approx_words(text) and n > 1:
            assert budget.used >= 1 + n                     # the intact text and the first step's deletions
    with work_budget() as budget:
        inconsistency.feedback_chains(editor, TEXTS, bert_clf, steps=2, progress=False)
    words = [estimates.approx_words(t) for t in TEXTS]
    assert budget.used <= feedback_evaluations(words, 2, max_words=max_words, editor="deletion")
