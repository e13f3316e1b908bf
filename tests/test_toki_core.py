"""TOKI core on hand-built embeddings: eq. 2-6, clustering, theta_relate search, vote, §6.3 metrics."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from textxai import toki
from textxai.embeddings import ArrayEmbedder, get_embedders


def unit(deg):
    a = math.radians(deg)
    return [math.cos(a), math.sin(a), 0.0]


# ------------------------------------------------------------------ eq. 2
def test_word_pools_brute_force():
    rng = np.random.default_rng(0)
    vocab = list("abcdef")
    explanations, classes = [], []
    for _ in range(30):
        words = rng.choice(vocab, size=4, replace=False)
        explanations.append([(w, float(rng.random())) for w in words])
        classes.append(int(rng.integers(0, 2)))
    pools = toki.word_pools(explanations, classes)
    for c in (0, 1):
        for w in vocab:
            scores = [s for e, k in zip(explanations, classes) if k == c for ww, s in e if ww == w]
            if scores:
                assert pools[c][w] == pytest.approx(sum(scores) / len(scores))
            else:
                assert w not in pools[c]


def test_top_words_keeps_positive_top_k():
    assert toki.top_words(["x", "Y", "z", "w"], [0.2, 0.9, -1.0, 0.2], top_k=2) == [("y", 0.9), ("x", 0.2)]
    with pytest.raises(ValueError, match="top_k=0"):
        toki.top_words(["x"], [1.0], top_k=0)
    with pytest.raises(ValueError, match="scores has 2"):
        toki.top_words(["x"], [1.0, 2.0])


# ------------------------------------------------------------------ eq. 3: clustering
def _dist(x):
    x = toki.normalize_rows(x)
    return np.clip(1 - x @ x.T, 0, 2)


@pytest.mark.parametrize("linkage", ["single", "complete", "average"])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), theta=st.floats(0.05, 0.8))
def test_cluster_cut_matches_brute_force(linkage, seed, theta):
    x = np.random.default_rng(seed).normal(size=(9, 3))
    labels = toki.cluster_words(x, theta, linkage)
    d = _dist(x)
    groups = [np.flatnonzero(labels == k) for k in np.unique(labels)]
    if linkage == "single":  # clusters = connected components of the graph d <= theta
        adj = d <= theta + 1e-12
        comp = -np.ones(len(x), int)
        for s in range(len(x)):
            if comp[s] < 0:
                stack, comp[s] = [s], s
                while stack:
                    i = stack.pop()
                    for j in np.flatnonzero(adj[i]):
                        if comp[j] < 0:
                            comp[j] = s
                            stack.append(j)
        assert all(len(set(comp[g])) == 1 for g in groups) and len(groups) == len(set(comp))
    for a, b in itertools.combinations(groups, 2):  # clusters not merged: their linkage distance > theta
        block = d[np.ix_(a, b)]
        between = {"single": block.min(), "complete": block.max(), "average": block.mean()}[linkage]
        assert between > theta - 1e-9
    if linkage == "complete":
        assert all(d[np.ix_(g, g)].max() <= theta + 1e-9 for g in groups)


def test_linkages_on_a_chain_synthetic_check():
    """Related words at 0-20 degrees from the class, a chain of unrelated words stepping 12 degrees away.

    Single linkage chains everything into one cluster (the unrelated words become keywords); average and
    complete linkage keep the far end apart. This is why average linkage is the default.
    """
    angles = [0, 8, 16, 28, 40, 52, 64, 76, 88]
    x = np.array([unit(a) for a in angles])
    theta = 1 - math.cos(math.radians(13))  # a 12-degree step is within the cut
    n_clusters = {lk: len(set(toki.cluster_words(x, theta, lk))) for lk in ("single", "average", "complete")}
    assert n_clusters["single"] == 1
    assert n_clusters["average"] > 1 and n_clusters["complete"] > 1
    class_vec = unit(5)
    for lk, expect_far_keyword in (("single", True), ("average", False), ("complete", False)):
        margins, _ = toki.keyword_margins(x, class_vec, theta, theta_relate=0.8, linkage=lk)
        assert (margins[-1] >= 0) == expect_far_keyword  # 88 degrees: a keyword only under single linkage
        assert margins[0] >= 0


# ------------------------------------------------------------------ eq. 4: keywords, with an indirect word
def test_keywords_include_indirectly_related_cluster_members():
    # class "computer" at 0 deg; "file" at 10 deg; "extension" at 35 deg (alone: cos 0.82 < 0.85) but it
    # clusters with "file" (25 deg apart, distance 0.094 <= 0.1) so the cluster mean (22.5 deg, cos 0.92) qualifies.
    table = {"computer": unit(0), "file": unit(10), "extension": unit(35), "banana": unit(90), "cherry": unit(95)}
    emb = ArrayEmbedder(table)
    pools = {0: {"file": 0.5, "extension": 0.3, "banana": 0.4, "cherry": 0.1}}
    kw = toki.identify_keywords(pools, {0: "computer"}, [emb], {"array": 0.85}, theta_dist=0.1)
    assert kw == {0: {"file", "extension"}}
    # without clustering (theta_dist = 0, every word alone) extension is lost
    kw0 = toki.identify_keywords(pools, {0: "computer"}, [emb], {"array": 0.85}, theta_dist=0.0)
    assert kw0 == {0: {"file"}}


# ------------------------------------------------------------------ eq. 5-6 by hand
def _hand_index():
    table = {"good": [1, 0, 0], "great": [0.9, 0.1, 0], "zxq": [0, 0, 1], "the": [0, 1, 0],
             "fine": [0.95, 0.0, 0.05], "a": [0.1, 0.9, 0.3], "qqq": [0.1, 0.2, 0.9]}
    index = toki.KeywordIndex(class_names={0: "negative", 1: "positive"},
                              pools={0: {"zxq": 0.8, "the": 0.1}, 1: {"good": 0.6, "great": 0.5, "the": 0.2, "zxq": 0.1}},
                              keywords={0: set(), 1: {"good", "great"}}, theta_relate={"array": 0.5}, embedders=["array"])
    return index, ArrayEmbedder(table)


def test_eq5_eq6_by_hand():
    index, emb = _hand_index()
    # class 1: fine -> nearest pool word good (keyword) -> related; a -> the (not) ; qqq -> zxq (not)
    r = toki.relate_words(index, ["fine", "a", "qqq"], 1, [emb])
    assert r.tolist() == [True, False, False]
    res = toki.trust_of_explanation([("fine", 0.5), ("a", 0.3), ("qqq", 0.1)], r)
    assert res["is_rel"] == pytest.approx(0.5) and res["is_unr"] == pytest.approx(0.4) and res["trustworthy"]
    res = toki.trust_of_explanation([("fine", 0.3), ("a", 0.25), ("qqq", 0.1)], r)
    assert res["is_rel"] == pytest.approx(0.3) and res["is_unr"] == pytest.approx(0.35) and not res["trustworthy"]
    # class 0 has no keyword: nothing is related, so any explanation with a positive score is untrustworthy
    assert toki.relate_words(index, ["fine", "zxq"], 0, [emb]).tolist() == [False, False]
    # equality IS_rel == IS_unr counts as trustworthy (>=)
    assert toki.trust_of_explanation([("fine", 0.2), ("a", 0.2)], [True, False])["trustworthy"]


def test_vote_and_tie_rule():
    # 3 embedders: majority decides regardless of margins
    assert toki.plurality([[0.01, -0.5], [0.02, 0.4], [-0.9, 0.3]]).tolist() == [True, True]
    # 2 embedders disagreeing: summed margin decides
    assert toki.plurality([[0.3, 0.1], [-0.1, -0.3]]).tolist() == [True, False]
    # infinite margins count as +-1 in the tie break
    assert toki.vote([[np.inf], [-0.5]]).tolist() == [True]
    assert toki.vote([[-np.inf], [0.5]]).tolist() == [False]


def test_two_embedders_vote_in_eq5():
    index, emb = _hand_index()
    flipped = ArrayEmbedder({k: v[::-1] for k, v in emb.table.items()}, name="flipped")
    r_a = toki.relate_words(index, ["fine", "a"], 1, [emb])
    r_both = toki.relate_words(index, ["fine", "a"], 1, [emb, emb_copy(emb, "copy")])
    assert r_both.tolist() == r_a.tolist()  # two identical voters agree with one
    assert toki.relate_words(index, ["fine"], 1, [flipped]).shape == (1,)


def emb_copy(emb, name):
    return ArrayEmbedder(emb.table, name=name)


def test_no_ki_baseline_uses_class_name():
    _, emb = _hand_index()
    emb.table["positive"] = np.array([0.8, 0.2, 0.0])
    r = toki.relate_to_class_name(["good", "the", "zxq"], "positive", [emb], {"array": 0.5})
    assert r.tolist() == [True, False, False]


# ------------------------------------------------------------------ theta_relate
@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=30), st.lists(st.floats(-1, 1), min_size=1, max_size=30))
def test_balance_threshold_brute_force(rel, unr):
    theta = toki.balance_threshold(rel, unr)
    sims = np.sort(np.concatenate([rel, unr]))[::-1]
    n = len(rel)
    called = int((sims >= theta).sum())
    upper = sims[n - 1]
    lower = sims[n] if n < len(sims) else -1.5
    if upper - lower > 1e-8:  # an exactly balancing threshold exists: found, the midpoint of the gap
        assert called == n
        assert theta == pytest.approx(min(max((upper + lower) / 2, -1), 1), abs=1e-8)
    else:  # ties: the threshold just above the value where too many pairs are called related
        assert called <= n


def test_theta_relate_on_separable_synthetic_embeddings():
    rng = np.random.default_rng(1)
    table, synonyms = {}, []
    for i in range(40):  # each synonym pair: two vectors 10 degrees apart in a random direction
        base = rng.normal(size=16)
        table[f"w{i}a"] = base
        table[f"w{i}b"] = base + 0.05 * np.linalg.norm(base) * rng.normal(size=16)
        synonyms.append((f"w{i}a", f"w{i}b"))
    emb = ArrayEmbedder(table)
    res = toki.estimate_theta_relate(emb, synonyms, seed=3)
    rel = toki._pair_sims(emb, synonyms)
    assert res["precision_related"] == res["recall_related"] == res["recall_unrelated"] == 1.0
    assert rel.min() >= res["theta_relate"]
    # repeatable under a seed
    assert toki.estimate_theta_relate(emb, synonyms, seed=3) == res


def test_synonym_list_shipped():
    pairs = toki.load_synonym_pairs()
    assert len(pairs) >= 300
    assert all(a != b and a.isalpha() and b.isalpha() for a, b in pairs)
    with pytest.raises(ValueError, match=r"synonyms\[0\]"):
        toki._clean_pairs([("a", "b", "c")], "synonyms")


# ------------------------------------------------------------------ §6.3 metrics
def test_trust_metrics_hand_confusion_matrix():
    # TP=3, FN=1, FP=2, TN=4
    pred = [1, 1, 1, 0] + [1, 1, 0, 0, 0, 0]
    human = [1, 1, 1, 1] + [0, 0, 0, 0, 0, 0]
    m = toki.trust_metrics(pred, human)
    assert m["accuracy"] == pytest.approx(7 / 10)
    assert m["precision"] == pytest.approx(3 / 5)
    assert m["sensitivity"] == pytest.approx(3 / 4)
    assert m["specificity"] == pytest.approx(4 / 6)
    assert m["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert m["g_mean"] == pytest.approx(math.sqrt(0.75 * 4 / 6))
    assert toki.trust_metrics([0, 0], [0, 0])["precision"] == 0.0


def test_naive_baseline():
    assert toki.naive_labels([0.95, 0.9, 0.89], 0.9).tolist() == [True, True, False]
    with pytest.raises(ValueError, match="theta_conf=1.5"):
        toki.naive_labels([0.5], 1.5)


# ------------------------------------------------------------------ index save / load, checks
def test_index_round_trip(tmp_path):
    index, _ = _hand_index()
    index.fingerprint = "abc"
    index.save(tmp_path / "idx")
    back = toki.KeywordIndex.load(tmp_path / "idx")
    assert back == index
    with pytest.raises(ValueError, match="keyword_index="):
        toki.KeywordIndex.load(tmp_path / "nothing")


def test_bad_thresholds():
    with pytest.raises(ValueError, match=r"theta_dist=2.5: expected a number in \[0, 2\]"):
        toki.cluster_words([[1, 0], [0, 1]], 2.5)
    with pytest.raises(ValueError, match=r"theta_dist=1.5: expected a number in \[0, 1\]"):
        toki.check_unit(1.5, "theta_dist")
    with pytest.raises(ValueError, match=r"theta_relate=-2"):
        toki.check_unit(-2, "theta_relate", -1, 1)
    with pytest.raises(ValueError, match="linkage='ward'"):
        toki.cluster_words([[1, 0], [0, 1]], 0.3, "ward")
    with pytest.raises(ValueError, match="embedders\\[0\\]='fasttext'"):
        get_embedders(["fasttext"])


def test_function_words_are_never_keywords():
    # "we" sits right on the class vector and would be a keyword by eq. 4; a function word never is (and it
    # does not pull the cluster mean either): it stays in the pool as an unrelated word (F_c)
    table = {"positive": unit(0), "we": unit(1), "good": unit(5), ".": unit(2), "banana": unit(90)}
    pools = {0: {"we": 0.9, "good": 0.5, ".": 0.4, "banana": 0.1}}
    kw = toki.identify_keywords(pools, {0: "positive"}, [ArrayEmbedder(table)], {"array": 0.85}, theta_dist=0.1)
    assert kw == {0: {"good"}}
    index = toki.KeywordIndex(class_names={0: "positive"}, pools=pools, keywords=kw, theta_relate={"array": 0.85},
                              embedders=["array"])
    assert index.non_keywords(0) == ["we", ".", "banana"]
    assert [toki.can_be_keyword(w) for w in ("We", "never", "'s", "wonderful")] == [False, False, False, True]


def test_options_as_dataclasses_and_as_flat_keywords():
    explain, index = toki.with_keywords("f", {"top_k": 3, "theta_dist": 0.2}, toki.ExplainOptions(), toki.IndexOptions())
    assert (explain.top_k, index.theta_dist, explain.explainer) == (3, 0.2, "lime")
    with pytest.raises(TypeError, match=r"build_keyword_index\(\) got an unexpected keyword argument 'top_kk'"):
        toki.build_keyword_index(None, ["a"], [0], top_kk=3)
    with pytest.raises(TypeError, match=r"assess\(\) got an unexpected keyword argument 'theta_cof'"):
        toki.assess(None, ["a"], [0], None, theta_cof=0.5)
    with pytest.raises(TypeError, match=r"toki_trust\(\) got an unexpected keyword argument 'explainr'"):
        toki.toki_trust(["a"], [0], model=None, explainr="lime")
    with pytest.raises(TypeError, match="explain=.*expected a ExplainOptions or None"):
        toki.toki_trust(["a"], [0], model=None, explain={"top_k": 3})
    with pytest.raises(ValueError, match="theta_conf=1.5"):
        toki.toki_trust(["a"], [0], model=None, assess=toki.AssessOptions(theta_conf=1.5))
    # an option group of the wrong type is named wherever it is passed (was an AttributeError in toki_attack)
    with pytest.raises(TypeError, match=r"attack=\{'max_rate': 0.2\} \(dict\): expected a AttackOptions or None"):
        toki.toki_attack(None, ["a"], None, options={"max_rate": 0.2})
    with pytest.raises(TypeError, match=r"index='x' \(str\): expected a IndexOptions or None"):
        toki.build_keyword_index(None, ["a"], [0], index="x")
    with pytest.raises(ValueError, match="top_k=0"):   # a flat keyword reaches its dataclass and is checked
        toki.toki_trust(["a"], [0], model=None, top_k=0)


def test_index_warnings_name_the_classes_whose_keywords_decide_nothing():
    """No keyword: every word unrelated (eq. 5 margin -inf); no other pool word: every word related (+inf)."""
    index = toki.KeywordIndex(class_names={0: "sports", 1: "food", 2: "politics"},
                              pools={0: {"goal": 0.5, "team": 0.2}, 1: {"pizza": 0.3}, 2: {"vote": 0.1, "the": 0.1}},
                              keywords={0: set(), 1: {"pizza"}, 2: {"vote"}})
    from textxai.toki.analysis import index_warnings

    assert index_warnings(index) == [
        "class 'sports' has no keywords (0 of 2 pool words related to its name): every top word of its predictions "
        "counts as unrelated, so none of them is trustworthy",
        "class 'food': all 1 pool words are keywords (saturated keyword index): every top word of its predictions "
        "counts as related, so all are trustworthy"]
    results = {"n_correct": 12, "n_undetermined": 2}
    assert toki.warnings_of(results, index, top_k=5, resolution=1e-3)[2:] == [
        "2 of 12 correct predictions undetermined: their top-5 attributions sum below the resolution 0.001 (no verdict; "
        "left out of every rate)"]    # 10 verdicts: not few
    assert toki.warnings_of({"n_correct": 3, "n_undetermined": 0})[-1].startswith("only 3 correct prediction(s)")
    # the claims hold: relatedness of any word under such keywords
    rng = np.random.default_rng(0)
    embs = [ArrayEmbedder({w: rng.normal(size=4) for w in ("goal", "team", "pizza", "vote", "the")})]
    assert not toki.relate_words(index, ["goal", "pizza"], 0, embs).any()
    assert toki.relate_words(index, ["goal", "vote"], 1, embs).all()


@pytest.mark.parametrize("seed", [None, "x", 1.5, -1, True])
def test_seeds_of_the_explanations_and_the_attack_are_non_negative_integers(seed):
    # random.Random("x") / Random(None) accepted anything (None: a new stream per run); numpy raised its own TypeError
    with pytest.raises(ValueError, match=r"seed=.*expected a non-negative integer"):
        toki.ExplainOptions(seed=seed).checked()
    with pytest.raises(ValueError, match=r"seed=.*expected a non-negative integer"):
        toki.AttackOptions(seed=seed).checked()


def test_an_attack_step_that_flips_is_a_success_and_keeps_the_words_apart():
    """Replacing spaCy's "do" of "don't" gave "filmn't" (one word fewer) and the step that flipped the prediction
    was reported as a failed attack (the loop stopped on the changed word count before reading the flip); the
    replacement now stays a word of its own ("film n't") and a flipping step is a success."""
    from types import SimpleNamespace

    from textxai.toki.attack import AttackOptions, _attack_one

    class Stub:  # class 1 is predicted unless the text holds "film"
        word_tokenizer = "spacy"

        def predict_proba(self, texts, batch_size=32, precision="float32"):
            return np.array([[0.9, 0.1] if "film" in t else [0.2, 0.8] for t in texts])

    gen = SimpleNamespace(similar_texts=lambda original, texts, threshold: [0.95] * len(texts))
    text = "i don't know"
    result = _attack_one(Stub(), text, 1, 0.8, [1, 3], lambda w: ["film"] if w == "do" else [], AttackOptions(), gen, 8)
    assert result.adversarial == "i film n't know" and result.n_perturbations == 1
    assert result.success is True


def test_output_options_check_the_interval_keys():
    # a misspelt key was ignored (the default 95 % intervals, silently); a bad level refused after the whole run
    with pytest.raises(TypeError, match="intervals has the key 'confidence'"):
        toki.OutputOptions(intervals={"confidence": 0.9}).checked()
    with pytest.raises(ValueError, match="confidence_level=95"):
        toki.OutputOptions(intervals={"confidence_level": 95}).checked()
    assert toki.OutputOptions(intervals={"confidence_level": None}).checked().intervals == {"confidence_level": None}


def test_theta_relate_keys_must_name_embedders_in_use(bert_clf, monkeypatch):
    """{"ARR": 0.9} for the embedder "arr" was ignored: its threshold was estimated instead, silently."""
    from textxai.classifier import TextClassifier

    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda *a, **k: pytest.fail("the model was called"))
    emb = ArrayEmbedder({"good": [1.0, 0.0], "bad": [0.0, 1.0]}, name="arr")
    with pytest.raises(ValueError, match=r"theta_relate has the key 'ARR': expected the names of the embedders in use \['arr'\]"):
        toki.build_keyword_index(bert_clf, ["good", "bad"], [1, 0], explainer="omission", embedders=[emb],
                                 theta_relate={"ARR": 0.9}, class_names=["bad", "good"])


def test_theta_estimate_of_an_embedder_knowing_only_one_synonym_pair_is_refused_not_a_hang(monkeypatch):
    """The random pairs were drawn until enough fell outside the synonym list: with the vocabulary {big, large}
    (one shipped synonym pair) none ever does, and toki_trust without theta_relate never returned."""
    import random

    from textxai.toki import theta

    class Bounded(random.Random):  # the old loop drew forever; this one stops it and says so
        calls = 0

        def sample(self, *args, **kwargs):
            Bounded.calls += 1
            if Bounded.calls > 10_000:
                raise AssertionError("random pairs drawn without end")
            return super().sample(*args, **kwargs)

    monkeypatch.setattr(theta.random, "Random", Bounded)
    emb = ArrayEmbedder({"big": [1.0, 0.0], "large": [0.5, 0.5]}, name="tiny")
    with pytest.raises(ValueError, match=r"embedder 'tiny'.*every pair of its 2 words .*synonym"):
        theta.estimate_theta_relate(emb)
    emb3 = ArrayEmbedder({"big": [1.0, 0.0], "large": [0.5, 0.5], "film": [0.0, 1.0]}, name="three")
    assert -1.0 <= theta.estimate_theta_relate(emb3)["theta_relate"] <= 1.0   # one random pair exists: fine


def test_every_toki_entry_refuses_a_multi_label_head(bert_parts, monkeypatch):
    """analyse refused a multi-label head; build_keyword_index, assess and toki_attack took it (argmax of independent
    sigmoids as "the predicted class") and computed on."""
    import copy

    from textxai.classifier import TextClassifier

    model = copy.deepcopy(bert_parts[0])
    model.config.problem_type = "multi_label_classification"
    clf = TextClassifier((model, bert_parts[1]), device="cpu")
    monkeypatch.setattr(TextClassifier, "_proba_of_rows", lambda *a, **k: pytest.fail("the model was called"))
    index = toki.KeywordIndex(class_names={0: "bad", 1: "good"}, pools={0: [], 1: []}, keywords={0: set(), 1: set()},
                              theta_relate={"array": 0.5}, embedders=["array"])
    emb = ArrayEmbedder({"good": [1.0, 0.0], "bad": [0.0, 1.0]}, name="array")
    calls = [lambda: toki.build_keyword_index(clf, ["good", "bad"], [1, 0], explainer="omission", embedders=[emb],
                                              theta_relate=0.5, class_names=["bad", "good"]),
             lambda: toki.assess(clf, ["good"], [1], index, explainer="omission", embedders=[emb]),
             lambda: toki.toki_attack(clf, ["good"], index, embedders=[emb])]
    for call in calls:
        with pytest.raises(ValueError, match="is a multi-label classifier.*ToKI"):
            call()
