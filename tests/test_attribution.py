import numpy as np
import pytest
import torch
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput

from textxai.attribution import available_methods, word_attributions
from textxai.classifier import TextClassifier
from textxai import sampling_explainers

TEXTS = ["the movie was good", "a terrible boring film , i hated it !", "good", "not good but lovely ."]


class BagConfig(PretrainedConfig):
    model_type = "textxai-bag"


class BagOfWordsModel(PreTrainedModel):
    """logit(positive) = sum over present tokens of (e . u)^2 - bias: a known function of the words present."""

    config_class = BagConfig

    def __init__(self, config):
        super().__init__(config)
        self.emb = torch.nn.Embedding(config.vocab_size, 4)
        self.register_buffer("u", torch.tensor([0.5, 0.5, 0.5, 0.5]))
        self.bias = 0.0

    def _init_weights(self, module):
        pass

    def get_input_embeddings(self):
        return self.emb

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None, **kwargs):
        e = self.emb(input_ids) if inputs_embeds is None else inputs_embeds
        score = (((e @ self.u) ** 2) * attention_mask).sum(1) - self.bias
        return SequenceClassifierOutput(logits=torch.stack([torch.zeros_like(score), score], -1))


@pytest.fixture(scope="module")
def bag(bert_parts):
    _, tokenizer = bert_parts
    weights = {"movie": 0.2, "good": 1.0, "great": 2.0, "bad": 0.5, "film": 3.0}
    model = BagOfWordsModel(BagConfig(num_labels=2, vocab_size=len(tokenizer)))
    with torch.no_grad():
        model.emb.weight.zero_()
        for word, w in weights.items():
            model.emb.weight[tokenizer.convert_tokens_to_ids(word)] = np.sqrt(w) * model.u  # (e.u)^2 = w
    model.bias = sum(weights.values()) / 2
    return TextClassifier((model, tokenizer), device="cpu"), weights


@pytest.mark.parametrize("method,options", [("gradient", {}), ("integrated_gradients", {"n_steps": 64}),
                                            ("lime", {"n_samples": 400}), ("kernel_shap", {"n_samples": 300}),
                                            ("omission", {}), ("input_x_gradient", {})])
def test_methods_rank_words_of_a_known_linear_model(bag, method, options):
    clf, weights = bag
    text = "movie good great bad film"
    scores = word_attributions([text], clf, method, target=1, **options)[0]
    order = list(np.argsort(-scores))
    expected = list(np.argsort([-weights[w] for w in text.split()]))
    assert order == expected, (method, scores)


def test_integrated_gradients_is_complete(bag):
    clf, weights = bag
    text = "movie good great bad film"
    scores = word_attributions([text], clf, "integrated_gradients", target=1, n_steps=300)[0]
    p_full = clf.predict_proba([text])[0, 1]
    p_base = clf.masked_proba(text, np.ones((1, 5), bool))[0, 1]
    assert scores.sum() == pytest.approx(p_full - p_base, abs=1e-3)


def test_omission_equals_direct_computation(bert_clf):
    scores = word_attributions(TEXTS, bert_clf, "omission", target=0)
    for text, s in zip(TEXTS, scores):
        n = len(bert_clf.words(text))
        p = bert_clf.predict_proba([text])[0, 0]
        direct = [p - bert_clf.masked_proba(text, np.eye(n, dtype=bool)[j: j + 1])[0, 0] for j in range(n)]
        np.testing.assert_allclose(s, direct, atol=1e-9)


@pytest.mark.parametrize("method", ["gradient", "input_x_gradient", "integrated_gradients", "omission", "lime"])
def test_batch_size_invariance_and_seed_repeatability(roberta_clf, method, monkeypatch):
    from textxai import attribution

    monkeypatch.setattr(sampling_explainers, "BATCH_TOKENS", 1)  # the sampling methods' batches: batch_size rows exactly
    options = {"n_samples": 60} if method == "lime" else ({"n_steps": 8} if method == "integrated_gradients" else {})
    pairs = ["a man", "nobody", "x", "it's fine"]
    runs = [word_attributions(TEXTS, roberta_clf, method, text_pairs=pairs, batch_size=bs, seed=3, **options)
            for bs in (1, 7, 64)]
    for run in runs[1:]:
        for a, b in zip(run, runs[0]):
            np.testing.assert_allclose(a, b, atol=1e-6)
    for text, pair, s in zip(TEXTS, pairs, runs[0]):
        assert len(s) == len(roberta_clf.words(text, pair))


