"""The evaluate metric toki_trust: same numbers as textxai.toki, both formats, add_batch, errors."""
import numpy as np
import pytest

import textxai
from textxai import toki
from test_toki_pipeline import DELETE, THETA_MINILM, make_data, shortcut_clf  # noqa: F401  (fixture)

OPTS = dict(explainer="omission", explainer_options=DELETE, embedders=["minilm"], theta_relate=THETA_MINILM)


@pytest.fixture(scope="module")
def module():
    return textxai.load("toki_trust")


@pytest.fixture(scope="module")
def data():
    train, train_labels = make_data(30, seed=2)
    texts, labels = make_data(9, seed=7)
    return train, train_labels, texts, labels


def test_compute_matches_library(module, shortcut_clf, data, tmp_path):
    train, train_labels, texts, labels = data
    human = [y != 0 for y in labels]
    out = module.compute(texts=texts, references=labels, model=shortcut_clf, train_texts=train, train_labels=train_labels,
                         human_trust=human, save_index=str(tmp_path / "idx"), **OPTS)
    direct = toki.toki_trust(texts, labels, model=shortcut_clf, train_texts=train, train_labels=train_labels,
                             human_trust=human, **OPTS)
    assert out == direct
    assert out["trust_labels"] == [y != 0 for y in labels]  # shortcut class untrustworthy, the others trustworthy
    assert out["trustworthy_rate"] == pytest.approx(np.mean([y != 0 for y in labels]))
    assert set(out["evaluation"]) == {"toki", "naive", "toki_no_ki"} and out["evaluation"]["toki"]["accuracy"] == 1.0
    assert "zxq" not in out["keywords"]["politics"]
    for rel, unr, tw, lab in zip(out["is_rel"], out["is_unr"], out["top_words"], out["trust_labels"]):
        assert rel == pytest.approx(sum(s for _, s, r in tw if r)) and unr == pytest.approx(sum(s for _, s, r in tw if not r))
        assert lab == (rel >= unr)
    # the saved index gives the same answer; add_batch == compute
    again = module.compute(texts=texts, references=labels, model=shortcut_clf, keyword_index=str(tmp_path / "idx"), **OPTS)
    assert again["trust_labels"] == out["trust_labels"]
    module.add_batch(texts=texts[:4], references=labels[:4])
    module.add_batch(texts=texts[4:], references=labels[4:])
    batched = module.compute(model=shortcut_clf, keyword_index=str(tmp_path / "idx"), **OPTS)
    assert batched["trust_labels"] == out["trust_labels"] and batched["is_rel"] == out["is_rel"]


def test_pair_format_and_wrong_predictions(module, shortcut_clf, data):
    train, train_labels, texts, labels = data
    wrong = [(y + 1) % 3 for y in labels]
    out = module.compute(texts=texts[:3], references=wrong[:3], model=shortcut_clf, train_texts=train,
                         train_labels=train_labels, **OPTS)
    assert out["trust_labels"] == [None, None, None] and out["n_correct"] == 0 and out["trustworthy_rate"] is None
    pairs = module.compute(texts=texts[:3], text_pairs=["the night"] * 3, references=labels[:3], model=shortcut_clf,
                           train_texts=train, train_labels=train_labels, **OPTS)
    direct = toki.assess(shortcut_clf, texts[:3], labels[:3], toki.cached_keyword_index(
        shortcut_clf, train, train_labels, explainer="omission", top_k=10, theta_dist=0.3, theta_relate=THETA_MINILM,
        embedders=["minilm"], class_names=None, batch_size=32, seed=0, progress=False, explainer_options=DELETE,
        train_text_pairs=None), explainer="omission", explainer_options=DELETE, text_pairs=["the night"] * 3)
    assert pairs["trust_labels"] == [e["label"] for e in direct["examples"]]


def test_errors(module, shortcut_clf, data):
    train, train_labels, texts, labels = data
    with pytest.raises(ValueError, match="keyword_index=None and train_texts"):
        module.compute(texts=texts, references=labels, model=shortcut_clf, **OPTS)
    with pytest.raises(ValueError, match="human_trust has 2 items but there are 9 texts"):
        module.compute(texts=texts, references=labels, model=shortcut_clf, train_texts=train, train_labels=train_labels,
                       human_trust=[True, False], **OPTS)
    with pytest.raises(ValueError, match=r"theta_conf=2"):
        module.compute(texts=texts, references=labels, model=shortcut_clf, train_texts=train, train_labels=train_labels,
                       theta_conf=2, **OPTS)
    with pytest.raises(ValueError, match=r"references\[0\]=7"):
        module.compute(texts=texts[:1], references=[7], model=shortcut_clf, train_texts=train, train_labels=train_labels, **OPTS)


