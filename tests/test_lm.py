import numpy as np
import pytest
import torch

from textxai.lm import CausalLM, perplexity, token_nll

TEXTS = ["the movie was wonderful", "a", "the food was not good but the service was lovely .", "", "i hated it !"]


def loop_perplexity(model, tokenizer, text):
    ids = [tokenizer.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
    nll = []
    with torch.no_grad():
        for t in range(1, len(ids)):
            logits = model(input_ids=torch.tensor([ids[:t]])).logits[0, -1].double()
            nll.append(-torch.log_softmax(logits, -1)[ids[t]].item())
    return float(np.exp(np.mean(nll))) if nll else float("nan")


def test_perplexity_equals_token_by_token_loop_and_is_batch_invariant(tiny_gpt2_parts):
    model, tokenizer = tiny_gpt2_parts
    lm = CausalLM(model, tokenizer)
    expected = np.array([loop_perplexity(model, tokenizer, t) for t in TEXTS])
    for bs in (1, 2, 16):
        got = perplexity(TEXTS, lm, batch_size=bs)
        np.testing.assert_allclose(got, expected, rtol=1e-6, equal_nan=True)
    assert np.isnan(got[3])  # empty text: nothing to predict
    assert len(token_nll(["a"], lm)[0]) == len(tokenizer("a", add_special_tokens=False)["input_ids"])


def test_long_texts_are_truncated_with_one_warning(tiny_gpt2_parts):
    lm = CausalLM(*tiny_gpt2_parts)
    long = " ".join(["the movie was good"] * 40)
    with pytest.warns(UserWarning, match="2 of 3 texts are longer"):
        ppl = perplexity([long, "a", long], lm)
    assert len(token_nll([long], lm)[0]) == lm.max_length - 1
    assert np.isfinite(ppl).all()


def test_lm_from_folder_and_errors(tiny_gpt2_parts, tmp_path):
    model, tokenizer = tiny_gpt2_parts
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    np.testing.assert_allclose(perplexity(TEXTS[:3], str(tmp_path)), perplexity(TEXTS[:3], CausalLM(model, tokenizer)), rtol=1e-6)
    with pytest.raises(ValueError, match="lm='/no/such/lm'"):
        perplexity(["a"], "/no/such/lm")
    with pytest.raises(ValueError, match="tokenizer=None"):
        CausalLM(model)
    with pytest.raises(ValueError, match="batch_size=-1"):
        perplexity(["a"], CausalLM(model, tokenizer), batch_size=-1)
