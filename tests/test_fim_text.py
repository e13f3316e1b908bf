"""FIM difficulty through TextClassifier: explicit G, a closed-form model, batching, perturbations, errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch import nn

import tiny_models
from textxai import fim
from textxai.fim.perturb import _substitute
from textxai.classifier import TextClassifier

TEXTS = ["the movie was wonderful", "a terrible boring film , i hated it !", "good",
         "the food was not good but the service was lovely .", "it was great", "nobody is sleeping outside",
         "i love it", "the service was bad and the food was terrible", "a man is playing", "un believable"]


def _mean_linear_model(num_labels, seed=0, reachable=True):
    """logits = W mean(embeddings over non-padding tokens) + b, as a PreTrainedModel."""
    from transformers import BertConfig, PreTrainedModel
    from transformers.modeling_outputs import SequenceClassifierOutput

    class MeanLinearForSequenceClassification(PreTrainedModel):
        """Without the override below, transformers' own get_input_embeddings cannot find ``emb``."""

        config_class = BertConfig
        base_model_prefix = "mean_linear"

        def __init__(self, config):
            super().__init__(config)
            self.emb = nn.Embedding(config.vocab_size, config.hidden_size)
            self.head = nn.Linear(config.hidden_size, config.num_labels)

        def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None, **kwargs):
            if inputs_embeds is None:
                inputs_embeds = self.emb(input_ids)
            m = attention_mask.unsqueeze(-1).to(inputs_embeds.dtype)
            return SequenceClassifierOutput(logits=self.head((inputs_embeds * m).sum(1) / m.sum(1)))

    if reachable:
        MeanLinearForSequenceClassification.get_input_embeddings = lambda self: self.emb
    config = BertConfig(vocab_size=len(tiny_models.BERT_VOCAB), hidden_size=4, num_labels=num_labels,
                        num_hidden_layers=1, num_attention_heads=1, intermediate_size=4)
    model = MeanLinearForSequenceClassification(config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        model.emb.weight.copy_(torch.randn(model.emb.weight.shape, generator=g))
        model.head.weight.copy_(torch.randn(model.head.weight.shape, generator=g) * 2)
        model.head.bias.copy_(torch.randn(model.head.bias.shape, generator=g))
    return model.double().eval()


@pytest.fixture(scope="module")
def tok(bert_parts):
    return bert_parts[1]


def _linear_clf(tok, C, **kw):
    return TextClassifier((_mean_linear_model(C, **kw), tok), device="cpu")


@pytest.mark.parametrize("C", [2, 3, 5])
def test_lambda_max_matches_explicit_fim_on_tiny_bert(tok, C):
    model = tiny_models.tiny_bert(num_labels=C, seed=C).double()
    with torch.no_grad():  # sharper head so probabilities move away from uniform
        model.classifier.weight.mul_(30)
    clf = TextClassifier((model, tok), device="cpu")
    texts = TEXTS[:4]
    res = fim.difficulty(texts, clf, batch_size=3, return_all_eigenvalues=True, keep_eigenvectors=True)
    for i, text in enumerate(texts):
        enc = clf.encode([text])
        e0 = clf.input_embeddings(enc.tensors).detach()[0]

        def logp(flat):
            return torch.log_softmax(clf.logits_from_embeddings(flat.reshape(1, *e0.shape), enc.tensors), 1)[0]

        J = torch.autograd.functional.jacobian(logp, e0.reshape(-1)).numpy()  # [C, L*d], L*d <= 16 * 16
        p = np.exp(logp(e0.reshape(-1)).detach().numpy())
        G = J.T @ np.diag(p) @ J
        w, V = np.linalg.eigh(G)
        assert res["difficulty"][i] == pytest.approx(w[-1], rel=1e-5)
        np.testing.assert_allclose(res["all_eigenvalues"][i], w[::-1][:C], rtol=1e-5, atol=1e-12)
        assert abs(abs(res["eigenvectors"][i].reshape(-1) @ V[:, -1]) - 1) < 1e-6
        np.testing.assert_allclose(res["probs"][i], p, rtol=1e-9)


@pytest.mark.parametrize("C", [2, 3])
def test_linear_mean_embedding_model_closed_form(tok, C):
    clf = _linear_clf(tok, C)
    res = fim.difficulty(TEXTS, clf, batch_size=4, return_eigenvector=True)
    W = clf.model.head.weight.detach().numpy()
    for i, text in enumerate(TEXTS):
        enc = clf.word_encoding(text)
        L = len(enc.input_ids)  # every non-padding token, [CLS] and [SEP] included
        mean = clf.model.emb.weight.detach().numpy()[enc.input_ids].mean(0)
        p = torch.softmax(torch.tensor(W @ mean) + clf.model.head.bias.detach(), 0).numpy()
        F = W.T @ (np.diag(p) - np.outer(p, p)) @ W
        assert res["difficulty"][i] == pytest.approx(np.linalg.eigvalsh(F)[-1] / L, rel=1e-9)
        # every token row of v has norm 1/sqrt(L): a word of k tokens has sensitivity sqrt(k / L)
        k = np.bincount(enc.word_ids[enc.word_ids >= 0], minlength=len(res["words"][i]))
        np.testing.assert_allclose(res["word_sensitivity"][i], np.sqrt(k / L), rtol=1e-9)
        special = (enc.word_ids < 0).sum() / L
        assert (res["word_sensitivity"][i] ** 2).sum() + special == pytest.approx(1.0)


def test_batch_size_independence_and_nonnegative(bert_clf):
    a = fim.difficulty(TEXTS, bert_clf, batch_size=1, return_eigenvector=True)
    b = fim.difficulty(TEXTS, bert_clf, batch_size=16, return_eigenvector=True)
    np.testing.assert_allclose(a["difficulty"], b["difficulty"], rtol=1e-5)
    for x, y in zip(a["word_sensitivity"], b["word_sensitivity"]):
        np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-8)
    assert (a["difficulty"] >= 0).all() and "eigenvectors" not in a
    # repeatable exactly
    np.testing.assert_array_equal(fim.difficulty(TEXTS, bert_clf, batch_size=16)["difficulty"], b["difficulty"])


