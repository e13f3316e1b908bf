"""The ceval module and the model-facing path: classifier, perplexity, LLM judge, plots, card."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

import textxai
from textxai import ceval

REFS = ["the movie was wonderful", "a terrible boring film , i hated it !", "the food was not good", "it was fine"]
CFS = ["the movie was terrible", "a wonderful film , i loved it !", "the food was good", "-1"]


@pytest.fixture(scope="module")
def module():
    return textxai.load("ceval")


def test_module_matches_library(module):
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]])
    q = np.array([[0.3, 0.7], [0.6, 0.4], [0.6, 0.4], [0.5, 0.5]])
    out = module.compute(references=REFS, predictions=CFS, original_probs=p, counterfactual_probs=q, return_per_example=True)
    ref = ceval.compute(REFS, CFS, original_probs=p, counterfactual_probs=q, return_per_example=True)
    assert out.keys() == ref.keys()
    for key, value in ref.items():
        if isinstance(value, float) and math.isnan(value):
            assert out[key] is None  # NaN -> null: module results are JSON-valid
        elif key != "per_example":
            assert out[key] == value, key
    assert out["num_failed"] == 1 and out["flip_rate"] == 0.5
    # add_batch in pieces, None for a failed generation, mixed single / several counterfactuals
    module.add_batch(references=REFS[:2], predictions=[CFS[0], [CFS[1], "a wonderful film"]])
    module.add_batch(references=REFS[2:], predictions=[CFS[2], None])
    batched = module.compute(original_probs=p, counterfactual_probs=q)
    assert batched["flip_rate"] == out["flip_rate"] and batched["num_failed"] == 1
    assert batched["token_distance"] == out["token_distance"]
    assert batched["diversity"] == ceval.token_distance(CFS[1], "a wonderful film") and batched["num_diversity_examples"] == 1


def test_model_path_equals_precomputed_and_batch_size(module, bert_clf):
    out = module.compute(references=REFS, predictions=CFS, model=bert_clf, return_per_example=True)
    p = bert_clf.predict_proba(REFS)
    q = p.copy()
    q[:3] = bert_clf.predict_proba(CFS[:3])          # the failed one is never sent to the model
    ref = ceval.compute(REFS, CFS, original_probs=p, counterfactual_probs=q, return_per_example=True)
    assert out["per_example"]["flipped"] == ref["per_example"]["flipped"]
    np.testing.assert_allclose(out["per_example"]["probability_change"], ref["per_example"]["probability_change"], atol=1e-6)
    one = module.compute(references=REFS, predictions=CFS, model=bert_clf, batch_size=1, return_per_example=True)
    np.testing.assert_allclose(one["per_example"]["probability_change"], out["per_example"]["probability_change"], atol=1e-6)
    # targets: the contrast class is the given target
    t = module.compute(references=REFS, predictions=CFS, model=bert_clf, targets=[1, 0, 1, 0], return_per_example=True)
    assert t["contrast"] == "target" and t["per_example"]["contrast_class"] == [1, 0, 1, 0]
    np.testing.assert_allclose(t["per_example"]["probability_change"][:3],
                               [q[i, c] - p[i, c] for i, c in zip(range(3), [1, 0, 1])], atol=1e-6)
    names = [bert_clf.labels[i] for i in (1, 0, 1, 0)]
    by_name = module.compute(references=REFS, predictions=CFS, model=bert_clf, targets=names, original_probs=p,
                             counterfactual_probs=q, return_per_example=True)
    assert by_name["per_example"]["contrast_class"] == [1, 0, 1, 0]
    with pytest.raises(ValueError, match=r"targets\[0\]='nope': not a label of the model"):
        module.compute(references=REFS, predictions=CFS, model=bert_clf, targets=["nope"] * 4)


def test_nli_pairs_with_model(module, bert_clf):
    premises = ["a man is sleeping outside .", "the food was good"]
    hyps = ["nobody is sleeping .", "it was lovely"]
    cf_premises = ["a man is running outside .", "the food was good"]   # first: premise edited
    cf_hyps = ["nobody is sleeping .", "it was terrible"]              # second: hypothesis edited
    out = module.compute(references=premises, predictions=cf_premises, reference_pairs=hyps, prediction_pairs=cf_hyps,
                         model=bert_clf, return_per_example=True)
    assert out["contrast"] == "counterfactual_argmax"
    p = bert_clf.predict_proba(premises, hyps)
    q = bert_clf.predict_proba(cf_premises, cf_hyps)
    c = q.argmax(axis=1)
    np.testing.assert_allclose(out["per_example"]["probability_change"], q[[0, 1], c] - p[[0, 1], c], atol=1e-6)
    assert out["per_example"]["token_distance_premise"] == [1.0, 0.0]
    assert out["per_example"]["token_distance_hypothesis"] == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"reference_pairs\[1\]='  ': the original hypothesis is missing"):
        module.compute(references=premises, predictions=cf_premises, reference_pairs=[hyps[0], "  "],
                       prediction_pairs=cf_hyps, model=bert_clf)


def _loop_perplexity(model, tokenizer, text):
    """Token by token: p(t_i | BOS, t_1..t_{i-1}) from a fresh forward pass each step."""
    ids = [tokenizer.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
    nll = []
    with torch.no_grad():
        for i in range(1, len(ids)):
            logits = model(input_ids=torch.tensor([ids[:i]])).logits[0, -1].double()
            nll.append(-torch.log_softmax(logits, -1)[ids[i]].item())
    return math.exp(sum(nll) / len(nll))


def test_perplexity_equals_token_loop(module, tiny_gpt2_parts):
    model, tokenizer = tiny_gpt2_parts
    out = module.compute(references=REFS, predictions=CFS, original_labels=[0, 0, 0, 0], counterfactual_labels=[1, 0, 1, 1],
                         lm=(model, tokenizer), batch_size=2, return_per_example=True)
    per = out["per_example"]["perplexity"]
    for i in range(3):
        assert per[i] == pytest.approx(_loop_perplexity(model, tokenizer, CFS[i]), rel=1e-6)
    assert per[3] is None                                       # failed generation: left out (null, JSON-valid)
    assert out["perplexity"] == pytest.approx(np.mean(per[:3]), rel=1e-12)
    assert out["perplexity_flipped"] == pytest.approx(np.mean([per[0], per[2]]), rel=1e-12)
    # NLI: the text is "premise hypothesis"
    nli = module.compute(references=["a man sleeps ."], predictions=["a man runs ."], reference_pairs=["it is fine"],
                         prediction_pairs=["it is fine"], original_labels=[0], counterfactual_labels=[1], lm=(model, tokenizer))
    assert nli["perplexity"] == pytest.approx(_loop_perplexity(model, tokenizer, "a man runs . it is fine"), rel=1e-6)


class ScriptedJudge:
    """Replies from a script, cycling; records the prompts it was asked."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def __call__(self, prompts):
        self.prompts.extend(prompts)
        return [self.replies[(len(self.prompts) - len(prompts) + i) % len(self.replies)] for i in range(len(prompts))]


