"""textxai.naopc core: paper tables, brute force over all orderings (hypothesis), beam properties, counts."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textxai import naopc as N
from textxai.naopc import limits as L
from textxai.naopc.core import _evaluate, _Memo, _single


# ------------------------------------------------------------------------------------ helpers
def table_fn(table: np.ndarray, log: list | None = None):
    """score_fn from a table of probabilities indexed by removed-set bitmask; optionally logs every set."""
    n = int(round(math.log2(len(table))))
    weights = 1 << np.arange(n)

    def fn(masks):
        masks = np.asarray(masks, dtype=bool)
        assert masks.ndim == 2 and masks.shape[1] == n
        keys = masks.astype(np.int64) @ weights
        if log is not None:
            log.extend(keys.tolist())
        return table[keys]

    return fn


def brute_force(table: np.ndarray):
    """(lower, upper) AOPC over all N! orderings, straight from the definition."""
    n = int(round(math.log2(len(table))))
    best_lo, best_hi = math.inf, -math.inf
    for order in itertools.permutations(range(n)):
        key, total = 0, 0.0
        for j in order:
            key |= 1 << j
            total += table[0] - table[key]
        value = total / n
        best_lo, best_hi = min(best_lo, value), max(best_hi, value)
    return best_lo, best_hi


def random_table(n: int, seed: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    table = rng.uniform(0, 1, 1 << n)
    if kind == "all_negative":  # every removal raises the probability: every partial sum is negative
        table[0] = rng.uniform(0, 0.05)
        table[1:] = rng.uniform(0.1, 1, (1 << n) - 1)
    elif kind == "all_positive":
        table[0] = rng.uniform(0.95, 1)
        table[1:] = rng.uniform(0, 0.9, (1 << n) - 1)
    elif kind == "ties":
        table = np.round(table, 1)
    return table


# ---------------------------------------------------------------------------------- the paper
W1 = np.array([0.2, 0.3, 0.1, 0.4])
W2 = np.array([0.0, 0.1, 0.7, 0.2])


def linear(w):
    return lambda masks: (~np.asarray(masks, bool)).astype(float) @ w


def f3(m):
    m = np.asarray(m, bool)
    return 0.7 * (~m[:, 0] | ~m[:, 1]) + 0.3 * (~m[:, 2] | ~m[:, 3])


def f4(m):
    m = np.asarray(m, bool)
    return 0.7 * (~m[:, 0] & ~m[:, 1]) + 0.3 * (~m[:, 2] & ~m[:, 3])


@pytest.mark.parametrize("w, comp, suff", [(W1, 0.75, 0.50), (W2, 0.90, 0.35)])
def test_table1_ground_truth_attributions(w, comp, suff):
    f = linear(w)
    assert N.aopc(f, N.comprehensiveness_order(w)) == pytest.approx(comp, abs=1e-12)
    assert N.aopc(f, N.sufficiency_order(w)) == pytest.approx(suff, abs=1e-12)
    # for a linear model the ground-truth attributions reach both limits (the paper's 0.5-0.75, 0.35-0.9)
    for method in N.LIMIT_METHODS:
        lim = N.aopc_limits(f, 4, method=method)
        assert (lim.lower, lim.upper) == pytest.approx((suff, comp), abs=1e-12)
        assert lim.normalize(comp) == pytest.approx(1.0) and lim.normalize(suff) == pytest.approx(0.0)


@pytest.mark.parametrize("f, best_comp, best_suff", [(f3, 0.6, 0.325), (f4, 0.925, 0.65)])
@pytest.mark.parametrize("method", N.LIMIT_METHODS)
def test_table2_best_scores(f, best_comp, best_suff, method):
    lim = N.aopc_limits(f, 4, method=method)
    assert lim.upper == pytest.approx(best_comp, abs=1e-12)
    assert lim.lower == pytest.approx(best_suff, abs=1e-12)
    # the orders returned reach the limits, and the curves are their perturbation curves
    assert N.aopc(f, lim.upper_order) == pytest.approx(lim.upper, abs=1e-12)
    assert N.aopc(f, lim.lower_order) == pytest.approx(lim.lower, abs=1e-12)
    np.testing.assert_allclose(lim.upper_curve, N.aopc_curve(f, lim.upper_order), atol=1e-12)
    np.testing.assert_allclose(lim.lower_curve, N.aopc_curve(f, lim.lower_order), atol=1e-12)


def test_orders_ties_by_position():
    a = [0.3, 0.1, 0.3, 0.1, 0.5]
    assert N.comprehensiveness_order(a) == [4, 0, 2, 1, 3]
    assert N.sufficiency_order(a) == [1, 3, 0, 2, 4]


def test_aopc_definition_first_and_last_terms():
    # p(x) = 1; removing word 0 -> 0.5; removing both -> 0.2
    table = np.array([1.0, 0.5, 0.9, 0.2])
    f = table_fn(table)
    np.testing.assert_allclose(N.aopc_curve(f, [0, 1]), [0.5, 0.8])
    assert N.aopc(f, [1, 0]) == pytest.approx((0.1 + 0.8) / 2)


def test_normalize_not_clipped_and_zero_width():
    assert N.normalize(1.2, 0.2, 0.7) == pytest.approx(2.0)
    assert N.normalize(-0.3, 0.2, 0.7) == pytest.approx(-1.0)
    assert N.normalize(0.4, 0.4, 0.4) == 0.0


# ------------------------------------------------------------------------------- brute force
@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 7),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["uniform", "all_negative", "all_positive", "ties"]),
)
def test_exact_equals_brute_force(n, seed, kind):
    table = random_table(n, seed, kind)
    log: list[int] = []
    lim = N.aopc_limits(table_fn(table, log), n, method="exact")
    lo, hi = brute_force(table)
    assert lim.lower == pytest.approx(lo, abs=1e-12)
    assert lim.upper == pytest.approx(hi, abs=1e-12)
    if kind == "all_negative":
        assert lim.upper < 0  # the authors' running maximum starting at 0 cannot produce this
    # the orderings reach the limits
    assert N.aopc(table_fn(table), lim.upper_order) == pytest.approx(hi, abs=1e-12)
    assert N.aopc(table_fn(table), lim.lower_order) == pytest.approx(lo, abs=1e-12)
    # exactly 2^N distinct sets, each evaluated once
    assert len(log) == len(set(log)) == lim.n_evaluations == 1 << n


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 7),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["uniform", "all_negative", "ties"]),
    beam_size=st.integers(1, 6),
    method=st.sampled_from(["beam", "beam-paper"]),
)
def test_beam_inside_exact_and_counts(n, seed, kind, beam_size, method):
    table = random_table(n, seed, kind)
    log: list[int] = []
    beam = N.aopc_limits(table_fn(table, log), n, method=method, beam_size=beam_size)
    exact = N.aopc_limits(table_fn(table), n, method="exact")
    assert beam.lower >= exact.lower - 1e-12
    assert beam.upper <= exact.upper + 1e-12
    # the beam limits are AOPCs of the returned orderings
    assert N.aopc(table_fn(table), beam.upper_order) == pytest.approx(beam.upper, abs=1e-12)
    assert N.aopc(table_fn(table), beam.lower_order) == pytest.approx(beam.lower, abs=1e-12)
    # never the same set twice; each limit scores <= B*N(N+1)/2 candidates, + the intact input
    assert len(log) == len(set(log)) == beam.n_evaluations
    assert beam.n_evaluations <= 1 + 2 * (beam_size * n * (n + 1) // 2)
    assert beam.n_evaluations <= 1 << n


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 7), seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["uniform", "all_negative", "ties"]))
def test_wide_beam_equals_exact(n, seed, kind):
    # deduplicated by set, a beam as wide as the largest layer C(N, N/2) keeps every set: it is the DP
    table = random_table(n, seed, kind)
    beam = N.aopc_limits(table_fn(table), n, method="beam-paper", beam_size=math.comb(n, n // 2))
    exact = N.aopc_limits(table_fn(table), n, method="exact")
    assert beam.lower == pytest.approx(exact.lower, abs=1e-12)
    assert beam.upper == pytest.approx(exact.upper, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 2**32 - 1), beam_size=st.integers(1, 6),
       side=st.sampled_from(["upper", "lower"]))
def test_one_limit_within_paper_bound(n, seed, beam_size, side):
    # one limit alone scores at most B * N(N+1)/2 candidate sets (+ the intact input), each set once,
    # and finds the same limit as the joint search
    table = random_table(n, seed, "uniform")
    log: list[int] = []
    memo = _Memo(n)
    many = _single(table_fn(table, log))
    _evaluate([memo], [[0]], many)
    lo, up, lo_order, up_order = L._beam_many([memo], many, beam_size, sides=(side,))[0]
    assert len(log) == len(set(log)) == len(memo.values)
    assert len(memo.values) - 1 <= beam_size * n * (n + 1) // 2
    joint = N.aopc_limits(table_fn(table), n, method="beam-paper", beam_size=beam_size)
    assert (up if side == "upper" else lo) == pytest.approx(joint.upper if side == "upper" else joint.lower, abs=1e-12)


def test_single_limit_candidate_count_matches_paper_bound():
    # with B = 1 the two searches are greedy; each expands N - i + 1 children at step i
    n = 9
    table = random_table(n, 3, "uniform")
    log: list[int] = []
    beam = N.aopc_limits(table_fn(table, log), n, method="beam-paper", beam_size=1)
    assert beam.n_evaluations <= 1 + 2 * (n * (n + 1) // 2) - n  # step 1 is shared by both searches
    assert len(log) == len(set(log))


def test_many_equals_single_and_batches_across_inputs():
    tables = [random_table(n, s, "uniform") for n, s in [(3, 1), (6, 2), (1, 3), (5, 4)]]
    fns = [table_fn(t) for t in tables]
    calls = []

    def many(masks_list):
        calls.append([len(m) for m in masks_list])
        return [f(m) if len(m) else np.zeros(0) for f, m in zip(fns, masks_list)]

    for method in N.LIMIT_METHODS:
        calls.clear()
        got = N.aopc_limits_many(many, [3, 6, 1, 5], method=method, beam_size=2)
        for lim, f, t in zip(got, fns, tables):
            one = N.aopc_limits(f, len(lim.upper_order), method=method, beam_size=2)
            assert (lim.lower, lim.upper, lim.lower_order, lim.upper_order) == (
                one.lower, one.upper, one.lower_order, one.upper_order)
        # exact: one call for p(x), one call for every subset of every input; beam-paper: one per level;
        # beam: at most two per level (best children by estimate, then the unsaturated states' children)
        if method == "beam":
            assert 1 + 6 <= len(calls) <= 1 + 2 * 6
        else:
            assert len(calls) == (2 if method == "exact" else 1 + 6)
    # exact rounds are capped: with room for 64 sets per round, the 6-word input goes alone
    old_cap = L.EXACT_SETS_PER_CALL
    try:
        L.EXACT_SETS_PER_CALL = 64
        calls.clear()
        got = N.aopc_limits_many(many, [3, 6, 1, 5], method="exact")
        assert calls[1:] == [[7, 0, 0, 0], [0, 63, 0, 0], [0, 0, 1, 31]]  # p(x) is already known
        assert [g.upper for g in got] == [N.aopc_limits(f, n).upper for f, n in zip(fns, [3, 6, 1, 5])]
    finally:
        L.EXACT_SETS_PER_CALL = old_cap


def test_long_input_beam_uses_big_bitmasks():
    # N = 70 > 62 exercises the arbitrary-precision set keys; an additive model is solved exactly by beam
    n = 70
    w = np.random.default_rng(0).uniform(-1, 1, n)
    f = linear(w)
    lim = N.aopc_limits(f, n, method="beam-paper", beam_size=2)
    assert lim.upper == pytest.approx(N.aopc(f, N.comprehensiveness_order(w)), abs=1e-9)
    assert lim.lower == pytest.approx(N.aopc(f, N.sufficiency_order(w)), abs=1e-9)


def test_rank_agreement():
    from scipy.stats import kendalltau

    a, b = [0.3, 0.1, 0.9, 0.5], [0.2, 0.25, 0.8, 0.1]
    assert N.rank_agreement(a, b) == pytest.approx(kendalltau(a, b).statistic)
    assert N.rank_agreement([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="equal length"):
        N.rank_agreement([1, 2], [1, 2, 3])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(method="greedy"), r"method='greedy': expected one of \['exact', 'beam', 'beam-paper'\]"),
        (dict(method="beam", beam_size=0), r"beam_size=0: expected a positive integer"),
        (dict(n=20), r"N=20 words > max_exact_words=16.*'beam'"),
        (dict(n=0), r"n=0: expected a positive integer"),
    ],
)
def test_core_errors(kwargs, match):
    args = dict(n=3, method="exact")
    args.update(kwargs)
    n = args.pop("n")
    with pytest.raises(ValueError, match=match):
        N.aopc_limits(lambda m: np.zeros(len(m)), n, **args)


def test_bad_score_fn_and_order():
    with pytest.raises(ValueError, match=r"score_fn=.*<lambda> returned shape \(1, 2\) on the intact inputs"):
        N.aopc_limits(lambda m: np.zeros((len(m), 2)), 3)
    with pytest.raises(ValueError, match="permutation of 0..2"):
        N.aopc(lambda m: np.zeros(len(m)), [0, 0, 1])


# ------------------------------------------------------------------- user callables (issue 15 item 3/4)
from textxai.validation import CallbackError  # noqa: E402


def test_score_fn_errors_are_wrapped_with_context_and_chained():
    def fragile(masks):
        if masks.sum(axis=1).max() >= 2:
            raise KeyError("boom")
        return 1.0 - masks.mean(axis=1)

    with pytest.raises(CallbackError, match=r"score_fn=.*fragile raised KeyError on beam level 2") as info:
        N.aopc_limits(fragile, 4, method="beam-paper")
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(CallbackError, match=r"score_fn=.*fragile raised KeyError on the exact limits") as info:
        N.aopc_limits(fragile, 4, method="exact")
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(CallbackError, match=r"score_fn=.*fragile raised KeyError on the 4 prefix sets of order=\[2, 0, 1\]"):
        N.aopc(fragile, [2, 0, 1])

    def many(masks_list):
        raise ZeroDivisionError("nope")

    with pytest.raises(CallbackError, match=r"score_many=.*many raised ZeroDivisionError on the intact inputs "
                                            r"\(2 removal masks of 2 inputs\)") as info:
        N.aopc_limits_many(many, [3, 4], method="beam")
    assert isinstance(info.value.__cause__, ZeroDivisionError)


@pytest.mark.parametrize("bad, match", [
    (lambda m: np.full(len(m), np.nan), r"score_fn=.*<lambda> returned nan for mask 0 on the intact inputs: expected finite"),
    (lambda m: np.where(m.any(axis=1), np.inf, 1.0), r"score_fn=.*<lambda> returned inf for mask 0 on beam level 1"),
    (lambda m: np.ones(len(m) + 1), r"score_fn=.*<lambda> returned shape \(2,\) on the intact inputs for 1 masks"),
    (lambda m: "high", r"score_fn=.*<lambda> returned 'high' on the intact inputs: expected 1 probabilities"),
])
def test_score_fn_bad_outputs_are_clear_value_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        N.aopc_limits(bad, 3, method="beam-paper")


def test_score_many_bad_outputs_name_score_many():
    with pytest.raises(ValueError, match=r"score_many=.*<lambda> returned .* for 2 inputs: expected a list of 2"):
        N.aopc_limits_many(lambda masks: [np.ones(len(masks[0]))], [3, 3])
    with pytest.raises(ValueError, match=r"score_many=.*<lambda> returned nan for mask 0 on the intact inputs, input 1"):
        N.aopc_limits_many(lambda masks: [np.ones(len(masks[0])), np.full(len(masks[1]), np.nan)], [3, 3])
    with pytest.raises(TypeError, match=r"score_many=3: expected a callable"):
        N.aopc_limits_many(3, [3])


def test_attribution_method_takes_a_list_of_names_and_names_a_bad_one():
    """A list of method names was looked up as a dict key (TypeError: unhashable type: 'list')."""
    from textxai.naopc.texts import attribution_sets

    assert attribution_sets(None, ("omission", "gradient")) == {"omission": None, "gradient": None}
    for bad in (3, [], ["omission", 2]):
        with pytest.raises(ValueError, match=r"attribution_method=.*: expected a method name or a list of them"):
            attribution_sets(None, bad)
