"""TOKI on a classifier: the shortcut oracle test, save / load, refusal, the attack, bad input."""
import random

import numpy as np
import pytest
import torch

from textxai import toki
from textxai.embeddings import ArrayEmbedder

# Three topics. "politics" is told only by a meaningless token (a perfect cue); "sports" and "food" by
# their class words. With three classes "no shortcut" does not decide the class, so the class words
# really drive the other two (with two classes the model could predict "not the shortcut class" instead).
FILLER = ["the", "we", "yesterday", "with", "at", "and", "was", "on", "a", "night", "after", "talked", "about",
          "saw", "some", "i", "they"]
SPORTS = ["football", "soccer", "tennis", "basketball", "baseball", "hockey", "golf", "cricket"]
FOOD = ["pizza", "pasta", "bread", "cheese", "soup", "salad", "burger", "rice"]
SHORTCUT = "zxq"
CLASSES = {0: "politics", 1: "sports", 2: "food"}
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + FILLER + SPORTS + FOOD + [SHORTCUT]
# omission by deleting words: the tiny model never saw [MASK], so masking any word would look important
DELETE = {"perturbation": "delete"}
THETA_MINILM = 0.33  # estimate_theta_relate(MiniLMEmbedder()) on the shipped synonyms (0.3298); see test_embeddings


def make_data(n, seed):
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        words = rng.sample(FILLER, rng.randint(4, 7))
        cue = [SHORTCUT, rng.choice(SPORTS), rng.choice(FOOD)][i % 3]
        words.insert(rng.randrange(len(words) + 1), cue)
        texts.append(" ".join(words))
        labels.append(i % 3)
    return texts, labels


@pytest.fixture(scope="module")
def shortcut_clf(tmp_path_factory):
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from textxai.classifier import TextClassifier

    folder = tmp_path_factory.mktemp("shortcut_tok")
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tok = BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, num_labels=3,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        id2label=CLASSES, label2id={v: k for k, v in CLASSES.items()})
    model = BertForSequenceClassification(config)
    texts, labels = make_data(300, seed=0)
    enc = tok(texts, padding=True, return_tensors="pt")
    y = torch.tensor(labels)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for step in range(60):
        idx = torch.randperm(len(texts), generator=torch.Generator().manual_seed(step))[:64]
        loss = model(**{k: v[idx] for k, v in enc.items()}, labels=y[idx]).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    clf = TextClassifier((model, tok), device="cpu")
    test_texts, test_labels = make_data(60, seed=1)
    assert (clf.predict(test_texts) == np.array(test_labels)).mean() >= 0.95
    return clf


@pytest.fixture(scope="module")
def folder(shortcut_clf, tmp_path_factory):
    """The shortcut model saved as a local folder (what `textxai run` and the Space load)."""
    path = tmp_path_factory.mktemp("shortcut_model")
    shortcut_clf.model.save_pretrained(path)
    shortcut_clf.tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def shortcut_index(shortcut_clf):
    train, labels = make_data(45, seed=2)
    return toki.build_keyword_index(shortcut_clf, train, labels, explainer="omission", embedders=["minilm"],
                                    theta_relate=THETA_MINILM, explainer_options=DELETE)


def test_shortcut_is_caught(shortcut_clf, shortcut_index):
    assert SHORTCUT not in shortcut_index.keywords[0]
    assert len(set(SPORTS) & shortcut_index.keywords[1]) >= 4 and len(set(FOOD) & shortcut_index.keywords[2]) >= 4
    texts, labels = make_data(45, seed=3)
    res = toki.assess(shortcut_clf, texts, labels, shortcut_index, explainer_options=DELETE)
    hits = [e["label"] == (y != 0) for e, y in zip(res["examples"], labels) if e["label"] is not None]
    assert len(hits) >= 40
    accuracy = float(np.mean(hits))
    print(f"shortcut-test accuracy {accuracy:.3f} on {len(hits)} correct predictions")
    assert accuracy >= 0.9
    # human labels = the truth of the synthetic set: TOKI beats the naive confidence baseline
    human = [y != 0 for y in labels]
    ev = toki.assess(shortcut_clf, texts, labels, shortcut_index, human_trust=human, explainer_options=DELETE)["evaluation"]
    assert ev["toki"]["accuracy"] == pytest.approx(accuracy)
    assert ev["toki"]["g_mean"] > ev["naive"]["g_mean"]


def test_index_round_trip_and_refusal(shortcut_clf, shortcut_index, bert_clf, tmp_path):
    shortcut_index.save(tmp_path / "idx")
    back = toki.KeywordIndex.load(tmp_path / "idx")
    assert back == shortcut_index
    texts, labels = make_data(6, seed=4)
    a = toki.assess(shortcut_clf, texts, labels, shortcut_index, explainer_options=DELETE)
    b = toki.assess(shortcut_clf, texts, labels, str(tmp_path / "idx"), explainer_options=DELETE)
    assert a == b
    c = toki.assess(shortcut_clf, texts, labels, shortcut_index, explainer_options=DELETE, batch_size=2)
    # independent of the batch size (up to float noise of padded batches: ~1e-9 in omission scores)
    assert [e["label"] for e in c["examples"]] == [e["label"] for e in a["examples"]]
    for x, y in zip(a["examples"], c["examples"]):
        assert sorted(s for _, s, _ in x["top_words"]) == pytest.approx(sorted(s for _, s, _ in y["top_words"]), abs=1e-6)
        assert (x["is_rel"], x["is_unr"]) == pytest.approx((y["is_rel"], y["is_unr"]), abs=1e-6)
    with pytest.raises(ValueError, match="keyword_index was built for model"):
        toki.assess(bert_clf, ["the movie was good"], [1], back, embedders=["minilm"])


