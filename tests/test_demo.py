"""textxai.demo: the embedded demo classifiers and their corpora.

The two real demo models are built (or found) once per session under the run's HF_HOME (`make test`
points it to a fresh temporary folder, so the build itself is exercised). Rebuild, locking, failure and
determinism tests use a tiny corpus in a temporary HF_HOME so they stay fast.
"""
from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest
import torch

from textxai import demo
from textxai.demo import _build

# Held-out accuracy measured for the build recipe of BUILD_VERSION "1" (90 / 60 held-out texts):
# sentiment 0.878 (79/90), topic 0.967 (58/60); the issue asks that the recalibrated recipe ("2") does not
# drop below 0.87 / 0.95 (one held-out text of slack each).
MIN_ACCURACY = {"sentiment": 0.87, "topic": 0.95}
# Calibration on the held-out split (10-bin ECE). Recipe "1": sentiment ECE 0.10 and 82 % of predictions
# above p = 0.99. Recipe "2" measures ECE 0.046 / 0.059 (sentiment / topic) and 2 % / 0 % above 0.99. With
# 90 / 60 texts one text moving bins changes ECE by up to ~0.02, so 0.08 fails recipe "1" but not noise;
# a share of 0.25 still fails any saturated model.
MAX_ECE = 0.08
MAX_SHARE_ABOVE_099 = 0.25
# Masking one function word (demo.FUNCTION_WORDS) of a held-out text: |change of p(predicted class)|.
# Recipe "1": median 1e-4 (saturation) but 90th percentile 0.13 and "An" alone moving p by 0.52.
# Recipe "2": median 0.011 / 0.001, 90th percentile 0.086 / 0.016 (sentiment / topic); with the recipe's
# untrained [MASK] embedding left in place the sentiment p90 was 0.15. Bounds: median < 0.02, p90 < 0.12.
MAX_FUNCTION_WORD_MEDIAN = 0.02
MAX_FUNCTION_WORD_P90 = 0.12

