"""Every zoo member (tests/zoo.py) on every public surface (issue 37): the five modules through ``textxai.load``,
`textxai run`, `textxai audit` (cli.main in-process), the Trainer callback and the Spaces' handlers give the
library's own numbers (float32 tolerance) on each classifier family and variant; the members that give no class
probabilities are refused on each surface, naming the model and what was expected.

Kept cheap: two texts of 2-3 words (exact NAOPC: 8 subsets), omission explanations, TOKI's keyword index from four
training texts with the classifier's own embeddings and a fixed relatedness threshold, counterfactuals and edit
chains given (no editor), the audit's overview, difficulty and faithfulness sections with omission only."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import zoo as zoo_module
from helpers import load_space_app, run_cli

import textxai
from textxai.classifier import as_classifier

FAMILIES = zoo_module.FAMILIES
VARIANTS = ("bert_5class", "bert_multilabel", "bert_digit_names", "bert_bf16", "bert_fp16", "bert_tuple")
WORKING = FAMILIES + VARIANTS
REFUSED = ("bert_regression", "bert_noncontiguous", "bert_duplicate_names", "lm_gpt2", "lm_llama_chat", "masked_lm_bert")
SHORT = ["a wonderful film", "Unbelievable acting."]
COUNTERFACTUALS = ["a terrible film", "Boring acting."]
CHAINS = [[SHORT[0], "a terrible film", "a terrible movie"], [SHORT[1], "Boring acting.", "Boring acting !"]]
OMISSION = {"attribution_method": "omission", "normalization": "exact"}
TOKI = {"explainer": "omission", "embedders": ["classifier"], "theta_relate": 0.0, "top_k": 3}
REL = 1e-6


def close(got, want, key=""):
    """Equal within float32 reality: the same computation on the same inputs (rel 1e-6), NaN where NaN."""
    if isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), key
    else:
        assert got == pytest.approx(want, rel=REL, abs=1e-9), key


WORDS = ["awful", "bad", "fine", "good", "great"]


def _class_names(clf):
    """The model's label names, or words naming its classes where they are LABEL_i (TOKI needs words)."""
    generic = any(str(v).startswith("LABEL_") for v in clf.labels.values())
    return WORDS[:clf.num_labels] if generic else None


def _train_texts(clf) -> list[str]:
    """TOKI's training texts: for each class, the first two words or two-word starts of the packaged texts the
    model predicts as it (a random model predicts what it predicts; every class needs a correctly predicted
    training text)."""
    pool = sorted({w for t in zoo_module.corpus() for w in t.split()})[:60] + [
        " ".join(t.split()[:2]) for t in zoo_module.corpus()[:40]]
    predicted = clf.predict(pool)
    return [pool[i] for c in range(clf.num_labels) for i in np.flatnonzero(predicted == c)[:2]]


def _int_labels(clf, indices) -> list[int]:
    """Class indices as the modules' integer references: a model whose classes are named by numbers ('1'..'5')
    reads an integer as the class of that name (tests/test_zoo.py), so its classes are given by name."""
    names = [clf.labels[int(i)] for i in indices]
    return [int(n) for n in names] if all(n.isdigit() for n in clf.labels.values()) else [int(i) for i in indices]


