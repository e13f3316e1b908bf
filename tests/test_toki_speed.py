"""Speed changes that must not change results: remembered explanations (textxai.attribution) and the attack's
similarity check in growing chunks (textxai.toki.attack._first_similar), each against the computation it replaces."""
from __future__ import annotations

import numpy as np
import pytest

from textxai import attribution
from textxai.attribution import word_attributions

TEXTS = ["the movie was good", "a terrible boring film , i hated it !", "good", "not good but lovely ."]


def counting(clf, monkeypatch):
    rows = []
    original = type(clf)._proba_of_rows

    def proba(self, batch_rows, *args, **kwargs):
        rows.append(len(batch_rows))
        return original(self, batch_rows, *args, **kwargs)

    monkeypatch.setattr(type(clf), "_proba_of_rows", proba)
    return rows


@pytest.mark.parametrize("method,options", [("omission", {}), ("lime", {"n_samples": 64}),
                                            ("kernel_shap", {"n_samples": 64, "perturbation": "delete"})])
def test_remembered_explanations_equal_a_new_computation(bert_clf, monkeypatch, method, options):
    attribution._EXPLANATIONS._data.clear()
    first = word_attributions(TEXTS[:2], bert_clf, method, **options)
    rows = counting(bert_clf, monkeypatch)
    mixed = word_attributions(TEXTS[1:], bert_clf, method, **options)        # text 1 remembered, 2 and 3 new
    attribution._EXPLANATIONS._data.clear()
    fresh = word_attributions(TEXTS[1:], bert_clf, method, **options)
    for a, b in zip(mixed, fresh):
        np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(mixed[0], first[1], atol=1e-6)
    # the second call explained only the two new texts: predict (3 rows) + their masked rows
    n_words = [len(bert_clf.words(t)) for t in TEXTS[2:]]
    explained = sum(n_words) if method == "omission" else None
    if explained is not None:
        assert rows[0] == 3 and sum(rows[1:2]) == explained
    again = counting(bert_clf, monkeypatch)
    word_attributions(TEXTS[1:], bert_clf, method, **options)
    assert sum(again) == 3   # only the predicted classes: every text remembered


def test_other_options_seed_target_and_weights_are_not_mixed_up(bert_clf):
    import torch

    attribution._EXPLANATIONS._data.clear()
    text = [TEXTS[1]]
    base = word_attributions(text, bert_clf, "lime", n_samples=64, seed=0, target=0)[0]
    assert not np.array_equal(base, word_attributions(text, bert_clf, "lime", n_samples=64, seed=1, target=0)[0])
    assert not np.array_equal(base, word_attributions(text, bert_clf, "lime", n_samples=64, seed=0, target=1)[0])
    assert not np.array_equal(base, word_attributions(text, bert_clf, "lime", n_samples=80, seed=0, target=0)[0])
    param = next(bert_clf.model.parameters())
    saved = param.detach().clone()
    try:
        with torch.no_grad():
            param.add_(torch.randn_like(param, generator=torch.Generator().manual_seed(0)))  # a training step
        moved = word_attributions(text, bert_clf, "lime", n_samples=64, seed=0, target=0)[0]
    finally:
        with torch.no_grad():
            param.copy_(saved)
    assert not np.allclose(base, moved, rtol=1e-3, atol=0)
    np.testing.assert_array_equal(base, word_attributions(text, bert_clf, "lime", n_samples=64, seed=0, target=0)[0])


def test_remembered_scores_are_copies(bert_clf):
    attribution._EXPLANATIONS._data.clear()
    a = word_attributions([TEXTS[0]], bert_clf, "omission")[0]
    a[:] = 99.0
    assert not np.allclose(word_attributions([TEXTS[0]], bert_clf, "omission")[0], 99.0)


# ------------------------------------------------------------------------------------ the attack's similarity
class Generator:
    """similar_texts as the shared generator: similarity = a fixed number per text; records each call's size."""

    def __init__(self, sims):
        self.sims, self.calls = sims, []

    def similar_texts(self, original, texts, min_similarity):
        self.calls.append(len(texts))
        return [self.sims[t] if self.sims[t] >= min_similarity else None for t in texts]