def test_errors(bert_clf):
    assert "lime" in available_methods()
    with pytest.raises(ValueError, match="method='shap'"):
        word_attributions(["a"], bert_clf, "shap")
    with pytest.raises(ValueError, match="target=5 is out of range"):
        word_attributions(["a"], bert_clf, "omission", target=5)
    with pytest.raises(TypeError, match="unknown option"):
        word_attributions(["a"], bert_clf, "omission", n_sample=3)


def test_explicit_targets_skip_the_extra_forward_pass(bert_clf, monkeypatch):
    calls = []
    original = bert_clf.predict_proba
    monkeypatch.setattr(bert_clf, "predict_proba", lambda *a, **k: calls.append(1) or original(*a, **k))
    word_attributions(TEXTS, bert_clf, "gradient", target=[0, 1, 0, 1])
    assert calls == []  # the gradient pass alone; p(x) is only needed for "predicted" or omission
    word_attributions(TEXTS, bert_clf, "gradient")
    assert calls == [1]


# --------------------------------------------------------------------------------------- LIME / Kernel SHAP
def test_lime_equals_a_direct_weighted_ridge_on_the_same_samples(bert_clf):
    # the same samples (seeded per text), every one through the model (no dedup), scikit-learn's Ridge
    from sklearn.linear_model import Ridge

    from textxai.attribution import lime_samples, lime_weights

    text, n_samples = TEXTS[1], 300
    ours = word_attributions([text], bert_clf, "lime", target=1, seed=5, n_samples=n_samples, precision="float32")[0]
    present = lime_samples(np.random.default_rng(5), len(bert_clf.words(text)), n_samples)
    assert len(np.unique(present, axis=0)) < n_samples  # there are repeated masks (evaluated once by ours)
    y = bert_clf.masked_proba(text, ~present, batch_size=13)[:, 1]
    ridge = Ridge(alpha=1.0).fit(present.astype(float), y, sample_weight=lime_weights(present))
    np.testing.assert_allclose(ours, ridge.coef_, atol=1e-8)


def test_kernel_shap_equals_least_squares_on_the_same_samples(bert_clf):
    from textxai.attribution import kernel_shap_samples

    text = TEXTS[3]
    ours = word_attributions([text], bert_clf, "kernel_shap", target=0, seed=2, n_samples=200, precision="float32")[0]
    present = kernel_shap_samples(np.random.default_rng(2), len(bert_clf.words(text)), 200)
    y = bert_clf.masked_proba(text, ~present)[:, 0]
    design = np.hstack([np.ones((len(present), 1)), present])
    np.testing.assert_allclose(ours, np.linalg.lstsq(design, y, rcond=None)[0][1:], atol=1e-8)


def test_lime_samples_follow_the_lime_package():
    # the lime package: first row intact, then U{1..n} words removed per row, distinct words
    from textxai.attribution import lime_samples

    present = lime_samples(np.random.default_rng(0), 6, 6001)
    assert present[0].all()
    removed = (~present[1:]).sum(axis=1)
    assert removed.min() == 1 and removed.max() == 6
    np.testing.assert_allclose(np.bincount(removed, minlength=7)[1:] / 6000, 1 / 6, atol=0.02)


@pytest.mark.parametrize("method", ["lime", "kernel_shap"])
def test_sampling_deterministic_under_seed(bert_clf, method):
    a = word_attributions(TEXTS, bert_clf, method, seed=1, n_samples=80)
    b = word_attributions(TEXTS, bert_clf, method, seed=1, n_samples=80)
    c = word_attributions(TEXTS, bert_clf, method, seed=2, n_samples=80)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, z) for x, z in zip(a, c) if len(x) > 1)  # another seed, other samples


def test_registry_is_the_one_list():
    from textxai import attribution, toki

    assert toki.EXPLAINERS == attribution.METHODS == tuple(attribution.REGISTRY)
    assert set(attribution.GRADIENT_METHODS) == {"gradient", "input_x_gradient", "integrated_gradients"}


@pytest.mark.parametrize("method, samples", [("omission", None), ("lime", 40), ("kernel_shap", 30)])
def test_registry_evaluation_count_is_what_runs(bert_clf, monkeypatch, method, samples):
    """The Space budget reads the registry's count: it must equal the rows the method really evaluates
    (identical perturbation masks are evaluated once, so the count is an upper bound for sampling methods)."""
    from textxai.attribution import REGISTRY
    from textxai.classifier import TextClassifier

    rows = []
    real = TextClassifier._proba_of_rows
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda self, r, *a, **k: rows.append(len(r)) or real(self, r, *a, **k))
    text = "the plot was thin but the acting was wonderful"
    options = {} if samples is None else {"n_samples": samples}
    word_attributions([text], bert_clf, method=method, target=[0], progress=False, **options)
    n_words = len(bert_clf.words(text))
    expected = REGISTRY[method].evaluations(n_words, samples)
    if method == "omission":
        assert sum(rows) == expected
    else:
        assert 0 < sum(rows) <= expected


