"""Bootstrap intervals, paired comparisons and the sample-size sweep (textxai.stats)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from textxai import cli_intervals, render, stats


# ------------------------------------------------------------------------------------------ synthetic results


def _inconsistency_result(incs, labels=None, failed=None, ks=(1,), pooling="pooled"):
    """A result of textxai.inconsistency from per-chain step incs (minimalities made up to match lengths)."""
    incs = [np.asarray(i, dtype=float) for i in incs]
    per = {"inc": [i.tolist() for i in incs], "minimality": [[1.0] * (len(i) + 1) for i in incs]}
    out = {}
    for k in ks if any(len(i) for i in incs) else ():
        if pooling == "pooled":
            parts = [i[:k] for i in incs if len(i)]
            out[f"inc@{k}"] = float(np.concatenate(parts).mean())
            out[f"inc@{k}_chains"], out[f"inc@{k}_steps"] = len(parts), sum(len(p) for p in parts)
        else:
            means = [i[:k].mean() for i in incs if len(i) >= k]
            out[f"inc@{k}"] = float(np.mean(means))
            out[f"inc@{k}_chains"], out[f"inc@{k}_steps"] = len(means), len(means) * k
    if labels is not None:
        per["labels"], per["failed"] = labels, failed
        per["minimality"] = [[1.0] * (len(lab) - 1) for lab in labels]
        for k in ks:
            att = [len(lab) > k or (f and len(lab) == k) for lab, f in zip(labels, failed)]
            flips = [len(lab) > k and lab[k] != lab[k - 1] for lab in labels]
            out[f"flip_rate@{k}"] = sum(flips) / sum(att)
            out[f"flip_rate@{k}_chains"] = sum(att)
    out["per_example"] = per
    return out


def _naopc_result(comp, suff=None):
    suff = np.zeros_like(comp) if suff is None else suff
    per = [{"comprehensiveness": float(c), "sufficiency": float(s), "naopc_comprehensiveness": float(c),
            "naopc_sufficiency": float(s)} for c, s in zip(comp, suff)]
    return {"comprehensiveness": float(np.mean(comp)), "sufficiency": float(np.mean(suff)),
            "naopc_comprehensiveness": float(np.mean(comp)), "naopc_sufficiency": float(np.mean(suff)),
            "per_example": per}


# ------------------------------------------------------------------------------------------ coverage


def test_coverage_of_the_plain_mean():
    """95 % intervals of a mean of 200 normal scores cover the true mean in 93-97 % of 400 repetitions.

    (Even exact 95 % intervals land outside 93-97 % in about 1 of 12 seeds at 400 repetitions; 4,000
    repetitions over other seeds measured 94 %.)
    """
    rng = np.random.default_rng(2026)
    hits = 0
    for rep in range(400):
        est = stats.estimands("naopc", _naopc_result(rng.normal(0.5, 1.0, size=200)))["comprehensiveness"]
        e = stats.bootstrap_interval(est.data, est.statistic, 0.95, n_resamples=999, seed=rep)
        hits += e["ci_low"] <= 0.5 <= e["ci_high"]
    assert 0.93 <= hits / 400 <= 0.97


def test_coverage_of_a_ratio_statistic_flip_rate():
    """flip_rate@1 = flips / chains that attempted step 1 (a ratio, the attempts vary by resample): true 0.3."""
    rng = np.random.default_rng(0)
    hits = 0
    for rep in range(400):
        labels, failed = [], []
        for _ in range(150):
            if rng.random() < 0.2:  # the chain ends before step 1 (not an attempt)
                labels.append([0])
                failed.append(False)
            else:
                labels.append([0, int(rng.random() < 0.3)])
                failed.append(False)
        res = _inconsistency_result([[]] * 150, labels=labels, failed=failed, ks=(1,))
        e = stats.add_intervals("inconsistency", res, n_resamples=999, seed=rep)["intervals"]["flip_rate@1"]
        assert e["n"] == res["flip_rate@1_chains"]
        hits += e["ci_low"] <= 0.3 <= e["ci_high"]
    assert 0.93 <= hits / 400 <= 0.97


# ------------------------------------------------------------------------------------------ resampling units


def test_inconsistency_resamples_chains_not_steps():
    """Duplicating every step inside each chain (num and den of the pooled inc double) leaves the interval."""
    rng = np.random.default_rng(3)
    incs = [rng.integers(0, 4, size=rng.integers(1, 5)).astype(float) for _ in range(30)]
    doubled = [np.repeat(i, 2) for i in incs]
    a = stats.add_intervals("inconsistency", _inconsistency_result(incs, ks=(4,)), n_resamples=999)["intervals"]["inc@4"]
    b = stats.add_intervals("inconsistency", _inconsistency_result(doubled, ks=(8,)), n_resamples=999)["intervals"]["inc@8"]
    assert a["n"] == b["n"] == 30
    assert (a["score"], a["ci_low"], a["ci_high"]) == pytest.approx((b["score"], b["ci_low"], b["ci_high"]), abs=1e-12)
    # resampling steps instead would shrink the interval (twice the "units"): the test can tell the difference
    steps = stats.bootstrap_interval(np.concatenate(incs), n_resamples=999)
    steps2 = stats.bootstrap_interval(np.concatenate(doubled), n_resamples=999)
    assert steps2["ci_high"] - steps2["ci_low"] < 0.85 * (steps["ci_high"] - steps["ci_low"])


def test_inconsistency_pooled_interval_is_the_ratio_over_resampled_chains():
    incs = [[2.0, 0.0, 1.0], [0.0], [3.0, 3.0], [0.0, 0.0, 0.0], [1.0], [4.0, 0.0]]
    res = _inconsistency_result(incs, ks=(3,))
    e = stats.add_intervals("inconsistency", res, n_resamples=999, seed=5)["intervals"]["inc@3"]
    num = np.array([sum(i[:3]) for i in incs])
    den = np.array([len(i[:3]) for i in incs], dtype=float)
    ref = sps.bootstrap((num, den), lambda n, d, axis: n.sum(axis) / d.sum(axis), paired=True, vectorized=True,
                        n_resamples=999, rng=np.random.default_rng(5))
    assert e["score"] == pytest.approx(res["inc@3"]) == pytest.approx(num.sum() / den.sum())
    assert (e["ci_low"], e["ci_high"]) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))


def test_inconsistency_per_chain_pooling_is_recognised():
    incs = [[2.0, 0.0], [0.0], [3.0, 3.0], [0.0, 1.0], [1.0, 1.0], [4.0, 0.0]]
    res = _inconsistency_result(incs, ks=(2,), pooling="per_chain")
    e = stats.add_intervals("inconsistency", res, n_resamples=999)["intervals"]["inc@2"]
    assert e["n"] == 5 and e["score"] == pytest.approx(res["inc@2"])


def test_inconsistency_real_result_flip_rate_counts_failed_steps():
    from textxai import inconsistency

    chains = [["a b", "a c", "a c d"], ["x y", "x z", None], ["p", "q", "q r"], ["m n", None], ["s", "t"]]
    labels = [[0, 1, 0], [1, 0, None], [0, 1, 1], [1, None], [0, 1]]
    res = inconsistency.compute(chains, n=[1, 2], labels=labels, return_per_example=True, word_tokenizer="whitespace")
    iv = stats.add_intervals("inconsistency", res, n_resamples=999)["intervals"]
    for k in (1, 2):
        assert iv[f"flip_rate@{k}"]["score"] == pytest.approx(res[f"flip_rate@{k}"])
        assert iv[f"flip_rate@{k}"]["n"] == res[f"flip_rate@{k}_chains"]
        assert iv[f"inc@{k}"]["n"] == res[f"inc@{k}_chains"]
        assert iv[f"minimality@{k}"]["n"] == res[f"minimality@{k}_chains"]


def test_ceval_resamples_originals_with_their_counterfactuals():
    from textxai import ceval

    refs = ["a dull film", "it was awful", "bad acting here", "a weak plot", "so boring", "poor and slow",
            "not good at all"]
    one = ["a fine film", "it was great", "good acting here", "a weak plot twist", "so exciting", "-1",
           "very good at all"]
    extra = [[c, c + " indeed", "and " + c] for c in one]
    probs_o = [[0.9, 0.1]] * 7
    probs_c = [[0.2, 0.8], [0.1, 0.9], [0.3, 0.7], [0.8, 0.2], [0.4, 0.6], [0.9, 0.1], [0.6, 0.4]]
    single = ceval.compute(refs, one, original_probs=probs_o, counterfactual_probs=probs_c,
                                   return_per_example=True)
    multi = ceval.compute(refs, extra, original_probs=probs_o, counterfactual_probs=probs_c,
                                  return_per_example=True)
    a = stats.add_intervals("ceval", single, n_resamples=999)["intervals"]
    b = stats.add_intervals("ceval", multi, n_resamples=999)["intervals"]
    # one unit per original, however many counterfactuals it has: the first counterfactual's numbers do not move
    for key in ("flip_rate", "probability_change", "probability_change_flipped", "token_distance"):
        assert b[key]["n"] == a[key]["n"] and b[key] == a[key]
    assert a["flip_rate"]["n"] == 7 and a["token_distance"]["n"] == 6  # the failed generation has no distance
    # diversity: one value per original (its 3 counterfactuals together), bootstrapped over originals
    div = np.array(multi["per_example"]["diversity"])
    ref = stats.bootstrap_interval(div[np.isfinite(div)], n_resamples=999)
    assert b["diversity"]["n"] == np.isfinite(div).sum() == 7 and (b["diversity"]["ci_low"], b["diversity"]["ci_high"]) == (ref["ci_low"], ref["ci_high"])
    assert b["diversity_normalized"]["score"] == pytest.approx(multi["diversity_normalized"])
    assert b["probability_change_flipped"]["n"] == single["num_flipped"]


def test_toki_resamples_correct_predictions_only():
    labels = [True, False, True, True, False, True, True, False, True, True]
    with_wrong = labels[:3] + [None, None] + labels[3:] + [None]
    a = stats.add_intervals("toki_trust", {"trust_labels": labels, "trustworthy_rate": 0.7}, n_resamples=999)
    b = stats.add_intervals("toki_trust", {"trust_labels": with_wrong, "trustworthy_rate": 0.7}, n_resamples=999)
    assert a["intervals"]["trustworthy_rate"]["n"] == 10
    assert a["intervals"]["trustworthy_rate"] == b["intervals"]["trustworthy_rate"]


def test_fim_quantiles_and_mean():
    from textxai.fim import summarize

    d = list(np.random.default_rng(1).gamma(2.0, 0.1, size=25))
    res = {"difficulty": d, "summary": summarize(d)}
    iv = stats.add_intervals("fim_difficulty", res, n_resamples=999)["intervals"]
    for key in ("mean", "median", "std", "q10", "q90"):
        e = iv[f"summary.{key}"]
        assert e["score"] == pytest.approx(res["summary"][key]) and e["ci_low"] <= e["score"] <= e["ci_high"]
    assert "summary.min" not in iv and "summary.max" not in iv


def test_mismatched_or_missing_per_example_values_are_refused():
    res = _naopc_result(np.array([0.1, 0.2, 0.3]))
    res["comprehensiveness"] = 0.9
    with pytest.raises(ValueError, match=r"result\['comprehensiveness'\]=0.9"):
        stats.add_intervals("naopc", res)
    with pytest.raises(ValueError, match="return_per_example=True"):
        stats.add_intervals("naopc", {"comprehensiveness": 0.5})
    with pytest.raises(ValueError, match="confidence_level=1.5"):
        stats.add_intervals("naopc", _naopc_result(np.ones(3)), confidence_level=1.5)
    with pytest.raises(ValueError, match="module_name='nope'"):
        stats.add_intervals("nope", {})


def test_methods_are_stated():
    assert stats.bootstrap_interval([0.3], n_resamples=99)["method"] == "n<2"
    assert stats.bootstrap_interval([0.3, 0.3, 0.3], n_resamples=99)["method"] == "degenerate"
    assert stats.bootstrap_interval(np.arange(20.0), n_resamples=999)["method"] == "BCa"
    # BCa undefined (jackknife of a 0/1 ratio with a single positive unit): percentile, said so
    e = stats.bootstrap_interval((np.array([0.0, 0.0, 1.0]), np.array([1.0, 1.0, 1.0])), stats._ratio, n_resamples=999)
    assert e["method"].startswith(("BCa", "percentile"))


# ------------------------------------------------------------------------------------------ paired comparison


def test_paired_comparison_detects_a_planted_difference():
    rng = np.random.default_rng(2)
    base = rng.uniform(0, 1, size=30)  # examples differ a lot from each other...
    a = _naopc_result(base + 0.1 + rng.normal(0, 0.02, size=30))  # ...but a beats b by 0.1 on each
    b = _naopc_result(base)
    c = stats.compare("naopc", a, b, n_resamples=999)["comprehensiveness"]
    assert c["difference"] == pytest.approx(a["comprehensiveness"] - b["comprehensiveness"])
    assert 0 < c["ci_low"] < 0.1 < c["ci_high"] and c["p_value"] < 1e-4 and c["test"] == "wilcoxon signed-rank"
    # unpaired, the spread between examples hides it
    assert sps.ttest_ind(base + 0.1, base, equal_var=False).pvalue > 0.05


def test_paired_comparison_reports_nothing_on_identical_inputs():
    a = _naopc_result(np.random.default_rng(4).uniform(size=12))
    c = stats.compare("naopc", a, a, n_resamples=999)
    for entry in c.values():
        assert entry["difference"] == 0.0 and entry["ci_low"] == entry["ci_high"] == 0.0 and entry["p_value"] == 1.0


def test_paired_comparison_of_editors_pairs_chains_and_uses_common_units():
    inc_a = [[3.0, 2.0], [2.0, 2.0], [4.0, 1.0], [3.0, 3.0], [2.0], [3.0, 2.0], [5.0, 2.0], [2.0, 3.0]]
    inc_b = [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0]]
    a = _inconsistency_result(inc_a, ks=(2,), pooling="per_chain")
    b = _inconsistency_result(inc_b, ks=(2,), pooling="per_chain")
    c = stats.compare("inconsistency", a, b, n_resamples=999)["inc@2"]
    assert c["n"] == 6  # chains 4 (a) and 7 (b) do not reach step 2: only chains reaching it on both sides
    assert c["ci_low"] > 0 and c["p_value"] < 0.05
    with pytest.raises(ValueError, match="same examples"):
        stats.compare("inconsistency", a, _inconsistency_result(inc_b[:5], ks=(2,), pooling="per_chain"))


def test_paired_test_matches_scipy_wilcoxon():
    a, b = np.array([0.9, 0.3, 0.5, 0.8, 0.1, 0.4, 0.7]), np.array([0.4, 0.35, 0.1, 0.2, 0.15, 0.1, 0.3])
    assert stats.paired_test(a, b)["p_value"] == pytest.approx(sps.wilcoxon(a - b).pvalue)


# ------------------------------------------------------------------------------------------ determinism, batching


def test_same_seed_same_interval_other_seed_other_interval():
    res = _naopc_result(np.random.default_rng(5).uniform(size=15))
    one = stats.add_intervals("naopc", dict(res), n_resamples=999, seed=7)["intervals"]
    two = stats.add_intervals("naopc", dict(res), n_resamples=999, seed=7)["intervals"]
    other = stats.add_intervals("naopc", dict(res), n_resamples=999, seed=8)["intervals"]
    assert one == two and one["comprehensiveness"]["ci_low"] != other["comprehensiveness"]["ci_low"]


def test_resampling_batch_does_not_change_intervals():
    res = _naopc_result(np.random.default_rng(6).uniform(size=15))
    whole = stats.add_intervals("naopc", dict(res), n_resamples=999)["intervals"]
    for batch in (1, 37, 500):
        assert stats.add_intervals("naopc", dict(res), n_resamples=999, batch=batch)["intervals"] == whole


def test_model_batch_size_does_not_change_intervals(bert_clf):
    from textxai import inconsistency

    chains = [["a good film", "a bad film", "a good film here"], ["the plot", "the plot is dull", "dull"],
              ["great", "not great", "great"], ["fine acting", "poor acting", "poor"], ["ok", "not ok", "ok"]]
    out = [stats.add_intervals("inconsistency", inconsistency.compute(chains, n=[1, 2], model=bert_clf, batch_size=bs,
                                                              word_tokenizer="whitespace", return_per_example=True),
                               n_resamples=999)["intervals"] for bs in (1, 16)]
    assert out[0] == out[1] and "flip_rate@1" in out[0]


# ------------------------------------------------------------------------------------------ sweep, formatting


def test_sample_size_sweep_width_shrinks_like_one_over_sqrt_n():
    res = _naopc_result(np.random.default_rng(7).normal(0.5, 0.2, size=100))
    rows = stats.sample_size_sweep("naopc", res, keys=["comprehensiveness"], sizes=[10, 40, 160], repeats=8,
                                   n_resamples=999)["comprehensiveness"]
    assert [r["projected"] for r in rows] == [False, False, True]
    ratio = rows[0]["width"] / rows[2]["width"]
    assert 3.0 < ratio < 5.5  # sqrt(160 / 10) = 4
    assert rows == stats.sample_size_sweep("naopc", res, keys=["comprehensiveness"], sizes=[10, 40, 160], repeats=8,
                                           n_resamples=999)["comprehensiveness"]


def test_format_interval_keeps_the_width_visible():
    assert render.format_interval({"score": 0.70045, "ci_low": 0.70041, "ci_high": 0.70049, "n": 9}) == "0.700 [0.7004, 0.7005]"
    fig = render.plot_intervals({"flip_rate": {"score": 0.7, "ci_low": 0.5, "ci_high": 0.9, "n": 9}})
    (line,) = [c for c in fig.axes[0].containers]
    assert fig.axes[0].get_title() == "flip_rate" and line is not None


# ------------------------------------------------------------------------------------------ textxai compare


def test_cli_compare_of_saved_results(tmp_path, capsys):
    import json

    from textxai.cli import main
    from textxai.outputs import to_jsonable

    rng = np.random.default_rng(8)
    base = rng.uniform(size=12)
    a, b = _naopc_result(base + 0.3), _naopc_result(base)
    run_file = {"methods": {"ig": {k: a[k] for k in a if k != "per_example"},
                            "omission": {k: b[k] for k in b if k != "per_example"}},
                "per_example": {"ig": a["per_example"], "omission": b["per_example"]}}
    (tmp_path / "naopc.json").write_text(json.dumps(to_jsonable(run_file)))
    assert main(["compare", str(tmp_path / "naopc.json"), "--module", "naopc", "--n-resamples", "999",
                 "--output", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    saved = json.loads((tmp_path / "out" / "compare_naopc.json").read_text())
    c = saved["comparisons"]["ig vs omission"]["comprehensiveness"]
    assert c["difference"] == pytest.approx(0.3) and c["ci_low"] == c["ci_high"] == pytest.approx(0.3)
    assert "ig - omission" in text and render.format_interval(saved["intervals"]["ig"]["comprehensiveness"]) in text
    # two files of one editor each; a file with other examples is refused by name
    for name, incs in (("mice", [[2.0, 1.0]] * 6), ("poly", [[0.0, 1.0]] * 5 + [[1.0, 1.0]])):
        (tmp_path / f"{name}.json").write_text(json.dumps(to_jsonable(_inconsistency_result(incs, ks=(2,)))))
    main(["compare", str(tmp_path / "mice.json"), str(tmp_path / "poly.json"), "--module", "inconsistency",
          "--n-resamples", "499", "--sample-size-sweep", "3", "12"])
    text = capsys.readouterr().out
    assert "mice vs poly" in text and "at n = 3, 12" in text
    (tmp_path / "short.json").write_text(json.dumps(to_jsonable(_inconsistency_result([[0.0, 1.0]] * 3, ks=(2,)))))
    with pytest.raises(SystemExit, match="same examples"):
        main(["compare", str(tmp_path / "mice.json"), str(tmp_path / "short.json"), "--module", "inconsistency"])


def test_space_shows_intervals_from_five_chains():
    from helpers import load_space_app

    from textxai import inconsistency

    app = load_space_app("inconsistency")
    chains = [["a b", "a c", "a c d e"], ["x y", "x z", "x"], ["p q", "p r", "s t u"], ["m", "n", "n o"],
              ["k l", "k m", "k n"]]  # five chains reaching step 2 ("k m" -> "k m" would be a failed step)
    text = "\n\n".join("\n".join(c) for c in chains)
    summary, _, _ = app.score_chains(text, "1", "whitespace", "pooled")
    res = stats.add_intervals("inconsistency", inconsistency.compute(chains, n=[1], word_tokenizer="whitespace",
                                                             return_per_example=True))  # the one default
    assert render.format_interval(res["intervals"]["inc@1"]) in summary and "textxai-intervals" in summary
    few, _, _ = app.score_chains("\n\n".join("\n".join(c) for c in chains[:3]), "1", "whitespace", "pooled")
    assert "shown from 5 chains on (here 3)" in few


def test_runner_helper_sweep_and_error_bars_against_n():
    incs = [list(np.random.default_rng(c).integers(0, 3, size=3).astype(float)) for c in range(12)]
    res = _inconsistency_result(incs, ks=(1, 2, 3))
    figures = {}
    ivs = render.analysis_intervals("inconsistency", res, {**render.DEMO_OPTIONS, "sample_size_sweep": True,
                                                                "sweep_sizes": [5, 12, 48]}, figures)
    assert set(figures) == {"intervals", "sample_size_sweep"} and set(ivs) == {"inc@1", "inc@2", "inc@3"}
    assert [r["n"] for r in res["sample_size_sweep"]["inc@1"]] == [5, 12, 48]
    (ax,) = figures["intervals"].axes  # one panel: inc@n against n, one error bar per n
    assert ax.get_title() == "inc@n" and len(ax.containers[0].lines[2][0].get_segments()) == 3
    assert render.analysis_intervals("inconsistency", dict(res), {"confidence_level": None}) == {}


def test_toki_run_files_compare_over_texts_both_models_get_right():
    ex = lambda labels: [{"label": x, "naive": None if x is None else True, "no_ki": x} for x in labels]  # noqa: E731
    a = cli_intervals._expand("toki_trust", {"trustworthy_rate": 4 / 6, "examples": ex([True, True, False, True, None, True, False])}, "a")["a"]
    b = cli_intervals._expand("toki_trust", {"trustworthy_rate": 1 / 6, "examples": ex([False, False, False, True, False, None, False])}, "b")["b"]
    c = stats.compare("toki_trust", a, b, n_resamples=999)["trustworthy_rate"]
    assert c["n"] == 5 and c["a"] == pytest.approx(3 / 5) and c["b"] == pytest.approx(1 / 5)  # texts 4 and 5 dropped


def test_paired_sample_size_sweep_needs_more_units_for_a_small_difference():
    rng = np.random.default_rng(9)
    base = rng.uniform(size=60)
    a, b = _naopc_result(base + 0.05 + rng.normal(0, 0.1, size=60)), _naopc_result(base)
    rows = stats.compare_sample_size_sweep("naopc", a, b, "comprehensiveness", sizes=[6, 60, 240], repeats=6,
                                           n_resamples=499)
    assert [r["projected"] for r in rows] == [False, False, True]
    assert rows[0]["p_value"] > rows[2]["p_value"] and rows[2]["share_significant"] == 1.0
    assert rows[0]["share_significant"] < 1.0


def test_a_mean_of_measurements_whose_values_are_all_0_or_1_is_no_rate():
    """inc@1 and minimality in words, all 0 or 1 on a few chains, got Clopper-Pearson intervals as if they were a
    share of units (capped at 1 word); only declared rates do."""
    from textxai.intervals import count_interval_entry, ratio_estimand, values_estimand

    words = [1.0, 1.0, 0.0, 1.0]
    assert count_interval_entry(values_estimand(words), 0.95) is None
    assert count_interval_entry(ratio_estimand(words, [1, 1, 1, 1], share=False), 0.95) is None
    rate = count_interval_entry(values_estimand(words, share=True), 0.95)
    assert rate["method"] == "Clopper-Pearson (exact)" and rate["score"] == 0.75 and rate["n"] == 4
