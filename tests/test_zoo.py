"""Invariants on every zoo member (tests/zoo.py), and the model-side classes of issue 37, each with a test that
fails on the code before it: XLNet (no position table), return_dict=False, id2label numbered 1..5, digit label
names, duplicate names, bfloat16 checkpoints in FIM, a meta-device model, device='xpu', a causal LM given as the
classifier, a read-only HF_HOME, a checkpoint whose head rows were swapped (same per-tensor sums)."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch
import zoo as zoo_module

import textxai
from textxai.classifier import TextClassifier, as_classifier

TEXTS = list(zoo_module.TEXTS)
FAMILIES = zoo_module.FAMILIES
VARIANTS = ("bert_5class", "bert_multilabel", "bert_digit_names", "bert_bf16", "bert_fp16", "bert_tuple")


def _member(zoo, name):
    return zoo.members[name]


@pytest.fixture(scope="module")
def clfs(zoo):
    return {name: TextClassifier(m.folder, device="cpu") for name, m in {**zoo.classifiers, **{
        v: zoo.variants[v] for v in VARIANTS}}.items()}


def _own_probabilities(member, clf, texts):
    """The model's own probabilities, one text at a time, no padding, straight from transformers."""
    model, tok = member.parts()
    model = model.float()
    out = []
    for text in texts:
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            result = model(**enc)
        logits = result[0] if isinstance(result, tuple) else result.logits
        out.append(clf.probabilities(logits.double())[0].numpy())
    return np.array(out)


def test_zoo_has_ten_families_and_the_variants(zoo):
    assert len(FAMILIES) >= 10 and set(FAMILIES) <= set(zoo.classifiers)
    assert {"bert_regression", "bert_duplicate_names", "bert_noncontiguous"} <= set(zoo.refused)
    assert {"lm_gpt2", "lm_llama_chat", "lm_llama_no_bos", "lm_llama_bos_beyond", "masked_lm_bert"} <= set(zoo.lms)
    assert json.loads(open(f"{zoo.variants['bert_bf16'].folder}/config.json").read())["dtype"] == "bfloat16"


