"""The evaluate metric inconsistency: same numbers as textxai.inconsistency, both formats, add_batch, card."""
from __future__ import annotations

import math

import numpy as np
import pytest

import textxai
from textxai import inconsistency as inc
from textxai.lm import perplexity

CHAINS = [
    ["a b c d", "a x c d", "a b c d", "a b c y"],
    ["a b c d", "a x c d", "p q c d", "p q r s t"],
    ["a b c d e f", "u v w d e f", "u q r d e f", "u q s d e f"],
    ["a b", "a c", "x y z", None],
    ["a", "b", "b c d", "b", "e f g h i"],
]
LABELS = [[0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 1, 0], [0, 1, 0, None], [0, 1, 0, 1, 1]]


@pytest.fixture(scope="module")
def module():
    return textxai.load("inconsistency")


def test_compute_matches_library_and_hand_values(module):
    out = module.compute(edits=CHAINS, labels=LABELS, n=[1, 2, 3])
    assert out == inc.compute(CHAINS, n=[1, 2, 3], labels=LABELS)
    assert out["inc@2"] == pytest.approx(5 / 9) and out["flip_rate@3"] == pytest.approx(0.8)
    pc = module.compute(edits=CHAINS, n=[2], pooling="per_chain", word_tokenizer="whitespace")
    assert pc["inc@2"] == pytest.approx(0.375) and pc["inc@2_chains"] == 4 and "flip_rate@2" not in pc


def test_add_batch_equals_compute(module):
    for lo, hi in ((0, 2), (2, 5)):
        module.add_batch(edits=CHAINS[lo:hi], labels=LABELS[lo:hi])
    assert module.compute(n=[1, 2, 3]) == module.compute(edits=CHAINS, labels=LABELS, n=[1, 2, 3])
    for chain in CHAINS:
        module.add(edits=chain)
    assert module.compute(n=[1, 2]) == inc.compute(CHAINS, n=[1, 2])
    module.add_batch(edits=CHAINS[:1])
    with pytest.raises(ValueError, match="labels=given but the earlier add / add_batch calls since the last compute did not give it"):
        module.add_batch(edits=CHAINS[1:2], labels=LABELS[1:2])
    module.compute(n=[1])


def test_flip_rate_from_labels_and_from_model_agree(module, bert_clf):
    texts = [[t for t in c if t is not None] for c in CHAINS]
    labels = [bert_clf.predict(t).tolist() for t in texts]
    a = module.compute(edits=texts, labels=labels, n=[1, 2, 3, 4])
    b = module.compute(edits=texts, model=bert_clf, n=[1, 2, 3, 4], batch_size=2)
    assert a == b
    assert a["flip_rate@1"] == pytest.approx(np.mean([lab[1] != lab[0] for lab in labels]))


def test_perplexity_at_n_is_perplexity_of_x_n(module, tiny_gpt2_parts):
    out = module.compute(edits=CHAINS, n=[1, 3], lm=tiny_gpt2_parts, return_per_example=True)
    x1 = [c[1] for c in CHAINS]
    x3 = [c[3] for c in CHAINS if len(c) > 3 and c[3] is not None]
    assert out["perplexity@1"] == pytest.approx(float(np.mean(perplexity(x1, tiny_gpt2_parts))))
    assert out["perplexity@3"] == pytest.approx(float(np.mean(perplexity(x3, tiny_gpt2_parts))))
    assert out["perplexity@1_chains"] == 5 and out["perplexity@3_chains"] == 4
    assert out["per_example"]["perplexity"][3] == {"@1": pytest.approx(perplexity([CHAINS[3][1]], tiny_gpt2_parts)[0])}


def test_module_errors(module):
    with pytest.raises(ValueError, match=r"^edits\[0\]=\['x'\] has 1 item"):  # the module's name for them
        module.compute(edits=[["x"]])
    with pytest.raises(ValueError, match=r"labels\[0\] has 1 labels"):
        module.compute(edits=[["a", "b"]], labels=[[0]])
    with pytest.raises(ValueError, match="word_tokenizer='bpe'"):
        module.compute(edits=[["a", "b"]], word_tokenizer="bpe")
    with pytest.raises(ValueError, match=r"n=\[0\]"):
        module.compute(edits=[["a", "b"]], n=[0])
    with pytest.raises(TypeError, match="return_per_example='yes'"):
        module.compute(edits=[["a", "b"]], return_per_example="yes")
    with pytest.warns(UserWarning, match="no chain contributes"):
        out = module.compute(edits=[["a", "b"]], n=[9])
    assert out["inc@9"] is None and out["inc@9_chains"] == 0  # undefined: null (module results are JSON-valid)


def test_card_specifics():
    card = (textxai.module_path("inconsistency") / "README.md").read_text()
    assert card.startswith("---\n")  # generic sections and doctests: tests/test_modules.py
    assert "steps 1 to 8" in card  # the authors' inc@9 covers steps 1-8




def test_scoring_group_and_flat_keywords_agree(module):
    """The module's options are ScoreOptions fields: the group, the flat keywords, and a keyword overriding a
    field of the group give the same numbers (0.375 per chain at n=2, whitespace words: hand value above)."""
    group = inc.ScoreOptions(n=(2,), pooling="per_chain", word_tokenizer="whitespace")
    flat = module.compute(edits=CHAINS, n=[2], pooling="per_chain", word_tokenizer="whitespace")
    assert module.compute(edits=CHAINS, scoring=group) == flat and flat["inc@2"] == pytest.approx(0.375)
    assert module.compute(edits=CHAINS, scoring=group, pooling="pooled") == module.compute(
        edits=CHAINS, n=[2], word_tokenizer="whitespace")
