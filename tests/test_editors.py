"""textxai.editors: the substitution editor, checked by brute force against the classifier, and on the demo model."""
from __future__ import annotations

import numpy as np
import pytest

from textxai.editors import (EDITORS, DeletionEditor, SubstituteGenerator, SubstitutionEditor, _stop_words, antonym_pairs,
                             antonyms, get_editor, same_form)
from textxai.words import parts_of_speech, same_part_of_speech, word_distance, word_spans

TEXTS = [
    "the movie was wonderful and the acting was great .",
    "I hated it, a terrible boring film!",
    "the food was not good but the service was lovely",
]


def _changed_words(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) word pairs of an edit that only replaces words; AssertionError otherwise."""
    a, b = [w for w, _, _ in word_spans(before)], [w for w, _, _ in word_spans(after)]
    assert len(a) == len(b), (before, after)
    return [(x, y) for x, y in zip(a, b) if x != y]


@pytest.fixture(scope="module")
def demo_clf():
    from textxai.classifier import as_classifier

    return as_classifier("textxai/demo-sentiment")


@pytest.mark.parametrize("fixture", ["bert_clf", "demo_clf"])
def test_substitutions_match_the_classifier(fixture, request):
    """Importance, gain and flips recomputed by brute force with the classifier on every edited text (a tiny
    random BERT: no class names, so no class filter; the demo model: class words only)."""
    clf = request.getfixturevalue(fixture)
    editor = SubstitutionEditor(clf, n_words=2, n_neighbours=5, n_substitutes=2, min_similarity=-1.0)
    checked = 0
    for text in TEXTS:
        spans, probs, importance = editor.importance(text)
        n = len(spans)
        masked = clf.masked_proba(text, np.vstack([np.zeros((1, n), bool), np.eye(n, dtype=bool)]))
        c = int(masked[0].argmax())
        assert np.allclose(importance, np.log(masked[0, c]) - np.log(masked[1:, c]), atol=1e-5)  # float32 batches
        target = int(np.argsort(-probs, kind="stable")[1])
        for subs in editor.substitutions(text):
            assert 1 <= len(subs) <= 2 and subs[0].importance > 0
            for s in subs:
                assert text[s.start:s.end] == s.word and s.substitute != s.word
                edited = text[: s.start] + s.substitute + text[s.end:]
                p = clf.predict_proba([edited])[0]
                gain = (np.log(p[target]) - np.log(p[c])) - (np.log(probs[target]) - np.log(probs[c]))
                assert s.gain == pytest.approx(gain, abs=1e-4) and s.gain > 0   # float32 batches
                assert s.flips == (int(p.argmax()) != c)
                listed = (s.word.lower(), s.substitute.lower()) in antonym_pairs()
                assert s.antonym == listed
                assert listed or (same_form(s.word, s.substitute) and same_part_of_speech(s.word, s.substitute))
                if not listed and fixture == "demo_clf":  # GloVe neighbours replace modifiers only (the default)
                    assert parts_of_speech(s.word) & parts_of_speech(s.substitute) & {"ADJ", "ADV"}
                checked += 1
            assert [s.flips for s in subs] == sorted((s.flips for s in subs), reverse=True)
    assert checked > 0
    assert editor(TEXTS) == [editor([t])[0] for t in TEXTS]  # no dependence on the batch


def test_same_form_and_antonyms():
    assert same_form("boring", "exciting") and same_form("loved", "hated") and same_form("films", "movies")
    assert not same_form("charming", "delightfully") and not same_form("film", "films")
    assert not same_form("ready", "readily") and same_form("class", "glass")  # -ss is no plural
    assert antonyms()["good"][0] == "bad" and "good" in antonyms()["bad"]
    assert all((a, b) in antonym_pairs() for a, bs in antonyms().items() for b in bs)


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


@pytest.fixture(scope="module")
def demo_editor():
    return SubstitutionEditor("textxai/demo-sentiment", max_words=4)


@pytest.fixture(scope="module")
def demo_edits(demo_editor):
    from textxai import demo

    texts = demo.demo_texts("sentiment", 12)
    return texts, demo_editor(texts)


def test_class_lean_of_obvious_words(demo_editor):
    positive = ["brilliant", "lovely", "wonderful", "excellent", "delightful", "superb", "enjoyable", "beautiful"]
    negative = ["stupid", "awful", "terrible", "boring", "dull", "lifeless", "mediocre", "ugly"]
    lean = demo_editor.class_lean(positive + negative, 1, 0)   # toward positive, away from negative
    assert (lean[: len(positive)] > 0).all() and (lean[len(positive):] < 0).all()
    # strong enough to be edited / used as replacements (measured: 7 of 8 positive, 5 of 8 negative words)
    assert (lean[: len(positive)] >= demo_editor.min_lean).sum() >= 6
    assert (lean[len(positive):] <= -demo_editor.min_lean).sum() >= 4


def test_demo_edits_replace_class_words_by_other_class_words(demo_editor, demo_edits):
    """Edits a reader can follow: only words change, at most max_words of them, each either a listed antonym
    ("stunning" -> "dreary") or a modifier leaning to the current class (anchor words in GloVe) replaced by a
    modifier of the same form leaning to the other class; most edits are antonyms."""
    texts, edits = demo_edits
    clf = demo_editor.classifier
    n_edits, n_antonyms = 0, 0
    for text, cands in zip(texts, edits):
        current = int(clf.predict([text])[0])
        for cand in cands:
            changed = _changed_words(text, cand)
            assert 1 <= len(changed) <= demo_editor.max_words == 4
            assert word_distance(text, cand) == len(changed)
            for a, b in changed:
                n_antonyms += (a.lower(), b.lower()) in antonym_pairs()
                if (a.lower(), b.lower()) in antonym_pairs():
                    continue
                assert same_form(a, b) and parts_of_speech(a) & parts_of_speech(b) & {"ADJ", "ADV"}, (a, b)
                assert demo_editor.class_lean([a], 1 - current, current)[0] <= -demo_editor.min_lean
                assert demo_editor.class_lean([b], 1 - current, current)[0] >= demo_editor.min_lean
            n_edits += 1
    assert n_edits >= 12 and n_antonyms >= n_edits / 2   # measured on these 12 texts: see the card


def test_demo_edits_flip_most_texts(demo_editor, demo_edits):
    """The editor changes the demo model's prediction on many held-out texts: measured 5 of these 12, and 41 of
    all 90 held-out texts at the first feedback step (max_words=4); 24 of the 90 get no candidate."""
    texts, edits = demo_edits
    clf = demo_editor.classifier
    flipped = 0
    for text, cands in zip(texts, edits):
        if cands:
            flipped += bool((clf.predict(cands) != clf.predict([text])[0]).any())
    assert flipped >= 5


def test_max_words_makes_larger_edits_and_is_respected():
    from textxai.inconsistency import step_distances

    small = SubstitutionEditor("textxai/demo-sentiment", n_words=2, min_similarity=-1.0)
    large = SubstitutionEditor("textxai/demo-sentiment", n_words=2, max_words=5, min_similarity=-1.0)
    text = "A stupid, ugly film with a mediocre plot, a terrible script and a dull cast."
    assert max(word_distance(text, c) for c in small.candidates(text)) <= 2
    assert max(word_distance(text, c) for c in large.candidates(text)) >= 4
    assert max(word_distance(text, c) for c in large.candidates(text)) <= 5
    # so a chain can have inc > 2 (the paper's inc@n is bounded by max_words - 1)
    chain = [text, large.candidates(text)[0], large.candidates(text)[-1]]
    assert step_distances(chain).tolist()[1] >= 3


def test_deterministic_across_instances():
    text = "The pacing drags slightly in the middle, though the brilliant finale more than makes up for it."
    a = SubstitutionEditor("textxai/demo-sentiment")([text])
    b = SubstitutionEditor("textxai/demo-sentiment")([text])
    assert a == b and a[0]


def test_bad_options(bert_clf):
    with pytest.raises(ValueError, match="n_words=0"):
        SubstitutionEditor(bert_clf, n_words=0)
    with pytest.raises(ValueError, match="min_lean=2"):
        SubstitutionEditor(bert_clf, min_lean=2)
    with pytest.raises(ValueError, match="target='neutral'"):
        SubstitutionEditor("textxai/demo-sentiment", target="neutral")
    with pytest.raises(ValueError, match="editor='mice'"):
        get_editor("mice", bert_clf)
    with pytest.raises(TypeError, match=r"texts\[1\]=3"):
        SubstitutionEditor(bert_clf)(["ok", 3])
    assert isinstance(get_editor("substitution", bert_clf), SubstitutionEditor)
    assert "gradient_substitution" not in EDITORS  # the former name: deprecated (tests/test_deprecations.py)
    assert SubstitutionEditor(bert_clf)([" "]) == [[]]
    with pytest.raises(ValueError, match=r"neighbour_pos=\['NOUNS'\]: expected None or a list of parts of speech"):
        SubstitutionEditor(bert_clf, neighbour_pos=["NOUNS"])
    with pytest.raises(ValueError, match="max_words=0"):
        get_editor("deletion", bert_clf, max_words=0)


def test_part_of_speech_filter_and_its_switch():
    """neighbour_pos=None lets GloVe neighbours replace nouns and verbs too (the round-2 editor's salad:
    "Clean design" -> "Clean faulty" is refused by the part-of-speech check in any case)."""
    assert not same_part_of_speech("design", "faulty") and same_part_of_speech("design", "layout")
    assert same_part_of_speech("qzxqzx", "film")       # unknown to the lexicon: no verdict, kept
    ed = SubstitutionEditor("textxai/demo-sentiment")
    anyword = SubstitutionEditor("textxai/demo-sentiment", neighbour_pos=None)
    assert ed._replacements("anniversary", 0, 1) == []  # a noun without listed antonyms: no neighbours
    nouns = [w for w, listed in anyword._replacements("anniversary", 0, 1) if not listed]
    assert nouns and all("NOUN" in parts_of_speech(w) or not parts_of_speech(w) for w in nouns)


def test_deletion_editor_is_the_ceval_baseline(bert_clf):
    from textxai.ceval import deletion_candidates

    texts = ["the movie was wonderful and the acting was great .", "bad"]
    assert DeletionEditor(bert_clf, max_words=2)(texts) == deletion_candidates(texts, bert_clf, max_words=2)
    assert isinstance(get_editor("deletion", bert_clf), DeletionEditor)


# ----------------------------------------------------------------------------------------- the LLM editor
class _Clf:
    """Negative unless the text says 'great'; labels named as the demo model's."""

    labels, num_labels = {0: "negative", 1: "positive"}, 2

    def predict_proba(self, texts, *args, **kwargs):
        return np.array([[0.1, 0.9] if "great" in t else [0.8, 0.2] for t in texts])