@pytest.mark.parametrize("name", FAMILIES + VARIANTS)
def test_probabilities_are_the_models_own_at_every_batch_size_order_and_duplicate(zoo, clfs, name):
    """XLNet (left padding, head on the last position) and return_dict=False failed before."""
    clf = clfs[name]
    own = _own_probabilities(_member(zoo, name), clf, TEXTS)
    batched = clf.predict_proba(TEXTS, batch_size=4)
    np.testing.assert_allclose(batched, own, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(TEXTS, batch_size=1), batched, rtol=1e-5, atol=1e-6)
    order = [3, 1, 0, 2, 3, 1]  # reordered, with duplicates
    np.testing.assert_allclose(clf.predict_proba([TEXTS[i] for i in order], batch_size=3), batched[order],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_word_view_covers_every_word_and_removing_a_word_changes_exactly_its_tokens(clfs, name):
    """Llama's Metaspace BPE has a token 'ing,' spanning 'acting' and ',': it belongs to both (removing either
    word removes it), where ',' had no token at all before (removing it changed nothing)."""
    clf = clfs[name]
    text = "Unbelievable acting, the plot was boring!"
    enc = clf.word_encoding(text)
    for j in range(enc.n_words):
        tokens = enc.tokens_of(j)
        assert len(tokens), (name, enc.words[j])  # every word has tokens
        masks = np.zeros((1, enc.n_words), bool)
        masks[0, j] = True
        (masked, _), = clf.perturbed_token_rows(enc, masks, "mask")
        changed = masked != enc.input_ids
        assert set(np.flatnonzero(changed)) == set(tokens)
        (deleted, _), = clf.perturbed_token_rows(enc, masks, "delete")
        assert len(deleted) == len(enc.input_ids) - len(tokens)
    if name == "llama":
        assert enc.shared and all(enc.words[j] == "," for _, j in enc.shared)
    # the tokens of the words cover every non-space character of the text (offsets of the word's tokens)
    encoded = clf.tokenizer(text, return_offsets_mapping=True)
    covered = set()
    for (a, b), w in zip(encoded["offset_mapping"], enc.word_ids):
        if w >= 0:
            covered.update(range(a, b))
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered


def test_shared_tokens_leave_wordpiece_unchanged_and_naopc_sees_the_last_word(clfs):
    """Only a word without tokens across a punctuation / space boundary shares one: WordPiece's 'cannot' (spaCy's
    'can' + 'not', between two letters) is aligned as before, so the demo's numbers do not change. A Llama text
    ending in the token 'y.' was cut by NAOPC ('the model sees only 2 of its 3 words') before."""
    import warnings

    enc = as_classifier("textxai/demo-sentiment").word_encoding("it cannot fail, well-made.")
    assert enc.words[1:3] == ["can", "not"] and enc.shared == () and len(enc.tokens_of(2)) == 0
    llama = clfs["llama"]
    text = "a mystery."
    assert llama.tokenizer.tokenize(text)[-1].endswith(".") and len(llama.word_encoding(text).shared) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = textxai.load("naopc").compute(texts=[text], model=llama, attribution_method="omission",
                                            return_per_example=True)["per_example"][0]
    assert row["words"] == ["a", "mystery", "."] and len(row["attributions"]) == 3


@pytest.mark.parametrize("name", FAMILIES)
def test_input_forms_agree_folder_pair_pipeline(zoo, clfs, name):
    from transformers import pipeline

    member = _member(zoo, name)
    model, tok = member.parts()
    folder = clfs[name].predict_proba(TEXTS[:2])
    np.testing.assert_allclose(TextClassifier((model, tok), device="cpu").predict_proba(TEXTS[:2]), folder,
                               rtol=1e-5, atol=1e-6)
    pipe = pipeline("text-classification", model=model, tokenizer=tok, device="cpu")
    np.testing.assert_allclose(TextClassifier(pipe).predict_proba(TEXTS[:2]), folder, rtol=1e-5, atol=1e-6)


def _brute_force_limits(clf, text, target):
    n = len(clf.words(text))
    masks = np.array([[(key >> j) & 1 for j in range(n)] for key in range(1 << n)], bool)
    table = clf.masked_proba(text, masks)[:, target]
    values = []
    for order in itertools.permutations(range(n)):
        key, total = 0, 0.0
        for j in order:
            key |= 1 << j
            total += table[0] - table[key]
        values.append(total / n)
    return min(values), max(values)


@pytest.mark.parametrize("name", FAMILIES)
def test_exact_naopc_limits_equal_brute_force(clfs, name):
    clf = clfs[name]
    result = textxai.load("naopc").compute(texts=["a wonderful film"], model=clf, attribution_method="omission",
                                           return_per_example=True)
    row = result["per_example"][0]
    lo, hi = _brute_force_limits(clf, "a wonderful film", row["target"])
    assert row["lower"] == pytest.approx(lo, abs=1e-6) and row["upper"] == pytest.approx(hi, abs=1e-6)


@pytest.mark.parametrize("name", FAMILIES + ("bert_bf16_pair",))
def test_fim_equals_the_explicit_fisher_matrix(zoo, clfs, name):
    """FIM's lambda_max is the top eigenvalue of G = J^T (diag p - p p^T) J written out with autograd; a model
    given in bfloat16 (the pair form keeps its dtype) no longer fails with 'unsupported ScalarType BFloat16'."""
    from textxai.fim.text import difficulty

    if name == "bert_bf16_pair":
        clf = TextClassifier(zoo.variants["bert_bf16"].parts(), device="cpu")
        assert next(clf.model.parameters()).dtype == torch.bfloat16
    else:
        clf = clfs[name]
    text = "a wonderful film"
    result = difficulty([text], clf, return_eigenvector=True, keep_eigenvectors=True)
    enc = clf.encode([text])
    embeds = clf.input_embeddings(enc.tensors).detach()

    def log_probs(flat):
        logits = clf.logits_from_embeddings(flat.reshape(embeds.shape).to(embeds.dtype), enc.tensors)
        return torch.log_softmax(logits.double(), -1)[0]

    x = embeds.double().reshape(-1)
    jac = torch.autograd.functional.jacobian(log_probs, x)  # [C, D]
    p = torch.exp(log_probs(x)).detach()
    G = jac.T @ torch.diag(p) @ jac
    lam = float(torch.linalg.eigvalsh(G)[-1])
    rel = 2e-2 if name == "bert_bf16_pair" else 1e-4
    assert result["difficulty"][0] == pytest.approx(lam, rel=rel, abs=1e-7)
    assert result["eigenvectors"][0].dtype == np.float32 and np.isfinite(result["word_sensitivity"][0]).all()


# ----------------------------------------------------------------------------------- the refused and the fixed
@pytest.mark.parametrize("name, words", [
    ("bert_regression", ["regression", "num_labels=1"]),
    ("bert_noncontiguous", ["id2label ids [1, 2, 3, 4, 5]", "expected ids 0..4"]),
    ("bert_duplicate_names", ["classes 0 and 2 both 'pos'", "distinct label names"]),
    ("lm_gpt2", ["GPT2LMHeadModel", "sequence-classification"]),
    ("masked_lm_bert", ["BertForMaskedLM", "sequence-classification"]),
])
def test_models_that_give_no_class_probabilities_are_refused_by_name(zoo, name, words):
    member = zoo.members[name]
    with pytest.raises(ValueError) as info:
        TextClassifier(member.folder, device="cpu")
    assert "model=" in str(info.value) and all(w in str(info.value) for w in words)


@pytest.mark.parametrize("name", ["lm_gpt2", "lm_llama_chat", "masked_lm_bert"])
def test_a_language_model_pair_given_as_the_classifier_is_refused_up_front(zoo, name):
    """Before: accepted, then failed at the first batch ('returned logits of shape (1, 2, 600)', named 'tuple')."""
    model, tok = zoo.members[name].parts()
    with pytest.raises(ValueError, match=rf"model='{type(model).__name__}' is a {type(model).__name__}, not a "
                                         "sequence classifier"):
        TextClassifier((model, tok), device="cpu")


def test_digit_label_names_mean_the_same_class_whatever_the_type(clfs):
    """Classes 0..4 named '1'..'5' (star ratings): 1, '1', 1.0 and '1.0' all mean the class named '1' (index 0);
    a number that is no label name (0) is ambiguous and refused. Before: 1 -> index 1 but '1' -> index 0."""
    clf = clfs["bert_digit_names"]
    assert {clf.class_index(v) for v in (1, "1", 1.0, "1.0", np.int64(1), " 1 ")} == {0}
    assert clf.class_index(5) == clf.class_index("5") == 4
    with pytest.raises(ValueError, match=r"label=0: the model's labels are themselves numbers"):
        clf.class_index(0)
    plain = clfs["bert_5class"]  # LABEL_0..LABEL_4: numbers are indices as before
    assert plain.class_index(3) == plain.class_index("3") == plain.class_index("LABEL_3") == 3


def test_digit_label_names_through_the_library(clfs):
    """The same labels as ints or strings are the same classes (the class named, not the index) in FIM's and TOKI's
    label readers; before, FIM read [1, 5, 3] as indices (5 out of range) and ['1', '5', '3'] as names."""
    from textxai.fim.text import _label_ids

    clf = clfs["bert_digit_names"]
    assert list(_label_ids([1, 5, 3], clf, 3)) == list(_label_ids(["1", "5", "3"], clf, 3)) == [0, 4, 2]
    assert list(clf.class_indices([1, "5", 3.0], "references", 3)) == [0, 4, 2]
    with pytest.raises(ValueError, match=r"references\[1\]=0"):
        clf.class_indices([1, 0], "references", 2)


def test_meta_device_model_is_refused(zoo):
    from transformers import AutoConfig, AutoModelForSequenceClassification

    member = zoo.classifiers["bert"]
    with torch.device("meta"):
        shell = AutoModelForSequenceClassification.from_config(AutoConfig.from_pretrained(member.folder))
    with pytest.raises(ValueError, match="meta device"):
        TextClassifier((shell, member.parts()[1]))


def test_xpu_device_is_a_clear_error_where_there_is_none(zoo):
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        pytest.skip("this machine has an XPU")
    with pytest.raises(ValueError, match=r"device='xpu'.*use device='cpu'"):
        TextClassifier(zoo.classifiers["bert"].folder, device="xpu")


def test_xlnet_loads_with_the_default_token_limit(clfs):
    assert clfs["xlnet"].max_length == 512 and clfs["xlnet"].left_padded


def test_half_precision_checkpoints_load_in_float32(clfs):
    for name in ("bert_bf16", "bert_fp16"):
        assert next(clfs[name].model.parameters()).dtype == torch.float32


def test_read_only_cache_home_is_a_clear_error(tmp_path, monkeypatch):
    from textxai import demo

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("HF_HOME", str(blocker / "hf"))
    with pytest.raises(ValueError, match=r"HF_HOME='.*a_file/hf'.*expected a writable folder"):
        demo.model_path("textxai/demo-sentiment")


def test_swapped_head_rows_are_never_served_stale(zoo, tmp_path):
    """Two head rows swapped (a label-order fix) keep every per-tensor sum; the weights digest that keys the
    explanation cache, the keyword-index cache and the audit's stage cache must still change."""
    import shutil

    from textxai.attribution import weights_digest
    from textxai.audit import plan
    from textxai.audit.options import AuditOptions

    folder = tmp_path / "bert"
    shutil.copytree(zoo.variants["bert_5class"].folder, folder)
    clf = as_classifier(str(folder))
    before, stage_before = weights_digest(clf), plan.fingerprint(clf, TEXTS, None, "overview", AuditOptions())
    probs_before = clf.predict_proba(TEXTS[:1])
    with torch.no_grad():
        weight = clf.model.classifier.weight
        weight.copy_(weight[[1, 0, 2, 3, 4]])
        bias = clf.model.classifier.bias
        bias.copy_(bias[[1, 0, 2, 3, 4]])
    assert weights_digest(clf) != before
    assert plan.fingerprint(clf, TEXTS, None, "overview", AuditOptions()) != stage_before
    clf.model.save_pretrained(folder)  # the same swap on disk: a new classifier, with the swapped probabilities
    again = as_classifier(str(folder))
    assert again is not clf or weights_digest(again) != before
    np.testing.assert_allclose(again.predict_proba(TEXTS[:1])[0][[1, 0, 2, 3, 4]], probs_before[0], rtol=1e-5)


@pytest.mark.parametrize("name", ["bert", "xlnet", "gpt2", "t5"])
def test_modules_on_zoo_members(zoo, name):
    """The fim_difficulty module through textxai.load on a member of each padding / head kind: finite, and the
    same numbers as the library function."""
    from textxai.fim.text import difficulty

    folder = zoo.classifiers[name].folder
    result = textxai.load("fim_difficulty").compute(texts=TEXTS[:2], model=folder)
    values = np.asarray(difficulty(TEXTS[:2], folder)["difficulty"])
    assert np.isfinite(values).all()
    np.testing.assert_allclose(result["difficulty"], values, rtol=1e-6)


@pytest.mark.parametrize("name", ["t5", "bert", "roberta", "gpt2", "xlnet"])
def test_special_token_strings_in_user_text_are_plain_text(clfs, name):
    """'</s>', '[SEP]', '<|endoftext|>' written in a text are characters, not control tokens: a T5 batch with one
    such text no longer fails ('All examples must have the same number of <eos> tokens'), and no token of the
    text is a special token (so nothing in it is unmaskable or moves a head that finds its token by id)."""
    clf = clfs[name]
    text = "a </s> [SEP] <|endoftext|> <sep> film"
    probs = clf.predict_proba([text, "a film"])
    np.testing.assert_allclose(probs[0], clf.predict_proba([text])[0], rtol=1e-5, atol=1e-6)
    enc = clf.word_encoding(text)
    special = set(clf.tokenizer.all_special_ids) - {clf.tokenizer.unk_token_id}
    assert not any(int(i) in special for i, w in zip(enc.input_ids, enc.word_ids) if w >= 0)


# ----------------------------------------------------------------------------------------- the black-box form
@pytest.mark.parametrize("name", ["bert", "albert"])  # GPT-2 cannot score a text with every word deleted
def test_a_plain_function_is_a_black_box_model_for_the_methods_without_gradients(clfs, name):
    """texts -> probabilities (a scikit-learn pipeline, an endpoint): NAOPC with omission, LIME and Kernel SHAP
    deleting words gives the numbers of the model itself (word deletion on the text = deleting the word's tokens,
    for these tokenizers on these texts); FIM and gradient explainers refuse it naming why."""
    from textxai.attribution import word_attributions
    from textxai.classifier import FunctionClassifier
    from textxai.fim.text import difficulty

    ref = clfs[name]
    texts = ["a wonderful film", "the plot was boring !"]
    box = as_classifier(lambda batch: ref.predict_proba(batch))
    assert isinstance(box, FunctionClassifier) and box.num_labels == ref.num_labels
    np.testing.assert_allclose(box.predict_proba(texts), ref.predict_proba(texts), rtol=1e-6, atol=1e-7)
    got = textxai.load("naopc").compute(texts=texts, model=box, attribution_method="omission", perturbation="delete")
    want = textxai.load("naopc").compute(texts=texts, model=ref, attribution_method="omission", perturbation="delete")
    for key in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency"):
        assert got[key] == pytest.approx(want[key], rel=1e-4, abs=1e-6), key
    for method in ("lime", "kernel_shap"):  # the sampling explainers, few samples
        a = word_attributions(texts, box, method, perturbation="delete", n_samples=64, precision="float32")
        b = word_attributions(texts, ref, method, perturbation="delete", n_samples=64, precision="float32")
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6)
    with pytest.raises(TypeError, match="black-box function .* no input embeddings and no gradients"):
        difficulty(texts, box)
    with pytest.raises(TypeError, match="no gradients"):
        textxai.load("naopc").compute(texts=texts, model=box, attribution_method="integrated_gradients")