def _scalars(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


MULTI = "bert_multilabel"  # NAOPC reads each label's sigmoid; the methods of exclusive classes refuse it by name
MULTI_REFUSAL = "multi-label classifier"


@pytest.fixture(scope="module")
def library(zoo):
    """Per member, the library functions' own numbers, computed once on the classifier the folder loads as."""
    from textxai import naopc, toki
    from textxai.ceval import score
    from textxai.fim.text import difficulty
    from textxai.inconsistency import scoring

    cache = {}

    def get(name):
        if name in cache:
            return cache[name]
        folder = zoo.members[name].folder
        clf = as_classifier(folder)
        ref = {"folder": folder, "clf": clf, "predicted": clf.predict(SHORT),
               "naopc": naopc.compute(SHORT, None, clf, **OMISSION)}
        ref["naopc_rows"] = [r["naopc_comprehensiveness"] for r in naopc.compare_attributions(
            SHORT, clf, {"omission": None}, options=naopc.NAOPCOptions(normalization="exact"))["omission"]["per_example"]]
        if name != MULTI:
            train = _train_texts(clf)
            ref.update(train=train, train_labels=[clf.labels[i] for i in clf.predict(train)],
                       toki_options={**TOKI, "class_names": _class_names(clf)},
                       covered=len(set(clf.predict(train))) == clf.num_labels)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref.update(
                    fim=np.asarray(difficulty(SHORT, clf)["difficulty"]),
                    ceval=score.compute(SHORT, COUNTERFACTUALS, model=clf),
                    inconsistency=scoring.compute(CHAINS, n=[1, 2], model=clf),
                    toki=_toki_or_refusal(lambda: toki.analyse(
                        SHORT, [clf.labels[i] for i in ref["predicted"]], model=clf, train_texts=train,
                        train_labels=ref["train_labels"], figures=False, **ref["toki_options"]).summary, ref))
        cache[name] = ref
        return ref
    return get


def _same_summary(got: dict, want: dict):
    keys = set(_scalars(want)) & set(_scalars(got))
    assert keys, (got.keys(), want.keys())
    for key in keys:
        close(got[key], want[key], key)


def _modules(ref):
    """Each module's compute through ``textxai.load`` on the member's folder: {module: callable}."""
    folder = ref["folder"]
    labels = _int_labels(ref["clf"], ref["predicted"])
    return {
        "naopc": lambda: textxai.load("naopc").compute(texts=SHORT, model=folder, **OMISSION),
        "fim_difficulty": lambda: textxai.load("fim_difficulty").compute(texts=SHORT, model=folder),
        "ceval": lambda: textxai.load("ceval").compute(references=SHORT, predictions=COUNTERFACTUALS, model=folder),
        "inconsistency": lambda: textxai.load("inconsistency").compute(edits=CHAINS, model=folder, n=[1, 2]),
        "toki_trust": lambda: textxai.load("toki_trust").compute(
            texts=SHORT, references=labels, model=folder, train_texts=ref.get("train", SHORT),
            train_labels=ref.get("train_labels", labels), **ref.get("toki_options", TOKI))}


# ---------------------------------------------------------------------------------------------- the five modules
@pytest.mark.parametrize("name", WORKING)
def test_the_five_modules_give_the_library_numbers(library, name):
    ref = library(name)
    calls = _modules(ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = calls.pop("naopc")()
        for key in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency"):
            close(got[key], ref["naopc"][key], key)
        if name == MULTI:
            for module, call in calls.items():
                with pytest.raises(ValueError, match=MULTI_REFUSAL):
                    call()
            return
        got = calls["fim_difficulty"]()
        np.testing.assert_allclose(got["difficulty"], ref["fim"], rtol=REL)
        _same_summary(calls["ceval"](), ref["ceval"])
        _same_summary(calls["inconsistency"](), ref["inconsistency"])
        got = _toki_or_refusal(calls["toki_trust"], ref)
    if got is not None:
        assert got["trust_labels"] == ref["toki"]["trust_labels"]
        _same_summary(got, ref["toki"])


def _toki_or_refusal(call, ref):
    """TOKI needs a correctly predicted training text of every class: a random model that predicts no text of
    the packaged corpus as some class is refused, naming the class, on every surface alike."""
    if ref["covered"]:
        return call()
    with pytest.raises(ValueError, match="have no correctly predicted training text"):
        call()
    return None


# ----------------------------------------------------------------------------------------------- `textxai run`
MODULES = ("naopc", "fim_difficulty", "ceval", "inconsistency", "toki_trust")
RUN_MODULE = {name: MODULES[i % len(MODULES)] for i, name in enumerate(WORKING)}  # each module on 3-4 members


_cli = run_cli


def _table(path, rows, header=("text", "label", "counterfactual")):
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


@pytest.mark.parametrize("name", WORKING)
def test_textxai_run_gives_the_library_numbers(library, name, tmp_path):
    ref = library(name)
    module = RUN_MODULE[name]
    clf = ref["clf"]
    names = [clf.labels[int(i)] for i in ref["predicted"]]
    data = _table(tmp_path / "data.csv", [(t, y, c) for t, y, c in zip(SHORT, names, COUNTERFACTUALS)])
    extra = {"naopc": ["--attribution-methods", "omission", "--normalization", "exact"], "fim_difficulty": [],
             "ceval": ["--counterfactual-column", "counterfactual"],
             "inconsistency": ["--chains", str(tmp_path / "chains.jsonl"), "--n", "1", "2"]}
    if module == "inconsistency":
        (tmp_path / "chains.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CHAINS))
    if module == "toki_trust":
        train = _table(tmp_path / "train.csv", [(t, y, "") for t, y in zip(ref["train"], ref["train_labels"])])
        extra["toki_trust"] = ["--label-column", "label", "--train-data", train, "--explainer", "omission",
                               "--embedders", "classifier", "--theta-relate", "0", "--top-k", "3"]
        if ref["toki_options"]["class_names"]:
            extra["toki_trust"] += ["--class-names", *ref["toki_options"]["class_names"]]
    code, err = _cli(["run", module, "--model", ref["folder"], "--data", data, "--output", str(tmp_path / "out"),
                      "--no-progress", *extra[module]])
    if name == MULTI and module != "naopc":
        assert code == 2 and MULTI_REFUSAL in err, err
        return
    if module == "toki_trust" and not ref["covered"]:
        assert code == 2 and "have no correctly predicted training text" in err, err
        return
    assert code == 0, err
    written = json.loads((tmp_path / "out" / f"{module}.json").read_text())
    if module == "naopc":
        for key in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency"):
            close(written[f"omission/{key}"], ref["naopc"][key], key)
    elif module == "fim_difficulty":
        np.testing.assert_allclose(written["difficulty"], ref["fim"], rtol=REL)
    elif module == "toki_trust":
        assert [e["label"] for e in written["examples"]] == ref["toki"]["trust_labels"]
        close(written["trustworthy_rate"], ref["toki"]["trustworthy_rate"])
    else:
        _same_summary({k: (math.nan if v is None else v) for k, v in written.items()}, ref[module])


# ---------------------------------------------------------------------------------------------- `textxai audit`
@pytest.mark.parametrize("name", WORKING)
def test_textxai_audit_gives_the_library_numbers(library, name, tmp_path):
    """The audit's cheapest run (2 texts, overview, difficulty and omission's faithfulness): its predictions, FIM
    difficulties and NAOPC per text are the library's."""
    ref = library(name)
    clf = ref["clf"]
    data = _table(tmp_path / "data.csv", [(t, clf.labels[int(y)], "") for t, y in zip(SHORT, ref["predicted"])])
    code, err = _cli(["audit", "--model", ref["folder"], "--data", data, "--label-column", "label", "--output",
                      str(tmp_path / "out"), "--no-progress", "--profile", "quick", "--sections", "difficulty",
                      "faithfulness", "--faithfulness.methods", "omission", "--faithfulness.normalization", "exact",
                      "--run.precision", "float32"])   # "auto" may be bfloat16 on a CPU that multiplies it natively
    if name == MULTI:
        assert code == 2 and MULTI_REFUSAL in err, err
        return
    assert code == 0, err
    model = json.loads((tmp_path / "out" / "audit.json").read_text())["models"]["model"]
    assert model["overview"]["predictions"] == [int(y) for y in ref["predicted"]]
    close(model["overview"]["accuracy"]["score"], 1.0)
    np.testing.assert_allclose(model["difficulty"]["difficulty"], ref["fim"], rtol=REL)
    per_text = model["faithfulness"]["per_example"]["omission"]
    # the audit scores each token row once, in the batch of the stage that asked first (batching.remembered_rows):
    # float32 batch rounding moves a probability by up to ~1e-6 absolute (2.5e-7 seen on DistilBERT), and NAOPC
    # divides by the limits' width
    np.testing.assert_allclose(per_text["naopc_comprehensiveness"], ref["naopc_rows"], rtol=1e-5, atol=2e-6)


# ------------------------------------------------------------------------------------------------- the callback
@pytest.mark.parametrize("name", WORKING)
def test_the_callback_gives_the_library_numbers_on_the_pair_a_trainer_holds(zoo, name):
    """TextxaiCallback.evaluate on the (model, tokenizer) a Trainer holds (a half-precision model stays in its
    dtype): NAOPC and FIM equal the library functions on the same pair."""
    from textxai import naopc
    from textxai.classifier import TextClassifier
    from textxai.fim.text import difficulty
    from textxai.integrations import TextxaiCallback

    model, tok = zoo.members[name].parts()
    modules = {"naopc": OMISSION} if name == MULTI else {"naopc": OMISSION, "fim_difficulty": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scalars = TextxaiCallback(modules, texts=SHORT, strict=True).evaluate(model, tok)
        clf = TextClassifier((model, tok))
        want = naopc.compute(SHORT, None, clf, **OMISSION)
        for key in ("comprehensiveness", "naopc_comprehensiveness", "naopc_sufficiency"):
            close(scalars[f"eval_naopc_{key}"], want[key], key)
        if name == MULTI:
            with pytest.raises(ValueError, match=MULTI_REFUSAL):
                TextxaiCallback("fim_difficulty", texts=SHORT, strict=True).evaluate(model, tok)
            return
        values = difficulty(SHORT, clf)["difficulty"]
    close(scalars["eval_fim_difficulty_summary_max"], float(max(values)))
    close(scalars["eval_fim_difficulty_summary_min"], float(min(values)))


# ---------------------------------------------------------------------------------------------- the Spaces' handlers
@pytest.fixture(scope="module")
def apps():
    pytest.importorskip("gradio")
    return {name: load_space_app(name) for name in ("naopc", "fim_difficulty", "ceval", "toki_trust", "audit")}


OTHER_SPACE = {name: ("ceval", "toki_trust", "ceval", "toki_trust", "audit")[i % 5] for i, name in enumerate(WORKING)}


@pytest.mark.parametrize("name", WORKING)
def test_the_spaces_handlers_give_the_library_numbers(library, apps, name, monkeypatch):
    """The handlers a click runs, with the member's folder (a Space on your own machine): NAOPC's and FIM's on
    every member, and one of CEval's, TOKI's and the audit's in turn."""
    from textxai import fim

    ref = library(name)
    folder, clf = ref["folder"], ref["clf"]
    monkeypatch.setattr(apps["fim_difficulty"], "corpus_texts", lambda kind="sentiment", split="test": SHORT)
    monkeypatch.setattr(apps["fim_difficulty"], "options", lambda: fim.FIMOptions(return_eigenvector=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis, _ = apps["naopc"].analyse_texts(folder, "\n".join(SHORT), "omission", "auto", 1)
        got = analysis.results["methods"]["omission"]
        for key in ("comprehensiveness", "naopc_comprehensiveness", "naopc_sufficiency"):
            close(got[key], ref["naopc"][key], key)
        other = OTHER_SPACE[name]
        if name == MULTI:
            with pytest.raises(ValueError, match=MULTI_REFUSAL):
                apps["fim_difficulty"].analyse(folder, SHORT[1])
            return
        _, fim_analysis = apps["fim_difficulty"].analyse(folder, SHORT[1])
        from textxai.fim.text import difficulty   # the text alone (in a padded batch T5 moves by ~5e-6)

        close(fim_analysis.results["difficulty"][0], float(difficulty([SHORT[1]], clf)["difficulty"][0]))
        if other == "ceval":
            analysis = apps["ceval"].analyse_one(folder, SHORT[0], COUNTERFACTUALS[0], "none")[0]
            from textxai.ceval import score

            _same_summary(analysis.summary, score.compute(SHORT[:1], COUNTERFACTUALS[:1], model=clf))
        elif other == "toki_trust":
            train = "\n".join(f"{y}\t{t}" for t, y in zip(ref["train"], ref["train_labels"]))
            label = clf.labels[int(ref["predicted"][0])]
            call = lambda: apps["toki_trust"].assess_analysis(  # noqa: E731
                folder, SHORT[0], label, train, "omission", ["classifier"])[0]
            if ref["toki_options"]["class_names"]:   # LABEL_i: the Space takes no class names, and says so
                with pytest.raises(ValueError, match=r"class_names=None and the model's labels are \['LABEL_0'"):
                    call()
            else:
                space = _toki_or_refusal(call, ref)
                if space is not None:
                    assert space.summary["predictions"][0] == int(ref["predicted"][0])
        else:
            summary, _, path = apps["audit"].run_audit(folder, "none", "\n".join(SHORT), None, ["difficulty"])
            assert "difficulty" in summary.lower() or summary
            page = open(path, encoding="utf-8").read()
            assert clf.labels[int(ref["predicted"][0])] in page


# ---------------------------------------------------------------------------------- the refused, on every surface
@pytest.mark.parametrize("name", REFUSED)
def test_members_without_class_probabilities_are_refused_on_every_surface(zoo, apps, name, tmp_path):
    """A regression head, ids 1..5, duplicate names, causal and masked LMs: the library, a module, `textxai run`,
    `textxai audit`, the callback and a Space each refuse by naming the model and what was expected."""
    from textxai.classifier import TextClassifier
    from textxai.integrations import TextxaiCallback

    member = zoo.members[name]
    with pytest.raises(ValueError, match="model=") as library_error:
        TextClassifier(member.folder, device="cpu")
    first_line = str(library_error.value).split(":")[0]
    with pytest.raises(ValueError, match="model="):
        textxai.load("naopc").compute(texts=SHORT, model=member.folder, **OMISSION)
    data = _table(tmp_path / "data.csv", [(t, "", "") for t in SHORT])
    for argv in (["run", "naopc", "--attribution-methods", "omission"], ["audit", "--sections", "difficulty"]):
        code, err = _cli([*argv, "--model", member.folder, "--data", data, "--output", str(tmp_path / "o"),
                          "--no-progress"])
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and "expected" in lines[0], err
        assert f"--model {member.folder!r}" in lines[0] or f"model={member.folder!r}" in lines[0], err
    model, tok = member.parts()
    with pytest.raises(ValueError, match="model="):
        TextxaiCallback({"naopc": OMISSION}, texts=SHORT, strict=True).evaluate(model, tok)
    with pytest.raises(ValueError, match="model=") as space_error:
        apps["naopc"].analyse_texts(member.folder, "\n".join(SHORT), "omission", "auto", 1)
    assert first_line.split("=")[0] in str(space_error.value)