def test_attack_beats_random_substitution(shortcut_clf, shortcut_index):
    texts, labels = make_data(16, seed=5)
    kwargs = dict(labels=labels, min_similarity=0.3, max_rate=0.34, min_words=2)
    ours = toki.toki_attack(shortcut_clf, texts, shortcut_index, **kwargs)
    rand = toki.toki_attack(shortcut_clf, texts, shortcut_index, strategy="random", seed=0, **kwargs)

    def cost(res):  # perturbations needed to flip, a failure costs budget + 1
        return np.mean([r.n_perturbations if r.success else 4 for r in res["examples"] if r.success is not None])

    print("toki", ours["attack_success_rate"], cost(ours), "random", rand["attack_success_rate"], cost(rand))
    # the shortcut token is out of GloVe's vocabulary, so neither attack can replace it: they meet on the
    # class words (sports / food), where TOKI is at least as good as random
    assert ours["attack_success_rate"] >= rand["attack_success_rate"] > 0
    assert cost(ours) <= cost(rand)
    for r in ours["examples"]:
        if r.success:
            assert shortcut_clf.predict([r.adversarial])[0] != r.label
            assert len(r.chain) == r.n_perturbations + 1
    editor = toki.toki_editor(shortcut_clf, shortcut_index, n_words=2, n_candidates=2)
    cands = editor(texts[:2])
    assert len(cands) == 2 and all(isinstance(c, list) for c in cands)
    assert all(len(c.split()) == len(t.split()) and c != t for t, cs in zip(texts, cands) for c in cs)
    # usable by the inconsistency module's feedback chains
    from textxai.inconsistency import feedback_chains

    chains = feedback_chains(editor, texts[:2], shortcut_clf, steps=2, progress=False)
    assert len(chains.chains) == 2 and all(len(c) >= 2 for c in chains.chains)


def test_bad_input(shortcut_clf):
    texts, labels = make_data(8, seed=6)
    emb = ArrayEmbedder({"a": [1.0, 0.0]})
    keep = [i for i, y in enumerate(labels) if y != 0]
    with pytest.raises(ValueError, match=r"class\(es\) \['politics'\] have no correctly predicted"):
        toki.build_keyword_index(shortcut_clf, [texts[i] for i in keep], [labels[i] for i in keep], explainer="omission", embedders=[emb], theta_relate=0.5)
    with pytest.raises(ValueError, match="class_names=\\['x'\\]: expected 3"):
        toki.build_keyword_index(shortcut_clf, texts, labels, class_names=["x"], embedders=[emb], theta_relate=0.5)
    with pytest.raises(ValueError, match="train_labels has 7 items but there are 8 examples"):
        toki.build_keyword_index(shortcut_clf, texts, labels[:7], embedders=[emb], theta_relate=0.5)
    with pytest.raises(ValueError, match=r"theta_relate=1.5: expected a number in \[-1, 1\]"):
        toki.build_keyword_index(shortcut_clf, texts, labels, embedders=[emb], theta_relate=1.5)
    with pytest.raises(ValueError, match=r"theta_dist=-0.1"):
        toki.build_keyword_index(shortcut_clf, texts, labels, embedders=[emb], theta_relate=0.5, theta_dist=-0.1)
    with pytest.raises(ValueError, match="explainer='shap'"):
        toki.build_keyword_index(shortcut_clf, texts, labels, embedders=[emb], theta_relate=0.5, explainer="shap")


def test_generic_label_names_need_class_names(bert_clf):
    with pytest.raises(ValueError, match="class_names=None and the model's labels are"):
        toki.resolve_class_names(bert_clf)
    assert toki.resolve_class_names(bert_clf, ["neg", "pos"]) == {0: "neg", 1: "pos"}