def test_black_box_masking_keeps_the_text_around_the_word():
    seen = []

    def fn(texts):
        seen.extend(texts)
        return np.tile([0.5, 0.5], (len(texts), 1))

    box = as_classifier(fn, labels=["neg", "pos"])
    box.masked_proba("  Hello,  world!", np.array([[False, True, False, False], [True, False, False, True]]))
    assert seen[-2:] == ["  Hello[MASK]  world!", "  [MASK],  world[MASK]"]
    assert box.class_index("pos") == 1


@pytest.mark.parametrize("output, words", [
    (lambda t: np.ones((len(t), 2)), "summing to 1"),
    (lambda t: np.full((len(t), 2), np.nan), "NaN or inf"),
    (lambda t: np.ones((len(t) + 1, 2)) / 2, "returned shape"),
    (lambda t: "positive", "expected class probabilities"),
    (lambda t: 1 / 0, "ZeroDivisionError"),
])
def test_a_black_box_that_returns_no_probabilities_is_named(output, words):
    with pytest.raises(ValueError, match=words):
        as_classifier(output, labels=["a", "b"]).predict_proba(["a text"])


# ------------------------------------------------------------------ the callback and the Spaces' handlers on the zoo
SURFACE_MEMBERS = ("gpt2", "xlnet", "bert_bf16", "bert_digit_names")  # pad = eos, left padding, bfloat16, 5 digit names
OMISSION = {"attribution_method": "omission", "normalization": "exact"}
SHORT = [TEXTS[0], TEXTS[3]]  # 3 words each: 8 subsets