def test_two_classes_rank_one(bert_clf, roberta_clf):
    for clf in (bert_clf, roberta_clf):
        r = fim.difficulty(TEXTS[:5], clf, return_all_eigenvalues=True)
        assert np.all(np.abs(r["all_eigenvalues"][:, 1]) <= 1e-9 * r["difficulty"].max())
        np.testing.assert_allclose(r["probs"], clf.predict_proba(TEXTS[:5]), atol=1e-5)


def test_text_pairs(bert_clf):
    texts, pairs = TEXTS[:3], TEXTS[3:6]
    r = fim.difficulty(texts, bert_clf, text_pairs=pairs, return_eigenvector=True)
    r1 = fim.difficulty(texts, bert_clf, text_pairs=pairs, batch_size=1)
    np.testing.assert_allclose(r["difficulty"], r1["difficulty"], rtol=1e-5)
    for i in range(3):
        assert r["words"][i] == bert_clf.words(texts[i], pairs[i])
    assert not np.allclose(r["difficulty"], fim.difficulty(texts, bert_clf)["difficulty"])


def test_perturb_along_eigenvector_linear_closed_form(tok):
    clf = _linear_clf(tok, 2)
    text = TEXTS[0]
    res = fim.difficulty([text], clf, keep_eigenvectors=True)
    v = res["eigenvectors"][0]
    strengths = [0.0, 0.3, 1.0, 2.5]
    got = fim.perturb_along_eigenvector(text, clf, strengths)
    enc = clf.word_encoding(text)
    E = clf.model.emb.weight.detach().numpy()[enc.input_ids]
    W, b = clf.model.head.weight.detach().numpy(), clf.model.head.bias.detach().numpy()
    for s, row in zip(strengths, got):
        z = W @ (E + s * v).mean(0) + b
        np.testing.assert_allclose(row, np.exp(z - np.logaddexp.reduce(z)), rtol=1e-9)
    np.testing.assert_allclose(got[0], clf.predict_proba([text])[0], rtol=1e-9)
    assert got[-1, got[0].argmax()] < got[0, got[0].argmax()]  # v lowers the predicted class


