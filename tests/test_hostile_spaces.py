"""Spaces under hostile load: work refused before any model call, wall-time budget, one rule set for every
model a request names, escaped CSV downloads, bounded caches, flat memory."""
from __future__ import annotations

import csv
import gc
import os

import pytest
from helpers import load_space_app

from textxai import classifier, loading, spaces
from textxai.batching import WorkBudgetExceeded, length_sorted_batches, work_budget
from textxai.classifier import TextClassifier
from textxai.fim.method import fim_evaluations
from textxai.inconsistency.method import feedback_evaluations
from textxai.naopc.method import naopc_evaluations
from textxai.spaces import SpaceError
from textxai.toki.method import toki_evaluations


@pytest.fixture
def model_calls(monkeypatch):
    """Counts every batched model pass of any TextClassifier (and every Space model load)."""
    calls = {"forward": 0, "load": 0}
    real_rows, real_resolve = TextClassifier._proba_of_rows, spaces.resolve_model

    def rows(self, *args, **kwargs):
        calls["forward"] += 1
        return real_rows(self, *args, **kwargs)

    def resolve(*args, **kwargs):
        calls["load"] += 1
        return real_resolve(*args, **kwargs)

    monkeypatch.setattr(TextClassifier, "_proba_of_rows", rows)
    monkeypatch.setattr(spaces, "resolve_model", resolve)
    return calls


LONG = " ".join(["the plot was thin but the acting was wonderful and the music was moving"] * 5)[:399]


def test_naopc_request_above_budget_is_refused_before_any_model_call(model_calls):
    app = load_space_app("naopc")
    handler = spaces.user_errors(app.evaluate_texts)
    with pytest.raises(SpaceError, match=r"texts: this request needs about [\d,]+ model evaluations") as caught:
        handler(spaces.DEFAULT_MODEL, "\n".join([LONG] * 5), "integrated_gradients", "beam", 20)
    assert model_calls == {"forward": 0, "load": 0}
    assert "beam size" in str(caught.value) and caught.value.title == "Too much work"
    expected = naopc_evaluations([spaces.approx_words(LONG)] * 5, "beam", 20, app.MAX_EXACT_WORDS)
    assert f"{expected:,}" in str(caught.value) and expected > 50 * spaces.MAX_EVALUATIONS


def test_toki_pasted_training_set_above_budget_is_refused_before_any_model_call(model_calls, monkeypatch):
    app = load_space_app("toki_trust")
    train = "\n".join(f"{i % 2}\tthe film number {i} was {'good' if i % 2 else 'bad'} and long" for i in range(150))
    calls_before = dict(model_calls)
    with pytest.raises(SpaceError, match="training texts: this request needs about"):
        spaces.user_errors(app.assess_text)(spaces.DEFAULT_MODEL, "a fine film", "", train, "lime (500 samples)",
                                            ["classifier"])
    assert model_calls["forward"] == calls_before["forward"] == 0


def test_feedback_request_above_budget_is_refused_before_any_model_call(model_calls):
    app = load_space_app("inconsistency")
    texts = "\n".join([LONG[:300]] * app.MAX_EDITOR_TEXTS)
    with pytest.raises(SpaceError, match="texts: this request needs about"):
        spaces.user_errors(app.run_editor)(spaces.DEFAULT_MODEL, texts, app.MAX_STEPS, "1", "spacy", "pooled",
                                           progress=lambda *a, **k: None)
    assert model_calls == {"forward": 0, "load": 0}


def test_toki_attack_of_a_long_text_is_refused_before_any_model_call(model_calls):
    app = load_space_app("toki_trust")
    with pytest.raises(SpaceError, match="text: this request needs about") as caught:
        spaces.user_errors(app.attack_text)(spaces.DEFAULT_MODEL, " ".join([LONG] * 5)[:1990], "", "omission",
                                            ["classifier"], 0.1, 0.8)
    assert model_calls == {"forward": 0, "load": 0} and "share of words changed" in str(caught.value)


