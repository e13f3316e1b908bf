"""textxai.editors: the gradient-guided substitution editor, checked by brute force and finite differences."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from textxai.editors import EDITORS, GradientSubstitutionEditor, SubstituteGenerator, _stop_words, antonym_pairs, get_editor
from textxai.words import word_distance, word_spans

TEXTS = [
    "the movie was wonderful and the acting was great .",
    "I hated it, a terrible boring film!",
    "the food was not good but the service was lovely",
]


@pytest.fixture(scope="module")
def double_bert(bert_parts):
    from textxai.classifier import TextClassifier

    model, tokenizer = bert_parts
    return TextClassifier((copy.deepcopy(model).double(), tokenizer), device="cpu")


def log_p(clf, text, edit=None):
    """log p(class) of ``text`` with ``edit(embeds)`` applied to the input embeddings (no autograd)."""
    enc = clf.encode([text])
    with torch.no_grad():
        embeds = clf.input_embeddings(enc.tensors).clone()
        if edit is not None:
            edit(embeds[0], enc.word_ids[0])
        return torch.log_softmax(clf.logits_from_embeddings(embeds, enc.tensors), -1)[0].numpy()


@pytest.mark.parametrize("fixture", ["bert_clf", "roberta_clf"])
def test_candidates_are_generator_substitutes(fixture, request):
    clf = request.getfixturevalue(fixture)
    editor = GradientSubstitutionEditor(clf, n_words=2, n_neighbours=5, n_substitutes=2, min_similarity=-1.0)
    gen = SubstituteGenerator()   # the shared generator the editor uses (free mode)
    n_checked = 0
    for text in TEXTS:
        per_word = editor.substitutions(text)
        for subs in per_word:
            assert 1 <= len(subs) <= 2
            allowed = {w.lower() for w, _ in gen(subs[0].word, 5)}
            for s in subs:
                assert s.substitute.lower() in allowed and s.score < 0 and text[s.start:s.end] == s.word
            assert [s.score for s in subs] == sorted(s.score for s in subs)
            n_checked += 1
        cands = editor.candidates(text)
        singles = [editor._apply(text, [s]) for subs in per_word for s in subs]
        assert cands[: len(set(singles))] == list(dict.fromkeys(singles))
        for cand in cands:
            assert cand != text
            assert 1 <= word_distance(text, cand) <= len(per_word)
    assert n_checked > 0
    assert editor(TEXTS) == [editor([t])[0] for t in TEXTS]  # no dependence on the batch


def test_generator_filters():
    gen, keep = SubstituteGenerator(), SubstituteGenerator(keep_meaning=True)
    assert gen("the") == [] and gen("qzxqzx") == []                 # stop words and unknown words: nothing
    for word in ("film", "terrible", "market", "acting"):
        subs = [w for w, _ in gen(word)]
        assert subs and word not in subs
        assert not any(w in _stop_words() or not w.isalpha() or w.startswith(word[:4]) for w in subs)
    assert "bad" in [w for w, _ in gen("good")] or "better" in [w for w, _ in gen("good")]
    assert not any((w, "good") in antonym_pairs() for w, _ in keep("good"))
    assert [w for w, _ in gen("Film", 2)] == [w.capitalize() for w, _ in gen("film", 2)]   # case follows the word
    sims = gen.similar_texts("a great film", ["a great movie", "tax rates rose"], 0.8)
    assert sims[0] is not None and sims[0] >= 0.8 and sims[1] is None


def test_max_words_makes_larger_edits():
    from textxai.inconsistency import step_distances

    small = GradientSubstitutionEditor("textxai/demo-sentiment", n_words=2, min_similarity=-1.0)
    large = GradientSubstitutionEditor("textxai/demo-sentiment", n_words=2, max_words=5, min_similarity=-1.0)
    text = "The brilliant young cast delivers a moving story with superb music and gorgeous photography."
    assert max(word_distance(text, c) for c in small.candidates(text)) <= 2
    assert max(word_distance(text, c) for c in large.candidates(text)) >= 4
    # so a chain can have inc > 2 (the paper's inc@n is bounded by max_words - 1)
    chain = [text, large.candidates(text)[0], large.candidates(text)[-1]]
    assert step_distances(chain).tolist()[1] >= 3


def test_scores_and_influence_match_finite_differences(double_bert):
    clf = double_bert
    editor = GradientSubstitutionEditor(clf, n_words=3, n_neighbours=8, n_substitutes=8, min_similarity=-1.0)
    eps = 1e-6
    checked = 0
    for text in TEXTS:
        current = int(np.argmax(log_p(clf, text)))
        base = log_p(clf, text)[current]
        enc = clf.encode([text])
        word_ids = enc.word_ids[0]
        spans = word_spans(text)
        # influence = input x gradient = d/da log p(embeds of the word scaled by a) at a = 1
        influence = {}
        for w in range(len(spans)):
            def scale(e, wid, w=w):
                e[torch.from_numpy(wid == w)] *= 1 + eps
            influence[w] = (log_p(clf, text, scale)[current] - base) / eps
        per_word = editor.substitutions(text)
        with_subs = [w for w in range(len(spans)) if spans[w][0].isalpha() and editor.generator(spans[w][0], 1)]
        chosen = sorted(with_subs, key=lambda w: -influence[w])[: editor.n_words]
        # the most influential words with replacements, in that order (a word left without a replacement
        # predicted to lower the class drops out)
        assert [subs[0].index for subs in per_word] == [w for w in chosen if w in {x[0].index for x in per_word}]
        for subs in per_word:
            w = subs[0].index
            assert subs[0].influence == pytest.approx(influence[w], rel=1e-3, abs=1e-9)
            toks = np.flatnonzero(word_ids == w)
            if len(toks) != 1:
                continue
            for s in subs:
                v = editor._word_vectors([s.substitute])[0]

                def move(e, wid, t=int(toks[0]), v=v):
                    e[t] = e[t] + eps * (v - e[t])
                derivative = (log_p(clf, text, move)[current] - base) / eps
                assert s.score == pytest.approx(derivative, rel=1e-3, abs=1e-9)
                checked += 1
    assert checked > 0


def test_bad_options(bert_clf):
    with pytest.raises(ValueError, match="n_words=0"):
        GradientSubstitutionEditor(bert_clf, n_words=0)
    with pytest.raises(ValueError, match="editor='mice'"):
        get_editor("mice", bert_clf)
    with pytest.raises(TypeError, match=r"texts\[1\]=3"):
        GradientSubstitutionEditor(bert_clf)(["ok", 3])
    assert isinstance(get_editor("gradient_substitution", bert_clf), EDITORS["gradient_substitution"])
    assert GradientSubstitutionEditor(bert_clf)([" "]) == [[]]