def test_weighted_ridge_equals_the_normal_equations_with_a_free_intercept():
    # direct closed form: [1 X]^T W [1 X] + diag(0, alpha, ..., alpha) against our weighted centring
    from textxai.attribution import weighted_ridge

    rng = np.random.default_rng(0)
    for alpha in (1.0, 0.3):
        x = (rng.random((200, 7)) < 0.5).astype(float)
        y, w = rng.random(200), rng.random(200) + 0.01
        design = np.hstack([np.ones((200, 1)), x])
        penalty = alpha * np.diag([0.0] + [1.0] * 7)
        direct = np.linalg.solve(design.T @ (design * w[:, None]) + penalty, design.T @ (w * y))[1:]
        np.testing.assert_allclose(weighted_ridge(x, y, w, alpha), direct, atol=1e-10)


def test_lime_surrogate_equals_the_lime_package_on_its_own_samples():
    # the lime package's LimeTextExplainer on a known function of the words present: its samples, kernel and
    # Ridge (feature_selection auto with all features) give the same coefficients as lime_weights + weighted_ridge
    lime_text = pytest.importorskip("lime.lime_text")
    from textxai.attribution import lime_weights, weighted_ridge

    words = [f"w{i}" for i in range(9)]
    beta = np.linspace(-1, 2, 9)
    seen = []

    def classifier_fn(strings):
        present = np.array([[w in s.split() for w in words] for s in strings])
        seen.append(present)
        p = 1 / (1 + np.exp(-(present @ beta - 2 + present[:, 0] * present[:, 1])))  # not linear: the fit matters
        return np.stack([1 - p, p], axis=1)

    explainer = lime_text.LimeTextExplainer(bow=False, split_expression=lambda s: s.split(), mask_string="[MASK]",
                                            random_state=3)
    exp = explainer.explain_instance(" ".join(words), classifier_fn, labels=(1,), num_features=9, num_samples=700)
    theirs = np.zeros(9)
    for j, s in exp.as_map()[1]:
        theirs[j] = s
    present = seen[0]
    ours = weighted_ridge(present.astype(float), classifier_fn([" ".join(np.where(present[i], words, "[MASK]"))
                                                                for i in range(len(present))])[:, 1], lime_weights(present))
    np.testing.assert_allclose(ours, theirs, atol=1e-8)


def test_lime_evaluates_each_distinct_mask_once_and_dedup_changes_nothing(bert_clf, monkeypatch):
    from textxai import attribution
    from textxai.attribution import SamplingOptions, lime_samples, lime_weights, weighted_ridge

    text, n_samples = "good bad film", 500  # 3 words: 8 possible masks among 500 samples
    rows = []
    real = TextClassifier._proba_of_rows
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda self, r, *a, **k: rows.append(len(r)) or real(self, r, *a, **k))
    monkeypatch.setattr(sampling_explainers, "BATCH_TOKENS", 8)  # small batches: the fill changes nothing either
    ours = word_attributions([text], bert_clf, "lime", target=1, seed=4, n_samples=n_samples, batch_size=3,
                            precision="float32")[0]
    present = lime_samples(np.random.default_rng(4), 3, n_samples)
    assert sum(rows) == len(np.unique(present, axis=0)) == 8
    assert SamplingOptions("lime", n_samples, seed=4).plan(3)[0].tolist() == present.tolist()
    y = np.array([bert_clf.masked_proba(text, ~row)[0, 1] for row in present])  # every sample, one by one
    np.testing.assert_allclose(ours, weighted_ridge(present.astype(float), y, lime_weights(present)), atol=1e-8)


def test_expected_distinct_lime_masks_matches_sampling():
    from textxai.attribution import lime_distinct_masks, lime_samples

    for n, n_samples in ((6, 300), (11, 2000)):
        counts = [len(np.unique(lime_samples(np.random.default_rng(s), n, n_samples), axis=0)) for s in range(5)]
        assert abs(np.mean(counts) - lime_distinct_masks(n, n_samples)) < 0.03 * lime_distinct_masks(n, n_samples)