def test_estimates_follow_the_algorithms():
    assert naopc_evaluations([3], "auto", 5, 12, "omission") == (3 + 1) + 2 * 3 + 2 ** 3
    assert naopc_evaluations([3], "none", 5, 12, "lime") == 2 ** 3 + 2 + 6  # LIME: each distinct mask once, + the bf16 probe
    assert naopc_evaluations([40], "none", 5, 12, "lime") == 4916 + 2 + 80  # ~4,682 distinct of 5,000, +5 %
    assert naopc_evaluations([20], "auto", 4, 12, "gradient") == 1 + 40 + 4 * 20 * 21
    assert toki_evaluations([10, 20], [5], "omission") == (11 + 1) + (21 + 1) + (6 + 1)
    assert toki_evaluations([10, 20], [5], "lime", 500, index_cached=True) == 2 ** 5 + 2 + 1  # + the bf16 probe
    from textxai.editors import antonyms

    tried = max(len(v) for v in antonyms().values()) + 30  # replacements scored per word: antonyms + GloVe words
    per_step = (10 + 1) + 3 * tried + (1 + 11) + 11  # occlusion, 3 words' replacements, MiniLM filter, 11 predicted
    assert feedback_evaluations([10], steps=2) == 1 + 2 * per_step
    assert fim_evaluations(3, num_labels=4, random_flips=True, trials=5) == 3 * 4 + 3 * 6


def test_wall_time_budget_stops_a_long_job_between_batches(tiny_bert_folder):
    clf = TextClassifier(tiny_bert_folder)
    handler = spaces.user_errors(lambda: clf.predict_proba(["a text"] * 8, batch_size=2), max_seconds=0.0)
    with pytest.raises(SpaceError, match="stopped after 0 s") as caught:
        handler()
    assert caught.value.title == "Too much work"
    with work_budget(max_evaluations=5, what="run"):
        with pytest.raises(WorkBudgetExceeded, match="run: stopped after 4 model evaluations; the budget is 5"):
            list(length_sorted_batches([1] * 8, 2))
    assert len(list(length_sorted_batches([1] * 8, 2))) == 4  # outside the block: no budget


def test_ceval_csv_download_escapes_formulas_and_prunes_old_files(tmp_path, tiny_bert_folder, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # spaces.output_dir(): <temp>/textxai-space-outputs
    monkeypatch.setattr(spaces, "MAX_OUTPUT_FILES", 3)
    app = load_space_app("ceval")
    upload = tmp_path / "in.csv"
    with open(upload, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["orig_text", "gen_text"], ["=cmd|' /C calc'!A0 is bad", "+good film"],
                                      ["@SUM(1) bad", "-1"]])
    paths = [app.score_csv(tiny_bert_folder, str(upload), "none")[1] for _ in range(5)]
    assert all(p.startswith(str(tmp_path / "textxai-space-outputs")) for p in paths)
    assert sorted(os.listdir(tmp_path / "textxai-space-outputs")) == sorted(os.path.basename(p) for p in paths[-3:])
    with open(paths[-1], newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[1][:2] == ["'=cmd|' /C calc'!A0 is bad", "'+good film"] and rows[2][:2] == ["'@SUM(1) bad", "'-1"]
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row if cell and cell[0] != "'")


def test_lm_choices_follow_the_hosted_rules(tiny_gpt2_parts, tmp_path, monkeypatch):
    import torch

    model, tokenizer = tiny_gpt2_parts
    pickled, safe = tmp_path / "pickled", tmp_path / "safe"
    model.save_pretrained(pickled)
    (pickled / "model.safetensors").unlink()
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")  # a pickle-only checkpoint
    tokenizer.save_pretrained(pickled)
    model.save_pretrained(safe)
    tokenizer.save_pretrained(safe)
    assert spaces.resolve_lm("none") is None and spaces.resolve_lm("") is None
    assert spaces.resolve_lm(str(safe), hosted=False).max_length > 0
    with pytest.raises(SpaceError, match="safetensors|could not be loaded"):
        spaces.resolve_lm(str(pickled), hosted=False)  # a pickle-only LM is refused like a pickle-only classifier
    with pytest.raises(SpaceError, match="local paths are refused"):
        spaces.resolve_lm(str(safe), listed=("gpt2",), hosted=True)
    checked, loaded = [], []
    monkeypatch.setattr(loading, "check_hub_model", lambda name, safe, argument="model": checked.append((name, argument)))

    class FakeLM:
        def __init__(self, name, **kwargs):
            loaded.append((name, kwargs))

    from textxai import lm as _lm

    monkeypatch.setattr(_lm, "CausalLM", FakeLM)
    spaces.resolve_lm("gpt2", listed=("distilgpt2", "gpt2"), hosted=True)  # the Space's own choice works hosted
    assert checked == [("gpt2", "lm")] and loaded == [("gpt2", {"device": None, **loading.SAFE_LOAD_KWARGS})]
    with pytest.raises(SpaceError, match="lm='gpt3'"):
        spaces.resolve_lm("gpt3", listed=("gpt2",), hosted=True)
    _lm._NAMED.pop(("gpt2", None, "safe", None))


