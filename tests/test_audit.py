"""textxai.audit without models: the numbers (against brute force and scipy), the readings (they refuse to rank
when the interval includes 0 or is too wide), the options (flags, config files, refusals), shortcut candidates,
the FIM test set's selection, the stage cache and the report's self-containment on synthetic data."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from textxai.audit import numbers as nb
from textxai.audit.options import audit_options, read_config
from textxai.audit.plan import StageCache
from textxai.audit.trust import shortcut_candidates

IV = nb.Intervals(n_resamples=999)


def brute_ece(conf, correct, n_bins=10):
    total = 0.0
    for k in range(n_bins):
        inside = [i for i, c in enumerate(conf) if min(int(c * n_bins), n_bins - 1) == k]
        if inside:
            total += len(inside) / len(conf) * abs(np.mean([correct[i] for i in inside]) - np.mean([conf[i] for i in inside]))
    return total


def test_ece_matches_the_textbook_definition():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1.0, 200)
    correct = (rng.uniform(size=200) < conf ** 2).astype(float)
    got = nb.ece_statistic(10)(conf, correct)
    assert got == pytest.approx(brute_ece(conf, correct), abs=1e-12)
    assert nb.ece_statistic(10)(np.array([1.0, 1.0]), np.array([1.0, 1.0])) == 0.0   # conf 1.0 falls in the last bin


def test_spearman_and_partial_correlation_against_scipy_and_regression():
    rng = np.random.default_rng(1)
    z = rng.normal(size=300)
    x = z + 0.5 * rng.normal(size=300)
    y = z + 0.5 * rng.normal(size=300)
    assert nb.spearman_statistic(x, y) == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
    rx = x - np.polyval(np.polyfit(z, x, 1), z)   # partial correlation = correlation of the residuals
    ry = y - np.polyval(np.polyfit(z, y, 1), z)
    assert nb.partial_statistic(x, y, z) == pytest.approx(np.corrcoef(rx, ry)[0, 1], abs=1e-10)
    part = nb.correlation(x, y, IV, "x and y given z", nb.partial_statistic, z=z)
    assert part["ci_low"] <= 0 <= part["ci_high"] and "no evidence either way at n = 300" in part["reading"]
    rho = nb.correlation(x, y, IV, "x and y")
    assert rho["ci_low"] > 0.5 and "strong positive" in rho["reading"]


def test_rate_reading_counts_and_wide_intervals():
    e = nb.rate_estimate([True] * 4 + [False] * 6 + [None] * 3, IV, "rest on unrelated words", "correct predictions")
    assert e["n"] == 10 and e["score"] == pytest.approx(0.4)
    assert e["reading"].startswith("4 of 10 correct predictions rest on unrelated words [1.2, 7.4] (exact 95 %)")
    assert "too few to conclude" in e["reading"]      # n = 10: the exact interval spans more than 0.35
    big = nb.rate_estimate([True] * 160 + [False] * 40, IV, "are correct", "predictions")
    assert "too few" not in big["reading"] and big["ci_low"] < 0.8 < big["ci_high"]


def test_difference_ranks_only_when_the_interval_excludes_zero():
    a, b = [1.0] * 20, [0.0] * 15 + [1.0] * 5
    d = nb.difference(a, b, IV, "trust", ("clean", "shortcut"))
    assert d["score"] == pytest.approx(0.75) and d["ci_low"] > 0 and d["p_value"] < 0.01
    assert "clean is better" in d["reading"]
    same = nb.difference([1.0, 0.0] * 5, [0.0, 1.0] * 5, IV, "trust", ("A", "B"))
    assert same["ci_low"] <= 0 <= same["ci_high"] and "cannot tell them apart" in same["reading"]
    lower = nb.difference(a, b, IV, "inc@1", ("A", "B"), higher_is_better=False)
    assert "B is better" in lower["reading"]
    paired = nb.difference([1.0, None, 0.5], [0.0, 2.0, None], IV, "x")
    assert paired["n"] == 1   # only units both sides define


def test_two_texts_never_make_a_significant_difference():
    # n = 2 with the same sign: the bootstrap's interval excludes 0 (3 distinct resampled means) while the
    # Wilcoxon p is 0.5; the audit called such a step "significant" (faithfulness rankings on 2 texts)
    d = nb.difference([0.9, 0.8], [0.5, 0.3], IV, "naopc comprehensiveness", ("omission", "gradient"))
    assert d["ci_low"] > 0 and d["p_value"] >= 0.5
    assert not nb.significant(d) and "too few to conclude (n = 2 < 10)" in d["reading"] and "is better" not in d["reading"]
    from textxai.audit.sections import _ranking

    per = {"omission": {"comprehensiveness": [0.9, 0.8]}, "gradient": {"comprehensiveness": [0.5, 0.3]}}
    r = _ranking(per, ["omission", "gradient"], "comprehensiveness", IV)
    assert r["significant"] is False and "every step significant" not in r["reading"]
    big = nb.difference([1.0] * 20, [0.0] * 15 + [1.0] * 5, IV, "trust", ("A", "B"))
    assert nb.significant(big) and "A is better" in big["reading"]


def test_options_from_mappings_flags_and_files(tmp_path):
    o = audit_options({"faithfulness": {"methods": "omission,gradient", "max_texts": "12"}}, sections=["trust"])
    assert o.faithfulness.methods == ("omission", "gradient") and o.faithfulness.max_texts == 12
    assert o.sections == ("overview", "trust")
    (tmp_path / "a.yaml").write_text("trust:\n  attack_texts: 0\nintervals:\n  n_resamples: 99\n")
    assert audit_options(read_config(tmp_path / "a.yaml")).trust.attack_texts == 0
    (tmp_path / "a.json").write_text(json.dumps({"counterfactual": {"editors": ["deletion"]}}))
    assert audit_options(read_config(tmp_path / "a.json")).counterfactual.editors == ("deletion",)
    assert audit_options().run.precision == "auto" and audit_options(run={"precision": "float32"}).run.precision == "float32"
    for bad, message in ((({"faithfulness": {"method": []}}), "faithfulness.method: no such option"),
                         (({"faithfulness": {"max_texts": 0}}), "faithfulness.max_texts=0: expected a positive"),
                         (({"trust": {"max_rate": "lots"}}), "trust.max_rate='lots': expected a number"),
                         (({"sections": ["trsut"]}), "'trsut' is not a section"),
                         (({"run": {"precision": "half"}}), r"run.precision='half': expected one of \['auto'")):
        with pytest.raises(ValueError, match=message):
            audit_options(bad)
    with pytest.raises(ValueError, match="no such file"):
        read_config(tmp_path / "missing.yaml")


def test_stage_values_refused_before_any_model_naming_the_audit_option():
    # these reached the stage (after overview, difficulty, ... had run) and failed there under the library's names
    # ("could not convert string to float: 'a'", "attributions={}", "attribution_method='omision'"), or passed
    # silently: a misspelt editor was "not available in this installation", steps=1 left inc@1 with no data
    for bad, message in ((({"faithfulness": {"methods": ["omision"]}}), r"faithfulness.methods=\['omision'\]: 'omision'"),
                         (({"faithfulness": {"methods": []}}), r"faithfulness.methods=\[\]: expected at least one"),
                         (({"faithfulness": {"normalization": "exactt"}}), "faithfulness.normalization='exactt'"),
                         (({"difficulty": {"strengths": [0.1, "a"]}}), r"difficulty.strengths=\[0.1, 'a'\]: expected"),
                         (({"difficulty": {"strengths": [-1]}}), r"difficulty.strengths=\[-1\]"),
                         (({"counterfactual": {"editors": ["substitutoin"]}}), "'substitutoin' is not one; expected some of"),
                         (({"counterfactual": {"steps": 1}}), "counterfactual.steps=1: expected at least 2"),
                         (({"trust": {"max_rate": 2}}), r"trust.max_rate=2: expected a number in \[0, 1\]"),
                         (({"trust": {"min_similarity": 5}}), "trust.min_similarity=5"),
                         (({"sections": 5}), "sections=5: expected a list of sections")):
        with pytest.raises(ValueError, match=message):
            audit_options(bad)
    o = audit_options({"difficulty": {"strengths": ["0", "0.5"]}, "counterfactual": {"editors": ["gradient_substitution"]}})
    assert o.difficulty.strengths == (0.0, 0.5) and o.counterfactual.editors == ("substitution",)   # flags give strings


def _example(label, words, predicted=1):
    return {"label": label, "predicted": predicted, "top_words": [[w, s, r] for w, s, r in words]}


def test_shortcut_candidates_rank_by_the_importance_they_carry():
    ex = [_example(False, [("umbrella", 0.6, False), ("film", 0.2, False), ("great", 0.2, True)]) for _ in range(3)]
    ex += [_example(False, [("film", 0.5, False), ("the", 0.5, False)])]
    ex += [_example(True, [("umbrella", 0.9, False)]), _example(None, [("umbrella", 0.9, False)])]
    got = shortcut_candidates(ex, [f"text {i}" for i in range(len(ex))], {0: "negative", 1: "positive"}, 5, 2)
    assert [c["word"] for c in got] == ["umbrella", "film"]           # "the": a stop word is never a shortcut
    assert got[0]["n_predictions"] == 3 and got[0]["weight"] == pytest.approx(1.8)
    assert got[1]["weight"] == pytest.approx(0.2 * 3 + 0.5) and got[0]["class"] == "positive"
    assert [e["index"] for e in got[0]["examples"]] == [0, 1]


def test_stage_cache_round_trip_and_fingerprint_mismatch(tmp_path):
    cache = StageCache(tmp_path)
    cache.save("model", "difficulty", "key1", {"x": [1.0, float("nan")]}, 1.5, 10)
    assert cache.load("model", "difficulty", "key1") == {"data": {"x": [1.0, None]}, "seconds": 1.5, "evaluations": 10,
                                                         "cpu_seconds": None}
    cache.save("model", "overview", "key1", {}, 1.5, 10, cpu_seconds=2.75)   # CPU of a contended run's threads
    assert cache.load("model", "overview", "key1")["cpu_seconds"] == 2.75
    assert cache.load("model", "difficulty", "key2") is None          # a changed model, data or option
    assert StageCache(None).load("model", "difficulty", "key1") is None
    (tmp_path / ".audit-cache" / "model-trust.json").write_text("{broken")
    assert cache.load("model", "trust", "key1") is None               # an interrupted write is recomputed


def test_trust_class_names_from_flags_and_index_source(monkeypatch):
    from types import SimpleNamespace

    from textxai import toki
    from textxai.audit import trust
    from textxai.audit.options import TrustOptions

    seen = {}
    monkeypatch.setattr(toki, "cached_keyword_index", lambda clf, texts, labels, explain, index: seen.update(
        texts=texts, labels=labels, names=index.class_names) or "index")
    clf = SimpleNamespace(name="my/model", class_index=lambda y, name: int(y))
    opts = audit_options({"trust": {"class_names": ["negative,bad , poor", "positive"]}}).trust
    index, source = trust.keyword_index(clf, ["a", "b", "c"], [0, 1, 0], opts)
    assert seen["names"] == [["negative", "bad", "poor"], "positive"] and seen["texts"] == ["a", "b", "c"]
    assert "the audited texts themselves (3" in source
    given = TrustOptions(train_texts=("x", "y"), train_labels=("1", "0"))
    assert "2 training texts given" in trust.keyword_index(clf, ["a"], [0], given)[1] and seen["labels"] == [1, 0]
    with pytest.raises(ValueError, match="trust.train_labels has 1 labels for 2 training texts"):
        trust.keyword_index(clf, ["a"], [0], TrustOptions(train_texts=("x", "y"), train_labels=("1",)))


def test_compare_gives_a_paired_ece_difference():
    """The ECE difference of two models: the difference of their ECEs (each the textbook value), its interval from
    resampling the texts together: a model compared with itself differs by exactly 0 on every resample."""
    from textxai.audit.compare import compare

    rng = np.random.default_rng(3)
    n = 300
    calibrated = rng.uniform(0.55, 0.95, n)
    correct = (rng.random(n) < calibrated).astype(float)   # the first model's confidence is the chance of being right

    def overview(conf):
        return {"overview": {"probs": np.stack([conf, 1 - conf], 1).tolist(), "correct": correct.tolist()}}
    good, bad = overview(calibrated), overview(np.full(n, 0.99))
    iv = nb.Intervals(n_resamples=999)
    ece = nb.ece_statistic(10)
    d = next(x for x in compare(good, bad, iv, ("good", "over"))["differences"] if x["what"].startswith("expected calibration"))
    conf_good = np.max(good["overview"]["probs"], 1)
    assert d["a"] == pytest.approx(ece(conf_good, correct)) and d["b"] == pytest.approx(abs(0.99 - correct.mean()))
    assert d["score"] == pytest.approx(d["a"] - d["b"]) and d["ci_high"] < 0 and d["p_value"] is None
    assert "good is better" in d["reading"]
    same = next(x for x in compare(good, good, iv)["differences"] if x["what"].startswith("expected calibration"))
    assert (same["score"], same["ci_low"], same["ci_high"]) == (0.0, 0.0, 0.0)


def test_trust_stage_explains_each_audited_text_once_in_the_run_precision(monkeypatch):
    # a user's model (not a demo name): the keyword index learns from the audited texts; its explanations (run
    # precision) are the assessment's too, so each correctly predicted text costs its N masked rows once
    from textxai import demo
    from textxai.audit import trust
    from textxai.audit.options import TrustOptions
    from textxai.classifier import TextClassifier, as_classifier

    folder = as_classifier("textxai/demo-sentiment").model.name_or_path
    clf = TextClassifier(folder)
    assert str(clf.name) != "textxai/demo-sentiment"
    corpus = demo.load_corpus("sentiment")
    texts, labels = corpus["test_texts"][:8], [int(y) for y in corpus["test_labels"][:8]]
    correct = [t for t, y, p in zip(texts, labels, clf.predict(texts)) if int(p) == y]
    rows, precisions, real = [], set(), TextClassifier.masked_proba_many

    def spy(self, texts_, masks, *args, **kwargs):
        rows.append(sum(len(m) for m in masks))
        precisions.add(kwargs.get("precision"))
        return real(self, texts_, masks, *args, **kwargs)

    monkeypatch.setattr(TextClassifier, "masked_proba_many", spy)
    res = trust.trust(clf, texts, labels, None, TrustOptions(attack_texts=0), nb.Intervals(n_resamples=99),
                      precision="bfloat16")
    assert "the audited texts themselves" in res["index_source"] and res["n_correct"] == len(correct)
    assert sum(rows) == sum(clf.word_encoding(t).n_words for t in correct)   # index: once; assessment: remembered
    assert precisions == {"bfloat16"}


def test_trust_plan_counts_the_index_texts_once():
    # the estimate checked against --run.max_evaluations: the index's own training texts when given (or a demo
    # model's), else the audited texts once (the assessment reuses the index's explanations of them)
    from textxai.audit import plan
    from textxai.audit.trust import demo_training
    from textxai.estimates import approx_words
    from textxai.toki.method import toki_evaluations

    texts = ["a fine film with a good cast", "dull and long", "the plot is thin but the music is lovely"]
    words = [approx_words(t) for t in texts]
    only = {"sections": ["trust"], "trust": {"attack_texts": 0}}
    user = plan.estimate(texts, 2, audit_options(only), labels=True, model_name="me/my-model")["trust"]
    assert user == toki_evaluations([], words, "omission")
    given = audit_options({**only, "trust": {"attack_texts": 0, "train_texts": ["x y", "z"], "train_labels": [0, 1]}})
    assert plan.estimate(texts, 2, given, labels=True)["trust"] == toki_evaluations([2, 1], words, "omission")
    at_most = audit_options({**only, "trust": {"attack_texts": 0, "max_texts": 1, "train_limit": 2}})
    assert plan.estimate(texts, 2, at_most, labels=True, model_name="me/my-model")["trust"] == \
        toki_evaluations([], words[:2], "omission")   # the index learns from 2 audited texts, the first of them assessed
    assert plan.estimate(texts, 2, at_most, labels=True, model_name="textxai/demo-sentiment")["trust"] == \
        toki_evaluations([approx_words(t) for t in demo_training("textxai/demo-sentiment")[0]], words[:1], "omission")
    demo_words = [approx_words(t) for t in demo_training("textxai/demo-sentiment")[0]]
    assert plan.estimate(texts, 2, audit_options(only), labels=True, model_name="textxai/demo-sentiment")["trust"] == \
        toki_evaluations(demo_words, words, "omission")



def test_profile_presets_sit_beneath_the_options_given():
    from argparse import ArgumentParser

    from textxai.audit import cli
    from textxai.audit.options import PROFILES
    from textxai.audit.report import headlines

    full, quick = audit_options(), audit_options(profile="quick")
    assert full.profile == "full" and full.trust.max_texts is None and full.trust.explainer == quick.trust.explainer
    assert quick.trust.max_texts == quick.trust.train_limit == 100 < full.trust.train_limit
    assert quick.faithfulness.max_texts == quick.counterfactual.max_texts == 10
    changed = {(s, k) for s, given in PROFILES["quick"].items() for k in given}
    for stage in ("difficulty", "faithfulness", "trust", "counterfactual", "intervals", "run"):  # nothing else moves
        for k, v in vars(getattr(full, stage)).items():
            assert (stage, k) in changed or getattr(getattr(quick, stage), k) == v, (stage, k)
    mixed = audit_options({"profile": "quick", "trust": {"explainer": "lime"}, "faithfulness": {"max_texts": 3}})
    assert (mixed.trust.explainer, mixed.trust.max_texts, mixed.faithfulness.max_texts) == ("lime", 100, 3)
    parser = ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["--model", "m", "--data", "d", "--profile", "quick", "--counterfactual.max_texts", "4"])
    o = audit_options(cli.options_from(args))
    assert (o.profile, o.counterfactual.max_texts, o.faithfulness.max_texts) == ("quick", 4, 10)
    for bad, message in (({"profile": "fast"}, r"profile='fast': expected one of \['full', 'quick'\]"),
                         ({"trust": {"explainer": "omision"}}, r"trust.explainer='omision': expected one of \["),
                         ({"trust": {"max_texts": 0}}, r"trust.max_texts=0: expected a positive")):
        with pytest.raises(ValueError, match=message):
            audit_options(bad)
    data = {"n_texts": 3, "options": {"profile": "quick"}, "models": {"model": {"overview": {"model": "m"}}}}
    assert headlines(data)[0].startswith("m: 3 texts (quick profile: trust.max_texts=100, trust.train_limit=100, faith")
    assert headlines({**data, "options": {}}) == ["m: 3 texts"]  # an audit.json of before the profiles
    data["options"]["trust"] = {"max_texts": 2}   # the values in effect, not the preset's
    assert headlines(data)[0].startswith("m: 3 texts (quick profile: trust.max_texts=2, trust.train_limit=100, faith")


def test_stage_fingerprint_follows_the_models_words(bert_parts):
    # the same weights read with another word tokenizer or token limit give other words (another attribution per
    # word, another TOKI index): a stage cached under the first must not be served to the second
    from textxai.audit.plan import fingerprint
    from textxai.classifier import TextClassifier

    model, tokenizer = bert_parts
    opts = audit_options({})
    keys = {fingerprint(TextClassifier((model, tokenizer), device="cpu", **kw), ["a film"], [1], "faithfulness", opts)
            for kw in ({}, {"word_tokenizer": "whitespace"}, {"max_length": 16})}
    assert len(keys) == 3


def test_the_errors_table_lists_each_error_with_gold_prediction_and_its_explanation():
    """Issue 38: the report lists the wrong predictions, each with its gold label, the prediction (confidence) and
    its explanation (FIM's most sensitive words); beyond MAX_ERRORS it says all are in per_text.csv; without the
    difficulty stage it says the explanation was not computed. The confusion table: rows gold, columns predicted."""
    import re

    from textxai.audit import report

    texts = [f"text <{i}>" for i in range(30)]
    errs = [{"index": i, "gold": "positive", "predicted": "negative", "confidence": 0.75} for i in range(1, 28)]
    html = report.errors({"errors": errs}, texts, {"error_words": {"1": ["dull", "<b>"], "3": ["plot"]}})
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)[1:]       # the header row first
    assert len(rows) == report.MAX_ERRORS
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    assert cells[0] == ["#1", "text &lt;1&gt;", "positive", "negative (0.75)", "dull, &lt;b&gt;"]
    assert cells[1][-1] == "-" and cells[2][-1] == "plot"
    assert f"Errors: 27 (the first {report.MAX_ERRORS} of 27; all in per_text.csv)" in html
    assert "not computed" in report.errors({"errors": errs[:1]}, texts, None)
    assert "every prediction is correct" in report.errors({"errors": []}, texts, None)
    matrix = report.confusion_table({"classes": ["neg", "pos"], "matrix": [[3, 1], [0, 4]]})
    body = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in re.findall(r"<tr>(.*?)</tr>", matrix, re.S)[1:]]
    assert body == [["<b>neg</b>", "3", "1"], ["<b>pos</b>", "0", "4"]]