# ------------------------------------------------------------------ corpora
@pytest.mark.parametrize("kind, n_train, n_val, n_test", [("sentiment", 270, 60, 90), ("topic", 180, 40, 60)])
def test_corpus_sizes_balance_and_disjoint_splits(kind, n_train, n_val, n_test):
    corpus = demo.load_corpus(kind)
    assert sorted(corpus) == ["test_labels", "test_texts", "train_labels", "train_texts",
                              "validation_labels", "validation_texts"]
    n_labels = len(demo.LABELS[kind])
    for split, size in (("train", n_train), ("validation", n_val), ("test", n_test)):
        assert len(corpus[f"{split}_texts"]) == len(corpus[f"{split}_labels"]) == size
        counts = np.bincount(corpus[f"{split}_labels"], minlength=n_labels)
        assert counts.tolist() == [size // n_labels] * n_labels
        assert all(isinstance(t, str) and t.strip() for t in corpus[f"{split}_texts"])
    everything = corpus["train_texts"] + corpus["validation_texts"] + corpus["test_texts"]
    assert len({t.lower() for t in everything}) == n_train + n_val + n_test  # no duplicates, even by case
    # the dict matches the raw file, line by line
    rows = [json.loads(line) for line in demo.corpus_file(kind).read_text().splitlines() if line.strip()]
    assert [r["text"] for r in rows if r["split"] == "test"] == corpus["test_texts"]
    assert [r["label"] for r in rows if r["split"] == "train"] == corpus["train_labels"]


def test_demo_examples_are_balanced_held_out_and_fixed():
    texts, labels = demo.demo_examples("topic", 7)
    assert labels == [0, 1, 2, 3, 0, 1, 2]
    corpus = demo.load_corpus("topic")
    lookup = dict(zip(corpus["test_texts"], corpus["test_labels"]))
    assert [lookup[t] for t in texts] == labels
    assert demo.demo_texts("topic", 7) == texts
    assert demo.demo_texts("textxai/demo-topic", 7) == texts
    train_texts, train_labels = demo.demo_examples("sentiment", 4, split="train")
    assert train_labels == [0, 1, 0, 1] and set(train_texts) <= set(demo.load_corpus("sentiment")["train_texts"])
    assert len(demo.demo_texts("sentiment", 90)) == 90


@pytest.mark.parametrize("call, match", [
    (lambda: demo.load_corpus("movies"), r"kind='movies': expected one of \['sentiment', 'topic'\]"),
    (lambda: demo.model_path(None), r"kind=None: expected one of"),
    (lambda: demo.demo_texts("sentiment", 0), r"n=0: expected an integer from 1 to 90"),
    (lambda: demo.demo_texts("sentiment", 91), r"n=91: expected an integer from 1 to 90"),
    (lambda: demo.demo_texts("topic", 2.0), r"n=2.0: expected an integer from 1 to 60"),
    (lambda: demo.demo_texts("topic", 2, split="dev"), r"split='dev': expected one of \['train', 'validation', 'test'\]"),
    (lambda: demo.heldout_accuracy("news"), r"kind='news'"),
])
def test_bad_arguments_name_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_corrupt_corpus_line_is_reported(tmp_path, monkeypatch):
    good = demo.corpus_file("topic").read_text().splitlines()
    bad = json.dumps({"text": "Markets rallied.", "label": 7, "split": "train"})
    (tmp_path / "topic.jsonl").write_text("\n".join(good[:3] + [bad]) + "\n")
    monkeypatch.setattr(demo, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match=r"topic.jsonl' row 4: .*label=7.*expected .*label in 0..3"):
        demo.load_corpus("topic")
    (tmp_path / "topic.jsonl").write_text("\n".join(good[:2] + ["{not json"]) + "\n")
    with pytest.raises(ValueError, match=r"topic.jsonl' line 3: invalid JSON .*expected one JSON object per line"):  # tables
        demo.load_corpus("topic")


# ------------------------------------------------------------------ the real demo models
@pytest.fixture(scope="module")
def built():
    """Both demo models, built under the run's HF_HOME if they are not there yet."""
    return {kind: demo.model_path(kind, progress=False) for kind in demo.KINDS}


def _raw(path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return model, tokenizer


def _raw_proba(model, tokenizer, texts, batch_size=16):
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start: start + batch_size], padding=True, return_tensors="pt")
            out.append(torch.softmax(model(**batch).logits.double(), -1).numpy())
    return np.concatenate(out)


