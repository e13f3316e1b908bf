"""TOKI relatedness under the default ensemble: obvious class words relate to their own class, not another.

The default ensemble of a demo model is GloVe + MiniLM (its own input embeddings ARE MiniLM's: one voter),
with the shipped θ_relate and the shipped anchor words of each class. A word counts as right when it is
related to its own class and to no other (TOKI(-K.I) relatedness, :func:`textxai.toki.relate_to_class_name`).
"""
import pytest

from textxai import toki
from textxai.classifier import as_classifier
from textxai.embeddings import ClassifierEmbedder, distinct_voters, get_embedders

# not among the anchor words (the anchors are positive/good/great and negative/bad/poor)
POSITIVE = ["brilliant", "superb", "delightful", "charming", "enjoyable", "beautiful", "fantastic", "lovely",
            "amazing", "outstanding"]
NEGATIVE = ["boring", "dull", "dreadful", "horrible", "disappointing", "tedious", "mediocre", "ugly", "pathetic",
            "annoying"]
TOPIC = {"world": ["election", "minister", "embassy", "refugees", "diplomats"],
         "sports": ["football", "tennis", "championship", "coach", "goalkeeper"],
         "business": ["stocks", "profits", "investors", "revenue", "merger"],
         "science": ["physics", "biology", "laboratory", "astronomers", "experiment"]}


@pytest.fixture(scope="module")
def ensemble():
    def make(kind):
        clf = as_classifier(f"textxai/demo-{kind}")
        embs = distinct_voters(get_embedders(None, clf))
        names, anchors = toki.index.resolve_class_anchors(clf)
        return clf, embs, anchors, toki.resolve_theta_relate(None, embs)
    return make


def own_class_only(words, c, embs, anchors, thetas):
    related = {k: toki.relate_to_class_name(words, anchors[k], embs, thetas, [anchors[o] for o in anchors if o != k])
               for k in anchors}
    return [bool(related[c][i] and not any(related[k][i] for k in anchors if k != c)) for i in range(len(words))]


def test_default_ensemble_is_glove_and_minilm_once(ensemble):
    _, embs, _, thetas = ensemble("sentiment")
    assert [e.name for e in embs] == ["minilm", "glove"]          # the classifier's embeddings are MiniLM's
    assert thetas == {"minilm": pytest.approx(0.2854, abs=1e-4), "glove": pytest.approx(0.3413, abs=1e-4)}


def test_classifier_embeddings_of_another_model_stay_a_voter(bert_clf):
    embs = distinct_voters(get_embedders(None, bert_clf))
    assert [type(e) for e in embs][0] is ClassifierEmbedder and len(embs) == 3


def test_obvious_sentiment_words_relate_to_their_own_class(ensemble):
    clf, embs, anchors, thetas = ensemble("sentiment")
    pos = own_class_only(POSITIVE, 1, embs, anchors, thetas)
    neg = own_class_only(NEGATIVE, 0, embs, anchors, thetas)
    assert sum(pos) + sum(neg) >= 16, (dict(zip(POSITIVE, pos)), dict(zip(NEGATIVE, neg)))


def test_obvious_topic_words_relate_to_their_own_class(ensemble):
    clf, embs, anchors, thetas = ensemble("topic")
    index = {v: k for k, v in clf.labels.items()}
    right = {name: own_class_only(words, index[name], embs, anchors, thetas) for name, words in TOPIC.items()}
    assert sum(map(sum, right.values())) >= 16, right


def test_class_names_with_anchor_words(ensemble):
    clf = as_classifier("textxai/demo-sentiment")
    names, anchors = toki.index.resolve_class_anchors(clf, {"positive": ["positive", "good"], "negative": "negative"})
    assert names == {0: "negative", 1: "positive"} and anchors == {0: ["negative"], 1: ["positive", "good"]}
    with pytest.raises(ValueError, match="class_names=.*expected 2 entries"):
        toki.index.resolve_class_anchors(clf, {"positive": ["good"], "neutral": ["meh"]})