SCRIPT = {  # input text -> the fake LM's reply
    "The plot was great.": "Negative: The plot was dull.",                                  # a good rewrite
    "The cast was great.": "Negative: The cast was great.",                                 # identical after cleaning
    "The set was great.": "   ",                                                            # empty
    "The score was great.": "Sure! Here is the edited review:\n\n[Start Edited Text]\nNegative: \"The score was awful.\"\n"
                            "[End Edited Text]\n\nI replaced 'great' by 'awful'.",          # chatter around it
    "The end was great.": "I'm sorry, but I cannot help with that request.",               # not a rewrite
}


@pytest.fixture
def scripted(monkeypatch, tiny_gguf_file):
    """An LLM editor whose LM replies from SCRIPT (textxai.lm.generate replaced); records the chat turns it is sent."""
    from textxai import lm as lm_module
    from textxai.llm_editor import LLMEditor

    sent = []

    def fake_generate(lm, prompts, max_new_tokens=32, **kwargs):
        sent.extend(prompts)
        return [next(r for t, r in SCRIPT.items() if f"Positive: {t}" in p[-1]["content"]) for p in prompts]

    monkeypatch.setattr(lm_module, "generate", fake_generate)
    return LLMEditor(_Clf(), lm=str(tiny_gguf_file)), sent


