"""The reading layer (textxai.readings, docs/readings.md) on constructed cases, and the audit's readings that rest
on it: exact intervals for counts, "too few" below the stated n, zero-width intervals never conclusive, "no
relation" only from the equivalence test, shared ranks, verdicts only on quantities comparable across models,
accuracy beside its baseline. Each case failed on the code before the layer (bootstrap [0, 0] intervals, "FIM tells
nothing new" from an interval including 0, an order printed for 0.704 vs 0.702, "better" on raw AOPC)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from textxai import readings
from textxai.audit import numbers as nb

IV = nb.Intervals(n_resamples=999)


@pytest.mark.parametrize("k, n, low, high", [(0, 4, 0.0, 2.4), (3, 3, 0.9, 3.0), (10, 10, 6.9, 10.0), (9, 10, 5.5, 10.0)])
def test_counts_get_exact_intervals(k, n, low, high):
    lo, hi = readings.count_interval(k, n)
    assert (round(lo * n, 1), round(hi * n, 1)) == (low, high)
    # Clopper-Pearson by its definition: P(X >= k | p = lo) = P(X <= k | p = hi) = 2.5 % (where the bound is inside)
    if 0 < k:
        assert sps.binom.sf(k - 1, n, lo) == pytest.approx(0.025, rel=1e-6)
    if k < n:
        assert sps.binom.cdf(k, n, hi) == pytest.approx(0.025, rel=1e-6)


def test_a_count_reading_is_never_a_zero_width_interval():
    # the old audit: "0 of 4 ... [0, 0]" and "3 of 3 correct [3, 3]" from a bootstrap of identical values
    e = nb.rate_estimate([False] * 4, IV, "flip when 'film' is deleted or replaced", "'negative' predictions containing it")
    assert (e["ci_low"], round(e["ci_high"] * 4, 1)) == (0.0, 2.4) and "[0, 2.4]" in e["reading"]
    assert "too few to conclude (n = 4 < 10)" in e["reading"]
    three = nb.rate_estimate([True] * 3, IV, "are correct", "predictions")
    assert "3 of 3 predictions are correct [0.9, 3]" in three["reading"] and "too few" in three["reading"]
    nine = nb.rate_estimate([True] * 9 + [False], IV, "are correct", "predictions")   # n = 10: the width decides
    assert "too few to conclude" in nine["reading"]
    many = nb.rate_estimate([True] * 160 + [False] * 40, IV, "are correct", "predictions")
    assert "too few" not in many["reading"] and many["method"].startswith("Clopper")


def test_means_below_the_stated_n_or_with_zero_width_intervals_do_not_conclude():
    # "inc@1 0.000 [0.00, 0.00] (0 = consistent)" on 11 chains: every value 0, a degenerate bootstrap
    e = nb.mean_estimate([0.0] * 11, IV, "substitution: inc@1", meaning="0 = consistent")
    assert e["ci_low"] == e["ci_high"] == 0.0 and nb.too_wide(e)
    assert "no interval" in e["reading"] and "not a certainty" in e["reading"] and "0 = consistent" not in e["reading"]
    few = nb.mean_estimate([0.5, 0.51, 0.49, 0.5, 0.5], IV, "x", meaning="tight")   # narrow, but n = 5
    assert "too few to conclude (n = 5 < 10)" in few["reading"] and "tight" not in few["reading"]
    d = nb.difference([0.9] * 8, [0.1] * 8, IV, "x")           # a large difference on 8 texts: no verdict
    assert not nb.significant(d) and "is better" not in d["reading"] and "too few" in d["reading"]


def test_no_relation_only_from_the_equivalence_test():
    # the audit printed "FIM tells nothing new" for 0.113 [-0.07, 0.30] at n = 100
    wide = {"score": 0.113, "ci_low": -0.07, "ci_high": 0.30, "n": 100}
    assert "no evidence either way at n = 100" in readings.relation_reading(wide, "r")
    assert not readings.no_relation(wide)
    tight = {"score": 0.01, "ci_low": -0.05, "ci_high": 0.06, "n": 2000}
    assert readings.no_relation(tight) and "no relation" in readings.relation_reading(tight, "r")
    # a true partial correlation of ~0.2 at n = 100: the section's verdict never says "nothing new"
    from textxai.audit.sections import _beyond_confidence

    rng = np.random.default_rng(3)
    said_nothing_new = 0
    for _ in range(8):
        z = rng.normal(size=100)
        x = z + rng.normal(size=100)
        wrong = (0.25 * (x - z) + rng.normal(size=100) > 0.8).astype(float)
        said_nothing_new += "nothing new" in _beyond_confidence(x, z, 1 - wrong, IV)["verdict"]
    assert said_nothing_new == 0


def test_the_built_in_relation_is_named():
    from textxai.audit.sections import _beyond_confidence

    rng = np.random.default_rng(0)
    m = rng.normal(size=50)
    out = _beyond_confidence(m + 0.01 * rng.normal(size=50), m, None, IV)
    assert "built in" in out["rank_correlation"]["reading"] and "p(1−p)" in out["rank_correlation"]["reading"]
    assert "built in" in out["verdict"]


def test_ranks_are_shared_where_the_two_cannot_be_told_apart():
    from textxai.audit.sections import _ranking

    rng = np.random.default_rng(1)
    base = rng.uniform(0.5, 0.9, 40)
    per = {"a": {"comprehensiveness": list(base + 0.002 + rng.normal(0, 0.05, 40))},
           "b": {"comprehensiveness": list(base + rng.normal(0, 0.05, 40))},
           "c": {"comprehensiveness": list(base - 0.4)}}
    r = _ranking(per, ["a", "b", "c"], "comprehensiveness", IV)
    assert r["groups"][-1] == ["c"] and sorted(r["groups"][0]) == ["a", "b"]
    assert " = " in r["reading"] and "a > b" not in r["reading"] and "b > a" not in r["reading"]


def test_a_model_comparison_gives_verdicts_only_on_comparable_quantities():
    from textxai.audit.compare import compare

    rng = np.random.default_rng(2)
    n = 30
    faith = lambda shift: {"methods": ["omission"], "per_example": {"omission": {
        "comprehensiveness": list(rng.uniform(0.4, 0.6, n) + shift), "naopc_comprehensiveness": list(rng.uniform(0.4, 0.6, n)),
        "sufficiency": list(rng.uniform(0, 0.2, n)), "naopc_sufficiency": list(rng.uniform(0, 0.2, n))}},
        "scores": {"omission": {"comprehensiveness": {"score": 0.5 + shift}, "naopc_comprehensiveness": {"score": 0.5}}}}
    a = {"difficulty": {"difficulty": list(10 ** rng.normal(-2, 0.1, n))}, "faithfulness": faith(0.3)}
    b = {"difficulty": {"difficulty": list(10 ** rng.normal(-4, 0.1, n))}, "faithfulness": faith(0.0)}
    out = compare(a, b, IV, ("A", "B"))
    rows = {d["what"]: d for d in out["differences"]}
    for what in ("mean log10 difficulty (λ_max)", "omission: comprehensiveness", "omission: sufficiency"):
        assert not rows[what]["comparable"] and "without a verdict" in rows[what]["reading"]
        assert "is better" not in rows[what]["reading"]
    assert rows["omission: naopc comprehensiveness"]["comparable"]
    (flip,) = out["aopc_vs_naopc"]
    assert "AOPC rates" not in flip["reading"] and "without a verdict" in flip["reading"]


def test_accuracy_beside_the_majority_baseline_and_predicted_shares():
    c = readings.accuracy_context([1] * 54 + [0] * 46, [1] * 89 + [0] * 11, ["negative", "positive"])
    assert c["baseline"] == pytest.approx(0.54) and c["predicted_shares"]["positive"] == pytest.approx(0.89)
    assert "majority-class baseline 0.540" in c["reading"] and "'positive' for 89%" in c["reading"]
    cm = readings.confusion([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], ["n", "p"])
    assert cm["matrix"] == [[1, 1], [1, 2]]


def test_the_registry_declares_what_is_comparable_across_models():
    assert readings.comparable("naopc", "naopc_comprehensiveness") and not readings.comparable("naopc", "comprehensiveness")
    assert not readings.comparable("fim_difficulty", "summary.mean")
    assert readings.comparable("toki_trust", "trustworthy_rate")


def _ex(words, label=False, predicted=1):
    return {"label": label, "predicted": predicted, "top_words": [[w, s, r] for w, s, r in words]}


def test_shortcut_candidates_need_distinct_texts():
    from textxai.audit.trust import shortcut_candidates

    # "problems" twice in one text was counted as 2 predictions; one prediction made a candidate
    ex = [_ex([("problems", 0.5, False), ("problems", 0.3, False)]), _ex([("problems", 0.4, False)]),
          _ex([("umbrella", 0.6, False)]), _ex([("umbrella", 0.6, False)]), _ex([("umbrella", 0.6, False)])]
    texts = [f"text {i}" for i in range(len(ex))]
    got = shortcut_candidates(ex, texts, {0: "negative", 1: "positive"}, 5, 2, min_texts=3)
    assert [c["word"] for c in got] == ["umbrella"] and got[0]["n_predictions"] == 3
    two = shortcut_candidates(ex, texts, {0: "negative", 1: "positive"}, 5, 2, min_texts=2)
    assert {c["word"]: c["n_predictions"] for c in two} == {"umbrella": 3, "problems": 2}
    assert [e["index"] for c in two if c["word"] == "problems" for e in c["examples"]] == [0, 1]


def test_function_words_behind_untrustworthy_verdicts_are_said():
    from textxai.audit.trust import function_word_share

    ex = [_ex([("the", 0.5, False), (",", 0.2, False), ("great", 0.4, True)]),      # untrusted by "the" and ","
          _ex([("umbrella", 0.6, False), ("great", 0.1, True)]),                     # untrusted by a content word
          _ex([("great", 0.9, True)], label=True)]
    got = function_word_share(ex)
    assert got["n_untrusted"] == 2 and got["share"] == pytest.approx(0.7 / 1.3) and got["turn_trustworthy"] == 1
    assert "without them 1 of the 2 would be trustworthy" in got["reading"] and "documented departure" in got["reading"]
    assert "reading" not in function_word_share([_ex([("umbrella", 0.6, False)])])


def test_an_index_from_other_data_than_the_audited_texts_is_warned_about():
    from types import SimpleNamespace

    from textxai import demo
    from textxai.audit.trust import index_domain_warning

    clf = SimpleNamespace(name="textxai/demo-sentiment")
    source = "the demo model's first 60 training texts"
    warning = index_domain_warning(clf, ["I watched this on DVD and the problems of the journeymen ..."], source)
    assert "--train-data" in warning and "1 of the 1 audited texts" in warning
    own = demo.load_corpus("sentiment")["test_texts"][:3]
    assert index_domain_warning(clf, own, source) is None
    assert index_domain_warning(clf, ["other data"], "5 training texts given") is None


def test_the_shortcut_follow_up_substitutes_keep_meaning(monkeypatch):
    from textxai import editors
    from textxai.audit import trust

    asked = []

    def generator(keep_meaning):
        asked.append(keep_meaning)
        return lambda word, k=3: [("movie", 0.9)]

    monkeypatch.setattr(editors, "shared_generator", generator)
    clf = type("C", (), {"word_tokenizer": "whitespace", "predict_proba": lambda self, t, batch_size=32: np.tile([0.1, 0.9], (len(t), 1))})()
    out = trust.shortcut_flips(clf, ["a film", "the end"], [1, 1], [{"word": "film", "class": "positive", "class_index": 1}], IV)
    assert asked == [True] and out[0]["substitutes"] == ["movie"] and out[0]["n_texts"] == 1


# ------------------------------------------------------------------ the methods' own reports (issue 41.2)
def test_method_reports_read_counts_exactly_and_below_the_stated_n_say_too_few():
    from textxai import stats
    from textxai.ceval.analysis import readings_of as ceval_readings
    from textxai.toki.analysis import MIN_VERDICTS, attack_reading, rate_readings

    # TOKI: 0 of 4 trustworthy by the method's own intervals (stats.add_intervals) -> the exact interval in counts
    r = {"trust_labels": [False] * 4, "naive_labels": [True] * 4, "no_ki_labels": [True, False, True, True],
         "trustworthy_rate": 0.0, "naive_trustworthy_rate": 1.0, "no_ki_trustworthy_rate": 0.75}
    said = rate_readings(stats.add_intervals("toki_trust", r, n_resamples=99)["intervals"])
    assert said["trustworthy_rate"].startswith("0 of 4 correct predictions with a verdict rest on words related")
    assert "[0, 2.4] (exact 95 %); too few to conclude (n = 4 < 10)" in said["trustworthy_rate"]
    assert "4 of 4" in said["naive_trustworthy_rate"] and "[1.6, 4]" in said["naive_trustworthy_rate"]
    assert MIN_VERDICTS == readings.MIN_N
    # CEval: a flip rate of 10 of 10 is [6.9, 10], "too few" only from the width rule at n = 10
    flips = {"flip_rate": stats.count_interval_entry(stats.values_estimand([1.0] * 10, share=True), 0.95)}
    assert "10 of 10 counterfactuals flip the prediction [6.9, 10] (exact 95 %)" in ceval_readings(flips)["flip_rate"]
    # the TOKI attack: a count, not "success rate 1.00"
    assert attack_reading({"examples": [{"success": True}] * 3}).startswith("3 of 3 attacked predictions are flipped")


def test_method_reports_never_read_a_zero_width_interval_as_certainty():
    from textxai.ceval.analysis import readings_of as ceval_readings
    from textxai.inconsistency.analysis import readings_of as inc_readings
    from textxai.naopc.analysis import score_readings

    zero = {"score": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 11, "method": "degenerate"}
    assert "not a certainty" in inc_readings({"inc@1": zero})["inc@1"] and "consistent" not in inc_readings({"inc@1": zero})["inc@1"]
    assert "not a certainty" in ceval_readings({"token_distance": {**zero, "score": 1.0, "ci_low": 1.0, "ci_high": 1.0}})["token_distance"]
    narrow = {"score": 0.5, "ci_low": 0.49, "ci_high": 0.51, "n": 5, "method": "BCa"}
    assert "too few to conclude (n = 5 < 10)" in score_readings("omission", {"naopc_comprehensiveness": narrow})["naopc_comprehensiveness"]


def test_fim_reads_mean_log10_as_the_audit_does_and_never_across_models():
    from textxai.fim.analysis import mean_log10

    e = mean_log10([1e-4, 1e-3, 1e-2, 1e-1], {"confidence_level": 0.95, "n_resamples": 99, "seed": 0})
    assert e["score"] == pytest.approx(-2.5) and "too few to conclude (n = 4 < 10)" in e["reading"]
    direct = nb.mean_estimate(np.log10([1e-4, 1e-3, 1e-2, 1e-1]), nb.Intervals(n_resamples=99), "mean log10 λ_max", 10.0)
    assert (direct["ci_low"], direct["ci_high"], direct["reading"]) == (e["ci_low"], e["ci_high"], e["reading"])
    assert not readings.comparable("fim_difficulty", "mean_log10")