# ------------------------------------------------------------------------- bfloat16 for the sampling methods
@pytest.mark.long
def test_bfloat16_lime_moves_less_than_a_change_of_seed():
    # the default precision="auto" runs LIME's forward passes in bfloat16 on hardware that has it: on the demo
    # model the explanation must move far less than LIME's own sampling noise, and keep its top words
    from textxai import demo
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment", device="cpu")
    texts = [t for t in demo.load_corpus("sentiment")["test_texts"] if 12 <= len(clf.words(t)) <= 20][:3]
    exact = word_attributions(texts, clf, "lime", seed=0, n_samples=1000, precision="float32")
    reseeded = word_attributions(texts, clf, "lime", seed=1, n_samples=1000, precision="float32")
    lower = word_attributions(texts, clf, "lime", seed=0, n_samples=1000, precision="bfloat16")
    for a, b, c in zip(exact, reseeded, lower):
        assert np.abs(a - c).max() < 0.25 * np.abs(a - b).max()  # measured: 0.0002-0.0017 vs 0.010-0.028
        assert set(np.argsort(-a)[:5]) == set(np.argsort(-c)[:5])
        assert np.abs(a - c).max() > 0  # it did run in bfloat16


class AutocastShy(BagOfWordsModel):
    """The bag model, but its logits shift by ``shift`` (or it raises, ``shift=None``) under autocast."""

    shift = 1.0

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        if torch.is_autocast_enabled("cpu"):
            if self.shift is None:
                raise RuntimeError("no bfloat16 kernel for this op")
            out.logits = out.logits + torch.tensor([0.0, self.shift])
        return out


@pytest.mark.parametrize("shift,native,expected", [(0.0, True, "bfloat16"), (1.0, True, "float32"),
                                                   (None, True, "float32"), (0.0, False, "float32")])
def test_auto_precision_keeps_float32_unless_the_hardware_and_the_model_agree(bert_parts, monkeypatch, shift, native,
                                                                                expected):
    from textxai.model import probabilities as classifier_module  # where the precision probe reads it

    _, tokenizer = bert_parts
    model = AutocastShy(BagConfig(num_labels=2, vocab_size=len(tokenizer)))
    model.shift = shift
    with torch.no_grad():
        model.emb.weight.zero_()  # logits [0, 0]: p = 0.5, where a shift shows
    monkeypatch.setattr(classifier_module, "native_bfloat16", lambda device: native)
    clf = TextClassifier((model, tokenizer), device="cpu")
    calls = []
    real = TextClassifier._proba_of_rows
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    assert clf.resolve_precision("auto") == expected
    probes = len(calls)
    assert probes == (0 if not native else 1 if shift is None else 2)  # bfloat16, then float32 unless it raised
    assert clf.resolve_precision("auto") == expected and len(calls) == probes  # the probe runs once
    assert clf.resolve_precision("float32") == "float32" and clf.resolve_precision("bfloat16") == "bfloat16"


def test_precision_errors_name_the_argument(bert_clf):
    with pytest.raises(ValueError, match="precision='half'"):
        word_attributions(["a b"], bert_clf, "lime", n_samples=10, precision="half")
    with pytest.raises(ValueError, match="precision='fp16'"):
        bert_clf.masked_proba_many(["a b"], [np.ones((1, 2), bool)], precision="fp16")


def test_native_bfloat16_is_false_without_torch_s_cpu_checks(monkeypatch):
    from textxai.classifier import native_bfloat16

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert native_bfloat16(torch.device("cpu"))
    for check in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        monkeypatch.delattr(torch.cpu, check, raising=False)
    assert not native_bfloat16(torch.device("cpu")) and not native_bfloat16(torch.device("meta"))


# ------------------------------------------------------------------------- bfloat16 for omission (the audit's)
def test_omission_in_bfloat16_is_its_own_explanation_and_close_to_float32():
    # precision= reaches omission's passes (the intact probability included), is part of the remembered
    # explanation's key (a float32 call after a bfloat16 one gets float32 scores), and moves scores little
    from textxai import demo
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment", device="cpu")
    texts = [t for t in demo.load_corpus("sentiment")["test_texts"] if 12 <= len(clf.words(t)) <= 20][:4]
    texts, single = texts[:3], texts[3]
    exact = word_attributions(texts, clf, "omission", precision="float32")
    lower = word_attributions(texts, clf, "omission", precision="bfloat16")
    again = word_attributions(texts, clf, "omission")          # default float32: the remembered float32 scores
    for a, b, c in zip(exact, lower, again):
        np.testing.assert_array_equal(a, c)
        assert np.abs(a - b).max() > 0                        # it did run in bfloat16
        assert np.abs(a - b).max() < 0.02                      # measured on the demo model: < 0.004
        assert set(np.argsort(-a)[:3]) == set(np.argsort(-b)[:3])
    p = clf.predict_proba([single], precision="bfloat16")[0]  # p(x) - p(x without word j), both in bfloat16
    masked = clf.masked_proba(single, np.eye(len(clf.words(single)), dtype=bool), precision="bfloat16")
    (b,) = word_attributions([single], clf, "omission", precision="bfloat16")
    np.testing.assert_allclose(b, p[p.argmax()] - masked[:, p.argmax()], atol=1e-12)