@pytest.mark.parametrize("seed", range(20))
def test_first_similar_equals_checking_all_at_once(seed):
    from textxai.toki.attack import _first_similar

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    texts = [f"t{i}" for i in range(n)]
    sims = {t: float(x) for t, x in zip(texts, rng.uniform(0.5, 1.0, n) ** rng.uniform(0.2, 8))}
    gen = Generator(sims)
    every = Generator(sims).similar_texts("o", texts, 0.8)
    expected = next(((i, x) for i, x in enumerate(every) if x is not None), None)
    assert _first_similar(gen, "o", texts, 0.8) == expected
    # chunks 8, 16, 32, ... in order, stopping at the first chunk holding a passing text
    stop = n if expected is None else expected[0] + 1
    assert sum(gen.calls[:-1]) < stop <= sum(gen.calls)


def test_attack_results_unchanged_on_demo_texts(monkeypatch):
    """The attack with the chunked similarity check = with every candidate's similarity computed at once."""
    from textxai import toki
    from textxai.demo import load_corpus
    from textxai.toki import demo_index
    from textxai.toki import attack

    clf, index = demo_index("sentiment")
    corpus = load_corpus("sentiment")
    texts, labels = corpus["test_texts"][:4], corpus["test_labels"][:4]
    new = toki.toki_attack(clf, texts, index, labels=labels)
    monkeypatch.setattr(attack, "SIMILARITY_CHUNK", 10**9)
    old = toki.toki_attack(clf, texts, index, labels=labels)
    key = lambda r: (r.adversarial, r.success, r.n_perturbations, r.substitutions, r.n_queries, r.chain)  # noqa: E731
    assert [key(r) for r in new["examples"]] == [key(r) for r in old["examples"]]
    assert [r.similarity for r in new["examples"]] == pytest.approx([r.similarity for r in old["examples"]], abs=1e-6)
    assert sum(bool(r.success) for r in new["examples"]) >= 1    # the texts exercise the similarity check


def test_attack_reuses_the_assessments_omission_explanations(monkeypatch):
    """An audit's order: TOKI's assessment (omission explanations) then the attack on the same texts: the attack's
    word ranking is the remembered explanation (no omission pass), and its results are those of a fresh run."""
    from textxai import toki
    from textxai.demo import load_corpus
    from textxai.toki import demo_index

    clf, index = demo_index("sentiment")
    corpus = load_corpus("sentiment")
    texts, labels = corpus["test_texts"][8:10], corpus["test_labels"][8:10]
    attribution._EXPLANATIONS._data.clear()
    fresh = toki.toki_attack(clf, texts, index, labels=labels)
    attribution._EXPLANATIONS._data.clear()
    toki.assess(clf, texts, labels, index, explainer="omission")

    def no_omission(*args, **kwargs):
        raise AssertionError("omission recomputed")

    monkeypatch.setattr(attribution, "_omission", no_omission)
    reused = toki.toki_attack(clf, texts, index, labels=labels)
    key = lambda r: (r.adversarial, r.success, r.substitutions, r.n_queries)  # noqa: E731
    assert [key(r) for r in reused["examples"]] == [key(r) for r in fresh["examples"]]


def test_candidate_pools_are_shared_by_later_attacks_on_the_same_index(monkeypatch):
    """A second attack with the same keyword index (the audit: TOKI, then random) computes no candidate pool again
    and gets the results of a first attack."""
    from textxai import toki
    from textxai.demo import load_corpus
    from textxai.toki import demo_index
    from textxai.toki import attack

    clf, index = demo_index("sentiment")
    corpus = load_corpus("sentiment")
    texts, labels = corpus["test_texts"][12:14], corpus["test_labels"][12:14]
    index.__dict__.pop("_candidate_pools", None)
    first = {s: toki.toki_attack(clf, texts, index, labels=labels, strategy=s) for s in ("toki", "random")}
    assert index.__dict__["_candidate_pools"]

    def no_pool(*args, **kwargs):
        raise AssertionError("candidate pool recomputed")

    monkeypatch.setattr(attack, "candidate_pool", no_pool)
    key = lambda r: (r.adversarial, r.success, r.substitutions, r.n_queries)  # noqa: E731
    for strategy, res in first.items():
        again = toki.toki_attack(clf, texts, index, labels=labels, strategy=strategy)
        assert [key(r) for r in again["examples"]] == [key(r) for r in res["examples"]]
    assert "_candidate_pools" not in index.to_dict()