def test_judge_prompts_and_parsing(module):
    judge = ScriptedJudge(["4", "The score is: 3 out of 5.", "excellent!"])
    out = module.compute(references=REFS, predictions=CFS, original_labels=[0] * 4, counterfactual_labels=[1] * 4,
                         judge=judge, return_per_example=True)
    # 3 valid texts x 4 aspects = 12 prompts; replies cycle 4, 3, NaN
    assert len(judge.prompts) == 12
    scores = {a: out["per_example"][a] for a in ceval.QUALITY_ASPECTS}
    assert scores["grammar"][:3] == [4.0, 3.0, None] or (scores["grammar"][:2] == [4.0, 3.0] and math.isnan(scores["grammar"][2]))
    assert scores["grammar"][3] is None                         # the failed generation is not judged
    assert out["num_unparsed_judgements"] == 4
    assert out["grammar"] == 3.5 and out["cohesiveness"] == 3.5
    # CEval's wording, the text (labelled without an index: an echoed index must not become a score) and the topic
    first = judge.prompts[0]
    assert first.startswith("Please rate each movie review\nThe goal of this task is to rate each movie review.")
    assert "Movie review:\nthe movie was terrible\n" in first and "Movie review 0" not in first
    assert "How grammatically correct is each movie review? (on a scale of 1-5, with 1 being the lowest?)." in first
    assert first.endswith("Please only return a score for the movie review. The score is:")
    assert "How well do the sentences in each movie review fit together?" in judge.prompts[3]
    assert "How enjoyable do you find each movie review?" in judge.prompts[6]
    assert judge.prompts[9].startswith("You are given a list of movie reviews. Please read the movie review and answer the question.")
    assert "Question: How natural and fluent each movie review?" in judge.prompts[9]
    # NLI topic and "premise hypothesis" text
    judge = ScriptedJudge(["5"])
    nli = module.compute(references=["a man sleeps ."], predictions=["a man runs ."], reference_pairs=["he is out"],
                         prediction_pairs=["he is out"], original_labels=[0], counterfactual_labels=[1], judge=judge)
    assert "Natural language inference pair:\na man runs . he is out\n" in judge.prompts[0]
    assert nli["text_quality"] == 5.0 and nli["num_unparsed_judgements"] == 0
    # nothing parseable at all: NaN and a count, no crash
    silent = module.compute(references=REFS[:2], predictions=CFS[:2], original_labels=[0, 0], counterfactual_labels=[1, 1],
                            judge=ScriptedJudge(["no idea"]))
    assert silent["text_quality"] is None and silent["num_unparsed_judgements"] == 8


