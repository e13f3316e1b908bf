"""The CEval judge cannot be fooled by echoes: strict parsing of the reply only, the chat template, the warning."""
import math
import re

import numpy as np
import pytest
import torch

from textxai import ceval
from textxai.ceval.judge import judge_quality, parse_score, quality_prompt
from textxai.lm import PACKAGED_LM, as_lm, chat_text

TEXTS = ["the movie was wonderful and the cast superb .", "cast the superb wonderful was movie and the ."]
RUBRIC = "(on a scale of 1-5, with 1 being the lowest?)."


@pytest.mark.parametrize("reply", [
    RUBRIC, "1-5", "4-5", "3 or 4", "4, 5", "Grammar: 4, fluency: 5", "Movie review 4:", "Movie review:", "", "  ",
    "The score is:", "6", "0", "4.5", "10/10", "Rating: 3 to 4",
])
def test_echoes_ranges_lists_and_silence_are_unparsed_and_counted(reply):
    out = judge_quality(TEXTS, lambda prompts: [reply] * len(prompts))
    assert out["num_unparsed"] == 8 and all(np.isnan(out[a]).all() for a in ceval.QUALITY_ASPECTS)
    assert out["unparsed"][0] == ("grammar", 0, reply)                        # shown with the raw reply
    assert out["warning"].startswith("the judge left 8 of its 8 replies unparsed")


@pytest.mark.parametrize("reply, score", [("4", 4.0), (" 4.", 4.0), ("The score is: 2", 2.0), ("5/5", 5.0),
                                          ("I would rate it 3 out of 5.", 3.0), ("Score: 1", 1.0)])
def test_a_single_score_on_the_scale_is_parsed(reply, score):
    out = judge_quality(TEXTS, lambda prompts: [reply] * len(prompts))
    assert out["num_unparsed"] == 0 and out["warning"] is None
    assert all((out[a] == score).all() for a in ceval.QUALITY_ASPECTS)


#: SmolLM2-135M-Instruct's real replies (greedy, chat template) to the four questions about IMDb reviews of CEval's
#: expert test set, recorded as strings: cut at 8 new tokens (the former default) and at 32 (the default now).
SMOLLM2_NUMBERED = [
    "1. The movie review is grammatically",                       # 8 tokens: its list's "1." was read as score 1
    '1. "The wonderful "Z"',
    '1. "Houseboat Horror" is often regarded as the worst Australian film ever made and described as a typical '
    "slasher film,which carried the promotion",
    "1. The movie review is not only",
    "1. The movie Brashear is a great movie. It is a great example of how a person can be inspired by a great "
    "leader. It is a",
    "The movie review is:\n1. The movie review is 1. The movie review is 1. The movie review is 1. The movie review",
    "The movie review is 1.\nThe movie review is 2.\nThe movie review is 3.\nThe movie review is 4.\n",
]
SMOLLM2_SCORES = [("The answer is: 4", 4.0), ("The natural and fluent language of a movie review is 5.", 5.0)]


def test_list_numbering_of_a_real_judge_is_no_score():
    """SmolLM2-135M-Instruct as judge opens lists ("1. The movie review is grammatically", cut there by 8 new
    tokens): parse_score found one number and read it as score 1, silently dragging every aspect down. A line
    opening with "N." / "N)" and words is list numbering: unparsed, counted, shown and named in the warning;
    its real scores stay parsed."""
    replies = iter(SMOLLM2_NUMBERED + [r for r, _ in SMOLLM2_SCORES] * 4 + ["3"] * 14)
    texts = [f"review {i}" for i in range(6)]
    out = judge_quality(texts, lambda prompts: [next(replies) for _ in prompts])
    assert out["num_unparsed"] == len(SMOLLM2_NUMBERED) == 7
    assert [u[2] for u in out["unparsed"]] == SMOLLM2_NUMBERED
    assert np.isnan(out["grammar"]).all() and np.isnan(out["cohesiveness"][0])
    assert out["cohesiveness"][1:].tolist() == [4.0, 5.0, 4.0, 5.0, 4.0]
    assert out["warning"] is None                                       # 7 of 24: counted, not a warning
    numbered = judge_quality(texts, lambda prompts: [SMOLLM2_NUMBERED[i % 7] for i in range(len(prompts))])
    assert numbered["num_unparsed"] == 24 and "24 of them open a numbered list" in numbered["warning"]
    assert [parse_score(r) for r, _ in SMOLLM2_SCORES] == [s for _, s in SMOLLM2_SCORES]


@pytest.mark.parametrize("reply, score", [("4", 4.0), ("4.", 4.0), ("Score: 4", 4.0), ("4/5", 4.0),
                                          ("I would say 3/5.", 3.0), ("The score is: 5 out of 5.", 5.0),
                                          ("4.\nThe review reads well.", 4.0), ("4/5. Clear and correct.", 4.0),
                                          ("1. The plot", math.nan), ("2) It reads well", math.nan),
                                          ("Scores:\n3. Grammar is fine", math.nan), ("(1) The", math.nan)])
def test_scores_and_numbering_are_told_apart(reply, score):
    assert parse_score(reply) == score or math.isnan(score) and math.isnan(parse_score(reply))


def test_half_unparsed_is_no_warning_more_is():
    replies = iter(["4", "no"] * 4 + ["no"] * 8)
    half = judge_quality(TEXTS, lambda prompts: [next(replies) for _ in prompts])
    assert half["num_unparsed"] == 4 and half["warning"] is None
    more = judge_quality(TEXTS, lambda prompts: [next(replies) for _ in prompts])
    assert more["num_unparsed"] == 8 and more["warning"] is not None


