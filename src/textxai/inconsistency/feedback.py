"""The editor feedback loop: feed an editor its own output and keep the chosen candidate at every step."""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Sequence

import numpy as np

from textxai.inconsistency.checks import SELECTIONS, _check_word_tokenizer, blank, unchanged
from textxai.inconsistency.scoring import _predict, _resolve_classifier
from textxai.progress import progress_bar
from textxai.validation import call_user, check_choice, check_positive_int, check_texts, short_repr
from textxai.words import tokenize, word_distance


FeedbackChains = namedtuple("FeedbackChains", ["chains", "labels"])
FeedbackChains.__doc__ = """Result of :func:`feedback_chains`: ``chains[c]`` = [x_0, x_1, ...] (a chain stops early when
the editor returned no usable candidate), ``labels[c][i]`` = predicted label of ``chains[c][i]``."""


def _select(candidates: list[str], distances: list[int], flipped: list[bool], selection: str) -> int:
    if selection == "first":
        return 0
    order = range(len(candidates))
    if selection == "flip_then_min_distance" and any(flipped):
        order = [i for i in order if flipped[i]]
    return min(order, key=lambda i: (distances[i], i))  # ties: the editor's earlier candidate


def _candidates(outputs, n_texts: int, step: int) -> list[list[str]]:
    """The editor's output checked: one list of non-empty candidate strings per text (a string alone is a list)."""
    if isinstance(outputs, np.ndarray) and outputs.ndim >= 1:  # numpy arrays: lists of str (not numpy.str_)
        outputs = outputs.tolist()
    if isinstance(outputs, str) or not isinstance(outputs, Sequence) or len(outputs) != n_texts:
        raise ValueError(
            f"editor returned {short_repr(outputs)} for {n_texts} texts at step {step}: expected a list of "
            f"{n_texts} candidate lists"
        )
    cand_lists = []
    for j, cands in enumerate(outputs):
        if isinstance(cands, str):
            cands = [cands]
        if cands is None:
            cands = []
        if isinstance(cands, np.ndarray) and cands.ndim == 1:
            cands = cands.tolist()
        if not isinstance(cands, Sequence):
            raise TypeError(f"editor output [{j}]={short_repr(cands)} at step {step}: expected a list of candidate strings")
        for k, cand in enumerate(cands):
            if cand is not None and not isinstance(cand, str):
                raise TypeError(
                    f"editor output [{j}][{k}]={short_repr(cand)} ({type(cand).__name__}) at step {step}: "
                    "expected a string"
                )
        cand_lists.append([str(cand) for cand in cands if not blank(cand)])  # numpy.str_ -> str (spaCy takes str)
    return cand_lists


def _extend_chains(chains, labels, active, cand_lists, pred, selection, word_tokenizer) -> list[int]:
    """Append each active chain's chosen candidate (or the trailing None of a failed editor); the chains still active."""
    pos, still = 0, []
    for c, cands in zip(active, cand_lists):
        if not cands:  # the editor failed: a trailing None ends the chain
            chains[c].append(None)
            labels[c].append(None)
            continue
        cur_words = tokenize(chains[c][-1], word_tokenizer)
        dist = [word_distance(cur_words, tokenize(cand, word_tokenizer)) for cand in cands]
        labs = pred[pos: pos + len(cands)]
        pos += len(cands)
        flipped = [lab != labels[c][-1] for lab in labs]
        k = _select(cands, dist, flipped, selection)
        chains[c].append(cands[k])
        labels[c].append(int(labs[k]))
        still.append(c)
    return still


def feedback_chains(
    editor: Callable[[list[str]], list[list[str]]],
    texts,
    classifier,
    steps: int = 10,
    selection: str = "flip_then_min_distance",
    word_tokenizer: str = "spacy",
    batch_size: int = 32,
    progress: bool = True,
) -> FeedbackChains:
    """Feed an editor its own output ``steps`` times: ``x_{i+1}`` = the chosen candidate of ``editor([x_i])``.

    ``editor`` is any callable ``list[str] -> list[list[str]]`` (candidate edits per input). At every step,
    ``selection="flip_then_min_distance"`` (paper §4, App. B) takes the candidate with the lowest minimality
    among those that change the classifier's current prediction, else the lowest minimality overall
    (``"min_distance"``: lowest minimality regardless of the label; ``"first"``: the editor's first
    candidate); ties go to the editor's earlier candidate. Candidates that are ``None``, blank or the input
    itself (:func:`unchanged`) are dropped; a chain whose editor returns no candidate stops there, marked by a
    trailing ``None`` (label ``None``): a failed step.

    >>> editor = lambda xs: [[x.replace("good", "bad"), x + " not"] if "good" in x else [x.replace("bad", "good")] for x in xs]
    >>> class Clf:
    ...     def predict_proba(self, texts): return np.array([[0.0, 1.0] if "good" in t else [1.0, 0.0] for t in texts])
    >>> feedback_chains(editor, ["so good"], Clf(), steps=2, progress=False)
    FeedbackChains(chains=[['so good', 'so bad', 'so good']], labels=[[1, 0, 1]])
    """
    if not callable(editor):
        raise TypeError(f"editor={short_repr(editor)}: expected a callable list[str] -> list[list[str]]")
    texts = check_texts(texts)
    for i, t in enumerate(texts):
        if blank(t):
            raise ValueError(f"texts[{i}]={t!r}: expected a non-empty text to edit")
    check_positive_int(steps, "steps")
    check_choice(selection, "selection", SELECTIONS)
    _check_word_tokenizer(word_tokenizer)
    check_positive_int(batch_size, "batch_size")
    if classifier is None:
        raise ValueError("classifier=None: expected a TextClassifier, model id, folder, model or pipeline")
    clf = _resolve_classifier(classifier)

    chains = [[t] for t in texts]
    labels = [[int(v)] for v in _predict(clf, texts, batch_size=batch_size)]
    active = list(range(len(texts)))
    bar = progress_bar(total=steps, enabled=progress, desc="feedback steps", unit="step")
    for step in range(1, steps + 1):
        if not active:
            break
        current = [chains[c][-1] for c in active]
        outputs = call_user(editor, "editor", f"step {step} of {steps}, texts {short_repr(current, 120)}", list(current))
        cand_lists = [[cand for cand in cands if not unchanged(text, cand)]  # a no-op is a failed step
                      for text, cands in zip(current, _candidates(outputs, len(current), step))]
        flat = [cand for cands in cand_lists for cand in cands]
        pred = _predict(clf, flat, batch_size=batch_size).tolist()
        active = _extend_chains(chains, labels, active, cand_lists, pred, selection, word_tokenizer)
        bar.update(1)
    bar.close()
    return FeedbackChains(chains, labels)