def test_predict_proba_precision_errors_name_the_argument(bert_clf):
    with pytest.raises(ValueError, match="precision='half'"):
        bert_clf.predict_proba(["a b"], precision="half")
    with pytest.raises(ValueError, match="precision='half'"):
        word_attributions(["a b"], bert_clf, "omission", precision="half")


def test_integrated_gradients_steps_in_rows_of_at_most_cpu_batch_tokens_same_scores(bert_clf, monkeypatch):
    """On a CPU the steps of integrated gradients go through forward and backward in rows of at most
    CPU_BATCH_TOKENS tokens (lowered here to split the tiny model's short rows); the scores do not change."""
    texts = ["a terrible boring film , i hated it", "the food was not good but the service was lovely ."]
    whole = word_attributions(texts, bert_clf, "integrated_gradients", target=1, n_steps=12, batch_size=32)
    shapes = []
    hook = bert_clf.model.register_forward_hook(
        lambda m, args, kwargs, out: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    monkeypatch.setattr("textxai.model.probabilities.CPU_BATCH_TOKENS", 60)
    try:
        split = word_attributions(texts, bert_clf, "integrated_gradients", target=1, n_steps=12, batch_size=32)
    finally:
        hook.remove()
    longest = max(n for _, n in shapes)
    assert max(r for r, _ in shapes) == 60 // longest and sum(r for r, _ in shapes) >= 12 * len(texts), shapes
    for a, b in zip(whole, split):
        np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("method", ["gradient", "input_x_gradient"])
def test_gradient_methods_take_texts_in_batches_of_at_most_cpu_batch_tokens_same_scores(bert_clf, monkeypatch, method):
    """The texts of one forward and backward pass hold at most CPU_BATCH_TOKENS tokens on a CPU (lowered here)."""
    texts = ["a terrible boring film , i hated it", "good", "the food was not good but the service was lovely .",
             "fine", "i loved every minute of this wonderful , moving story"]
    whole = word_attributions(texts, bert_clf, method, target=1, batch_size=32)
    shapes = []
    hook = bert_clf.model.register_forward_hook(
        lambda m, args, kwargs, out: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    monkeypatch.setattr("textxai.model.probabilities.CPU_BATCH_TOKENS", 30)
    try:
        split = word_attributions(texts, bert_clf, method, target=1, batch_size=32)
    finally:
        hook.remove()
    assert all(r == 1 or r * n <= 30 for r, n in shapes) and len(shapes) > 1 and sum(r for r, _ in shapes) == len(texts), shapes
    for a, b in zip(whole, split):
        np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("method", ["omission", "lime"])
def test_remembered_explanations_follow_the_classifier_s_words(bert_parts, method):
    # the same model read with two word tokenizers: "don't" is two words for spaCy, one for whitespace
    text = ["i don't worry , nobody is sleeping"]
    spacy_clf = TextClassifier(bert_parts, device="cpu")
    plain_clf = TextClassifier(bert_parts, device="cpu", word_tokenizer="whitespace")
    short_clf = TextClassifier(bert_parts, device="cpu", max_length=6)  # sees only the first words
    assert len(spacy_clf.words(text[0])) == 8 and len(plain_clf.words(text[0])) == 7
    for clf in (spacy_clf, plain_clf, short_clf):
        (scores,) = word_attributions(text, clf, method, n_samples=50)
        assert len(scores) == len(clf.words(text[0]))
    seen = short_clf.word_encoding(text[0]).word_ids.max() + 1
    assert 0 < seen < 8
    (short,) = word_attributions(text, short_clf, method, n_samples=50)
    assert method == "lime" or np.abs(short[seen:]).max() < 1e-9  # a word the model never sees moves nothing



@pytest.mark.parametrize("value", [0, -0.25, float("nan"), float("inf"), "wide", True])
def test_kernel_width_must_be_a_positive_number(bert_clf, value):
    with pytest.raises((ValueError, TypeError), match="kernel_width="):
        word_attributions(["a good film"], bert_clf, "lime", n_samples=20, kernel_width=value)


@pytest.mark.parametrize("value", [None, "x", 1.5, -1, True])
@pytest.mark.parametrize("method", ["lime", "kernel_shap", "omission"])
def test_seed_must_be_a_non_negative_integer(bert_clf, method, value, monkeypatch):
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda *a, **k: pytest.fail("the model was called"))
    with pytest.raises(ValueError, match=r"seed=.*expected a non-negative integer"):
        word_attributions(["a good film"], bert_clf, method, n_samples=20, seed=value)


# ------------------------------------------------------------------------------ adaptive sample count (auto)
class LinearProbabilityModel(BagOfWordsModel):
    """p(class 1) = 0.1 + sum over present tokens of (e . u)^2: an exactly additive probability of the words."""

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None, **kwargs):
        e = self.emb(input_ids) if inputs_embeds is None else inputs_embeds
        p = (0.1 + (((e @ self.u) ** 2) * attention_mask).sum(1)).double()
        return SequenceClassifierOutput(logits=torch.stack([torch.log1p(-p), torch.log(p)], -1).float())