def test_judge_wrong_number_of_replies(module):
    with pytest.raises(ValueError, match="judge returned 0 replies for 1 prompts"):
        module.compute(references=REFS[:1], predictions=CFS[:1], original_labels=[0], counterfactual_labels=[1],
                       judge=lambda prompts: [])


def test_generative_judge_is_greedy_decoding(tiny_gpt2_parts):
    """A real (tiny random) GPT-2 as judge: replies equal a hand-written greedy loop over the same prompt."""
    model, tokenizer = tiny_gpt2_parts
    out = ceval.judge_quality(["the movie was wonderful"], (model, tokenizer), max_new_tokens=3, method="generate")
    for aspect in ceval.QUALITY_ASPECTS:
        prompt = out["prompts"][aspect][0]
        # the prompt as a generation prompt: the tokenizer's start token, the text, no end token (RoBERTa-style
        # tokenizers append </s>, which would end the prompt before the reply)
        plain = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        start = [tokenizer.bos_token_id] if tokenizer(prompt)["input_ids"][0] == tokenizer.bos_token_id else []
        ids = torch.tensor([start + plain])[:, -(model.config.n_positions - 3):]
        with torch.no_grad():
            for _ in range(3):
                nxt = model(input_ids=ids).logits[0, -1].argmax()
                ids = torch.cat([ids, nxt.view(1, 1)], dim=1)
        reply = tokenizer.decode(ids[0, -3:], skip_special_tokens=True)
        assert out["replies"][aspect][0] == reply
        expected = ceval.parse_score(reply)
        got = out[aspect][0]
        assert (math.isnan(got) and math.isnan(expected)) or got == expected


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(references=["a", "b"], predictions=["c"]), ValueError, "references has 2 items but predictions has 1"),
    (dict(references=[], predictions=[]), ValueError, r"predictions=\[\]: expected at least one example"),
    (dict(references=["a"], predictions=[3]), TypeError, r"predictions\[0\]=3"),
    (dict(references=[None], predictions=["a"]), TypeError, r"references\[0\]=None"),
    (dict(references=["a"], predictions=["b"], original_probs=[[0.5, 0.5]], counterfactual_probs=[[0.5, 0.5]], targets=[5]),
     ValueError, r"targets\[0\]=5"),
    (dict(references=["a"], predictions=["b"], original_probs=[[0.5, 0.5, 0.5]], counterfactual_probs=[[0.5, 0.5]]),
     ValueError, r"original_probs\[0\]=.*summing to 1"),
    (dict(references=["a"], predictions=["b"], original_probs=[0.5, 0.5], counterfactual_probs=[[0.5, 0.5]]),
     ValueError, r"original_probs has shape \(2,\)"),
    (dict(references=["a"], predictions=["b"], reference_pairs=["h"], prediction_pairs=[None], original_labels=[0],
          counterfactual_labels=[0]), None, None),
    (dict(references=["a"], predictions=["b"], reference_pairs=["h"]), ValueError, "prediction_pairs=None"),
    (dict(references=["a"], predictions=["b"], return_per_example="yes"), TypeError, "return_per_example='yes'"),
])
def test_module_errors(module, kwargs, error, pattern):
    if error is None:       # a failed side of an NLI counterfactual is a failed generation, not an error
        assert module.compute(**kwargs)["num_failed"] == 1
        return
    with pytest.raises(error, match=pattern):
        module.compute(**kwargs)