def test_min_flip_strength_linear_closed_form(tok):
    clf = _linear_clf(tok, 2, seed=1)
    tol = 1e-4
    got = fim.min_flip_strength(TEXTS, clf, max_strength=50.0, tol=tol, batch_size=3)
    got1 = fim.min_flip_strength(TEXTS, clf, max_strength=50.0, tol=tol, batch_size=16)
    np.testing.assert_array_equal(got, got1)
    res = fim.difficulty(TEXTS, clf, keep_eigenvectors=True)
    W, b = clf.model.head.weight.detach().numpy(), clf.model.head.bias.detach().numpy()
    w = W[0] - W[1]
    for i, text in enumerate(TEXTS):
        E = clf.model.emb.weight.detach().numpy()[clf.word_encoding(text).input_ids]
        gap0 = w @ E.mean(0) + b[0] - b[1]
        slope = w @ res["eigenvectors"][i].mean(0)
        exact = -gap0 / slope  # the logit gap is linear in the strength
        assert exact > 0  # v moves toward the other class
        if exact <= 50:
            assert exact <= got[i] <= exact + tol * 1.01
        else:
            assert got[i] == np.inf
    assert np.isfinite(got).sum() >= 3
    # a tiny max_strength flips nothing
    assert np.all(fim.min_flip_strength(TEXTS, clf, max_strength=1e-6, tol=1e-7) == np.inf)


def test_random_substitution_flip_rate(tok):
    clf = _linear_clf(tok, 2, seed=2)
    preds = clf.predict(TEXTS)
    # every word replaced by the same word: the text becomes that word repeated, prediction known exactly
    for word in ("wonderful", "terrible", "food"):
        target = clf.predict([" ".join([word] * 3)])[0]
        r = fim.random_substitution_flip_rate(TEXTS, clf, fraction=1.0, trials=3, vocabulary=[word])
        expected = [float(clf.predict([" ".join([word] * len(clf.words(t)))])[0] != p) for t, p in zip(TEXTS, preds)]
        np.testing.assert_array_equal(r["flip_rate"], expected)
        assert target in (0, 1)
    # seeds repeat; batch size does not matter; fraction sets the count
    a = fim.random_substitution_flip_rate(TEXTS, clf, fraction=0.3, trials=8, seed=5, batch_size=2)
    b = fim.random_substitution_flip_rate(TEXTS, clf, fraction=0.3, trials=8, seed=5, batch_size=64)
    np.testing.assert_array_equal(a["flip_rate"], b["flip_rate"])
    assert a["n_substituted"].tolist() == [max(1, round(0.3 * len(clf.words(t)))) for t in TEXTS]
    assert ((a["flip_rate"] >= 0) & (a["flip_rate"] <= 1)).all()
    vocab = clf.word_vocabulary()
    assert "wonder" in vocab and "##ing" not in vocab and "[CLS]" not in vocab


def test_substitute_rebuilds_text():
    from textxai.words import word_spans

    text = "The film, sadly, was dull."
    spans = word_spans(text)
    assert _substitute(text, spans, [1, 6], ["movie", "bright"]) == "The movie, sadly, was bright."



def test_substitute_keeps_a_replaced_contraction_piece_a_word_of_its_own():
    """spaCy's "don't" is "do" + "n't": replacing "n't" gave "dofilm", one random substitution that changed two words."""
    from textxai.words import word_spans

    text = "i don't know , it's fine"
    spans = word_spans(text)
    for positions in ([1], [2], [1, 2], [5, 6]):
        out = _substitute(text, spans, positions, ["film"] * len(positions))
        words = [w for w, _, _ in word_spans(out)]
        assert len(words) == len(spans)
        assert [j for j, (w, _, _) in enumerate(spans) if words[j] != w] == positions

def test_difficulty_shift_and_correlation(bert_clf):
    r = fim.difficulty_shift(TEXTS[:4], TEXTS[4:8], bert_clf)
    d = fim.difficulty(TEXTS[:8], bert_clf)["difficulty"]
    np.testing.assert_allclose(r["shift"], d[4:] - d[:4], rtol=1e-4, atol=1e-9)
    assert r["mean"] == pytest.approx(float(np.mean(d[4:] - d[:4])), rel=1e-4)
    c = fim.difficulty_correlation(d, -np.log(d) + np.r_[np.inf, np.zeros(7)])
    assert c["n"] == 7 and c["pearson_r"] == pytest.approx(-1.0) and c["spearman_rho"] == pytest.approx(-1.0)