def test_llm_editor_keeps_only_real_rewrites(scripted):
    editor, sent = scripted
    out = editor(list(SCRIPT))
    assert out == [["The plot was dull."], [], [], ["The score was awful."], []]
    assert editor.failures == {"ok": 2, "identical": 1, "empty": 1, "not a rewrite": 1}
    turns = sent[0]  # CEval's one-shot request: its example as a previous exchange, then the text
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert "Never have I been so sad" in turns[0]["content"] and turns[1]["content"].startswith("Negative: Long, boring")
    assert turns[2]["content"].endswith("Positive: The plot was great.\nTarget: Negative")
    assert "to get the Negative sentiment from the Positive sentiment" in turns[2]["content"]


def test_llm_editor_failures_end_feedback_chains_and_are_failed_counterfactuals(scripted):
    from textxai import ceval, inconsistency

    editor, _ = scripted
    texts = ["The plot was great.", "The cast was great."]
    chains = inconsistency.feedback_chains(editor, texts, _Clf(), steps=1, progress=False).chains
    assert chains == [["The plot was great.", "The plot was dull."], ["The cast was great.", None]]
    res = ceval.compute(texts, [c[0] if c else "-1" for c in editor(texts)], original_labels=[1, 1],
                        counterfactual_labels=[0, 1])
    assert res["num_failed"] == 1 and res["flip_rate"] == 0.5     # the identical reply: a failed generation