@pytest.fixture(scope="module")
def additive(bert_parts):
    _, tokenizer = bert_parts
    weights = {"great": 0.2, "film": 0.15, "good": 0.1, "movie": 0.07, "bad": 0.04, "love": 0.02}  # sums to 0.58
    model = LinearProbabilityModel(BagConfig(num_labels=2, vocab_size=len(tokenizer)))
    with torch.no_grad():
        model.emb.weight.zero_()
        for word, w in weights.items():
            model.emb.weight[tokenizer.convert_tokens_to_ids(word)] = np.sqrt(w) * model.u  # (e.u)^2 = w
    filler = "the a was and not i it is man play run jump do sleep outside nobody food service".split()  # weightless
    rng = np.random.default_rng(0)
    words = list(weights) + [filler[i] for i in rng.integers(0, len(filler), 34)]  # 40 words, 34 of them weightless
    text = " ".join(words[i] for i in rng.permutation(len(words)))
    return TextClassifier((model, tokenizer), device="cpu"), weights, text


@pytest.mark.parametrize("method", ["lime", "kernel_shap"])
def test_auto_samples_stop_at_the_first_round_on_an_additive_model_and_rank_right(additive, method):
    # p is exactly linear in the words present: no residual, the scores are known after one round of 250 samples
    from textxai.attribution import ROUND_SAMPLES, sampling_explanations

    clf, weights, text = additive
    (exp,) = sampling_explanations([text], clf, method, target=1, n_samples="auto", perturbation="delete",
                                   precision="float32")
    words = clf.words(text)
    assert (exp.stopped, exp.samples) == ("settled", ROUND_SAMPLES)
    words = clf.words(text)
    # lime also asks omission's single deletions (its prior): n more inputs at most
    assert exp.inputs <= exp.samples + (len(words) if method == "lime" else 0)
    assert [words[j] for j in np.argsort(-exp.scores)[:5]] == list(weights)[:5]
    if method == "kernel_shap":  # least squares of an exactly linear function: the weights themselves
        expected = np.array([weights.get(w, 0.0) for w in words])
        np.testing.assert_allclose(exp.scores, expected, atol=1e-5)


def test_stopping_rule_on_constructed_samples(monkeypatch):
    # rule (a): an exactly linear response is settled; the same with noise comparable to the top words' gaps is not;
    # rule (b): a residual that is the same for a mask and its complement (even in the number of words present)
    # cancels within each pair: precise with the true pairs, not with the pairs shuffled
    from textxai import attribution
    from textxai.attribution import paired_samples, sampling_settled

    rng = np.random.default_rng(0)
    n, n_pairs = 30, 250
    beta = np.r_[np.linspace(0.3, 0.2, 5), np.full(n - 5, 0.19)]
    present = paired_samples(rng, "kernel_shap", n, n_pairs)
    pair = np.tile(np.arange(n_pairs), 2)
    ones = np.ones(len(present))
    linear = present @ beta

    def rule(y, pairs=pair, k=5):
        return sampling_settled(present, y, ones, 0.0, pairs, k, 1000, np.random.default_rng(1))

    assert rule(linear) == "settled"
    assert rule(linear + rng.normal(0, 0.5, len(present))) is None
    even = 3.0 * ((present.sum(axis=1) - n / 2) / n) ** 2 * rng.choice([-1, 1], n_pairs)[pair]
    assert rule(linear + even) == "settled"  # the even residual cancels within each pair: as if linear
    monkeypatch.setattr(sampling_explainers, "STABLE_TOP_K", 1.01)  # rule (a) off: rule (b) alone
    even = even + rng.normal(0, 0.01, len(present))
    assert rule(linear + even) == "precise"
    assert rule(linear + even, pairs=np.tile(rng.permutation(n_pairs), 2)[rng.permutation(2 * n_pairs)]) is None