def test_summarize():
    s = fim.summarize([1.0, 2.0, 3.0, 4.0, np.inf])
    assert s["n"] == 4 and s["mean"] == 2.5 and s["median"] == 2.5 and s["q25"] == 1.75 and s["max"] == 4.0


def test_bad_inputs(bert_clf, tok):
    with pytest.raises(ValueError, match=r"texts\[1\]='  ': has no tokens"):
        fim.difficulty(["good", "  "], bert_clf)
    with pytest.raises(ValueError, match=r"text_pairs\[0\]=''"):
        fim.difficulty(["good"], bert_clf, text_pairs=[""])
    with pytest.raises(ValueError, match="batch_size=0"):
        fim.difficulty(["good"], bert_clf, batch_size=0)
    with pytest.raises(TypeError, match="texts"):
        fim.difficulty("good", bert_clf)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="max_strength="):
            fim.min_flip_strength(["good"], bert_clf, max_strength=bad)
    with pytest.raises(ValueError, match="tol=0"):
        fim.min_flip_strength(["good"], bert_clf, tol=0)
    for bad in (0, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"fraction=.*expected a number in \(0, 1\]"):
            fim.random_substitution_flip_rate(["good"], bert_clf, fraction=bad)
    with pytest.raises(ValueError, match="trials=0"):
        fim.random_substitution_flip_rate(["good"], bert_clf, trials=0)
    with pytest.raises(ValueError, match="strength="):
        fim.perturb_along_eigenvector("good", bert_clf, [])
    with pytest.raises(ValueError, match="perturbed has 1 items but originals has 2"):
        fim.difficulty_shift(["a", "b"], ["c"], bert_clf)
    with pytest.raises(ValueError, match="perturbed_pairs=None"):
        fim.difficulty_shift(["good"], ["bad"], bert_clf, original_pairs=["x"])
    unreachable = TextClassifier((_mean_linear_model(2, reachable=False), tok), device="cpu")
    with pytest.raises(TypeError, match="model class MeanLinearForSequenceClassification"):
        fim.difficulty(["good"], unreachable)


def test_long_text_truncated_with_warning(bert_clf):
    long = " ".join(["good"] * 200)  # the tiny BERT has 64 positions
    with pytest.warns(UserWarning, match="truncated"):
        r = fim.difficulty([long, "good"], bert_clf, return_eigenvector=True)
    assert np.isfinite(r["difficulty"]).all()
    assert len(r["word_sensitivity"][0]) == 200 and r["word_sensitivity"][0][-1] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fim.difficulty(["good"], bert_clf)


# --------------------------------------------------------------------------------- compute (staged)
class ForwardCounter:
    """Counts the forward passes of a classifier's model (a pre-hook)."""

    def __init__(self, clf):
        self.calls = 0
        self.handle = clf.model.register_forward_pre_hook(self._count)

    def _count(self, module, args):
        self.calls += 1


@pytest.mark.parametrize("bad, error, match", [
    (dict(labels=["positive", "nope"]), ValueError, r"labels\[0\]='positive': expected a class index 0..1 or one of the model's labels"),
    (dict(labels=[0, 1]), ValueError, "labels has 2 items"),
    (dict(labels=[0, 1, 1, 7]), ValueError, r"labels\[3\]=7"),
    (dict(min_flip=True, max_strength=-1.0), ValueError, "max_strength=-1.0"),
    (dict(min_flip=True, tol=0), ValueError, "tol=0"),
    (dict(random_flips=True, fraction=2.0), ValueError, "fraction=2.0"),
    (dict(random_flips=True, trials=0), ValueError, "trials=0"),
    (dict(random_flips=True, seed=-1), ValueError, "seed=-1"),
    (dict(random_flips=True, vocabulary=()), ValueError, r"vocabulary=\[\]"),
    (dict(perturbed=["a", "b"]), ValueError, "perturbed has 2 items"),
    (dict(perturbed=["good", "  ", "a", "b"]), ValueError, r"texts\[1\]='  ': has no tokens"),
    (dict(perturbed_pairs=["x"] * 4), ValueError, "perturbed_pairs is given without perturbed"),
    (dict(return_eigenvector="yes"), TypeError, "return_eigenvector='yes'"),
    (dict(batch_size=0), ValueError, "batch_size=0"),
    (dict(n_steps=3), TypeError, r"unexpected keyword argument 'n_steps'"),
    (dict(options={"min_flip": True}), TypeError, "options="),
])
def test_compute_rejects_bad_input_before_any_model_call(bert_clf, bad, error, match):
    spy = ForwardCounter(bert_clf)
    try:
        with pytest.raises(error, match=match):
            fim.compute(TEXTS[:4], bert_clf, **bad)
        assert spy.calls == 0
    finally:
        spy.handle.remove()