@pytest.mark.parametrize("name", SURFACE_MEMBERS)
def test_the_callback_on_zoo_members_gives_the_library_numbers(zoo, name):
    """TextxaiCallback.evaluate on the pair a Trainer holds (a bfloat16 model stays bfloat16): NAOPC and FIM equal
    the library functions on the same pair."""
    from textxai import naopc
    from textxai.fim.text import difficulty
    from textxai.integrations import TextxaiCallback

    model, tok = zoo.members[name].parts()
    callback = TextxaiCallback({"naopc": OMISSION, "fim_difficulty": {}}, texts=SHORT, strict=True)
    scalars = callback.evaluate(model, tok)
    clf = TextClassifier((model, tok))
    want = naopc.compute(SHORT, None, clf, **OMISSION)
    for key in ("comprehensiveness", "naopc_comprehensiveness", "naopc_sufficiency"):
        assert scalars[f"eval_naopc_{key}"] == pytest.approx(want[key], rel=1e-6, abs=1e-9), key
    values = difficulty(SHORT, clf)["difficulty"]
    assert scalars["eval_fim_difficulty_summary_max"] == pytest.approx(max(values), rel=1e-6)


def test_the_callback_takes_a_black_box_for_the_methods_without_gradients(clfs):
    from textxai import naopc
    from textxai.integrations import TextxaiCallback

    box = zoo_module.black_box(clfs["bert_digit_names"])
    scalars = TextxaiCallback({"naopc": {**OMISSION, "perturbation": "delete"}}, texts=SHORT).evaluate(box)
    want = naopc.compute(SHORT, None, as_classifier(box), **OMISSION, perturbation="delete")
    assert scalars["eval_naopc_naopc_comprehensiveness"] == pytest.approx(want["naopc_comprehensiveness"], rel=1e-6)
    with pytest.raises(TypeError, match="black-box function .* no gradients"):
        TextxaiCallback("fim_difficulty", texts=SHORT, strict=True).evaluate(box)
    with pytest.raises(ValueError, match=r"tokenizer=None: the callback needs the tokenizer of model=LlamaFor"):
        TextxaiCallback("fim_difficulty", texts=SHORT).evaluate(clfs["llama"].model)


