"""feedback_chains: a scripted editor with a rule classifier, then the built-in editor on a tiny model."""
from __future__ import annotations

import numpy as np
import pytest

from textxai.editors import SubstitutionEditor
from textxai.inconsistency import compute, feedback_chains
from textxai.words import word_distance


class RuleClassifier:
    """Class 1 when the text contains "good", else 0."""

    def predict_proba(self, texts):
        return np.array([[0.1, 0.9] if "good" in t.split() else [0.8, 0.2] for t in texts])


SCRIPT = {
    # flips: "the movie is bad" (d=2), "the film is bad" (d=1); the unchanged text (d=0) does not flip
    "the film is good": ["the film is good", "the movie is bad", "the film is bad", "the film is great good"],
    # flips: both at d=2 -> the earlier one
    "the film is bad": ["the film was good", "a film is good", "the film is awful"],
    # nothing flips -> the smallest edit overall
    "the film was good": ["the films were good", "the film was good ."],
    # the editor fails: the chain ends with None
    "the film was good .": [],
    "so good": ["so so bad", "so good !", None, ""],
    "so so bad": ["so so good"],
    "so so good": ["so so good ."],
    "so so good .": [],
}


class ScriptedEditor:
    def __init__(self):
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return [list(SCRIPT[t]) for t in texts]


def test_scripted_chain_follows_the_selection_rule():
    editor = ScriptedEditor()
    out = feedback_chains(editor, ["the film is good", "so good"], RuleClassifier(), steps=6, progress=False)
    assert out.chains[0] == ["the film is good", "the film is bad", "the film was good", "the film was good .", None]
    assert out.labels[0] == [1, 0, 1, 1, None]
    # None and "" candidates are dropped; "so good !" is smaller but does not flip
    assert out.chains[1] == ["so good", "so so bad", "so so good", "so so good .", None]
    assert out.labels[1] == [1, 0, 1, 1, None]
    # only the chains still running are fed back; both fail at step 4, so step 5 never calls the editor
    assert editor.calls == [
        ["the film is good", "so good"],
        ["the film is bad", "so so bad"],
        ["the film was good", "so so good"],
        ["the film was good .", "so so good ."],
    ]
    with pytest.warns(UserWarning, match="minimality@4"):
        r = compute(out.chains, n=[1, 2, 3, 4], labels=out.labels)
    # distances: chain 0 = [1, 2, 1], chain 1 = [2, 1, 1]; inc: [1, 0] and [0, 0]
    assert r["minimality@1"] == 1.5 and r["minimality@2"] == 1.5 and r["minimality@3"] == 1.0
    assert r["inc@1"] == 0.5 and r["inc@2"] == 0.25
    assert [r[f"flip_rate@{k}"] for k in (1, 2, 3, 4)] == [1.0, 1.0, 0.0, 0.0]
    assert r["flip_rate@4_chains"] == 2  # both editors failed at step 4




@pytest.mark.parametrize(
    "selection, expected",
    [("flip_then_min_distance", "so so bad"), ("min_distance", "so good !"), ("first", "so so bad")],
)
def test_selection_options(selection, expected):
    out = feedback_chains(ScriptedEditor(), ["so good"], RuleClassifier(), steps=1, selection=selection, progress=False)
    assert out.chains == [["so good", expected]]
    assert out.labels == [[1, int("good" in expected.split())]]


def test_feedback_errors():
    with pytest.raises(TypeError, match="editor="):
        feedback_chains("mice", ["a"], RuleClassifier())
    with pytest.raises(ValueError, match="editor returned"):
        feedback_chains(lambda xs: [["x"]] * (len(xs) + 1), ["a"], RuleClassifier(), progress=False)
    with pytest.raises(TypeError, match=r"editor output \[0\]\[0\]=3"):
        feedback_chains(lambda xs: [[3]], ["a"], RuleClassifier(), progress=False)
    with pytest.raises(ValueError, match="steps=0"):
        feedback_chains(ScriptedEditor(), ["so good"], RuleClassifier(), steps=0)
    with pytest.raises(ValueError, match="selection='best'"):
        feedback_chains(ScriptedEditor(), ["so good"], RuleClassifier(), selection="best")
    with pytest.raises(ValueError, match=r"texts\[0\]=''"):
        feedback_chains(ScriptedEditor(), [""], RuleClassifier())


TEXTS = [
    "the movie was wonderful and the acting was great .",
    "I hated it, a terrible boring film!",
    "the food was not good but the service was lovely",
]


def test_builtin_editor_chains_on_tiny_model(bert_clf):
    # no sentence-similarity filter: a random tiny model's edits are arbitrary, the chains should stay long
    editor = SubstitutionEditor(bert_clf, n_words=2, n_neighbours=10, n_substitutes=2, min_similarity=-1.0)
    out = feedback_chains(editor, TEXTS, bert_clf, steps=3, progress=False)
    for chain, labels in zip(out.chains, out.labels):
        texts = [t for t in chain if t is not None]
        assert labels[: len(texts)] == bert_clf.predict(texts).tolist()
        # every step: the smallest flipping candidate if any, else the smallest candidate (brute force)
        for prev, nxt in zip(texts, texts[1:]):
            cands = editor([prev])[0]
            lab_prev = int(bert_clf.predict([prev])[0])
            labs = bert_clf.predict(cands).tolist()
            dist = [word_distance(prev, c) for c in cands]
            pool = [i for i in range(len(cands)) if labs[i] != lab_prev] or list(range(len(cands)))
            assert nxt == cands[min(pool, key=lambda i: (dist[i], i))]
    # flip_rate@n from the chain's labels and from the model agree (n up to 2: on a random tiny model the
    # editor's chains may stop before step 4, and NaN != NaN)
    ns = [1, 2]
    from_labels = compute(out.chains, n=ns, labels=out.labels)
    from_model = compute(out.chains, n=ns, model=bert_clf)
    for k in ns:
        assert from_labels[f"flip_rate@{k}"] == from_model[f"flip_rate@{k}"]
        assert from_labels[f"flip_rate@{k}_chains"] == from_model[f"flip_rate@{k}_chains"]
    same = lambda a, b: a == b or (isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b))  # noqa: E731
    assert from_labels.keys() == from_model.keys() and all(same(from_labels[k], from_model[k]) for k in from_labels)


def test_feedback_chains_do_not_depend_on_batch_size(bert_clf):
    editor = SubstitutionEditor(bert_clf, n_words=2, n_neighbours=8, n_substitutes=2)
    a = feedback_chains(editor, TEXTS[:2], bert_clf, steps=2, batch_size=1, progress=False)
    b = feedback_chains(editor, TEXTS[:2], bert_clf, steps=2, batch_size=64, progress=False)
    assert a == b