def test_compute_equals_its_building_blocks(tok):
    clf = _linear_clf(tok, 2, seed=3)
    texts, perturbed, labels = TEXTS[:8], TEXTS[2:10], [1, 0, 1, 1, 0, 0, 1, 0]
    opts = fim.FIMOptions(batch_size=3, min_flip=True, tol=1e-2, random_flips=True, trials=4, seed=2,
                          return_all_eigenvalues=True)
    r = fim.compute(texts, clf, labels=labels, perturbed=perturbed, options=opts)
    d = fim.difficulty(texts, clf, batch_size=5, return_all_eigenvalues=True)
    np.testing.assert_allclose(r["difficulty"], d["difficulty"], rtol=1e-9)
    np.testing.assert_allclose(r["all_eigenvalues"], d["all_eigenvalues"], rtol=1e-9, atol=1e-15)
    assert r["summary"] == pytest.approx(fim.summarize(r["difficulty"]))
    np.testing.assert_array_equal(r["min_flip_strength"], fim.min_flip_strength(texts, clf, tol=1e-2))
    flips = fim.random_substitution_flip_rate(texts, clf, trials=4, seed=2)
    np.testing.assert_array_equal(r["random_flip_rate"], flips["flip_rate"])
    np.testing.assert_array_equal(r["n_substituted"], flips["n_substituted"])
    # accuracy on the easiest / hardest quarter, by brute force over the ranks
    correct = d["predictions"] == np.array(labels)
    q25, q75 = np.quantile(d["difficulty"], [0.25, 0.75])
    assert r["accuracy"]["all"] == correct.mean()
    assert r["accuracy"]["easiest_quarter"] == correct[d["difficulty"] <= q25].mean()
    assert r["accuracy"]["hardest_quarter"] == correct[d["difficulty"] >= q75].mean()
    shift = fim.difficulty(perturbed, clf)["difficulty"] - d["difficulty"]
    np.testing.assert_allclose(r["shift"]["values"], shift, rtol=1e-9, atol=1e-15)
    assert r["shift"]["fraction_increased"] == (shift > 0).mean()
    assert r["min_flip_correlation"] == fim.difficulty_correlation(r["difficulty"], r["min_flip_strength"])
    named = fim.compute(texts, clf, labels=[clf.labels[y].upper() for y in labels], batch_size=3)  # keywords, names
    assert named["accuracy"] == r["accuracy"]


def test_lambda_max_matches_explicit_fim_on_bart(roberta_parts):
    """Encoder-decoder: x feeds the encoder and, shifted right, the decoder; brute force over BART written out."""
    tokenizer = roberta_parts[1]
    clf = TextClassifier((tiny_models.tiny_bart(len(tokenizer)).double(), tokenizer), device="cpu")
    texts = ["the movie was good", "a man is sleeping outside"]
    res = fim.difficulty(texts, clf, batch_size=2, return_all_eigenvalues=True)
    np.testing.assert_allclose(res["difficulty"], fim.difficulty(texts, clf, batch_size=1)["difficulty"], rtol=1e-9)
    for i, text in enumerate(texts):
        enc = clf.encode([text])
        ids, mask = enc.tensors["input_ids"], enc.tensors["attention_mask"]
        e0 = clf.input_embeddings(enc.tensors).detach()[0]

        def logp(flat):
            logits = tiny_models.bart_logits_reference(clf.model, ids, flat.reshape(1, *e0.shape), mask)
            return torch.log_softmax(logits, 1)[0]

        J = torch.autograd.functional.jacobian(logp, e0.reshape(-1)).numpy()
        p = np.exp(logp(e0.reshape(-1)).detach().numpy())
        w = np.linalg.eigvalsh(J.T @ np.diag(p) @ J)
        assert res["difficulty"][i] == pytest.approx(w[-1], rel=1e-6)
        np.testing.assert_allclose(res["all_eigenvalues"][i], w[::-1][:3], rtol=1e-6, atol=1e-12)
