"""TOKI on the shipped demo models: trust labels on clear texts, and the TOKI-guided attack against random
substitution at the same budget (fixed texts, fixed seeds).

The keyword indexes are the runner's (``textxai.toki.demo_index``: omission explanations of
the first 60 training texts, the default embedders), cached in-process and shared with the Space tests.
"""
from __future__ import annotations

import pytest

from textxai import toki
from textxai.toki import demo_index

# Clear texts: obvious sentiment words / obvious topic words, nothing else to lean on.
CLEAR = {
    "sentiment": (["A wonderful film with a great cast and a moving story.",
                   "A brilliant, beautiful and deeply moving film.",
                   "The acting is superb and the story is delightful.",
                   "An excellent, charming comedy that I loved.",
                   "A fantastic phone with a great camera and an excellent battery.",
                   "Awful acting and a boring, terrible plot.",
                   "A dull, lifeless film with a stupid script.",
                   "The worst movie of the year, bad in every way.",
                   "The food was disgusting and the service was awful.",
                   "A boring, tedious and poorly written book."],
                  [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]),
    "topic": (["The president and the prime minister held talks on the border war.",
               "Rebels and government troops clashed as the ceasefire collapsed.",
               "The team won the championship after the coach changed tactics in the final.",
               "The striker scored twice as the club beat its rivals in the league match.",
               "The company reported higher quarterly earnings as sales rose.",
               "Shares fell as investors worried about the bank's profits and the market.",
               "Scientists discovered a new species of frog in the rainforest.",
               "Researchers used a telescope to study the atmosphere of a distant planet."],
              [0, 0, 1, 1, 2, 2, 3, 3]),
}
#: Least share of the clear texts' correct predictions labelled trustworthy (measured: see the card).
CLEAR_RATE = {"sentiment": 0.8, "topic": 0.75}


@pytest.fixture(scope="module", params=["sentiment", "topic"])
def demo(request):
    clf, index = demo_index(request.param)
    return request.param, clf, index


def test_clean_demo_model_is_trustworthy_on_clear_texts(demo):
    kind, clf, index = demo
    texts, labels = CLEAR[kind]
    res = toki.assess(clf, texts, labels, index, explainer="omission")
    assessed = [e for e in res["examples"] if e["label"] is not None]
    print(kind, "clear texts:", res["trustworthy_rate"], "of", len(assessed),
          [(e["label"], [w for w, _, r in e["top_words"][:3]]) for e in res["examples"]])
    assert len(assessed) >= len(texts) - 1            # the demo models get clear texts right
    assert res["trustworthy_rate"] >= CLEAR_RATE[kind]


#: How many held-out texts (the first correctly predicted ones, in file order) each attack runs on.
N_ATTACKED = {"sentiment": 16, "topic": 16}
#: Measured (seed 0, A2T's budget, see the card): demo-sentiment TOKI 10/16 vs random 5/16 (50 vs 42 queries per
#: text); demo-topic 2/16 vs 1/16 (109 vs 65): a narrow margin on topic, whose model is hard to attack at this
#: budget whoever attacks (a greedy search over every candidate at every position flips 2 of these 16).


@pytest.mark.parametrize("kind", ["sentiment", "topic"])
def test_attack_beats_random_substitution(kind):
    """TOKI-guided attack vs random substitution, same budget (A2T: max(2, 10 %) words, MiniLM sentence cosine
    >= 0.8), same candidate set, every candidate of a position tried by both; fixed texts and seed. TOKI
    orders the words by omission importance, random at random; random gets at least TOKI's queries."""
    from textxai.demo import load_corpus

    clf, index = demo_index(kind)
    corpus = load_corpus(kind)
    texts, labels = corpus["test_texts"], corpus["test_labels"]
    predicted = clf.predict(texts)
    chosen = [i for i in range(len(texts)) if predicted[i] == labels[i]][: N_ATTACKED[kind]]
    texts, labels = [texts[i] for i in chosen], [labels[i] for i in chosen]
    ours = toki.toki_attack(clf, texts, index, labels=labels)
    rand = toki.toki_attack(clf, texts, index, labels=labels, strategy="random", seed=0)
    for name, res in (("toki", ours), ("random", rand)):
        print(kind, name, res["attack_success_rate"], res["avg_perturbations"], res["avg_similarity"], res["avg_queries"])
        for r in res["examples"]:
            if r.success:
                print("   ", r.substitutions, "|", r.adversarial)
    assert ours["n_attacked"] == rand["n_attacked"] == len(texts)
    assert ours["attack_success_rate"] > rand["attack_success_rate"]
    for res in (ours, rand):
        for r in res["examples"]:
            assert r.n_perturbations <= max(2, int(0.1 * len(r.original.split()))) + 1
            if r.success:
                assert clf.predict([r.adversarial])[0] != r.label and r.similarity >= 0.8
                assert len(r.chain) == r.n_perturbations + 1