def test_the_documented_keywords_are_what_compute_takes(module):
    """The script passes options through to the library's option groups: every keyword its Args document is
    accepted (the columns, model / targets / contrast, each group and each field of the three groups), and
    nothing else is (the interval options aside, which the base documents)."""
    import re

    from textxai.modules import module_path
    from textxai.options import group_fields

    script = (module_path("ceval") / "ceval.py").read_text()
    args = script.split("Args:", 1)[1].split("Returns:", 1)[0]
    entries = [re.sub(r"\([^()]*\)", "", line).split(":", 1)[0] for line in args.splitlines() if re.match(r" {4}\w", line)]
    documented = {name for entry in entries for name in re.findall(r"\w+", entry)}
    groups = (ceval.ClassifierOutputs, ceval.QualityOptions, ceval.RunOptions)
    expected = {"predictions", "references", "prediction_pairs", "reference_pairs", "model", "targets", "contrast",
                "outputs", "quality", "run"} | {f for g in groups for f in group_fields(g)}
    assert documented == expected
    assert module.compute_arguments == expected | {"confidence_level", "n_resamples"}


def test_options_pass_through_to_the_groups_and_a_misspelt_one_is_named(module):
    p, q = [[0.9, 0.1], [0.2, 0.8]], [[0.3, 0.7], [0.1, 0.9]]
    flat = module.compute(references=REFS[:2], predictions=CFS[:2], original_probs=p, counterfactual_probs=q,
                          return_per_example=True)
    grouped = module.compute(references=REFS[:2], predictions=CFS[:2], run=ceval.RunOptions(return_per_example=True),
                             outputs=ceval.ClassifierOutputs(original_probs=p, counterfactual_probs=q))
    assert repr(grouped) == repr(flat) == repr(ceval.compute(REFS[:2], CFS[:2], original_probs=p, counterfactual_probs=q,
                                                             return_per_example=True))
    with pytest.raises(TypeError, match=r"judge_topc='x': not an option of ceval \(did you mean 'judge_topic'\?\); "
                                        r"expected one of \[.*'judge_topic'.*\]"):
        module.compute(references=REFS[:2], predictions=CFS[:2], original_probs=p, counterfactual_probs=q, judge_topc="x")
    with pytest.raises(TypeError, match=r"progress='no': expected True or False"):  # a group's bool field
        module.compute(references=REFS[:2], predictions=CFS[:2], original_probs=p, counterfactual_probs=q, progress="no")
    assert len(module) == 0