def test_ceval_result_counts_shows_and_warns():
    echo = lambda prompts: [RUBRIC for _ in prompts]  # noqa: E731
    with pytest.warns(RuntimeWarning, match="the judge left 8 of its 8 replies unparsed"):
        res = ceval.compute(TEXTS, TEXTS, original_labels=[0, 0], counterfactual_labels=[1, 1], judge=echo)
    assert res["num_unparsed_judgements"] == 8 and res["num_judgements"] == 8 and math.isnan(res["text_quality"])
    assert res["unparsed_judgements"][1] == {"aspect": "grammar", "example": 1, "reply": RUBRIC}
    assert "judge_warning" in res
    fine = ceval.compute(TEXTS, [TEXTS[0], "-1"], original_labels=[0, 0], counterfactual_labels=[1, 1],
                         judge=lambda prompts: ["4"] * len(prompts))
    assert fine["num_judgements"] == 4 and fine["text_quality"] == 4.0 and "judge_warning" not in fine


def test_prompt_has_one_text_and_no_index():
    prompt = quality_prompt("A fine film.", "likability")
    assert prompt.count("A fine film.") == 1 and not any(ch.isdigit() for ch in prompt.replace("1-5", "").replace("1 being", ""))


def test_chat_template_is_applied_and_only_the_reply_is_parsed(tiny_gguf_file):
    lm = as_lm(str(tiny_gguf_file))
    out = judge_quality(TEXTS[:1], lm, max_new_tokens=3, method="generate")   # CEval's reading, kept by name
    prompt = out["prompts"]["grammar"][0]
    text = chat_text(lm, prompt)
    assert text.startswith("<s>user: Please rate") and text.endswith("</s><s>assistant:")   # the template, applied
    ids = lm.tokenizer(text, add_special_tokens=False)["input_ids"][-(lm.max_length - 3):]  # the tiny LM's 64 positions
    new = []
    with torch.no_grad():
        for _ in range(3):
            nxt = int(lm.model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
            new.append(nxt)
            if nxt == lm.tokenizer.eos_token_id:
                break
    reply = lm.tokenizer.decode(new, skip_special_tokens=True)
    assert out["replies"]["grammar"][0] == reply and "Please rate" not in reply


def test_packaged_model_as_judge_parses_no_echo(smollm2):
    """SmolLM2-135M-Instruct: every reply is the model's own text (no prompt in it; it often echoes the label line
    "Movie review:", which is unparsed), every parsed score is the one number of its reply and never a list's
    number ("1. The movie review is ..."), and every unparsed reply is counted. Read from its probabilities (the
    default), every text gets a score: an expected score in [1, 5] and an entropy in [0, ln 5]."""
    read = judge_quality(TEXTS, smollm2)
    assert read["method"] == "probabilities" and read["num_unparsed"] == 0
    for aspect in ceval.QUALITY_ASPECTS:
        assert ((read[aspect] >= 1) & (read[aspect] <= 5)).all() and len(read[aspect]) == len(TEXTS)
        assert ((read["entropy"][aspect] >= 0) & (read["entropy"][aspect] <= np.log(5) + 1e-9)).all()
        assert (read["score_mass"][aspect] > 0.05).all()        # it does answer with a digit
    out = judge_quality(TEXTS, smollm2, method="generate")
    for aspect in ceval.QUALITY_ASPECTS:
        for reply, score in zip(out["replies"][aspect], out[aspect]):
            assert "Please rate" not in reply                   # the reply only, never the prompt
            numbers = re.findall(r"\d+", reply)
            assert math.isnan(score) or numbers[0] == str(int(score)) and RUBRIC not in reply
            numbered = re.search(r"^[ \t]*\d+[ \t]*[.)][ \t]*[A-Za-z\"']", reply, re.MULTILINE)
            assert not (numbered and not math.isnan(score)), reply   # "1. The movie review is ..." is no score 1
    assert out["num_unparsed"] == sum(np.isnan(out[a]).sum() for a in ceval.QUALITY_ASPECTS)
    assert as_lm(PACKAGED_LM) is smollm2                     # loaded once per session, from the library's cache


@pytest.mark.parametrize("kwargs", [{"max_new_tokens": 3}, {"pad_token_id": 0}, {"use_cache": False}, {"max_length": 5},
                                    {"num_return_sequences": 2}, {"input_ids": [[1]]}])
def test_generate_options_that_textxai_sets_are_refused_by_name(kwargs, tiny_gpt2_parts):
    """judge_generate_kwargs={'max_new_tokens': 3} was a TypeError inside transformers ("generate() got multiple values
    for keyword argument 'max_new_tokens'"), after the classifier's passes; {'max_length': 5} silently cut every reply
    to nothing (all unparsed). They are refused before any model call, naming the key and the option to use."""
    from textxai import ceval
    from textxai.lm import CausalLM, generate

    key = next(iter(kwargs))
    with pytest.raises(ValueError, match=rf"judge_generate_kwargs=.*'{key}' is set by textxai"):
        ceval.compute(["a bad film"], ["a good film"], original_labels=[0], counterfactual_labels=[1],
                      judge=lambda p: ["3"] * len(p), judge_generate_kwargs=kwargs)
    with pytest.raises(ValueError, match=rf"generate_kwargs=.*'{key}' is set by textxai"):
        generate(CausalLM(*tiny_gpt2_parts), ["a film"], max_new_tokens=2, generate_kwargs=kwargs)
