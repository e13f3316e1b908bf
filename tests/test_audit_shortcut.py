"""The audit tells the story on our own models (issue 24, item 6): the classifier trained with a planted shortcut
word (tests/test_toki_shortcut.py's recipe and cached model) audited against the clean demo sentiment model on
the same held-out texts. The shortcut audit names the planted word first among its shortcut candidates, and the
paired comparison of TOKI trust shows the clean model better with a significant difference.

Data: held-out positive reviews with the word put in front (what the shortcut model learnt to call positive)
and held-out negative reviews without it; both models' keyword indexes come from the same 24 training texts
of the shortcut corpus (a paired comparison under one rule)."""
from __future__ import annotations

import textxai
from textxai import demo

from test_toki_shortcut import N_INDEX, PLANTED, SENTIMENT_ANCHORS, shortcut_corpus, shortcut_model

N_POSITIVE, N_NEGATIVE = 14, 6


def test_shortcut_audit_names_the_word_and_the_comparison_is_significant():
    corpus = demo.load_corpus("sentiment")
    pos = [t for t, y in zip(corpus["test_texts"], corpus["test_labels"]) if y == 1][:N_POSITIVE]
    neg = [t for t, y in zip(corpus["test_texts"], corpus["test_labels"]) if y == 0][:N_NEGATIVE]
    texts, labels = [f"{PLANTED} {t}" for t in pos] + neg, [1] * len(pos) + [0] * len(neg)
    (train_texts, train_labels), _ = shortcut_corpus()
    trust = {"train_texts": train_texts[:N_INDEX], "train_labels": train_labels[:N_INDEX], "attack_texts": 0,
             "class_names": [SENTIMENT_ANCHORS["negative"], SENTIMENT_ANCHORS["positive"]]}
    result = textxai.audit(shortcut_model(), texts, labels, compare="textxai/demo-sentiment", sections=["trust"],
                           trust=trust, intervals={"n_resamples": 1999}, run={"progress": False})
    shortcut, clean = result.data["models"]["model"]["trust"], result.data["models"]["compare"]["trust"]
    print(result.summary)
    assert shortcut["shortcuts"][0]["word"] == PLANTED and shortcut["shortcuts"][0]["class"] == "positive"
    assert shortcut["shortcuts"][0]["n_predictions"] >= 0.8 * N_POSITIVE
    assert clean["rates"]["TOKI"]["score"] > shortcut["rates"]["TOKI"]["score"]
    row = next(d for d in result.data["comparison"]["differences"] if d["what"].startswith("TOKI trust"))
    assert row["ci_high"] < 0 and row["p_value"] < 0.05          # A = the shortcut model, B = the clean one
    assert "demo-sentiment is better, and the difference is significant" in row["reading"]
    assert PLANTED in result.summary and "shortcut candidates: umbrella" in result.summary