def _space(name):
    import importlib.util
    from pathlib import Path

    pytest.importorskip("gradio")
    spec = importlib.util.spec_from_file_location(f"zoo_{name}_space", Path(__file__).parents[1] / "spaces" / name / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    return app


@pytest.fixture(scope="module")
def space_apps():
    return {name: _space(name) for name in ("naopc", "fim_difficulty", "toki_trust")}


@pytest.mark.parametrize("name", SURFACE_MEMBERS)
def test_the_spaces_handlers_on_zoo_members_give_the_library_numbers(zoo, space_apps, name, monkeypatch):
    """The handlers a click runs, called directly with the member's folder (a Space on your own machine): NAOPC and
    FIM equal the library functions on the classifier the folder loads as (bfloat16 -> float32)."""
    from textxai import naopc
    from textxai.fim.text import difficulty

    # FIM's reference distribution (a percentile, not a number compared here): 4 texts instead of the 90 of the corpus
    # and no min-flip search (a walk of many embedding passes that would dominate this test)
    from textxai import fim

    monkeypatch.setattr(space_apps["fim_difficulty"], "corpus_texts", lambda kind="sentiment", split="test": TEXTS)
    monkeypatch.setattr(space_apps["fim_difficulty"], "options", lambda: fim.FIMOptions(return_eigenvector=True))

    folder = zoo.members[name].folder
    clf = as_classifier(folder)
    analysis, _ = space_apps["naopc"].analyse_texts(folder, "\n".join(SHORT), "omission", "auto", 1)
    want = naopc.compute(SHORT, None, clf, attribution_method="omission", max_exact_words=12)
    got = analysis.results["methods"]["omission"]
    for key in ("comprehensiveness", "naopc_comprehensiveness", "naopc_sufficiency"):
        assert got[key] == pytest.approx(want[key], rel=1e-6, abs=1e-9), key
    _, fim_analysis = space_apps["fim_difficulty"].analyse(folder, TEXTS[3])
    assert fim_analysis.results["difficulty"][0] == pytest.approx(
        difficulty([TEXTS[3]], clf)["difficulty"][0], rel=1e-6)


def test_the_toki_space_reads_digit_class_names_as_names_and_refuses_the_ambiguous(zoo, space_apps, monkeypatch):
    """Classes 0..4 named '1'..'5': the Space read a training label '5' as class index 4, then handed the library the
    index 4, which the library reads as the class NAMED '4' (index 3) -- and a label '1' (index 0) was refused as
    ambiguous. Now the handler passes class names: the library reads the classes the visitor typed. '0' names no
    class and is refused naming the line, the value and what is expected."""
    from textxai.spaces import SpaceError

    app, folder = space_apps["toki_trust"], zoo.members["bert_digit_names"].folder
    lines = "5\ta wonderful film\n1\ta terrible boring film\n3\tit was fine"
    handed = {}

    def cached_keyword_index(classifier, texts, labels, **options):
        handed["classes"] = list(classifier.class_indices(labels, "train_labels", len(texts)))
        raise RuntimeError("stop here")

    monkeypatch.setattr(app.toki, "cached_keyword_index", cached_keyword_index)
    with pytest.raises(RuntimeError, match="stop here"):
        app.assess_analysis(folder, TEXTS[0], "5", lines, "omission", ["classifier"])
    assert handed["classes"] == [4, 0, 2]
    with pytest.raises(SpaceError, match=r"training line 2: label='0': the model's labels are themselves numbers"):
        app.parse_train("5\ta good film\n0\ta bad film", as_classifier(folder))


def test_the_spaces_handlers_take_a_black_box_where_no_gradient_is_needed(clfs, space_apps, monkeypatch):
    from textxai import naopc, spaces

    box = as_classifier(zoo_module.black_box(clfs["bert"]))
    monkeypatch.setattr(spaces, "resolve_model", lambda choice, hosted=None: box)
    analysis, _ = space_apps["naopc"].analyse_texts("any", "\n".join(SHORT), "omission", "auto", 1)
    want = naopc.compute(SHORT, None, box, attribution_method="omission", max_exact_words=12)
    assert analysis.results["methods"]["omission"]["naopc_comprehensiveness"] == pytest.approx(
        want["naopc_comprehensiveness"], rel=1e-6)
    with pytest.raises(TypeError, match="black-box function .* no gradients"):
        space_apps["naopc"].analyse_texts("any", TEXTS[0], "integrated_gradients", "auto", 1)
    with pytest.raises(TypeError, match="black-box function .* no input embeddings"):
        space_apps["fim_difficulty"].analyse("any", TEXTS[0])


def test_class_indices_read_once_stay_indices_in_toki_and_the_audit(clfs, monkeypatch):
    """Classes 0..4 named '1'..'5': toki.analyse read the training labels '5', '1', '3' as the indices 4, 0, 2, then
    handed those to the keyword index, which read them again as label NAMES (4 -> the class named '4', index 3; 0 ->
    refused): every class seemed to lack a correctly predicted training text. The audit's trust stage and `textxai
    run toki_trust` (toki.label_ids) did the same. Indices read once travel as ClassIndices and are read as indices."""
    from textxai import toki
    from textxai.audit import trust as audit_trust
    from textxai.audit.options import TrustOptions
    from textxai.validation import ClassIndices

    clf = clfs["bert_digit_names"]
    handed = []

    def cached_keyword_index(classifier, texts, labels, *args, **options):
        handed.append(list(classifier.class_indices(labels, "train_labels", len(texts))))
        raise RuntimeError("stop here")

    monkeypatch.setattr(toki.index, "cached_keyword_index", cached_keyword_index)
    monkeypatch.setattr(toki.trust, "cached_keyword_index", cached_keyword_index)
    monkeypatch.setattr(toki, "cached_keyword_index", cached_keyword_index)
    train = ["a wonderful film", "a terrible boring film", "it was fine"]
    for labels in (["5", "1", "3"], [5, 1, 3], toki.label_ids(["5", "1", "3"], clf, "--train-data")):
        with pytest.raises(RuntimeError, match="stop here"):
            toki.analyse(train[:1], ["5"], model=clf, train_texts=train, train_labels=labels, explainer="omission",
                         embedders=["classifier"])
    with pytest.raises(RuntimeError, match="stop here"):   # the audit: its labels already class indices
        audit_trust.keyword_index(clf, train, ClassIndices([4, 0, 2]), TrustOptions(), 8, False, "float32")
    assert handed == [[4, 0, 2]] * 4
    assert list(clf.class_indices(ClassIndices([4, 0]), "labels")) == [4, 0] and list(clf.class_indices([4, 1])) == [3, 0]
