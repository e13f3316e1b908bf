"""textxai.batching.remembered_rows: inside the block a classifier scores each distinct token row once (per model
and precision); the answers equal a pass of each row alone (float32 rounding), the rows computed are what the work
budget counts, and the deletion editor's feedback chains -- the audit's use -- come out the same for fewer passes."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from textxai.batching import remembered_rows, work_budget

TEXTS = ["the movie was wonderful and the acting was great", "a terrible boring film , i hated it !",
         "the plot was thin and dull but the music was fine"]


def test_duplicate_rows_are_scored_once_and_equal_single_passes(bert_clf):
    n = bert_clf.word_encoding(TEXTS[0]).n_words
    eye = np.eye(n, dtype=bool)
    masks = np.concatenate([eye, eye[:3], np.zeros((2, n), dtype=bool)])   # 3 repeated rows, 2 intact texts
    with work_budget() as plain:
        outside = bert_clf.masked_proba(TEXTS[0], masks)
    with remembered_rows(), work_budget() as inside_budget:
        inside = bert_clf.masked_proba(TEXTS[0], masks)
        again = bert_clf.masked_proba(TEXTS[0], masks[::-1])
        intact = bert_clf.predict_proba(TEXTS[:1])
    assert plain.used == n + 5
    assert inside_budget.used == n + 1    # the distinct rows only; the second call and the intact text: none
    single = np.concatenate([bert_clf.masked_proba(TEXTS[0], m[None], batch_size=1) for m in masks])
    np.testing.assert_allclose(inside, single, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(outside, single, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(again, inside[::-1])
    np.testing.assert_array_equal(intact[0], inside[-1])


def test_precision_and_model_are_part_of_the_key(bert_clf, bert_parts):
    from textxai.classifier import TextClassifier

    model, tokenizer = bert_parts
    other_model = copy.deepcopy(model)
    with torch.no_grad():
        other_model.classifier.weight.mul_(-3.0)
    other = TextClassifier((other_model, tokenizer), device="cpu")
    with remembered_rows(), work_budget() as budget:
        a = bert_clf.predict_proba(TEXTS)
        b = other.predict_proba(TEXTS)            # the same token rows, another model: scored again
        low = bert_clf.predict_proba(TEXTS, precision="bfloat16")   # another precision: scored again
        assert budget.used == 9
    np.testing.assert_allclose(b, other.predict_proba(TEXTS), rtol=1e-6, atol=1e-7)
    assert np.abs(a - b).max() > 1e-3
    np.testing.assert_allclose(low, bert_clf.predict_proba(TEXTS, precision="bfloat16"), atol=2e-2)
    with work_budget() as after:                  # the memory ends with the block
        bert_clf.predict_proba(TEXTS)
    assert after.used == 3


def test_deletion_feedback_chains_are_the_same_for_fewer_passes(bert_clf):
    """Fed its own edit, the deletion editor scores again the deletions its greedy path scored a step earlier:
    inside the block those rows are remembered. The chains are the same as without (float32)."""
    from textxai import inconsistency
    from textxai.editors import DeletionEditor

    editor = DeletionEditor(bert_clf)
    with work_budget() as plain:
        before = inconsistency.feedback_chains(editor, TEXTS, bert_clf, steps=2, progress=False)
    with remembered_rows(), work_budget() as remembered:
        after = inconsistency.feedback_chains(editor, TEXTS, bert_clf, steps=2, progress=False)
    assert after.chains == before.chains and after.labels == before.labels
    assert remembered.used < plain.used, (remembered.used, plain.used)


def test_the_memory_is_bounded_and_a_call_larger_than_it_is_still_answered(bert_clf, monkeypatch):
    from textxai import batching

    monkeypatch.setattr(batching, "REMEMBERED_ROWS", 2)
    expected = bert_clf.predict_proba(TEXTS + TEXTS[:1])
    with remembered_rows(), work_budget() as budget:
        got = bert_clf.predict_proba(TEXTS + TEXTS[:1])    # 3 distinct rows, 2 kept: the last two computed
        assert budget.used == 3
        bert_clf.predict_proba(TEXTS[2:])                   # kept
        assert budget.used == 3
        bert_clf.predict_proba(TEXTS[:1])                   # dropped (least recently used): scored again
        assert budget.used == 4
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
