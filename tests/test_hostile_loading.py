"""Hostile loading: an untrained head is refused, a silent Hub cannot hang a load, caches stay bounded."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from textxai import loading

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def headless_folder(tiny_bert_folder, tmp_path_factory) -> str:
    """The tiny BERT classifier saved without its classification head and without ``architectures``."""
    from helpers import save_headless

    return save_headless(tiny_bert_folder, tmp_path_factory.mktemp("headless"))


def test_headless_classifier_is_refused_naming_model_and_weights(headless_folder, tiny_bert_folder):
    from textxai.classifier import TextClassifier, as_classifier

    with pytest.raises(ValueError) as caught:
        TextClassifier(headless_folder)
    message = str(caught.value)
    assert message.startswith(f"model={headless_folder!r}")
    assert "classifier.bias" in message and "classifier.weight" in message and "random" in message
    with pytest.raises(ValueError, match="classifier.weight"):
        as_classifier(headless_folder)
    # the explicit internal opt-in (code that trains the head itself) still loads it; the intact model loads
    assert TextClassifier(headless_folder, allow_new_head=True).num_labels == 2
    assert TextClassifier(tiny_bert_folder).num_labels == 2


def test_headless_classifier_is_refused_by_space_and_cli(headless_folder, tmp_path):
    from textxai import spaces

    with pytest.raises(spaces.SpaceError, match="classifier.weight"):
        spaces.resolve_model(headless_folder, hosted=False)
    data = tmp_path / "d.csv"
    data.write_text("text\na good film\n")
    done = subprocess.run([sys.executable, "-m", "textxai", "run", "naopc", "--model", headless_folder, "--data", str(data),
                           "--output", str(tmp_path / "out"), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "classifier.weight" in lines[0] and "--model " in lines[0]   # the flag typed


def test_headless_lm_is_refused(tiny_gpt2_parts, tmp_path):
    from safetensors.torch import load_file, save_file

    from textxai.lm import CausalLM

    model, tokenizer = tiny_gpt2_parts
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    assert CausalLM(str(tmp_path)).max_length > 0  # intact (tied head) loads
    weights = load_file(tmp_path / "model.safetensors")
    dropped = sorted(k for k in weights if k.startswith("transformer.h.0.mlp"))
    save_file({k: v for k, v in weights.items() if k not in dropped}, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"lm=.*transformer\.h\.0\.mlp"):
        CausalLM(str(tmp_path))


def test_new_weights_reads_the_loading_report():
    assert loading.new_weights({"missing_keys": {"b", "a"}, "mismatched_keys": [("c", (2, 3), (3, 3))]}) == ["a", "b", "c"]
    assert loading.new_weights({"missing_keys": set(), "mismatched_keys": set()}) == []


def test_with_deadline_frees_the_caller():
    release = threading.Event()
    with pytest.raises(TimeoutError, match="model='x'.*within 0.2 s"):
        loading.with_deadline(release.wait, "model='x'", timeout=0.2)
    release.set()
    with pytest.raises(KeyError):
        loading.with_deadline(lambda: {}["k"], "what", timeout=5)


def test_lru_cache_is_bounded_and_builds_once_under_concurrency():
    cache = loading.LRUCache(maxsize=3)
    calls = []

    def build(k):
        calls.append(k)
        return object()

    threads = [threading.Thread(target=cache.get_or_create, args=("same", lambda: build("same"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["same"]
    for k in range(10):
        cache.get_or_create(k, lambda k=k: build(k))
    assert len(cache) == 3 and cache.keys() == [7, 8, 9]
    with pytest.raises(ValueError, match="maxsize=0"):
        loading.LRUCache(0)
    with pytest.raises(RuntimeError):
        cache.get_or_create("boom", lambda: (_ for _ in ()).throw(RuntimeError("x")))
    assert "boom" not in cache  # a failure is not cached


def test_library_caches_are_bounded(tiny_bert_folder, tmp_path):
    import shutil

    from textxai import classifier

    before = classifier._NAMED.maxsize
    assert isinstance(classifier._NAMED, loading.LRUCache) and before >= 1
    folders = []
    for i in range(before + 2):
        folders.append(str(tmp_path / f"m{i}"))
        shutil.copytree(tiny_bert_folder, folders[-1])
        classifier.as_classifier(folders[-1])
    assert len(classifier._NAMED) == before
    assert (folders[-1], None) in classifier._NAMED and (folders[0], None) not in classifier._NAMED


SILENT_HUB = """
import os, socket, sys, threading
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
held = []
def accept():
    while True:
        held.append(server.accept()[0])   # accept, never answer
threading.Thread(target=accept, daemon=True).start()
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:%d" % server.getsockname()[1]
from textxai.classifier import TextClassifier
from textxai.lm import CausalLM
try:
    CALL
except TimeoutError as error:
    print("MESSAGE", error)
    sys.exit(0)
print("NO ERROR")
sys.exit(1)
"""


@pytest.mark.parametrize("call, argument", [
    ("TextClassifier('someone/silent-model')", "model='someone/silent-model'"),
    ("CausalLM('someone/silent-lm')", "lm='someone/silent-lm'"),
])
def test_a_hub_that_never_answers_gives_a_clear_error_within_the_timeout(call, argument, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}  # this test only: online, to 127.0.0.1
    env.update(TEXTXAI_HUB_TIMEOUT="3", HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_TELEMETRY="1")
    done = subprocess.run([sys.executable, "-c", SILENT_HUB.replace("CALL", call)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    message = done.stdout.split("MESSAGE", 1)[1]
    assert argument in message and "within 3 s" in message  # the deadline, not the Hub's own retries, ended it