def test_hosted_classifier_choice_checks_metadata_first(monkeypatch):
    order = []
    monkeypatch.setattr(loading, "check_hub_model", lambda name, safe, argument="model": order.append("metadata"))
    class Loaded:  # a class: the resolver tells a TextClassifier from a name by isinstance
        def __init__(self, key, **kw):
            order.append(("load", kw))

    monkeypatch.setattr(classifier, "TextClassifier", Loaded)
    assert isinstance(spaces.resolve_model("someone/some-model", hosted=True), Loaded)
    assert order == ["metadata", ("load", {"device": None, **loading.SAFE_LOAD_KWARGS})]
    classifier._NAMED.pop(("someone/some-model", "safe", None))


def _rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _score_requests(tiny_bert_folder):
    app = load_space_app("ceval")
    handler = spaces.user_errors(app.score_one)

    def requests(tag: str, count: int):
        for i in range(count):
            handler(tiny_bert_folder, f"the acting was wooden in scene {tag}{i}", f"the acting was superb in scene {tag}{i}\n-1",
                    "none")
    return requests


@pytest.mark.long
def test_two_hundred_requests_keep_memory_flat(tiny_bert_folder):
    requests = _score_requests(tiny_bert_folder)
    requests("warm-up ", 200)  # allocator arenas, tokenizer and spaCy caches, torch kernels per shape settle
    # (measured alone: +8 MB over the first 200 requests after 60 warm-ups, then +0.5 MB per 200; inside the
    # whole suite the first 200 after 60 warm-ups grew 20.2 MB, so the warm-up is as long as the measurement)
    gc.collect()
    before = _rss_mb()
    requests("", 200)
    gc.collect()
    growth = _rss_mb() - before
    print(f"RSS growth over 200 requests after warm-up: {growth:.1f} MB")
    assert growth <= 20, f"RSS grew {growth:.1f} MB over 200 requests"


def test_requests_and_models_keep_the_caches_bounded(tiny_bert_folder, tmp_path):
    """Distinct texts and distinct models, request after request: every memo keeps at most its bound (the RSS
    soak above is the long tier's)."""
    import shutil

    from textxai import classifier

    _score_requests(tiny_bert_folder)("distinct ", 12)
    folders = []
    for i in range(classifier._NAMED.maxsize + 3):  # distinct models named in turn
        folders.append(str(tmp_path / f"m{i}"))
        shutil.copytree(tiny_bert_folder, folders[-1])
        spaces.resolve_model(folders[-1], hosted=False)
    assert len(classifier._NAMED) == classifier._NAMED.maxsize
    assert (os.path.realpath(folders[-1]), "safe", None) in classifier._NAMED  # one cache: the library's


def test_demo_model_is_loaded_once_per_process():
    from textxai.classifier import as_classifier

    assert spaces.resolve_model(spaces.DEFAULT_MODEL) is as_classifier(spaces.DEFAULT_MODEL)


def test_fim_space_strips_the_model_choice_for_its_corpus(monkeypatch):
    app = load_space_app("fim_difficulty")
    seen = []
    monkeypatch.setattr(app.fim, "difficulty", lambda texts, clf, batch_size: seen.append(texts) or {"difficulty": [0.0]})
    app.corpus_difficulty(" textxai/demo-topic ", object())
    assert seen == [app.corpus_texts("topic")] and seen[0] != app.corpus_texts("sentiment")


def test_space_error_keeps_quotes_but_escapes_tags():
    error = SpaceError("model='<img src=x>': expected a Hub id")
    assert error.message == "model='&lt;img src=x&gt;': expected a Hub id" and str(error) == "model='<img src=x>': expected a Hub id"