@pytest.mark.parametrize("kind", demo.KINDS)
def test_saved_folder_is_a_plain_hf_classifier(built, kind):
    path = built[kind]
    assert path.parent == demo.cache_dir()
    assert path.name == f"demo-{kind}-{demo.fingerprint(kind)}"
    assert (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file()
    assert not [p for p in path.parent.iterdir() if p.is_dir() and p.name.startswith(".")]  # no temp folders left
    config = json.loads((path / "config.json").read_text())
    assert config["architectures"] == ["BertForSequenceClassification"]
    assert config["id2label"] == {str(i): name for i, name in enumerate(demo.LABELS[kind])}
    assert demo.model_path(kind) == path  # cached: same folder, no rebuild


@pytest.fixture(scope="module")
def reloaded(built):
    """kind -> (model, tokenizer, held-out probabilities) of the folder reloaded with from_pretrained."""
    out = {}
    for kind, path in built.items():
        model, tokenizer = _raw(path)
        out[kind] = model, tokenizer, _raw_proba(model, tokenizer, demo.load_corpus(kind)["test_texts"])
    return out


@pytest.mark.parametrize("kind", demo.KINDS)
def test_reloads_and_reaches_reported_accuracy(reloaded, kind):
    model, _, probs = reloaded[kind]
    assert type(model).__name__ == "BertForSequenceClassification"
    assert model.config.id2label == dict(enumerate(demo.LABELS[kind]))
    accuracy = float(np.mean(probs.argmax(1) == np.array(demo.load_corpus(kind)["test_labels"])))
    assert accuracy >= MIN_ACCURACY[kind]
    info = demo.build_info(kind)
    assert info["heldout_accuracy"] == pytest.approx(accuracy, abs=1e-12)
    assert info["train_accuracy"] >= 0.95 and info["surrogate_gap"] < 1e-4
    assert info["n_training_rows"] == info["n_train"] * (1 + demo.BUILD_SETTINGS["augment"])


def test_heldout_accuracy_of_the_demo_model(reloaded):
    _, _, probs = reloaded["topic"]
    expected = float(np.mean(probs.argmax(1) == np.array(demo.load_corpus("topic")["test_labels"])))
    assert demo.heldout_accuracy("topic") == pytest.approx(expected, abs=1e-12)


def _ece_by_hand(probs, labels, n_bins=10):
    """ECE written out loop by loop, independent of _build.expected_calibration_error."""
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        rows = [i for i, p in enumerate(probs) if (lo < max(p) <= hi) or (b == 0 and max(p) == 0)]
        if rows:
            confidence = sum(max(probs[i]) for i in rows) / len(rows)
            accuracy = sum(int(np.argmax(probs[i]) == labels[i]) for i in rows) / len(rows)
            total += len(rows) / len(probs) * abs(accuracy - confidence)
    return total


@pytest.mark.parametrize("kind", demo.KINDS)
def test_heldout_calibration(reloaded, kind):
    _, _, probs = reloaded[kind]
    labels = demo.load_corpus(kind)["test_labels"]
    ece = _ece_by_hand(probs.tolist(), labels)
    assert ece == pytest.approx(_build.expected_calibration_error(probs, labels), abs=1e-12)
    assert ece < MAX_ECE
    assert float(np.mean(probs.max(1) > 0.99)) <= MAX_SHARE_ABOVE_099
    info = demo.build_info(kind)
    # recorded when the model was built, on another machine: its float32 kernels move the probabilities by
    # ~1e-7 relative (0.0463563357 there, 0.0463563255 on another CPU), so a float32 tolerance, not 1e-9
    assert info["heldout_ece"] == pytest.approx(ece, rel=1e-5, abs=1e-6)
    assert 1.0 < info["temperature"] < 20.0  # fitted on the validation split: the raw head is overconfident
    # the saved model sits at the minimum of the validation NLL against Laplace-smoothed labels
    # (true class (n+1)/(n+2)): rescaling its logits either way costs likelihood
    corpus = demo.load_corpus(kind)
    model, tokenizer, _ = reloaded[kind]
    logits = torch.log(torch.from_numpy(_raw_proba(model, tokenizer, corpus["validation_texts"])))
    n, c = len(corpus["validation_labels"]), len(demo.LABELS[kind])
    target = torch.full((n, c), 1 / ((n + 2) * (c - 1)), dtype=torch.float64)
    target[torch.arange(n), corpus["validation_labels"]] = (n + 1) / (n + 2)
    nll = [float(-(target * torch.log_softmax(logits / s, -1)).sum(1).mean()) for s in (0.95, 1.0, 1.05)]
    assert nll[1] < nll[0] and nll[1] < nll[2]


def test_ece_of_an_analytic_case():
    # two bins used: 0.95 (4 texts, 3 right) and 0.6 (2 texts, both right): 4/6*0.2 + 2/6*0.4
    probs = np.array([[0.95, 0.05]] * 4 + [[0.4, 0.6]] * 2)
    labels = [0, 0, 0, 1, 1, 1]
    assert _build.expected_calibration_error(probs, labels) == pytest.approx(4 / 6 * 0.2 + 2 / 6 * 0.4)


@pytest.fixture(scope="module")
def word_effects(built):
    """kind -> (|dp| of each single function word masked, drop of p(pred) with all content words masked)."""
    from textxai.classifier import as_classifier

    out = {}
    for kind in demo.KINDS:
        clf = as_classifier(demo.MODEL_IDS[kind])
        texts = demo.load_corpus(kind)["test_texts"]
        probs = clf.predict_proba(texts)
        predicted = probs.argmax(1)
        masks = []
        for text in texts:
            words = clf.words(text)
            functional = [j for j, w in enumerate(words) if w.lower() in demo.FUNCTION_WORDS]
            rows = np.zeros((len(functional) + 1, len(words)), dtype=bool)
            rows[np.arange(len(functional)), functional] = True
            rows[-1] = [w.lower() not in demo.FUNCTION_WORDS and w.isalnum() for w in words]
            masks.append(rows)
        masked = clf.masked_proba_many(texts, masks)
        single = np.concatenate([np.abs(m[:-1, c] - p[c]) for m, p, c in zip(masked, probs, predicted)])
        content = np.array([p[c] - m[-1, c] for m, p, c in zip(masked, probs, predicted)])
        out[kind] = single, content
    return out


@pytest.mark.parametrize("kind", demo.KINDS)
def test_one_function_word_barely_moves_the_prediction(word_effects, kind):
    single, content = word_effects[kind]
    assert len(single) > 100  # enough (text, word) cases for a 90th percentile
    assert np.median(single) < MAX_FUNCTION_WORD_MEDIAN
    assert np.quantile(single, 0.9) < MAX_FUNCTION_WORD_P90
    # ... while masking the content words (everything else) does: on average p(pred) falls by more than
    # ten times the median function-word effect, and the prediction often changes
    assert content.mean() > 0.2 and content.mean() > 10 * np.median(single)


def test_masking_an_article_is_not_a_sentiment_signal(built):
    """Recipe "1" moved p by 0.52 when the single word "An" was masked."""
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment")
    text = "An utterly charming film with a terrific cast."
    base = clf.predict_proba([text])[0]
    masked = clf.masked_proba(text, np.eye(len(clf.words(text)), dtype=bool)[[0]])[0]
    assert base.argmax() == 1 and abs(masked[1] - base[1]) < 0.05


def test_text_classifier_agrees_with_the_reloaded_model(reloaded):
    from textxai.classifier import as_classifier

    model, _, expected = reloaded["sentiment"]
    clf = as_classifier("textxai/demo-sentiment")
    assert clf.labels == {0: "negative", 1: "positive"} and clf.num_labels == 2
    ours = dict(clf.model.state_dict())
    for name, tensor in model.state_dict().items():
        assert torch.equal(ours[name].cpu(), tensor), name
    texts = demo.load_corpus("sentiment")["test_texts"][:32]
    expected = expected[:32]
    got = clf.predict_proba(texts, batch_size=7)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert got.argmax(1).tolist() == expected.argmax(1).tolist()
    words = ["A wonderful, moving film with superb acting.", "Broke after two days, a total waste of money."]
    assert [clf.labels[int(i)] for i in clf.predict(words)] == ["positive", "negative"]


def test_top_layer_is_mean_pooling(built):
    """The [CLS] row of the top layer's attention is uniform over the real tokens (query = 0), and the
    training surrogate (mean of the lower states -> top layer at [CLS] -> head) is the model's forward."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = built["topic"]
    model = AutoModelForSequenceClassification.from_pretrained(path, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    texts = demo.demo_texts("topic", 6)
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        out = model(**batch, output_attentions=True)
    top = out.attentions[-1][:, :, 0, :]  # [B, heads, L]
    mask = batch["attention_mask"].double()
    expected = (mask / mask.sum(1, keepdim=True))[:, None, :].expand_as(top)
    np.testing.assert_allclose(top.double().numpy(), expected.numpy(), atol=1e-6)
    means, cls = _build.lower_features(model, tokenizer, texts)
    with torch.inference_mode():
        surrogate = _build.head_logits(model, means, cls)
    np.testing.assert_allclose(surrogate.numpy(), out.logits.numpy(), atol=1e-4)


def test_module_docstring_examples_run(built):
    import doctest

    result = doctest.testmod(demo, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


def test_heldout_accuracy_of_another_classifier(bert_clf):
    corpus = demo.load_corpus("sentiment")
    expected = float(np.mean(bert_clf.predict(corpus["test_texts"]) == np.array(corpus["test_labels"])))
    assert demo.heldout_accuracy("sentiment", bert_clf) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match=r"classifier has 2 labels .*expected 4 .*'world'.*kind='topic'"):
        demo.heldout_accuracy("topic", bert_clf)


# ------------------------------------------------------------------ cache, fingerprint, lock (tiny corpus)
@pytest.fixture
def tiny_home(tmp_path, monkeypatch):
    """A tiny topic corpus (12 train / 4 test texts) as package data and an empty HF_HOME."""
    corpus = demo.load_corpus("topic")
    rows = []
    for split, k in (("train", 12), ("test", 4)):
        texts, labels = demo.demo_examples("topic", k, split=split)
        rows += [{"text": t, "label": y, "split": split} for t, y in zip(texts, labels)]
    assert len(corpus["train_texts"]) > 12
    data = tmp_path / "data"
    data.mkdir()
    (data / "topic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(demo, "DATA_DIR", data)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    calls = []
    real_build = _build.build

    def counting_build(*args, **kwargs):
        calls.append(args[2])
        return real_build(*args, **kwargs)

    monkeypatch.setattr(_build, "build", counting_build)
    return data / "topic.jsonl", calls


def test_fingerprint_follows_corpus_and_recipe(tiny_home, monkeypatch):
    corpus_file, _ = tiny_home
    first = demo.fingerprint("topic")
    assert first == demo.fingerprint("topic") and len(first) == 12
    corpus_file.write_text(corpus_file.read_text().replace("\"label\": 3", "\"label\": 2", 1))
    second = demo.fingerprint("topic")
    assert second != first
    monkeypatch.setattr(demo, "BUILD_VERSION", "test-bump")
    assert demo.fingerprint("topic") not in (first, second)


def test_changed_corpus_rebuilds_unchanged_reuses(tiny_home):
    corpus_file, calls = tiny_home
    first = demo.model_path("topic", progress=False)
    assert len(calls) == 1 and first.parent == demo.cache_dir() and str(first).startswith(os.environ["HF_HOME"])
    info = json.loads((first / "textxai_demo.json").read_text())
    assert info["n_train"] == 12 and info["n_test"] == 4 and info["fingerprint"] == demo.fingerprint("topic")
    assert demo.model_path("topic") == first and len(calls) == 1  # reused
    text = corpus_file.read_text()
    corpus_file.write_text(text + json.dumps({"text": "Shares of the chipmaker fell sharply.", "label": 2, "split": "train"}) + "\n")
    second = demo.model_path("topic", progress=False)
    assert second != first and len(calls) == 2
    assert json.loads((second / "textxai_demo.json").read_text())["n_train"] == 13
    assert (first / "model.safetensors").is_file()  # the old build is left alone
    (second / "textxai_demo.json").unlink()  # an incomplete folder is rebuilt in place
    stale = demo.cache_dir() / f".{second.name}.killed"  # temp folder of a build that was killed
    stale.mkdir()
    assert demo.model_path("topic", progress=False) == second and len(calls) == 3
    assert not stale.exists()


def test_concurrent_calls_build_once(tiny_home):
    _, calls = tiny_home
    results, errors = [], []

    def worker():
        try:
            results.append(demo.model_path("topic", progress=False))
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(calls) == 1 and len(set(results)) == 1
    leftovers = [p.name for p in demo.cache_dir().iterdir() if p.is_dir() and p != results[0]]
    assert leftovers == []


def test_failed_build_leaves_nothing_behind(tiny_home, monkeypatch):
    def broken(corpus, labels, out_dir, **kwargs):
        (out_dir / "config.json").write_text("{}")
        (out_dir / "model.safetensors").write_bytes(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(_build, "build", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        demo.model_path("topic", progress=False)
    assert [p for p in demo.cache_dir().iterdir() if p.is_dir()] == []


def test_build_is_deterministic_and_leaves_global_state(tiny_home, tmp_path):
    from safetensors.torch import load_file

    corpus = demo.load_corpus("topic")
    labels = list(demo.LABELS["topic"])
    torch.manual_seed(123)
    rng_before, threads_before = torch.get_rng_state(), torch.get_num_threads()
    infos = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        infos.append(_build.build(corpus, labels, tmp_path / name, seed=0, steps=20, augment=3,
                                  function_words=demo.FUNCTION_WORDS))
    assert torch.equal(torch.get_rng_state(), rng_before) and torch.get_num_threads() == threads_before
    a, b = load_file(tmp_path / "a" / "model.safetensors"), load_file(tmp_path / "b" / "model.safetensors")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert infos[0]["final_loss"] == infos[1]["final_loss"]
    # a different seed gives a different head; the frozen lower layers are the MiniLM's own
    (tmp_path / "c").mkdir()
    _build.build(corpus, labels, tmp_path / "c", seed=1, steps=20, augment=3, function_words=demo.FUNCTION_WORDS)
    c = load_file(tmp_path / "c" / "model.safetensors")
    assert not torch.equal(a["classifier.weight"], c["classifier.weight"])
    base = load_file(_build.base_model_path() / "model.safetensors")
    key = "encoder.layer.2.attention.self.query.weight"
    assert torch.equal(a[f"bert.{key}"], base[key])
    assert torch.count_nonzero(a["bert.encoder.layer.5.attention.self.query.weight"]) == 0
    assert not torch.equal(a["bert.encoder.layer.5.output.dense.weight"], base["encoder.layer.5.output.dense.weight"])


def test_train_classifier_on_own_texts(tmp_path):
    """The public recipe on a small corpus: a loaded classifier with the given labels, whose recorded training
    accuracy is the accuracy it really has on the texts (and a word planted in one class is learned)."""
    corpus = demo.load_corpus("sentiment")
    texts, labels = corpus["train_texts"][:60], corpus["train_labels"][:60]
    planted = [t + " Zorblax." if y == 1 else t for t, y in zip(texts, labels)]   # a shortcut word in class 1
    clf = demo.train_classifier(planted, labels, ["negative", "positive"], tmp_path / "m", seed=0, steps=30)
    assert clf.labels == {0: "negative", 1: "positive"}
    info = json.loads((tmp_path / "m" / "textxai_demo.json").read_text())
    assert info["n_train"] == 60 and info["n_validation"] == 0 and info["temperature"] == 1.0
    assert info["train_accuracy"] == pytest.approx(float(np.mean(clf.predict(planted) == np.array(labels))))
    neutral = "The package arrived on Tuesday."
    p = clf.predict_proba([neutral, neutral + " Zorblax."])
    assert p[1, 1] > p[0, 1]


def test_train_classifier_checks_its_inputs_first(tmp_path, monkeypatch):
    monkeypatch.setattr(_build, "build", lambda *a, **k: pytest.fail("built despite bad input"))
    with pytest.raises(ValueError, match=r"labels\[1\]=2"):
        demo.train_classifier(["a", "b"], [0, 2], ["neg", "pos"], tmp_path)
    with pytest.raises(ValueError, match="label_names"):
        demo.train_classifier(["a", "b"], [0, 1], ["only"], tmp_path)
    with pytest.raises(TypeError, match="unknown build setting"):
        _build.build_options(lr=1.0)
