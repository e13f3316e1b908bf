"""The evaluate measurement fim_difficulty: same numbers as textxai.fim, both input formats, errors."""
from __future__ import annotations


import numpy as np
import pytest

import textxai
from textxai import fim

TEXTS = ["the movie was wonderful", "a terrible boring film , i hated it !", "good", "it was not good"]


@pytest.fixture(scope="module")
def module():
    return textxai.load("fim_difficulty")


def test_compute_matches_library(module, bert_clf):
    out = module.compute(texts=TEXTS, model=bert_clf, return_eigenvector=True, return_all_eigenvalues=True)
    ref = fim.difficulty(TEXTS, bert_clf, return_eigenvector=True, return_all_eigenvalues=True)
    np.testing.assert_allclose(out["difficulty"], ref["difficulty"], rtol=1e-5)
    assert out["predictions"] == ref["predictions"].tolist()
    assert out["words"] == ref["words"]
    for a, b in zip(out["word_sensitivity"], ref["word_sensitivity"]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-9)
    np.testing.assert_allclose(out["all_eigenvalues"], ref["all_eigenvalues"], rtol=1e-5, atol=1e-12)
    s = out["summary"]
    assert s["n"] == 4 and s["median"] == pytest.approx(float(np.median(ref["difficulty"])), rel=1e-5)
    assert s["min"] <= s["q10"] <= s["q25"] <= s["median"] <= s["q75"] <= s["q90"] <= s["max"]


def test_pairs_and_add_batch(module, bert_clf):
    pairs = ["good", "bad", "fine", "it is"]
    out = module.compute(texts=TEXTS, text_pairs=pairs, model=bert_clf)
    np.testing.assert_allclose(out["difficulty"], fim.difficulty(TEXTS, bert_clf, pairs)["difficulty"], rtol=1e-5)
    module.add_batch(texts=TEXTS[:2])
    module.add_batch(texts=TEXTS[2:])
    batched = module.compute(model=bert_clf, batch_size=1)
    np.testing.assert_allclose(batched["difficulty"], module.compute(texts=TEXTS, model=bert_clf)["difficulty"], rtol=1e-5)


def test_module_errors(module, bert_clf):
    with pytest.raises(ValueError, match="model=None"):
        module.compute(texts=TEXTS)
    with pytest.raises(ValueError, match="batch_size=0"):
        module.compute(texts=TEXTS, model=bert_clf, batch_size=0)
    with pytest.raises(ValueError, match=r"texts\[0\]='': has no tokens"):
        module.compute(texts=[""], model=bert_clf)
    with pytest.raises(TypeError, match="return_eigenvector='yes'"):
        module.compute(texts=TEXTS, model=bert_clf, return_eigenvector="yes")


def test_options_group_flat_keywords_and_override_agree(module, bert_clf):
    """One option style: FIMOptions, its fields as keywords, and a keyword overriding the group give one answer:
    the min-flip experiment of textxai.fim on the same texts (inf -> None in the module's JSON-able output)."""
    group = module.compute(texts=TEXTS, model=bert_clf, options=fim.FIMOptions(min_flip=True, max_strength=0.02, tol=1e-2))
    flat = module.compute(texts=TEXTS, model=bert_clf, min_flip=True, max_strength=0.02, tol=1e-2)
    override = module.compute(texts=TEXTS, model=bert_clf, options=fim.FIMOptions(min_flip=True, max_strength=9.0, tol=1e-2),
                              max_strength=0.02)
    assert group == flat == override
    ref = fim.min_flip_strength(TEXTS, bert_clf, max_strength=0.02, tol=1e-2)
    assert not np.isfinite(ref).any()  # this tiny model flips from 0.03 on: nothing flips within 0.02
    assert group["min_flip_strength"] == [None] * 4 and group["flipped_within_max_strength"] == 0.0
    assert group["warnings"] == [
        "4 of 4 texts do not flip within max_strength=0.02: their min_flip_strength is inf, and the correlation "
        "leaves them out.",
        "The correlation of log lambda_max with the min flip strength is undetermined (nan): 0 usable texts, or one "
        "of the two is the same for all of them."]
    assert "warnings" not in module.compute(texts=TEXTS, model=bert_clf)
    with pytest.raises(TypeError, match=r"max_strenght=1.0: not an option of fim_difficulty \(did you mean 'max_strength'"):
        module.compute(texts=TEXTS, model=bert_clf, max_strenght=1.0)
