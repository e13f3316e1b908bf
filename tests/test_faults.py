"""The classifiers, folders and faults users bring (issue 22, library half): what the outputs mean is read from
the head, a diverged model is an error (never a hang or a NaN summary), a folder is used only whole and current,
one classifier is safe to share between threads, and work per text is bounded by what the model sees."""
from __future__ import annotations

import json
import shutil
import threading
import warnings

import numpy as np
import pytest
import torch
import tiny_models
from helpers import save_model


def _bert(problem_type=None, num_labels=2, seed=0, initializer_range=0.02):
    model = tiny_models.tiny_bert(num_labels=num_labels, seed=seed, initializer_range=initializer_range)
    model.config.problem_type = problem_type
    return model


def _nan_model():
    model = tiny_models.tiny_bert()
    with torch.no_grad():
        model.classifier.weight.fill_(float("nan"))
    return model


def _with_timeout(fn, seconds=60):
    """(value or exception) of ``fn()``; fails the test when it does not return within ``seconds`` (a hang)."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"no answer within {seconds} s (a hang)"
    return box.get("error", box.get("value"))


# ------------------------------------------------------------------------------------- 1. output semantics
def test_multi_label_heads_give_per_label_sigmoid_probabilities(bert_parts):
    from textxai.classifier import TextClassifier

    _, tokenizer = bert_parts
    model = _bert("multi_label_classification", num_labels=3)
    clf = TextClassifier((model, tokenizer), device="cpu")
    texts = ["the movie was great", "a terrible boring film , i hated it"]
    with torch.no_grad():
        logits = model(**tokenizer(texts, return_tensors="pt", padding=True)).logits.double()
    probs = clf.predict_proba(texts)
    assert clf.multi_label and clf.output_kind == "multi_label"
    np.testing.assert_allclose(probs, torch.sigmoid(logits).numpy(), atol=1e-6)
    assert not np.allclose(probs.sum(axis=1), 1.0)  # independent labels: a softmax would sum to 1


def test_multi_label_naopc_scores_the_target_labels_sigmoid(bert_parts):
    from textxai import naopc
    from textxai.classifier import TextClassifier

    _, tokenizer = bert_parts
    clf = TextClassifier((_bert("multi_label_classification", num_labels=3, initializer_range=0.5), tokenizer),
                         device="cpu")
    text, target = "the movie was great and the food was good", 2
    res = naopc.compute([text], [np.arange(9.0)], clf, target=target, normalization="exact")["per_example"][0]
    masks = np.zeros((1, 9), dtype=bool)
    p_full = clf.masked_proba(text, masks)[0, target]
    with torch.no_grad():
        enc = tokenizer([text], return_tensors="pt")
        direct = torch.sigmoid(clf.model(**enc).logits.double())[0, target].item()
    assert res["p_full"] == pytest.approx(p_full) == pytest.approx(direct, abs=1e-6)
    # the comprehensiveness curve is made of sigmoid probabilities of the target label (brute force)
    order = res["comprehensiveness_order"]
    removed = np.zeros((9, 9), dtype=bool)
    for k in range(9):
        removed[k:, order[k]] = True
    np.testing.assert_allclose(res["comprehensiveness_curve"], p_full - clf.masked_proba(text, removed)[:, target],
                               atol=1e-6)  # float32 passes batched differently


@pytest.mark.parametrize("call", ["fim", "ceval", "toki", "editor"])
def test_methods_for_exclusive_classes_refuse_multi_label_heads(call, bert_parts):
    from textxai import ceval, fim, toki
    from textxai.classifier import TextClassifier
    from textxai.editors import DeletionEditor

    _, tokenizer = bert_parts
    clf = TextClassifier((_bert("multi_label_classification", num_labels=3), tokenizer), device="cpu")
    calls = {
        "fim": lambda: fim.difficulty(["a good film"], clf),
        "ceval": lambda: ceval.compute(["a good film"], ["a bad film"], model=clf),
        "toki": lambda: toki.toki_trust(["a good film"], [0], model=clf),
        "editor": lambda: DeletionEditor(clf),
    }
    with pytest.raises(ValueError, match=r"model=.*multi-label classifier .*exclusive classes"):
        calls[call]()


@pytest.mark.parametrize("problem_type, num_labels", [(None, 1), ("regression", 1), ("regression", 3)])
def test_regression_heads_are_refused_naming_the_model(problem_type, num_labels, bert_parts, tmp_path):
    from textxai.classifier import TextClassifier, as_classifier

    _, tokenizer = bert_parts
    folder = save_model(_bert(problem_type, num_labels=num_labels), tokenizer, tmp_path / "reg")
    with pytest.raises(ValueError, match=rf"model='{folder}' is a regression model \(num_labels={num_labels}"):
        as_classifier(folder)
    with pytest.raises(ValueError, match="regression model"):
        TextClassifier((_bert(problem_type, num_labels=num_labels), tokenizer))


def test_single_label_binary_with_one_sigmoid_output_is_multi_label(bert_parts):
    from textxai.classifier import TextClassifier

    _, tokenizer = bert_parts
    clf = TextClassifier((_bert("multi_label_classification", num_labels=1), tokenizer), device="cpu")
    p = clf.predict_proba(["a good film"])
    assert p.shape == (1, 1) and 0 < p[0, 0] < 1


# -------------------------------------------------------------------------------------- NaN / inf outputs
@pytest.fixture(scope="module")
def nan_clf(bert_parts):
    from textxai.classifier import TextClassifier

    return TextClassifier((_nan_model(), bert_parts[1]), device="cpu")


@pytest.mark.parametrize("normalization", ["exact", "auto", "beam", "beam-paper", "none"])
def test_a_diverged_model_is_one_clear_error_in_naopc_never_a_hang(nan_clf, normalization):
    from textxai import naopc

    got = _with_timeout(lambda: naopc.compute(["the movie was great"], [[0.1, 0.2, 0.3, 0.4]], nan_clf,
                                                    normalization=normalization))
    assert isinstance(got, ValueError) and "non-finite logits" in str(got) and "model=" in str(got), got


@pytest.mark.parametrize("call", ["predict_proba", "fim", "fim_min_flip", "gradient", "lime"])
def test_a_diverged_model_is_one_clear_error_everywhere(nan_clf, call):
    from textxai import fim
    from textxai.attribution import word_attributions

    calls = {
        "predict_proba": lambda: nan_clf.predict_proba(["a good film"]),
        "fim": lambda: fim.compute(["a good film", "a bad film"], nan_clf),
        "fim_min_flip": lambda: fim.min_flip_strength(["a good film"], nan_clf),
        "gradient": lambda: word_attributions(["a good film"], nan_clf, "integrated_gradients"),
        "lime": lambda: word_attributions(["a good film"], nan_clf, "lime", n_samples=20),
    }
    got = _with_timeout(calls[call])
    assert isinstance(got, ValueError) and "non-finite logits" in str(got), got


def test_the_exact_dp_refuses_nan_instead_of_looping():
    from textxai.naopc.core import _Memo
    from textxai.naopc.limits import _exact_many

    memo = _Memo(3)
    got = _with_timeout(lambda: _exact_many([memo], lambda masks: [np.full(len(m), np.nan) for m in masks]), 30)
    assert isinstance(got, ValueError) and "non-finite" in str(got)


# ------------------------------------------------------------------------------- 2. loaded means whole
def test_a_folder_without_its_vocabulary_is_refused(tiny_bert_folder, tmp_path):
    from textxai.classifier import as_classifier

    folder = tmp_path / "no_vocab"
    shutil.copytree(tiny_bert_folder, folder)
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").unlink(missing_ok=True)
    with pytest.raises(ValueError, match=r"model=.*knows only its 5 special tokens.*tokenizer.json"):
        as_classifier(str(folder))


def test_a_tokenizer_with_ids_beyond_the_models_embeddings_is_refused(roberta_parts):
    from textxai.classifier import TextClassifier

    _, roberta_tokenizer = roberta_parts  # ~300 ids, the tiny BERT embeds 50
    clf = TextClassifier((tiny_models.tiny_bert(), roberta_tokenizer), device="cpu")
    with pytest.raises(ValueError, match=r"tokenizer=.* gives token id \d+ but model .* embeds only 50 tokens"):
        clf.predict_proba(["the food was lovely and the service was great"])


def test_max_length_beyond_the_models_positions_is_refused(tiny_bert_folder):
    from textxai.classifier import TextClassifier

    with pytest.raises(ValueError, match=r"max_length=1000: model .* takes at most 64 tokens"):
        TextClassifier(tiny_bert_folder, max_length=1000)
    assert TextClassifier(tiny_bert_folder, max_length=64).max_length == 64


def test_a_rewritten_checkpoint_folder_is_reloaded(bert_parts, tmp_path):
    from textxai.classifier import TextClassifier, as_classifier

    _, tokenizer = bert_parts
    folder = tmp_path / "out" / "best"
    texts = ["the movie was great", "a terrible boring film", "the food was not good"]
    first = tiny_models.tiny_bert(seed=1, initializer_range=0.5)
    save_model(first, tokenizer, folder)
    old = as_classifier(str(folder))
    assert as_classifier(str(folder)) is old  # unchanged: the cached classifier
    second = tiny_models.tiny_bert(seed=2, initializer_range=0.5)
    save_model(second, tokenizer, folder)  # the training loop saves a better checkpoint at the same path
    new = as_classifier(str(folder))
    assert new is not old
    expected = TextClassifier((second, tokenizer), device="cpu").predict_proba(texts)
    np.testing.assert_allclose(new.predict_proba(texts), expected, atol=1e-9)
    assert not np.allclose(old.predict_proba(texts), expected, atol=1e-3)


def test_a_space_serving_a_rewritten_local_folder_loads_it_again(bert_parts, tmp_path):
    """The Spaces' loader shares the library's cache: a local folder saved again is loaded again there too."""
    from textxai.spaces import resolve_model

    _, tokenizer = bert_parts
    folder = tmp_path / "space-model"
    texts = ["the movie was great", "a terrible boring film"]
    save_model(tiny_models.tiny_bert(seed=3, initializer_range=0.5), tokenizer, folder)
    old = resolve_model(str(folder), hosted=False)
    assert resolve_model(str(folder), hosted=False) is old
    save_model(tiny_models.tiny_bert(seed=4, initializer_range=0.5), tokenizer, folder)
    new = resolve_model(str(folder), hosted=False)
    assert new is not old and not np.allclose(new.predict_proba(texts), old.predict_proba(texts), atol=1e-3)


def test_the_demo_cache_is_verified_and_a_damaged_one_rebuilt(monkeypatch, tmp_path):
    from textxai import demo

    pristine = demo.model_path("sentiment")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    final = demo.cache_dir() / pristine.name
    shutil.copytree(pristine, final)
    builds = []

    def fake_build(kind, target, progress):  # the real build takes ~30 s: a copy of the intact model instead
        builds.append(kind)
        shutil.rmtree(target)
        shutil.copytree(pristine, target)

    monkeypatch.setattr(demo, "_build_into", fake_build)
    assert demo.model_path("sentiment") == final and builds == []  # intact: used as it is
    weights = final / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "r+b") as handle:  # a crash or a full disk while writing: the file ends early
        handle.truncate(size // 2)
    assert demo.model_path("sentiment") == final and builds == ["sentiment"]
    assert weights.stat().st_size == size
    from textxai.demo._build import file_digests  # what builds record: sizes and sha256 of the saved files

    info = json.loads((final / "textxai_demo.json").read_text())
    info["files"] = file_digests(final)
    (final / "textxai_demo.json").write_text(json.dumps(info))
    assert demo.model_path("sentiment") == final and builds == ["sentiment"]
    with open(weights, "r+b") as handle:  # same size, one byte changed: the recorded sha256 catches it
        handle.seek(size - 10)
        byte = handle.read(1)
        handle.seek(size - 10)
        handle.write(bytes([byte[0] ^ 0xFF]))
    assert demo.model_path("sentiment") == final and builds == ["sentiment"] * 2
    (final / "tokenizer.json").write_text("{}")  # a tokenizer without its vocabulary
    assert demo.model_path("sentiment") == final and builds == ["sentiment"] * 3


# ----------------------------------------------------------------------------------------- 3. threads
def _in_threads(fn, n=20):
    results, errors = [None] * n, []
    barrier = threading.Barrier(n)

    def run(i):
        barrier.wait()
        try:
            results[i] = fn(i)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[:3]
    return results


def test_twenty_threads_sharing_a_classifier_get_single_thread_answers(bert_parts):
    from textxai import fim
    from textxai.attribution import word_attributions
    from textxai.classifier import TextClassifier

    _, tokenizer = bert_parts
    clf = TextClassifier((tiny_models.tiny_bert(initializer_range=0.5), tokenizer), device="cpu")
    texts = ["the movie was great", "a terrible boring film , i hated it", "the food was not good but lovely",
             "nobody is sleeping outside", "it's fine , don't worry"]
    jobs = [
        lambda i: word_attributions([texts[i % 5]], clf, "integrated_gradients")[0],
        lambda i: word_attributions([texts[i % 5]], clf, "gradient")[0],
        lambda i: fim.difficulty([texts[i % 5]], clf)["difficulty"],
        lambda i: clf.predict_proba([texts[i % 5]])[0],
    ]
    expected = [[np.asarray(job(i)) for i in range(20)] for job in jobs]
    got = _in_threads(lambda i: [np.asarray(job(i)) for job in jobs])
    for i in range(20):
        for j in range(len(jobs)):
            np.testing.assert_allclose(got[i][j], expected[j][i], rtol=1e-5, atol=1e-7)


def test_threads_sharing_a_model_in_train_mode_never_switch_dropout_on_mid_forward(bert_parts):
    from textxai.classifier import TextClassifier

    _, tokenizer = bert_parts
    model = tiny_models.tiny_bert(initializer_range=0.5)
    model.config.hidden_dropout_prob = 0.5
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.5
    model.train()  # a model being trained, evaluated from several threads
    clf = TextClassifier((model, tokenizer), device="cpu")
    texts = [f"the movie was great and the food was {w}" for w in ("good", "bad", "lovely", "not good")]
    expected = clf.predict_proba(texts)
    got = _in_threads(lambda i: clf.predict_proba(texts))
    for probs in got:
        np.testing.assert_array_equal(probs, expected)
    assert model.training and all(m.training for m in model.modules())  # given back as found
    assert all(p.requires_grad for p in model.parameters())


# ------------------------------------------------------------------------ 4. bounded by what the model sees
def test_naopc_on_a_huge_text_scores_the_words_the_model_sees_with_a_warning(bert_clf):
    from textxai import naopc

    text = " ".join(["the movie was great and the food was not good ."] * 2000)  # 22,000 words, 64 tokens seen
    n_words = len(bert_clf.words(text))
    with pytest.warns(UserWarning, match=rf"texts\[0\]: model .* sees only 62 of its {n_words} words \(max_length=64"):
        res = naopc.compute([text], [np.arange(n_words, dtype=float)], bert_clf, normalization="beam")
    row = res["per_example"][0]
    assert row["n_words"] == 62 and row["attributions"] == list(np.arange(62.0))
    # the same as the text cut after its 62nd word: the model saw exactly that
    cut = " ".join(text.split()[:62])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        short = naopc.compute([cut], [np.arange(62.0)], bert_clf, normalization="beam")["per_example"][0]
    assert row["comprehensiveness"] == pytest.approx(short["comprehensiveness"])
    assert row["lower"] == pytest.approx(short["lower"]) and row["upper"] == pytest.approx(short["upper"])


@pytest.mark.parametrize("where", ["options", "aopc_limits"])
def test_an_exact_search_too_big_to_run_is_refused_up_front_with_its_cost(where, bert_clf):
    from textxai import naopc

    calls = {
        "options": lambda: naopc.compute(["a good film"], [[0.1, 0.2, 0.3]], bert_clf, max_exact_words=64),
        "aopc_limits": lambda: naopc.aopc_limits(lambda m: np.zeros(len(m)), 64, method="exact", max_exact_words=64),
    }
    got = _with_timeout(calls[where], 30)
    assert isinstance(got, ValueError), got
    assert "max_exact_words=64" in str(got) and "1.8e+19 model inputs" in str(got) and "expected at most 20" in str(got)


def test_sentence_similarity_sees_a_substitution_late_in_a_long_review(reference_dir):
    import csv

    from textxai.editors import SubstituteGenerator
    from textxai.embeddings import MiniLMEmbedder

    path = reference_dir / "ceval" / "datasets" / "imdb" / "crowd" / "test_original.tsv"
    with open(path, encoding="utf-8") as handle:
        review = next(row[1] for row in csv.reader(handle, delimiter="\t") if "Washington, DC" in row[1])
    assert review.index("Washington, DC") > 1000  # far past the 128 tokens one window holds
    edited = review.replace("Washington, DC", "Texas, COMICS")
    embedder = MiniLMEmbedder()
    assert len(embedder_tokens(embedder, review)) > 2 * embedder.max_length
    (similarity,) = SubstituteGenerator(embedders=["glove"]).similar_texts(review, [edited], -1.0)
    assert similarity < 0.999  # was 1.000: the old encoder read the first 128 tokens only
    # a text within one window is embedded exactly as plain mean pooling of one pass
    short = review[:200]
    tokenizer, model = embedder_parts(embedder)
    enc = tokenizer([short], return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state[0]
    plain = torch.nn.functional.normalize(hidden.mean(0), dim=0).numpy()
    np.testing.assert_allclose(embedder.sentences([short])[0], plain, atol=1e-6)
    # windows: the mean over the tokens of every window, order of texts and batch size irrelevant
    a = embedder.sentences([review, short, edited])
    b = MiniLMEmbedder(batch_size=1).sentences([edited, review])
    np.testing.assert_allclose(a[[2, 0]], b, atol=1e-6)


def embedder_parts(embedder):
    from textxai.embeddings import _minilm

    return _minilm(embedder.path, embedder.device)


def embedder_tokens(embedder, text):
    return embedder_parts(embedder)[0](text)["input_ids"]


def test_a_rewritten_language_model_folder_is_reloaded(tiny_gpt2_parts, tmp_path):
    from textxai.lm import CausalLM, as_lm, perplexity

    model, tokenizer = tiny_gpt2_parts
    save_model(model, tokenizer, tmp_path)
    old = as_lm(str(tmp_path))
    assert as_lm(str(tmp_path)) is old
    other = tiny_models.tiny_gpt2(len(tokenizer), seed=3)
    save_model(other, tokenizer, tmp_path)
    new = as_lm(str(tmp_path))
    assert new is not old
    texts = ["the movie was great"]
    assert perplexity(texts, new) == pytest.approx(perplexity(texts, CausalLM(other, tokenizer)))
    assert perplexity(texts, new) != pytest.approx(perplexity(texts, old))


def test_the_cache_rebuilds_an_entry_whose_stamp_changed():
    from textxai.loading import LRUCache

    cache, built = LRUCache(2), []
    make = lambda tag: lambda: built.append(tag) or tag  # noqa: E731
    assert cache.get_or_create("k", make("a"), stamp=1) == "a"
    assert cache.get_or_create("k", make("b"), stamp=1) == "a"  # same stamp: cached
    assert cache.get_or_create("k", make("c"), stamp=2) == "c"  # changed files: built again
    assert built == ["a", "c"] and len(cache) == 1