def test_llm_editor_gives_the_candidates_asked_so_the_runner_pads_nothing(monkeypatch, tiny_gguf_file, bert_clf):
    """`textxai run ceval --editor llm` keeps --n-counterfactuals 2, but the LLM editor made one candidate per text:
    every second slot was "-1" (num_failed_counterfactuals inflated by our own default, diversity always NaN).
    num_candidates=k asks for k distinct rewrites (the first greedy, the others sampled under the seed); a repeat
    is dropped and counted as "duplicate"; the runner's generate asks for k."""
    import re

    from textxai import ceval, lm as lm_module
    from textxai.ceval.method import ceval_evaluations
    from textxai.llm_editor import _MEMO, LLMEditor

    words = ("dull", "awful", "poor")

    def text_of(p):
        return re.search(r"\n[^\n]*?: (.*)\nTarget: ", p[-1]["content"]).group(1)

    def fake_generate(lm, prompts, max_new_tokens=32, **kwargs):  # greedy: "dull"
        return [text_of(p).replace("great", "dull") for p in prompts]

    def fake_sample(lm, prompts, n, max_new_tokens, seeds, texts=None, *args, **kwargs):  # start=: replies after the memo's
        assert texts == [text_of(p) for p in prompts]
        return [[text_of(p).replace("great", {"plot": "awful", "cast": "poor", "set": "dull"}[text_of(p).split()[1]])]
                * n for p in prompts]

    monkeypatch.setattr(lm_module, "generate", fake_generate)
    monkeypatch.setattr(lm_module, "sample", fake_sample)
    _MEMO.clear()
    texts = ["The plot was great.", "The cast was great.", "The set was great."]
    editor = LLMEditor(bert_clf, lm=str(tiny_gguf_file), num_candidates=2)
    editor.rank = False
    assert editor(texts) == [["The plot was dull.", "The plot was awful."], ["The cast was dull.", "The cast was poor."],
                             ["The set was dull."]]                   # its sample repeated the greedy rewrite
    assert editor.failures == {"ok": 5, "duplicate": 1} and len(editor.replies) == 3
    assert LLMEditor(bert_clf, lm=str(tiny_gguf_file))(texts) == [["The plot was dull."], ["The cast was dull."],
                                                                 ["The set was dull."]]   # one by default, as before
    cfs = ceval.generate(texts[:2], bert_clf, "llm", k=2, editor_model=str(tiny_gguf_file))
    assert [sorted(c) for c in cfs] == [["The plot was awful.", "The plot was dull."],
                                        ["The cast was dull.", "The cast was poor."]]   # no "-1" of ours
    res = ceval.analyse(texts[:2], cfs, bert_clf, intervals=None, figures=False).results
    assert res["num_failed_counterfactuals"] == 0 and res["diversity"] == 1.0
    assert ceval_evaluations(1, 2, [10], editor="llm", editor_candidates=2) == 3 + (1 + 2 * 32 + 2) + 1 + 2   # both, ranked
    with pytest.raises(ValueError, match="num_candidates=0"):
        LLMEditor(bert_clf, lm=str(tiny_gguf_file), num_candidates=0)


