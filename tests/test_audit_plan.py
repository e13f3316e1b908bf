"""The audit's plan and cache as an outsider attacked them (issue 37, "Audit"): the stage cache keyed by the weights'
content, --config's run options kept when the flags are not given, n_resamples=1 refused, and the up-front estimate
pricing NAOPC on the words the model sees. Each failed on the code before the fix."""
from __future__ import annotations

import argparse
import copy

import pytest
import torch


def _swapped_head(model):
    """The same model with its two head rows swapped (a label-order fix): every tensor's sum unchanged."""
    other = copy.deepcopy(model)
    with torch.no_grad():
        head = other.classifier
        head.weight[[0, 1]] = head.weight[[1, 0]].clone()
        head.bias[[0, 1]] = head.bias[[1, 0]].clone()
    return other


def test_the_stage_cache_keys_weights_by_content(bert_parts):
    from textxai.attribution import weights_digest
    from textxai.audit.options import audit_options
    from textxai.audit.plan import fingerprint, model_digest
    from textxai.classifier import TextClassifier

    model, tokenizer = bert_parts
    a = TextClassifier((model, tokenizer), device="cpu")
    b = TextClassifier((_swapped_head(model), tokenizer), device="cpu")
    assert float(a.model.classifier.weight.sum()) == pytest.approx(float(b.model.classifier.weight.sum()), rel=1e-6, abs=1e-6)
    assert weights_digest(a) != weights_digest(b)              # the explanation caches' key reads the bytes too
    assert not torch.equal(a.model.classifier.weight, b.model.classifier.weight)
    opts = audit_options({})
    for stage in ("overview", "difficulty", "faithfulness", "trust"):
        assert fingerprint(a, ["a film"], [1], stage, opts) != fingerprint(b, ["a film"], [1], stage, opts)
    assert model_digest(a) != model_digest(b)
    same = TextClassifier((copy.deepcopy(model), tokenizer), device="cpu")
    assert fingerprint(a, ["a film"], [1], "overview", opts) == fingerprint(same, ["a film"], [1], "overview", opts)
    assert fingerprint(a, ["a film"], [1], "overview", opts, model_digest(a)) == fingerprint(a, ["a film"], [1], "overview", opts)


def _args(argv):
    from textxai.audit.cli import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["--model", "m", "--data", "d", *argv])


def test_config_run_options_are_not_overridden_by_flag_defaults(tmp_path):
    from textxai.audit.cli import options_from
    from textxai.audit.options import audit_options

    config = tmp_path / "audit.yaml"
    config.write_text("run:\n  max_evaluations: 5000\n  progress: false\n  batch_size: 4\n")
    got = audit_options(options_from(_args(["--config", str(config)])))
    assert (got.run.max_evaluations, got.run.progress, got.run.batch_size) == (5000, False, 4)
    given = audit_options(options_from(_args(["--config", str(config), "--max-evaluations", "70"])))
    assert given.run.max_evaluations == 70                    # a flag given wins over the file
    bare = audit_options(options_from(_args([])))
    assert bare.run.max_evaluations is None and bare.run.progress is True
    assert audit_options(options_from(_args(["--no-progress"]))).run.progress is False


@pytest.mark.parametrize("value", [1, 2, 98])
def test_too_few_resamples_refused_naming_the_audit_option(value):
    from textxai import stats
    from textxai.audit.options import audit_options

    with pytest.raises(ValueError, match=rf"intervals.n_resamples={value}: expected at least 99 bootstrap resamples"):
        audit_options({"intervals": {"n_resamples": value}})
    with pytest.raises(ValueError, match=rf"n_resamples={value}: expected at least 99"):
        stats.bootstrap_interval([0.1, 0.5, 0.9], n_resamples=value)
    assert audit_options({"intervals": {"n_resamples": 99}}).intervals.n_resamples == 99


def _seen_by_brute_force(clf, text: str) -> int:
    """Words whose tokens all fit in the model's window (one word at a time through the tokenizer)."""
    room = clf.max_length - 2   # [CLS] ... [SEP]
    used, n = 0, 0
    for word in clf.words(text):
        used += len(clf.tokenizer(word, add_special_tokens=False)["input_ids"])
        if used > room:
            break
        n += 1
    return n


def test_the_estimate_prices_naopc_on_the_words_the_model_sees(bert_parts):
    from textxai.audit.options import audit_options
    from textxai.audit.plan import estimate, seen_words
    from textxai.classifier import TextClassifier
    from textxai.naopc.method import naopc_evaluations

    model, tokenizer = bert_parts
    clf = TextClassifier((model, tokenizer), device="cpu", max_length=24)
    words = "a fine film with a dull and long middle but a good end".split()
    long_text = " ".join(words * 20)                             # 260 words; the model sees ~22
    short = "a fine film"
    seen = _seen_by_brute_force(clf, long_text)
    assert seen_words(clf, [long_text, short]) == [seen, None] and seen < 30
    opts = audit_options({"sections": ["faithfulness"], "faithfulness": {"max_words": 0, "max_texts": 2}})
    f = opts.faithfulness
    got = estimate([long_text, short], 2, opts, clf=clf)["faithfulness"]
    want = naopc_evaluations([seen, 3], f.normalization, None, f.max_exact_words, list(f.methods))
    assert got == want
    blind = estimate([long_text, short], 2, opts)["faithfulness"]   # without the model: every word priced
    assert blind > 20 * got
