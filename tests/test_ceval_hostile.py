"""CEval under hostile input: validation before any model call, no broadcasting, documented NaN only."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from textxai import ceval
from textxai.validation import CallbackError


@pytest.fixture
def spied(bert_clf, monkeypatch):
    calls = []
    real = type(bert_clf).predict_proba

    def spy(self, *args, **kwargs):
        calls.append(len(args[0]))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(bert_clf), "predict_proba", spy)
    return bert_clf, calls


@pytest.mark.parametrize("kwargs, argument", [
    ({"targets": [7]}, "targets[0]=7"),
    ({"targets": [0, 1]}, "targets has 2 items"),
    ({"targets": ["nope"]}, "targets[0]='nope'"),
    ({"targets": "1"}, "targets='1'"),
    ({"contrast": "target"}, "contrast='target' needs targets"),
    ({"contrast": "max"}, "contrast='max'"),
    ({"batch_size": 0}, "batch_size=0"),
    ({"judge": lambda p: ["3"] * len(p), "max_new_tokens": 0}, "max_new_tokens=0"),
    ({"judge": lambda p: ["3"] * len(p), "judge_topic": " "}, "judge_topic=' '"),
    ({"judge": 42}, "judge=42"),
    ({"lm": " "}, "lm=' '"),
    ({"original_labels": [5]}, "original_labels[0]=5"),
    ({"counterfactual_probs": [[0.5, 0.6]]}, "counterfactual_probs[0]"),
    ({"counterfactual_probs": [[0.2, 0.3, 0.5]]}, "classes"),
    ({"judge": lambda p: ["3"] * len(p), "seed": None}, "seed=None"),             # was int(None) deep in generate
    ({"judge": lambda p: ["3"] * len(p), "seed": "a"}, "seed='a'"),
    ({"targets": [1], "contrast": "argmin"}, "contrast='argmin' does not use targets"),  # were ignored silently
    ({"device": "gpu7"}, "device='gpu7'"),          # was ignored for a loaded classifier and for the LM
    ({"progress": "no"}, "progress='no'"),                                         # was a progress bar
    ({"return_per_example": "yes"}, "return_per_example='yes'"),
])
def test_bad_options_are_refused_before_any_model_call(spied, kwargs, argument):
    clf, calls = spied
    with pytest.raises((ValueError, TypeError)) as caught:
        ceval.compute(["a bad film"], ["a good film"], model=clf, **kwargs)
    assert argument in str(caught.value)
    assert calls == []  # no predict_proba pass happened


def test_valid_call_runs_two_passes_and_label_name_targets_work(spied):
    clf, calls = spied
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ceval.compute(["a bad film"], ["a good film"], model=clf,
                               targets=[clf.labels[1]], return_per_example=True)
    assert calls == [1, 1] and result["contrast"] == "target" and result["per_example"]["contrast_class"] == [1]


@pytest.mark.parametrize("call, argument", [
    (lambda: ceval.flip_rate([0, 1], [1]), "counterfactual_labels has 1 items but original_labels has 2"),
    (lambda: ceval.flips([0, 0, 0], [1]), "counterfactual_labels has 1 items"),
    (lambda: ceval.flips([0, 1], [1, 0], failed=[True]), "failed has 1 items"),
    (lambda: ceval.flip_rate("01", [0, 1]), "original_labels='01'"),
    (lambda: ceval.flip_rate([], []), "original_labels=[]"),
    (lambda: ceval.flip_rate([0.5], [1]), "original_labels[0]=0.5"),
    (lambda: ceval.probability_change([[0.5, 0.5], [0.5, 0.5]], [[0.2, 0.8]]), "counterfactual_probs has shape (1, 2)"),
    (lambda: ceval.probability_change([[0.5, 0.5]], [[0.2, 0.8]], contrast="target", targets=[2]), "targets[0]=2"),
    (lambda: ceval.probability_change([[0.5, 0.5]], [[0.2, 0.8]], contrast="target", targets=[0, 1]), "targets has 2 items"),
    (lambda: ceval.probability_change([[0.5, np.nan]], [[0.2, 0.8]]), "original_probs[0]"),
    (lambda: ceval.probability_change("x", [[0.2, 0.8]]), "original_probs='x'"),
    (lambda: ceval.contrast_classes([[0.5, 0.5]], contrast="counterfactual_argmax"), "counterfactual_probs="),
    (lambda: ceval.token_distance(None, "x"), "original=None"),
    (lambda: ceval.token_distance("x", 3), "counterfactual=3"),
    (lambda: ceval.token_distance(("a", "b"), "x"), "sides"),
    (lambda: ceval.token_distances(["a", "b"], ["a"]), "counterfactuals has 1 items but originals has 2"),
    (lambda: ceval.token_distances("ab", "ab"), "originals='ab'"),
    (lambda: ceval.diversity([]), "counterfactual_sets=[]"),
    (lambda: ceval.diversity("abc"), "counterfactual_sets='abc'"),
    (lambda: ceval.diversity(["abc", "abd"]), "counterfactual_sets[0]='abc'"),
    (lambda: ceval.diversity([["a", "b"]], originals=["a", "b"], normalized=True), "originals has 2 items"),
    (lambda: ceval.method_distance_matrix({"a": ["x"]}), "texts_by_method="),
    (lambda: ceval.method_distance_matrix({"a": ["x"], "b": ["x", "y"]}), "texts_by_method['b'] has 2 items"),
    (lambda: ceval.judge_quality("a text", lambda p: ["1"] * len(p)), "texts='a text'"),
    (lambda: ceval.judge_quality(["a", "b"], lambda p: ["1"]), "judge returned 1 replies for 2 prompts"),
    (lambda: ceval.judge_quality(["a"], lambda p: "4"), "judge returned '4'"),
    (lambda: ceval.judge_quality(["a"], None), "judge=None"),
    (lambda: ceval.compute("a film", ["b"]), "references='a film'"),
    (lambda: ceval.compute(["a film"], "b"), "predictions='b'"),
    (lambda: ceval.compute(["a", "b"], ["c"]), "predictions has 1 items but references has 2"),
    (lambda: ceval.compute(["a"], [[]]), "predictions[0]=[]"),
    (lambda: ceval.compute(["a"], [5]), "predictions[0]=5"),
    (lambda: ceval.compute([""], ["b"]), "references[0]=''"),
    (lambda: ceval.compute(["a"], ["b"], reference_pairs=["h"]), "prediction_pairs=None"),
    (lambda: ceval.compute(["a"], ["b"], original_probs=[[0.5, 0.5]]), "counterfactual_probs (or"),
    # a lone surrogate (text decoded with errors="surrogateescape"): a UnicodeEncodeError inside spaCy before
    (lambda: ceval.compute(["a \ud800 film"], ["b"], original_labels=[0], counterfactual_labels=[1]), "references[0]="),
    (lambda: ceval.compute(["a"], ["b \udc80"], original_labels=[0], counterfactual_labels=[1]), "predictions[0]="),
    (lambda: ceval.compute(["a"], [["b", "c \udc80"]], original_labels=[0], counterfactual_labels=[1]),
     "predictions[0][1]="),
    (lambda: ceval.compute(["a"], ["b"], reference_pairs=["h \udc80"], prediction_pairs=["h"], original_labels=[0],
                           counterfactual_labels=[1]), "reference_pairs[0]="),
])
def test_public_functions_refuse_bad_input_naming_the_argument(call, argument):
    with pytest.raises((ValueError, TypeError)) as caught:
        call()
    assert argument in str(caught.value), str(caught.value)


def test_judge_callable_errors_are_wrapped_with_context():
    def broken_judge(prompts):
        raise KeyError("token")

    with pytest.raises(CallbackError) as caught:
        ceval.judge_quality(["a fine film"], broken_judge)
    message = str(caught.value)
    assert "judge=" in message and "broken_judge" in message and "'grammar' prompts of 1 texts" in message
    assert isinstance(caught.value.__cause__, KeyError)


def _nan_warnings(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in seen if issubclass(w.category, RuntimeWarning) and "ceval:" in str(w.message)]


@pytest.mark.parametrize("kwargs, key, count_key", [
    ({"original_probs": [[0.9, 0.1]], "counterfactual_probs": [[0.8, 0.2]]}, "probability_change_flipped", "num_flipped"),
    ({"original_probs": [[0.9, 0.1]], "counterfactual_probs": [[0.8, 0.2]]}, "token_distance_flipped", "num_flipped"),
    ({"original_labels": [0], "counterfactual_labels": [0], "predictions": ["-1"]}, "token_distance", "num_valid"),
    ({"original_labels": [0], "counterfactual_labels": [1], "predictions": [["a good film", "-1"]]}, "diversity",
     "num_diversity_examples"),
    ({"original_labels": [0], "counterfactual_labels": [1], "judge": lambda p: ["no idea"] * len(p)}, "text_quality",
     "num_unparsed_judgements"),
])
def test_every_nan_has_its_count_and_one_warning(kwargs, key, count_key):
    predictions = kwargs.pop("predictions", ["a good film"])
    result, seen = _nan_warnings(lambda: ceval.compute(["a bad film"], predictions, **kwargs))
    assert np.isnan(result[key])
    assert len(seen) == 1 and key in str(seen[0].message)
    assert result[count_key] == (4 if count_key == "num_unparsed_judgements" else 0)
    _, none = _nan_warnings(lambda: ceval.compute(
        ["a bad film"], ["a good film"], original_probs=[[0.9, 0.1]], counterfactual_probs=[[0.2, 0.8]]))
    assert none == []  # nothing to warn about when every metric has examples


def test_numpy_arrays_of_texts_give_the_same_result_as_lists():
    """references / predictions as numpy arrays: a 2-d array of counterfactuals (two per original) was refused
    ("predictions[0]=array(['a good film', ...]) (ndarray): expected a string"), while the list of lists works."""
    refs, cfs = ["a bad film", "the plot was dull"], [["a good film", "a fine film"], ["the plot was sharp", "-1"]]
    kwargs = dict(original_labels=[0, 0], counterfactual_labels=[1, 0], return_per_example=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ceval.compute(refs, cfs, **kwargs)
        got = ceval.compute(np.array(refs), np.array(cfs), **kwargs)
    assert repr(got) == repr(expected) and expected["num_diversity_examples"] == 1  # repr: NaN == NaN


def test_an_aspect_the_judge_never_answers_is_a_named_nan():
    """A judge that answers three of the four questions (under half its replies unparsed, so no judge warning):
    cohesiveness was NaN with no warning, and text_quality the mean of the other three aspects, silently."""
    def judge(prompts):
        return ["no idea" if "fit together" in p else "4" for p in prompts]

    result, seen = _nan_warnings(lambda: ceval.compute(["a bad film", "a dull plot"], ["a good film", "a sharp plot"],
                                                       original_labels=[0, 0], counterfactual_labels=[1, 1], judge=judge))
    assert np.isnan(result["cohesiveness"]) and result["grammar"] == 4.0 and result["num_unparsed_judgements"] == 2
    assert len(seen) == 1 and "cohesiveness (= NaN: no judge reply about it could be parsed" in str(seen[0].message)
    assert "judge_warning" not in result
    # labels only: probability_change_flipped is NaN for want of probabilities, not because nothing flipped
    assert "no counterfactual flipped" not in str(seen[0].message) and result["num_flipped"] == 2