def test_the_pairs_covariance_matches_the_spread_of_independent_samples():
    # a logistic model with pairwise interactions (nothing linear about it), 20 words, 3 pairs per coefficient: over
    # 400 independent paired samples, the spread of the surrogate's scores is what the pairs' covariance (CR2) says
    # on average; the plain sandwich with the n / (n - p) factor (HC1, the estimator before it) is 1.3x too small
    from textxai.sampling_explainers import _sandwich, lime_weights, paired_samples

    n = 20
    n_pairs = 3 * (n + 1)
    rng = np.random.default_rng(0)
    linear, interactions = rng.normal(0, 1, n), rng.normal(0, 1, (n, n)) / n
    pair = np.tile(np.arange(n_pairs), 2)
    scores, cr2, hc1 = [], [], []
    for _ in range(400):
        present = paired_samples(rng, "lime", n, n_pairs)
        x = present.astype(float)
        y = 1 / (1 + np.exp(-(x @ linear / 3 + 2 * np.einsum("ip,pq,iq->i", x, interactions, x) - 1)))
        beta, inverse, rows, covariance = _sandwich(present, y, lime_weights(present), 1.0, pair)
        scores.append(beta)
        cr2.append(np.diag(covariance).sum())
        per_pair = np.zeros((n_pairs, n))
        np.add.at(per_pair, pair, rows)
        hc1.append(len(y) / (len(y) - n - 1) * np.trace(inverse @ per_pair.T @ per_pair @ inverse))
    spread = np.var(np.array(scores), axis=0).sum()
    assert 0.85 < spread / np.mean(cr2) < 1.15
    assert spread / np.mean(hc1) > 1.2
    with pytest.raises(ValueError, match="pair: every pair index must label exactly two rows"):
        _sandwich(present, y, lime_weights(present), 1.0, np.arange(len(y)))  # rows not paired


def test_paired_samples_follow_the_method_s_distribution():
    # LIME: n - k present, k ~ U{1..n}; Kernel SHAP: k present with p ~ (n-1) / (k (n-k)); every row a mask's complement
    from textxai.attribution import paired_samples

    n = 6
    lime = paired_samples(np.random.default_rng(0), "lime", n, 3000)
    assert (lime[:3000] == ~lime[3000:]).all()
    base = lime[:3000].sum(axis=1)  # present = n - removed: 0..n-1 each with probability 1/n, stratified
    assert np.bincount(base, minlength=n).tolist() == [500] * n
    shap = paired_samples(np.random.default_rng(0), "kernel_shap", n, 3000)
    k = np.arange(1, n)
    p = (n - 1) / (k * (n - k))
    np.testing.assert_allclose(np.bincount(shap[:3000].sum(axis=1), minlength=n)[1:] / 3000, p / p.sum(), atol=1e-3)
    assert (shap[:3000] == ~shap[3000:]).all()


def test_shrinking_toward_a_prior_lowers_the_error_of_noisy_scores_and_leaves_exact_ones():
    # scores = a + b prior + spread; sampled with noise of the same size: the empirical-Bayes scores are closer to
    # the true ones than the sampled ones (on average over words), and exact scores (variance 0) are unchanged
    from textxai.attribution import shrink_to_prior

    rng = np.random.default_rng(0)
    prior = rng.normal(0, 1, 200)
    true = 0.1 + 0.5 * prior + rng.normal(0, 0.2, 200)
    variance = np.full(200, 0.2 ** 2)
    sampled = true + rng.normal(0, 0.2, 200)
    shrunk, posterior = shrink_to_prior(sampled, variance, prior)
    assert np.mean((shrunk - true) ** 2) < 0.7 * np.mean((sampled - true) ** 2)
    assert (posterior < variance).all()
    np.testing.assert_allclose(shrink_to_prior(true, np.zeros(200), prior)[0], true, rtol=0, atol=1e-12)


