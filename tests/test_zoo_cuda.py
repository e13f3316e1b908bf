"""The GPU path (issue 37, deliverable 5): zoo members and modules on CUDA equal the CPU within float tolerance;
bfloat16 / float16 checkpoints handled on both. Marked ``cuda``; skipped where CUDA is absent."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import zoo as zoo_module

import textxai
from textxai.classifier import TextClassifier

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")]
TEXTS = list(zoo_module.TEXTS)


@pytest.mark.parametrize("name", zoo_module.FAMILIES + ("bert_5class", "bert_multilabel", "bert_tuple"))
def test_member_on_cuda_equals_cpu(zoo, name):
    from textxai.fim.text import difficulty

    folder = zoo.members[name].folder
    cpu, gpu = TextClassifier(folder, device="cpu"), TextClassifier(folder, device="cuda")
    np.testing.assert_allclose(gpu.predict_proba(TEXTS), cpu.predict_proba(TEXTS), rtol=1e-4, atol=1e-5)
    masks = np.eye(3, dtype=bool)
    np.testing.assert_allclose(gpu.masked_proba("a wonderful film", masks), cpu.masked_proba("a wonderful film", masks),
                               rtol=1e-4, atol=1e-5)
    if not cpu.multi_label:
        np.testing.assert_allclose(difficulty(TEXTS, gpu)["difficulty"], difficulty(TEXTS, cpu)["difficulty"],
                                   rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("name, dtype", [("bert_bf16", torch.bfloat16), ("bert_fp16", torch.float16)])
def test_half_precision_models_on_cuda(zoo, name, dtype):
    """A half-precision model object keeps its dtype on CUDA; its probabilities and FIM are finite and near the
    float32 load of the same checkpoint (tolerance of the half format)."""
    from textxai.fim.text import difficulty

    member = zoo.variants[name]
    model, tok = member.parts()
    half = TextClassifier((model.to(dtype).cuda(), tok))
    full = TextClassifier(member.folder, device="cuda")
    np.testing.assert_allclose(half.predict_proba(TEXTS), full.predict_proba(TEXTS), atol=2e-2)
    lam = difficulty(TEXTS, half, return_eigenvector=True)["difficulty"]
    assert np.isfinite(lam).all()
    np.testing.assert_allclose(lam, difficulty(TEXTS, full)["difficulty"], rtol=0.1)


@pytest.mark.parametrize("module, kwargs", [("naopc", {"attribution_method": "omission"}), ("fim_difficulty", {})])
def test_modules_on_cuda_equal_cpu(zoo, module, kwargs):
    folder = zoo.classifiers["bert"].folder
    cpu = textxai.load(module).compute(texts=TEXTS[:2], model=TextClassifier(folder, device="cpu"), **kwargs)
    gpu = textxai.load(module).compute(texts=TEXTS[:2], model=TextClassifier(folder, device="cuda"), **kwargs)
    for key, value in cpu.items():
        if isinstance(value, float):
            assert gpu[key] == pytest.approx(value, rel=1e-3, abs=1e-5), key
