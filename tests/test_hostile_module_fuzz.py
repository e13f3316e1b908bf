"""Fuzz (hypothesis) over each of the five modules' ``compute``, loaded as evaluate modules through
``textxai.load`` (issue 15 item 9): any argument may be an arbitrary list of strings (unicode, empty,
whitespace, very long), a number, None or a nested list. The outcome is a result, or a ValueError /
TypeError whose message names an argument of that ``compute`` — never another exception type.

Each example starts from a valid call and replaces a drawn subset of the arguments by junk, so the junk meets
the checks of every stage (columns, options, model loading, the algorithm). Bounded: a few dozen examples
per module, tiny models, ``derandomize`` (the same examples every run).
"""
from __future__ import annotations

import inspect
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TEXT = st.one_of(st.text(max_size=10), st.sampled_from(["", " ", "\t\n", "a good film", "ü 😀 ∑ \u200b", "x" * 3000,
                                                         "word " * 300]))
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.floats(allow_nan=True, allow_infinity=True),
                 TEXT, st.lists(TEXT, max_size=3), st.lists(st.one_of(TEXT, st.integers(-1, 3), st.none()), max_size=3),
                 st.lists(st.lists(TEXT, max_size=2), max_size=2), st.lists(st.floats(-2, 2), max_size=4))
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

# Arguments never fuzzed: those that write files (a junk string would be a folder written into the working
# directory) or print progress bars.
NOT_FUZZED = {"save_index", "progress"}


def valid_calls(model: str) -> dict:
    """A valid, fast ``compute`` call per module (the starting point each example mutates)."""
    return {
        "naopc": {"texts": ["a good film", "a dull plot"], "attributions": [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]],
                  "model": model, "normalization": "none"},
        "fim_difficulty": {"texts": ["a good film", "a dull plot"], "model": model},
        "toki_trust": {"texts": ["a good film"], "references": [1], "model": model,
                       "train_texts": ["a good film", "bad"], "train_labels": [1, 0], "explainer": "omission",
                       "embedders": "classifier", "class_names": ["bad", "good"]},
        "inconsistency": {"edits": [["a good film", "a bad film", "a good film"]], "word_tokenizer": "whitespace"},
        "ceval": {"predictions": ["a bad film"], "references": ["a good film"], "model": model},
    }


def arguments(module) -> list[str]:
    """The parameters of the module's ``_compute`` (its columns and options)."""
    return [p for p in inspect.signature(module._compute).parameters if p != "self"]


@pytest.fixture(scope="module")
def modules():
    import textxai

    return {name: textxai.load(name) for name in ("naopc", "fim_difficulty", "toki_trust", "inconsistency", "ceval")}


def names_an_argument(message: str, fuzzed: list[str], names: list[str]) -> bool:
    """Whether ``message`` names a fuzzed argument, or another argument of the call (names of 3+ characters),
    as a whole word ("n" is named by "n=0", not by "none")."""
    import re

    candidates = list(fuzzed) + [n for n in names if len(n) > 2]
    return any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", message) for n in candidates)


def _outcome(module, kwargs: dict, fuzzed: list[str], names: list[str]):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module.compute(**kwargs)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert names_an_argument(message, fuzzed, names), \
            f"{type(error).__name__} names no argument (fuzzed {fuzzed}): {message[:300]}"
    except Exception as error:  # noqa: BLE001 - the type is the point of the test
        raise AssertionError(f"{type(error).__name__} (expected a result or ValueError/TypeError): {error}") from error


def _fuzz(name, modules, model, data):
    module = modules[name]
    names = arguments(module)
    call = dict(valid_calls(model)[name])
    fuzzed = data.draw(st.lists(st.sampled_from([n for n in names if n not in NOT_FUZZED]), min_size=1, max_size=3,
                                unique=True), label="fuzzed arguments")
    for argument in fuzzed:
        call[argument] = data.draw(JUNK, label=argument)
    _outcome(module, call, fuzzed, names)


NAMES = ["naopc", "fim_difficulty", "toki_trust", "inconsistency", "ceval"]


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_module_compute(modules, tiny_bert_folder, sharp_bert_folder, name, data):
    model = sharp_bert_folder if name == "toki_trust" else tiny_bert_folder  # toki: both classes predicted
    _fuzz(name, modules, model, data)


@pytest.mark.parametrize("name", NAMES)
def test_the_valid_starting_calls_succeed(modules, tiny_bert_folder, sharp_bert_folder, name):
    """Each fuzz example starts from a call that works (else every example would only test its failure)."""
    model = sharp_bert_folder if name == "toki_trust" else tiny_bert_folder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(modules[name].compute(**valid_calls(model)[name]), dict)