def test_llm_editor_options_are_checked(tiny_gguf_file):
    from textxai.llm_editor import LLMEditor

    for kwargs, pattern in ((dict(prompt="fancy"), r"prompt='fancy': expected one of \['ceval', 'minimal', 'zero_shot'\]"),
                            (dict(target=5), r"target=5: expected None or a class index in \[0, 2\)"),
                            (dict(batch_size=0), "batch_size=0"), (dict(task=" "), "task=' '")):
        with pytest.raises(ValueError, match=pattern):
            LLMEditor(_Clf(), lm=str(tiny_gguf_file), **kwargs)
    assert isinstance(get_editor("llm", _Clf(), lm=str(tiny_gguf_file)), LLMEditor)


def test_llm_editor_really_generates_on_the_tiny_lm_batch_independently(tiny_gguf_file):
    from textxai.llm_editor import LLMEditor, _MEMO

    texts = ["The plot was great.", "The cast was bad and the plot was great.", "A film."]
    runs = []
    for batch_size in (1, 3):
        _MEMO.clear()
        editor = LLMEditor(_Clf(), lm=str(tiny_gguf_file), batch_size=batch_size)
        editor(texts)
        runs.append(editor.replies)
    assert runs[0] == runs[1] and all(isinstance(r, str) for r in runs[0])


def test_packaged_llm_edits_demo_texts_within_its_estimate(smollm2):
    """SmolLM2-135M-Instruct rewrites the demo texts (CEval's prompt, CEval's sampling, seed 0): at least 6 of 8
    rewrites differ from their input; the work counted stays within textxai.estimates' bound."""
    from textxai import estimates
    from textxai.batching import work_budget
    from textxai.classifier import as_classifier
    from textxai.demo import demo_texts
    from textxai.llm_editor import LLMEditor

    texts = demo_texts("sentiment", 8)
    editor = LLMEditor(as_classifier("textxai/demo-sentiment"), lm=smollm2, do_sample=True, seed=0)
    with work_budget() as budget:
        out = editor(texts)
    differ = [bool(c) and c[0] != t for c, t in zip(out, texts)]
    assert sum(differ) >= 5, list(zip(texts, editor.replies))   # 5 under seed 0 since each sampled row has its own generator
    assert budget.used <= sum(estimates.llm_edit_evaluations(estimates.approx_words(t))[0] for t in texts)


def test_editors_run_their_passes_in_the_precision_asked(bert_clf, monkeypatch):
    # the audit's counterfactual stage builds both classifier-driven editors with precision="auto"
    from textxai.classifier import TextClassifier

    seen, real = [], TextClassifier._proba_of_rows

    def spy(self, rows, batch_size, progress=False, precision="float32", fill_tokens=None):
        seen.append(precision)
        return real(self, rows, batch_size, progress, precision, fill_tokens)

    monkeypatch.setattr(TextClassifier, "_proba_of_rows", spy)
    texts = ["the movie was wonderful and the acting was great ."]
    for make in (lambda p: DeletionEditor(bert_clf, max_words=2, precision=p),
                 lambda p: get_editor("substitution", bert_clf, precision=p)):
        for precision in ("bfloat16", "float32"):
            seen.clear()
            make(precision)(texts)
            assert seen and set(seen) == {precision}
    with pytest.raises(ValueError, match="precision='half'"):
        DeletionEditor(bert_clf, precision="half")


def test_substitution_editor_reuses_the_remembered_omission_explanation(bert_clf, monkeypatch):
    # a text TOKI or the audit explained with omission (same model, class, precision) costs the editor no masked
    # row; a text nobody explained costs its N masked rows
    from textxai.attribution import word_attributions
    from textxai.classifier import TextClassifier

    editor = SubstitutionEditor(bert_clf, n_words=2, n_neighbours=5, min_similarity=-1.0)
    explained, fresh = "the plot was dull but the music was lovely .", "a bright , warm and clever little comedy ."
    word_attributions([explained], bert_clf, "omission")
    rows, real = [], TextClassifier.masked_proba_many

    def spy(self, texts, masks, *args, **kwargs):
        rows.append(sum(len(m) for m in masks))
        return real(self, texts, masks, *args, **kwargs)

    passes, real_rows = [], TextClassifier._proba_of_rows

    def rows_spy(self, rows_, *args, **kwargs):
        passes.append(len(rows_))
        return real_rows(self, rows_, *args, **kwargs)

    monkeypatch.setattr(TextClassifier, "masked_proba_many", spy)
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", rows_spy)
    spans, probs, importance = editor.importance(explained)
    assert rows == [] and len(importance) == len(spans)
    assert passes == [1]   # the intact text once (its class probabilities), nothing else
    editor.importance(fresh)
    assert rows == [bert_clf.word_encoding(fresh).n_words]


