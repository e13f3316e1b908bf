"""The hostile table: >= 100 distinct bad inputs over the library, the five modules and the Space handlers
(the CLI's own table is in tests/test_cli.py). Each must raise a ValueError / TypeError naming the argument."""
from __future__ import annotations

import pytest
from hostile_cases import Context, all_cases, outcome

CASES = all_cases()


def test_the_table_is_big_and_distinct():
    ids = [case[0] for case in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 100
    assert {case[1] for case in CASES} == {"library", "module", "space"}


@pytest.fixture(scope="module")
def ctx(tiny_bert_folder, tiny_gpt2_parts, tmp_path_factory):
    import textxai
    from helpers import load_space_app

    from textxai.lm import CausalLM

    modules = {n: textxai.load(n) for n in ("naopc", "fim_difficulty", "toki_trust", "inconsistency", "ceval")}
    apps = {n: load_space_app(n) for n in ("naopc", "ceval", "inconsistency")}
    context = Context(tiny_bert_folder, modules, apps, tmp_path_factory.mktemp("table"))
    context.lm = CausalLM(*tiny_gpt2_parts)
    return context


@pytest.mark.parametrize("case_id, surface, call, argument",
                         [pytest.param(*c, id=c[0]) for c in CASES if c[0] != "ceval: model=None"])
def test_bad_input_is_one_clear_error_naming_the_argument(ctx, case_id, surface, call, argument):
    kind, detail = outcome(call, ctx, argument, timeout=120)
    assert kind == "clear", f"{surface} {case_id}: {kind} {detail}"


def test_ceval_without_classifier_outputs_is_a_documented_null(ctx):
    """No classifier outputs: flip rate is undefined, a JSON null (modules' results go through outputs.to_jsonable)."""
    with pytest.warns(RuntimeWarning, match="flip_rate .*no classifier outputs"):
        result = ctx.module("ceval").compute(predictions=["a bad film"], references=["a good film"])
    assert result["flip_rate"] is None and result["num_flipped"] is None and result["token_distance"] == 1.0
