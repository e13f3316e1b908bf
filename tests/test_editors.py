"""textxai.editors: the gradient-guided substitution editor, checked by brute force and finite differences."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from textxai.editors import EDITORS, GradientSubstitutionEditor, get_editor
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
def test_candidates_are_word_substitutions_by_nearest_neighbours(fixture, request):
    clf = request.getfixturevalue(fixture)
    editor = GradientSubstitutionEditor(clf, n_words=2, n_neighbours=5, n_substitutes=2)
    emb = clf.embedding_matrix.detach().double().numpy()
    bpe = any(t.startswith("\u0120") for t in clf.tokenizer.get_vocab())
    ids, words = [], []
    for i in range(min(len(clf.tokenizer), emb.shape[0])):
        if i in clf.tokenizer.all_special_ids:
            continue
        tok = clf.tokenizer.convert_ids_to_tokens(i)
        word = (tok[1:] if tok.startswith("\u0120") else None) if bpe else (None if tok.startswith("##") else tok)
        if word and len(word) >= 2 and word.isalpha():
            ids.append(i)
            words.append(word)
    unit = emb[ids] / np.linalg.norm(emb[ids], axis=1, keepdims=True)
    n_checked = 0
    for text in TEXTS:
        per_word = editor.substitutions(text)
        enc = clf.encode([text])
        token_ids = enc.tensors["input_ids"][0].numpy()
        for subs in per_word:
            assert 1 <= len(subs) <= 2
            s0 = subs[0]
            toks = [t for t, w in enumerate(enc.word_ids[0]) if w == s0.index]
            centre = emb[token_ids[toks]].mean(axis=0)
            sims = unit @ (centre / np.linalg.norm(centre))
            order = [j for j in np.argsort(-sims, kind="stable") if words[j].lower() != s0.word.lower()][:5]
            allowed = {words[j].lower() for j in order}
            for s in subs:
                assert s.substitute.lower() in allowed
                assert s.score < 0
                assert text[s.start:s.end] == s.word
            assert [s.score for s in subs] == sorted(s.score for s in subs)
            n_checked += 1
        cands = editor.candidates(text)
        singles = [editor._apply(text, [s]) for subs in per_word for s in subs]
        assert cands[: len(set(singles))] == list(dict.fromkeys(singles))
        for cand in cands:
            assert cand != text
            assert 1 <= word_distance(text, cand) <= len(per_word)
        for cand in dict.fromkeys(singles):
            assert word_distance(text, cand) == 1
    assert n_checked > 0
    assert editor(TEXTS) == [editor([t])[0] for t in TEXTS]  # no dependence on the batch


def test_scores_and_influence_match_finite_differences(double_bert):
    clf = double_bert
    editor = GradientSubstitutionEditor(clf, n_words=3, n_neighbours=8, n_substitutes=8)
    ids, words, vectors, _ = editor._vocab
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
        alpha = [w for w in range(len(spans)) if spans[w][0].isalpha()]
        expected_order = sorted(alpha, key=lambda w: -influence[w])[: len(per_word)]
        assert [subs[0].index for subs in per_word] == expected_order
        for subs in per_word:
            w = subs[0].index
            assert subs[0].influence == pytest.approx(influence[w], rel=1e-3, abs=1e-9)
            toks = np.flatnonzero(word_ids == w)
            if len(toks) != 1:
                continue
            for s in subs:
                v = vectors[[k for k, word in enumerate(words) if word == s.substitute.lower()][0]]

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