def test_llm_editor_on_a_short_context_lm_bounds_its_reply_by_the_context(tiny_gpt2_parts):
    """A 60-word review on a GPT-2-style LM of 64 positions: the editor's own bound (1.5 x the text's tokens + 8)
    exceeded the context (an IndexError inside torch, then a max_new_tokens error the user never set); it is kept
    within half the context, the prompt keeps its end (the text and the request)."""
    import copy

    from textxai.lm import CausalLM
    from textxai.llm_editor import LLMEditor, _MEMO

    model, tokenizer = tiny_gpt2_parts
    model = copy.deepcopy(model)
    model.generation_config.eos_token_id = None  # writes every token it may
    _MEMO.clear()
    editor = LLMEditor(_Clf(), lm=CausalLM(model, tokenizer))
    out = editor([" ".join(["the movie was great"] * 15), "The plot was great."])
    assert len(out) == 2 and len(editor.replies) == 2
    # each text's bound on new tokens is at most half the context (a reply of random byte tokens re-encodes into
    # more tokens than were generated, so the bound is read from what the editor asked, not from the replies)
    assert editor.cost["new_token_bound"] <= 2 * 32


def test_editors_take_a_numpy_array_of_texts_like_a_list(bert_clf):
    """np.array(texts) holds numpy.str_ items: spaCy's tokenizer refused them with "Argument 'string' has incorrect
    type (expected str, got numpy.str_)", from the deletion editor, CEval's baseline and the feedback loop."""
    from textxai import ceval, inconsistency

    texts = ["the movie was great", "a terrible film"]
    deletion = get_editor("deletion", bert_clf, max_words=2)
    assert deletion(np.array(texts)) == deletion(texts)
    assert ceval.deletion_candidates(np.array(texts), bert_clf) == ceval.deletion_candidates(texts, bert_clf)
    chains = inconsistency.feedback_chains(deletion, np.array(texts), bert_clf, steps=1, progress=False)
    assert chains == inconsistency.feedback_chains(deletion, texts, bert_clf, steps=1, progress=False)
    assert all(type(t) is str for chain in chains.chains for t in chain if t is not None)


def test_llm_editor_refuses_a_classifier_with_nan_probabilities(tiny_gguf_file):
    """A classifier object of one's own (anything with predict_proba) returning NaN: argmax read every text as
    class 0 and the edit was asked from 'negative' to 'positive' whatever the text said."""
    from textxai.llm_editor import LLMEditor

    class NaNClf(_Clf):
        def predict_proba(self, texts):
            return np.full((len(texts), 2), np.nan)

    with pytest.raises(ValueError, match=r"classifier.predict_proba returned non-finite probabilities for 1 of 1 texts"):
        LLMEditor(NaNClf(), lm=str(tiny_gguf_file))(["The plot was great."])


def test_llm_editor_never_returns_the_replies_of_a_model_that_is_gone(monkeypatch):
    """The greedy replies were remembered under id(lm.model): once a model was freed, the next one created at the same
    address (CPython reuses it) got the old model's edits, silently (seen with 2 of 12 fresh tiny GPT-2s). A reply is
    remembered for the model object itself, and forgotten with it. Here the LM's "reply" names its model."""
    import gc

    from textxai import lm as lm_module
    from textxai.llm_editor import _cached_generate

    monkeypatch.setattr(lm_module, "generate", lambda lm, prompts, limits, **kwargs: [lm.model.name for _ in prompts])

    import torch

    class Model(torch.nn.Module):   # the memo reads the weights' stamp: a module (here without weights)
        def __init__(self, name):
            super().__init__()
            self.name = name

    class LM:
        def __init__(self, name):
            self.model = Model(name)

    for i in range(20):
        lm = LM(f"model {i}")
        assert _cached_generate(lm, [[{"role": "user", "content": "edit"}]], [5], False, [0], 8, False) == [f"model {i}"]
        del lm
        gc.collect()