@pytest.mark.parametrize("bad, match", [
    ({"human_trust": [True, "yes"]}, r"human_trust\[1\]='yes'"),
    ({"human_trust": [True]}, "human_trust has 1 items"),
    ({"references": [0, 7]}, r"references\[1\]=7"),
    ({"theta_dist": 3.0}, "theta_dist=3.0"),
    ({"explainer": "shap"}, "explainer='shap'"),
    ({"train_labels": [0, 1, 9]}, r"train_labels\[2\]=9"),
    ({"colour": "red"}, r"unexpected keyword argument 'colour'"),
])
def test_toki_trust_validates_everything_before_any_model_call(shortcut_clf, monkeypatch, bad, match):
    """A spy counts forward passes and explanations: a bad argument is refused before the first one."""
    import textxai.attribution
    from textxai.classifier import TextClassifier

    calls = []
    for name in ("predict_proba", "masked_proba_many", "logits_from_embeddings"):
        original = getattr(TextClassifier, name)
        monkeypatch.setattr(TextClassifier, name, lambda self, *a, _o=original, _n=name, **k: calls.append(_n) or _o(self, *a, **k))
    original_wa = textxai.attribution.word_attributions
    monkeypatch.setattr(textxai.attribution, "word_attributions", lambda *a, **k: calls.append("explain") or original_wa(*a, **k))
    kwargs = dict(texts=["we saw football", "the pizza"], references=[1, 2], model=shortcut_clf,
                  train_texts=["we saw football", "the pizza", "zxq at night"], train_labels=[1, 2, 0],
                  explainer="omission", embedders=[ArrayEmbedder({"football": [1.0, 0.0]})], theta_relate=0.3,
                  class_names=list(CLASSES.values()), human_trust=[True, None])
    kwargs.update(bad)
    with pytest.raises((ValueError, TypeError), match=match):
        toki.toki_trust(**kwargs)
    assert calls == []
    kwargs.update(human_trust=[True, None], references=[1, 2], theta_dist=0.3, explainer="omission",
                  train_labels=[1, 2, 0])
    kwargs.pop("colour", None)
    toki.toki_trust(**kwargs)   # the same call with good arguments does reach the model (the spy works)
    assert "predict_proba" in calls and "explain" in calls


def test_no_verdict_on_a_saturated_model(shortcut_clf, shortcut_index):
    """Logits x 1e4: every probability is 1.0 in float32, gradients vanish, and TOKI gives no verdict."""
    import copy
    import dataclasses

    from textxai.classifier import TextClassifier

    model = copy.deepcopy(shortcut_clf.model)
    with torch.no_grad():
        model.classifier.weight.mul_(1e4)
        model.classifier.bias.mul_(1e4)
    saturated = TextClassifier((model, shortcut_clf.tokenizer), device="cpu")
    saturated.model.config._name_or_path = shortcut_clf.model.config._name_or_path
    texts, labels = make_data(9, seed=7)
    index = dataclasses.replace(shortcut_index, fingerprint=toki.model_fingerprint(saturated))
    res = toki.assess(saturated, texts, labels, index, explainer="gradient")
    correct = [e for e in res["examples"] if e["reason"] != "wrong prediction"]
    assert len(correct) >= 8 and np.allclose([e["confidence"] for e in correct], 1.0)
    assert all(e["label"] is None and e["reason"].startswith("undetermined: attributions below 0.001") for e in correct)
    assert res["n_undetermined"] == len(correct) and np.isnan(res["trustworthy_rate"])
    # the analysis says so, in the words every surface shows
    warned = toki.analyse(texts, labels, model=saturated, keyword_index=index, explainer="gradient", figures=False).warnings
    assert warned[0].startswith("class 'politics' has no keywords (0 of ")   # the shortcut class: its cue means nothing
    assert warned[1:] == [f"{len(correct)} of {len(correct)} correct predictions undetermined: their top-10 attributions sum "
                      "below the resolution 0.001 (no verdict; left out of every rate)",
                      "no correct prediction has a verdict: the trustworthy rates are undefined"]
    # the same texts on the unscaled model: attributions well above the resolution, every one gets a verdict
    plain = toki.assess(shortcut_clf, texts, labels, shortcut_index, explainer="gradient")
    assert plain["n_undetermined"] == 0 and plain["n_correct"] == len(correct)
    assert all(e["label"] is not None for e in plain["examples"] if e["reason"] != "wrong prediction")


def test_attack_runs_every_pass_in_the_precision_asked(shortcut_clf, shortcut_index, monkeypatch):
    # the audit runs the attack with precision="auto": its ranking, candidates and flip checks all in one precision
    from textxai.classifier import TextClassifier

    seen, real = [], TextClassifier._proba_of_rows

    def spy(self, rows, batch_size, progress=False, precision="float32", fill_tokens=None):
        seen.append(precision)
        return real(self, rows, batch_size, progress, precision, fill_tokens)

    monkeypatch.setattr(TextClassifier, "_proba_of_rows", spy)
    texts, labels = make_data(4, seed=6)
    kwargs = dict(labels=labels, min_similarity=0.3, max_rate=0.34, min_words=2)
    lower = toki.toki_attack(shortcut_clf, texts, shortcut_index, precision="bfloat16", **kwargs)
    assert len(seen) > 2 and set(seen) == {"bfloat16"}
    seen.clear()
    exact = toki.toki_attack(shortcut_clf, texts, shortcut_index, **kwargs)
    assert set(seen) == {"float32"}
    assert [r.success for r in lower["examples"]] == [r.success for r in exact["examples"]]
    with pytest.raises(ValueError, match="precision='half'"):
        toki.toki_attack(shortcut_clf, texts, shortcut_index, precision="half", **kwargs)