def test_the_trainer_callback_sees_the_group_fields_as_options(module):
    """TextxaiCallback passes batch_size / progress / model only to modules that take them: ceval takes the
    first two through its option groups; a plain evaluate module with **kwargs still gets its named ones."""
    from textxai.integrations import _accepted

    names, takes_more = _accepted(module)
    assert {"batch_size", "progress", "model", "lm", "original_probs"} <= names and not takes_more

    class Plain:
        def _compute(self, predictions, references, model=None, **kwargs):
            return {}

    names, takes_more = _accepted(Plain())
    assert {"predictions", "references", "model"} <= names and "batch_size" not in names and takes_more


def test_probability_histogram_bars():
    values = {"original": [0.01, 0.02, 0.98, 0.99], "mice": [0.45, 0.55, 0.97, 0.51]}
    fig = ceval.plot_probability_histogram(values, bins=10)
    assert [ax.get_title() for ax in fig.axes] == ["original (n=4)", "mice (n=4)"]
    for ax, arr in zip(fig.axes, values.values()):
        heights = [patch.get_height() for patch in ax.patches]
        np.testing.assert_allclose(heights, np.histogram(arr, bins=np.linspace(0, 1, 11))[0] / 4)
    with pytest.raises(ValueError, match=r"probabilities\['x'\] has values in \[0, 2\]"):
        ceval.plot_probability_histogram({"x": [0, 2]})


def test_method_distance_heat_map():
    texts = {"original": ["a b c", "x y"], "m1": ["a b d", "-1"], "m2": ["a", "x y z"]}
    names, matrix = ceval.method_distance_matrix(texts)
    assert names == ["original", "m1", "m2"]
    np.testing.assert_array_equal(matrix, [[0, 1, (2 + 1) / 2], [1, 0, 2], [1.5, 2, 0]])
    fig = ceval.plot_method_distances(texts)
    image = fig.axes[0].images[0].get_array()
    np.testing.assert_array_equal(np.asarray(image), matrix)
    with pytest.raises(ValueError, match="expected the same length"):
        ceval.method_distance_matrix({"a": ["x"], "b": ["x", "y"]})


def test_paper_normalized_distance_from_stored_rows(reference_dir):
    """Table 2's normalised distance (flipped examples only) from CEval's published rows."""
    root = reference_dir / "ceval" / "results" / "imdb"
    for method, want in {"mice": 0.20, "gbda": 0.25, "crest": 0.33}.items():
        df = pd.read_csv(root / method / "results_auto_eval.csv", keep_default_na=False)
        r = ceval.compute(df.orig_text.tolist(), df.gen_text.tolist(),
                          original_labels=df.pred_orig_labels.tolist(),
                          counterfactual_labels=df.pred_gen_labels.tolist())
        assert round(r["token_distance_normalized_flipped"], 2) == want, method


def test_card_specifics():
    card = (textxai.module_path("ceval") / "README.md").read_text()
    assert card.startswith("---\n")  # generic sections and doctests: tests/test_modules.py
    assert "| Flip rate | 0.66 | 0.99 | 0.97 | 0.71 | 0.81 | 0.84 | 0.34 | 0.85 | 0.94 | 0.39 | 0.75 |" in card




def test_sampling_judge_repeats_under_seed(tiny_gpt2_parts):
    model, tokenizer = tiny_gpt2_parts
    sampling = {"do_sample": True, "top_k": 50, "temperature": 0.7}       # CEval's settings
    a = ceval.judge_quality(["a fine film", "a dull film"], (model, tokenizer), generate_kwargs=sampling, seed=3,
                            max_new_tokens=2, method="generate")
    b = ceval.judge_quality(["a fine film", "a dull film"], (model, tokenizer), generate_kwargs=sampling, seed=3,
                            max_new_tokens=2, method="generate")
    assert a["replies"] == b["replies"]
    with pytest.raises(ValueError, match="max_new_tokens=0"):
        ceval.judge_quality(["a"], (model, tokenizer), max_new_tokens=0)
    with pytest.raises(TypeError, match="judge_generate_kwargs='greedy'"):
        ceval.judge_quality(["a"], (model, tokenizer), generate_kwargs="greedy")