def test_a_silent_hub_frees_the_space_worker_within_one_deadline(monkeypatch):
    import threading

    release = threading.Event()
    monkeypatch.setenv("TEXTXAI_HUB_TIMEOUT", "0.3")
    monkeypatch.setattr(loading, "check_hub_model", lambda name, safe, argument: release.wait())  # the Hub never answers
    try:
        with pytest.raises(SpaceError, match=r"model='someone/silent'.*within 0.3 s") as caught:
            spaces.resolve_model("someone/silent", hosted=True)
        assert caught.value.title == "Hub too slow" and ("someone/silent", "safe", None) not in classifier._NAMED
        with pytest.raises(SpaceError, match=r"lm='someone/silent-lm'.*within 0.3 s"):
            spaces.resolve_lm("someone/silent-lm", hosted=True)
    finally:
        release.set()


def test_concurrent_requests_are_served_or_told_to_retry(monkeypatch):
    """More concurrent requests than the queue holds (127.0.0.1): each one is served correctly or refused at
    once with Gradio's "Queue is full ... try again" — none fails otherwise, none is lost."""
    import threading

    import gradio as gr
    from gradio_client import Client

    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    release, n = threading.Event(), 6

    def echo(text):
        release.wait(60)  # the worker is busy until every request has been queued or refused
        return f"<p>{spaces.escape(text)}</p>"

    with spaces.space("Load", module="naopc", paper_url="https://example.org", concurrency_limit=1, max_size=2) as demo:
        box, out = gr.Textbox(), gr.HTML()
        gr.Button("Run").click(spaces.user_errors(echo), box, out, api_name="echo")
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    outcomes, lock = [], threading.Lock()

    def one(i):
        try:
            got = Client(demo.local_url, verbose=False).predict(f"text <{i}>", api_name="/echo")
            kind = "served" if got == f"<p>text &lt;{i}&gt;</p>" else f"wrong: {got}"
        except Exception as error:  # noqa: BLE001 - the outcome is the point
            kind = "retry" if "queue is full" in str(error).lower() and "try again" in str(error).lower() else repr(error)
        with lock:
            outcomes.append(kind)
            if outcomes.count("retry") >= n - 3:  # at most 1 running + 2 waiting are accepted
                release.set()

    try:
        _run_in_threads(one, range(n))
    finally:
        release.set()
        demo.close()
    assert len(outcomes) == n and set(outcomes) <= {"served", "retry"}, outcomes
    assert 1 <= outcomes.count("served") <= 3 and outcomes.count("retry") >= n - 3, outcomes


def test_concurrent_bad_numbers_through_the_api_leave_the_worker_serving(monkeypatch, tiny_bert_folder):
    """Bad numbers sent at once with a good request (gradio_client, queue of 1 worker): each bad one is refused
    naming beam_size, the good one is served with the library's numbers."""
    import threading

    from gradio_client import Client

    from textxai import naopc

    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    app = load_space_app("naopc")
    demo = app.build_demo(default_model=tiny_bert_folder)
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    outcomes, lock = {}, threading.Lock()

    def one(value):
        try:
            got = Client(demo.local_url, verbose=False).predict(tiny_bert_folder, "a fine film", "omission", "none", value,
                                                                api_name="/evaluate_texts")
        except Exception as error:  # noqa: BLE001 - the outcome is the point
            got = str(error)
        with lock:
            outcomes[repr(value)] = got

    values = ["abc", "nan", 2.7, 1e30, 3]  # a float NaN cannot leave the client (JSON): its text can
    try:
        _run_in_threads(one, values)
    finally:
        demo.close()
    assert len(outcomes) == len(values)
    for value in values[:-1]:
        assert "beam_size=" in str(outcomes[repr(value)]), (value, outcomes[repr(value)])
    served = outcomes["3"]
    expected = naopc.compute(["a fine film"], None, TextClassifier(tiny_bert_folder), attribution_method="omission",
                                   normalization="none")
    assert isinstance(served, tuple) and f"{expected['comprehensiveness']:.6f}" in served[0], served


def _run_in_threads(fn, arguments, timeout: float = 120) -> None:
    """``fn(a)`` for every argument, each in its own thread, all started before any is joined."""
    import threading

    threads = [threading.Thread(target=fn, args=(a,)) for a in arguments]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