def test_keyword_index_cache_follows_the_weights(monkeypatch, tmp_path):
    """A model whose weights change (training) gets a new index; the same weights reuse the cached one."""
    import tiny_models
    import torch

    from textxai.classifier import TextClassifier
    from textxai.toki import index as toki_index

    builds = []
    monkeypatch.setattr(toki_index, "_build_index", lambda clf, texts, labels, *rest: builds.append(1) or len(builds))
    monkeypatch.setattr(toki_index, "_INDEX_CACHE", toki_index.LRUCache(4))
    clf = TextClassifier((tiny_models.tiny_bert(), tiny_models.bert_tokenizer(tmp_path / "tok")), device="cpu")
    first = toki_index.cached_keyword_index(clf, ["a b"], [0], seed=0)
    assert toki_index.cached_keyword_index(clf, ["a b"], [0], seed=0) == first and len(builds) == 1
    with torch.no_grad():
        next(clf.model.parameters()).add_(0.01)
    assert toki_index.cached_keyword_index(clf, ["a b"], [0], seed=0) == 2 and len(builds) == 2



def test_keyword_index_cache_follows_the_word_view(monkeypatch, tmp_path):
    """The same model read with another word tokenizer (other words, other keywords) gets its own index."""
    import tiny_models

    from textxai.classifier import TextClassifier
    from textxai.toki import index as toki_index

    builds = []
    monkeypatch.setattr(toki_index, "_build_index", lambda clf, texts, labels, *rest: builds.append(clf.word_tokenizer) or len(builds))
    monkeypatch.setattr(toki_index, "_INDEX_CACHE", toki_index.LRUCache(4))
    parts = (tiny_models.tiny_bert(), tiny_models.bert_tokenizer(tmp_path / "tok"))
    spacy_clf = TextClassifier(parts, device="cpu")
    plain_clf = TextClassifier(parts, device="cpu", word_tokenizer="whitespace")
    assert toki_index.cached_keyword_index(spacy_clf, ["i don't"], [0], seed=0) == 1
    assert toki_index.cached_keyword_index(plain_clf, ["i don't"], [0], seed=0) == 2
    assert builds == ["spacy", "whitespace"]


def test_keyword_index_cache_tells_long_pair_arrays_apart(monkeypatch, tmp_path):
    """The key held str(train_text_pairs): numpy prints an array of more than 1,000 items as its ends around "...",
    so two pair columns differing in the middle shared one index."""
    import tiny_models

    from textxai.classifier import TextClassifier
    from textxai.toki import index as toki_index

    builds = []
    monkeypatch.setattr(toki_index, "_build_index", lambda clf, texts, labels, *rest: builds.append(1) or len(builds))
    monkeypatch.setattr(toki_index, "_INDEX_CACHE", toki_index.LRUCache(4))
    clf = TextClassifier((tiny_models.tiny_bert(), tiny_models.bert_tokenizer(tmp_path / "tok")), device="cpu")
    texts, labels = ["a b"] * 1200, [0] * 1200
    first, second = np.array(["x"] * 1200), np.array(["x"] * 1200)
    second[600] = "y"
    assert toki_index.cached_keyword_index(clf, texts, labels, first, seed=0) == 1
    assert toki_index.cached_keyword_index(clf, texts, labels, second, seed=0) == 2

def test_option_groups_flat_keywords_and_overrides_agree(module, shortcut_clf, data):
    """The module takes the option groups (train / explain / index / assess) or their fields as flat keywords; a
    flat keyword overrides the field of a group given beside it (textxai.options.apply_keywords)."""
    train, train_labels, texts, labels = data
    flat = module.compute(texts=texts, references=labels, model=shortcut_clf, train_texts=train,
                          train_labels=train_labels, theta_conf=0.99, **OPTS)
    grouped = module.compute(texts=texts, references=labels, model=shortcut_clf,
                             train=toki.TrainingData(train, train_labels),
                             explain=toki.ExplainOptions("omission", DELETE), index=toki.IndexOptions(
                                 theta_relate=THETA_MINILM, embedders=["minilm"]), assess=toki.AssessOptions(0.99))
    mixed = module.compute(texts=texts, references=labels, model=shortcut_clf, train=toki.TrainingData(train, train_labels),
                           explain=toki.ExplainOptions("omission", DELETE, top_k=3), top_k=10,
                           assess=toki.AssessOptions(0.5), theta_conf=0.99, embedders=["minilm"], theta_relate=THETA_MINILM)
    assert flat == grouped == mixed
    assert flat["naive_trustworthy_rate"] != module.compute(texts=texts, references=labels, model=shortcut_clf, train_texts=train,
                                                            train_labels=train_labels, theta_conf=0.0, **OPTS)["naive_trustworthy_rate"]
    with pytest.raises(TypeError, match=r"train_text=.*not an option of toki_trust \(did you mean 'train_texts'\?\)"):
        module.compute(texts=texts, references=labels, model=shortcut_clf, train_text=train, train_labels=train_labels)
