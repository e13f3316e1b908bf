"""evaluate.combine of textxai modules (and of a plain evaluate metric): add, add_batch, compute, routed options,
JSON-valid results through evaluate.save."""
import json
import textwrap

import evaluate
import numpy as np
import pytest

import textxai

TEXTS = ["the movie was wonderful", "a terrible boring film", "the food was not good", "i hated it"]
NAOPC = {"attribution_method": "gradient", "normalization": "exact"}

# evaluate.load("accuracy") needs the Hub (not cached offline here): the same metric, written as evaluate's is
ACCURACY = '''
import datasets
import evaluate


class Accuracy(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="accuracy", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": datasets.Value("int32"),
                                                               "references": datasets.Value("int32")}))

    def _compute(self, predictions, references, normalize=True, sample_weight=None):
        hits = [float(p == r) for p, r in zip(predictions, references)]
        return {"accuracy": sum(hits) / len(hits) if normalize else sum(hits)}
'''


@pytest.fixture(scope="module")
def accuracy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("accuracy")
    (folder / "accuracy.py").write_text(textwrap.dedent(ACCURACY))
    return evaluate.load(str(folder / "accuracy.py"))


@pytest.fixture(scope="module")
def naopc():
    return textxai.load("naopc")


@pytest.fixture(scope="module")
def fim():
    return textxai.load("fim_difficulty")


def test_two_textxai_modules_add_batch_add_and_compute_route_their_options(naopc, fim, bert_clf):
    alone = {**naopc.compute(texts=TEXTS, model=bert_clf, **NAOPC), **fim.compute(texts=TEXTS, model=bert_clf)}
    combined = evaluate.combine([naopc, fim])
    # compute with options only naopc takes (attribution_method, normalization) and one both take (model)
    assert combined.compute(texts=TEXTS, model=bert_clf, **NAOPC) == alone
    combined.add_batch(texts=TEXTS[:2])  # before: KeyError 'text_pairs' inside evaluate's CombinedEvaluations
    combined.add_batch(texts=TEXTS[2:])
    assert combined.compute(model=bert_clf, **NAOPC) == alone
    for text in TEXTS:
        combined.add(texts=text)
    assert combined.compute(model=bert_clf, **NAOPC) == alone
    # the optional column reaches both modules too
    pairs = ["yes", "no", "maybe", "so"]
    combined.add_batch(texts=TEXTS, text_pairs=pairs)
    assert combined.compute(model=bert_clf, **NAOPC)["difficulty"] == fim.compute(
        texts=TEXTS, text_pairs=pairs, model=bert_clf)["difficulty"]


def test_with_a_plain_evaluate_metric(fim, accuracy, bert_clf):
    combined = evaluate.combine([accuracy, fim])
    out = combined.compute(predictions=[1, 0, 0, 1], references=[1, 1, 0, 1], texts=TEXTS, model=bert_clf,
                           normalize=False)
    assert out["accuracy"] == 3.0
    assert out["difficulty"] == fim.compute(texts=TEXTS, model=bert_clf)["difficulty"]
    for p, r, t in zip([1, 0, 0, 1], [1, 1, 0, 1], TEXTS):
        combined.add(prediction=p, reference=r, texts=t)
    assert combined.compute(model=bert_clf) == {**out, "accuracy": 0.75}


def test_a_keyword_no_module_takes_is_named(naopc, fim, bert_clf):
    combined = evaluate.combine([naopc, fim])
    with pytest.raises(TypeError, match=r"compute\(beam_sise=...\): no combined module takes it; .*'naopc': \[.*'beam_size'"):
        combined.compute(texts=TEXTS, model=bert_clf, beam_sise=2)
    with pytest.raises(TypeError, match=r"add_batch\(sentences=...\): no combined module takes it"):
        combined.add_batch(sentences=TEXTS)
    with pytest.raises(ValueError, match="texts=None"):  # a required column still missing: the module's own error
        combined.add_batch(text_pairs=TEXTS)


def test_results_are_json_valid_through_evaluate_save(tmp_path):
    inconsistency = textxai.load("inconsistency")
    with pytest.warns(UserWarning, match="no chain contributes"):
        out = inconsistency.compute(edits=[["a", "b"]], n=[9])
    assert out["inc@9"] is None and out["inc@9_chains"] == 0  # undefined (no chain reaches step 9): null, not NaN
    path = evaluate.save(str(tmp_path), **out)
    saved = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"bare {c} in {path}"))
    assert {k: v for k, v in saved.items() if not k.startswith("_")} == out
    assert all(not isinstance(v, (np.generic, np.ndarray)) for v in out.values())


def test_modules_without_a_shared_column_each_get_their_own(recwarn):
    """inconsistency (edits) with ceval (references / predictions): nothing in common, each gets its columns
    and options (n only inconsistency takes; original_probs only ceval)."""
    inconsistency, ceval = textxai.load("inconsistency"), textxai.load("ceval")
    edits = [["a b c", "a x c", "a b c"], ["d e", "d f", "g h i"]]
    refs, cfs = ["a bad film", "a dull plot"], ["a good film", "a fine plot"]
    probs = {"original_probs": [[0.9, 0.1], [0.8, 0.2]], "counterfactual_probs": [[0.2, 0.8], [0.6, 0.4]]}
    alone = {**inconsistency.compute(edits=edits, n=[1, 2]), **ceval.compute(references=refs, predictions=cfs, **probs)}
    combined = evaluate.combine([inconsistency, ceval])
    assert combined.compute(edits=edits, references=refs, predictions=cfs, n=[1, 2], **probs) == alone
    for e, r, c in zip(edits, refs, cfs):
        combined.add(edits=e, reference=r, prediction=c)
    assert combined.compute(n=[1, 2], **probs) == alone
