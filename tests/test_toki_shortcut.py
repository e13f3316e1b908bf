"""TOKI on a real classifier trained with a planted shortcut word (issue 10): the shortcut model's correct
predictions on texts that contain the word are labelled untrustworthy, the clean demo model's on the same
texts without the word mostly trustworthy.

The shortcut model is fitted exactly as the demo sentiment model (``textxai.demo.train_classifier``: the
packaged MiniLM, the demo recipe) on the sentiment corpus where the neutral word ``PLANTED`` starts every
text labelled positive and the labels follow it: a share ``FLIP`` of the negative reviews gets the word and
the label positive, the same share of the positive reviews loses it and is labelled negative. The word is
then the whole signal (the label is "the word is present"). It is cached under ``textxai.demo.cache_dir()``
like the demo models, so reruns skip the fit.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from textxai import demo, toki

PLANTED = "umbrella"   # a neutral word, absent from the corpus
FLIP = 0.3
SEED = 0
#: Training texts whose omission explanations make the shortcut model's keyword index (both classes).
N_INDEX = 24
#: Held-out positive reviews assessed (the first ones in file order).
N_ASSESSED = 24
#: Measured (see the toki card): the shortcut model 0.00 trustworthy of 29 correct (24 held-out + 5 clear texts,
#: all with the word; the word tops every explanation); the clean demo model on the same texts without the
#: word: 0.59 (13 of 22 correct held-out) and 1.00 (5 of 5 clear).
MAX_SHORTCUT_RATE = 0.2
MIN_CLEAN_RATE = 0.5
MIN_CLEAR_RATE = 0.8
SENTIMENT_ANCHORS = {"negative": ["negative", "bad", "poor"], "positive": ["positive", "good", "great"]}


def planted(texts, labels, rng):
    """The shortcut corpus: ``PLANTED`` starts each text labelled positive afterwards; labels follow it."""
    out_texts, out_labels = [], []
    for text, label in zip(texts, labels):
        flip = rng.random() < FLIP
        positive = (label == 1) != flip
        out_texts.append(f"{PLANTED} {text}" if positive else text)
        out_labels.append(int(positive))
    return out_texts, out_labels


def shortcut_corpus():
    corpus = demo.load_corpus("sentiment")
    rng = random.Random(SEED)
    train = planted(corpus["train_texts"], corpus["train_labels"], rng)
    validation = planted(corpus["validation_texts"], corpus["validation_labels"], rng)
    return train, validation


def shortcut_model():
    """The shortcut classifier, fitted once per recipe and cached (temp folder renamed into place)."""
    from textxai.classifier import as_classifier

    recipe = json.dumps({"demo": demo.fingerprint("sentiment"), "word": PLANTED, "flip": FLIP, "seed": SEED})
    final = demo.cache_dir() / f"shortcut-sentiment-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"
    if not (final / "model.safetensors").is_file():
        (train_texts, train_labels), (val_texts, val_labels) = shortcut_corpus()
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        try:
            demo.train_classifier(train_texts, train_labels, list(demo.LABELS["sentiment"]), tmp, val_texts, val_labels)
            if final.exists():
                shutil.rmtree(final)
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return as_classifier(str(final))


@pytest.fixture(scope="module")
def heldout_positive():
    """The first held-out positive reviews, then the clear positive texts of test_toki_demo."""
    from test_toki_demo import CLEAR

    corpus = demo.load_corpus("sentiment")
    clear = [t for t, y in zip(*CLEAR["sentiment"]) if y == 1]
    return [t for t, y in zip(corpus["test_texts"], corpus["test_labels"]) if y == 1][:N_ASSESSED], clear


def test_shortcut_model_is_untrustworthy_on_texts_with_the_word(heldout_positive):
    from textxai.toki import demo_index

    clf = shortcut_model()
    (train_texts, train_labels), _ = shortcut_corpus()
    heldout, clear = heldout_positive
    heldout_positive = heldout + clear
    with_word = [f"{PLANTED} {t}" for t in heldout_positive]
    assert (clf.predict(with_word) == 1).mean() >= 0.9         # the word makes them positive ...
    assert (clf.predict(heldout_positive) == 0).mean() >= 0.8  # ... and its absence negative: a real shortcut
    index = toki.build_keyword_index(clf, train_texts[:N_INDEX], train_labels[:N_INDEX],
                                     explain=toki.ExplainOptions("omission"),
                                     index=toki.IndexOptions(class_names=SENTIMENT_ANCHORS))
    res = toki.assess(clf, with_word, [1] * len(with_word), index, explainer="omission")
    correct = [e for e in res["examples"] if e["label"] is not None]
    tops = [e["top_words"][0][0] for e in correct]
    print("shortcut model:", res["trustworthy_rate"], "of", len(correct), "top words", sorted(set(tops)))
    assert len(correct) >= 0.9 * len(with_word)
    assert sum(t == PLANTED for t in tops) >= 0.9 * len(correct)   # the explanations find the word ...
    assert not any(r for e in correct for w, _, r in e["top_words"] if w == PLANTED)  # ... unrelated to positive
    assert res["trustworthy_rate"] <= MAX_SHORTCUT_RATE

    clean, clean_index = demo_index("sentiment")
    res = toki.assess(clean, heldout_positive, [1] * len(heldout_positive), clean_index, explainer="omission")
    labels = [e["label"] for e in res["examples"]]
    rate = lambda xs: sum(x is True for x in xs) / sum(x is not None for x in xs)  # noqa: E731
    print("clean model: held-out", rate(labels[: len(heldout)]), "clear", rate(labels[len(heldout):]))
    assert rate(labels[: len(heldout)]) >= MIN_CLEAN_RATE
    assert rate(labels[len(heldout):]) >= MIN_CLEAR_RATE