def test_lime_importance_sizes_reweighted_are_lime_s_sizes():
    # n_samples="auto" draws LIME's number of present words from q (more of the rows that carry the variance), and
    # weighs each row by p / q: weighted, both halves (masks and complements) are LIME's uniform sizes again
    from textxai.attribution import lime_importance, lime_importance_ratio, paired_samples

    n, n_pairs = 12, 6000
    q = lime_importance(n)
    assert np.allclose(q, q[::-1]) and (q > 0).all() and q[n // 2] > 3 * q[0]
    present = paired_samples(np.random.default_rng(0), "lime", n, n_pairs, kernel_width=0.25)
    assert (present[:n_pairs] == ~present[n_pairs:]).all()
    ratio = lime_importance_ratio(present)
    for half in (slice(0, n_pairs), slice(n_pairs, None)):
        sizes = present[half].sum(axis=1)
        drawn = np.bincount(sizes, minlength=n + 1) / n_pairs
        np.testing.assert_allclose(drawn[sizes.min():sizes.max() + 1], q[sizes.min():sizes.max() + 1] / (1 - q[n]),
                                   atol=2e-4)  # stratified: within one row of q
        weighted = np.bincount(sizes, weights=ratio[half], minlength=n + 1) / n_pairs
        np.testing.assert_allclose(weighted[sizes.min():sizes.max() + 1], 1 / n, atol=1e-3)


@pytest.mark.parametrize("method", ["lime", "kernel_shap"])
def test_auto_samples_repeat_under_seed_and_do_not_depend_on_the_batch_size(roberta_clf, monkeypatch, method):
    from textxai import attribution

    import dataclasses

    monkeypatch.setattr(sampling_explainers, "BATCH_TOKENS", 1)  # batch_size rows exactly
    monkeypatch.setattr(attribution, "_remembered", lambda clf, texts, pairs, targets, settings, compute: compute(
        np.arange(len(texts))))  # every run computes
    monkeypatch.setitem(attribution.REGISTRY, method, dataclasses.replace(attribution.REGISTRY[method], default_samples=1000))
    texts = TEXTS + ["an utterly dull , long and pointless film with one fine scene near the end"]
    runs = [attribution.sampling_explanations(texts, roberta_clf, method, seed=3, batch_size=bs, n_samples="auto",
                                              precision="float32") for bs in (1, 64, 64)]
    for run in runs[1:]:
        for a, b in zip(run, runs[0]):
            assert (a.samples, a.inputs, a.stopped) == (b.samples, b.inputs, b.stopped)
            np.testing.assert_allclose(a.scores, b.scores, atol=1e-6)
    other = attribution.sampling_explanations(texts, roberta_clf, method, seed=4, n_samples="auto", precision="float32")
    assert any(not np.array_equal(a.scores, b.scores) for a, b in zip(runs[0], other) if len(a.scores) > 1)  # other masks


def test_samples_and_inputs_reported_are_what_runs(bert_clf, monkeypatch):
    from textxai import attribution
    from textxai.classifier import TextClassifier

    monkeypatch.setattr(attribution, "_remembered", lambda clf, texts, pairs, targets, settings, compute: compute(
        np.arange(len(texts))))
    rows = []
    real = TextClassifier._proba_of_rows
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda self, r, *a, **k: rows.append(len(r)) or real(self, r, *a, **k))
    texts = ["the plot was thin but the acting was wonderful and the music lovely", "bad"]
    for options in ({"n_samples": 300}, {"n_samples": "auto"}, {"n_samples": "auto", "top_k": 2}):
        rows.clear()
        got = attribution.sampling_explanations(texts, bert_clf, "lime", target=[0, 0], precision="float32", **options)
        assert sum(rows) == sum(e.inputs for e in got)
        for e, text in zip(got, texts):
            n_words = len(bert_clf.words(text))  # n_samples="auto": + omission's n single deletions (the prior)
            assert len(e.scores) == n_words and 0 < e.inputs <= e.samples + n_words * (options["n_samples"] == "auto")
            assert e.samples <= 5000
            if options["n_samples"] == 300:
                assert (e.samples, e.stopped) == (300, "fixed")
            else:
                assert e.samples % attribution.ROUND_SAMPLES == 0 and e.stopped in ("settled", "precise", "agrees", "limit")
    assert got[1].inputs == 2  # one word: the intact text and the empty one


@pytest.mark.parametrize("options, match", [({"n_samples": "many"}, "n_samples='many'"),
                                            ({"n_samples": "auto", "top_k": 0}, "top_k=0"),
                                            ({"n_samples": 100, "top_k": 3}, "top_k=3")])
def test_auto_sample_options_are_checked_before_the_model(bert_clf, monkeypatch, options, match):
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda *a, **k: pytest.fail("the model was called"))
    with pytest.raises(ValueError, match=match):
        word_attributions(["a good film"], bert_clf, "lime", target=0, **options)
