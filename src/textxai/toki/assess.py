"""Pipeline 2: relatedness of a prediction's top words (eq. 5), trust labels (eq. 6), baselines and metrics."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from textxai.toki.core import check_unit, class_margins, importance_sums, plurality, relatedness_margins, vote, with_keywords
from textxai.toki.index import SINGLE_LABEL, ExplainOptions, KeywordIndex, _pick, check_index, explain_texts
from textxai.validation import short_repr

def relate_words(index: KeywordIndex, words: Sequence[str], c: int, embedders: Sequence) -> np.ndarray:
    """Eq. 5 with votes: ``r(w, c)`` (bool) for each word, against the pool and keywords of class ``c``."""
    words = [w.lower() for w in words]
    if not words:
        return np.zeros(0, dtype=bool)
    keys = index.keyword_list(c)
    others = index.non_keywords(c)
    margins = []
    for emb in embedders:
        wv = emb.embed(words)
        kv = emb.embed(keys) if keys else np.zeros((0, wv.shape[1]))
        ov = emb.embed(others) if others else np.zeros((0, wv.shape[1]))
        margins.append(relatedness_margins(wv, kv, ov))
    return vote(np.array(margins))


def relate_to_class_name(words: Sequence[str], class_name, embedders: Sequence, theta_relate: dict[str, float],
                         other_classes: Sequence = ()) -> np.ndarray:
    """TOKI(-K.I): each word related to the class itself (no keywords), with votes.

    ``class_name`` is a name or a list of anchor words, ``other_classes`` the names / anchor lists of the
    other classes: related when :func:`textxai.toki.core.class_margins` >= 0 (similar enough, and closer to
    this class than to any other).
    """
    from textxai.toki.index import class_vectors

    if not words:
        return np.zeros(0, dtype=bool)
    margins = []
    for emb in embedders:
        vecs = class_vectors(emb, {0: class_name, **{i + 1: o for i, o in enumerate(other_classes)}})
        margins.append(class_margins(emb.embed([w.lower() for w in words]), vecs[0], theta_relate[emb.name],
                                     [vecs[k] for k in vecs if k != 0]))
    return plurality(np.array(margins))


def trust_of_explanation(explanation: Sequence[tuple[str, float]], related) -> dict:
    """Eq. 6 on one explanation and its relatedness flags."""
    scores = [s for _, s in explanation]
    is_rel, is_unr = importance_sums(scores, np.asarray(related, dtype=float)) if scores else (0.0, 0.0)
    return {"trustworthy": bool(is_rel >= is_unr), "is_rel": is_rel, "is_unr": is_unr,
            "related_words": [w for (w, _), r in zip(explanation, related) if r],
            "unrelated_words": [w for (w, _), r in zip(explanation, related) if not r]}


# ----------------------------------------------------------------------------- evaluation (§6.3)
def naive_labels(confidences, theta_conf: float = 0.9) -> np.ndarray:
    """Naive baseline: trustworthy iff the confidence of the prediction is >= ``theta_conf``."""
    theta_conf = check_unit(theta_conf, "theta_conf")
    return np.asarray(confidences, dtype=np.float64) >= theta_conf


def trust_metrics(predicted, human) -> dict[str, float]:
    """Accuracy, precision, sensitivity, F1, specificity and G-mean of trust labels (positive = trustworthy).

    A ratio with a zero denominator is 0.0.

    >>> trust_metrics([1, 1, 0, 0], [1, 0, 0, 1])
    {'accuracy': 0.5, 'precision': 0.5, 'sensitivity': 0.5, 'f1': 0.5, 'specificity': 0.5, 'g_mean': 0.5, 'n': 4}
    """
    p = np.asarray(predicted).astype(bool)
    h = np.asarray(human).astype(bool)
    if p.shape != h.shape:
        raise ValueError(f"human_trust has {h.size} labels but there are {p.size} predictions: expected the same length")
    tp, tn = int((p & h).sum()), int((~p & ~h).sum())
    fp, fn = int((p & ~h).sum()), int((~p & h).sum())
    div = lambda a, b: a / b if b else 0.0  # noqa: E731
    precision, sensitivity, specificity = div(tp, tp + fp), div(tp, tp + fn), div(tn, tn + fp)
    return {"accuracy": div(tp + tn, len(p)), "precision": precision, "sensitivity": sensitivity,
            "f1": div(2 * precision * sensitivity, precision + sensitivity), "specificity": specificity,
            "g_mean": math.sqrt(sensitivity * specificity), "n": int(len(p))}


#: Smallest top-k importance sum (IS_rel + IS_unr) a verdict is given on; below it attributions are float noise.
RESOLUTION = 1e-3


def undetermined_reason(importance: float, probability: float, resolution: float = RESOLUTION) -> str | None:
    """None when ``importance`` (the top-k sum) is at least ``resolution``, else why no verdict is given.

    >>> undetermined_reason(0.2, 0.9) is None
    True
    >>> undetermined_reason(3e-7, 0.9999999)
    'undetermined: attributions below 0.001 (top-k importance 3e-07; p = 1 - 1e-07, saturated)'
    """
    if importance >= resolution:
        return None
    saturated = f"; p = 1 - {1 - probability:.1g}, saturated" if 1 - probability < 1e-4 else ""
    return f"undetermined: attributions below {resolution:g} (top-k importance {importance:.1g}{saturated})"


@dataclass(frozen=True)
class AssessOptions:
    """How the trust labels are given (pipeline 2): the Naive baseline's ``theta_conf`` and the ``resolution``
    below which a top-k importance sum gets no verdict ("undetermined")."""

    theta_conf: float = 0.9
    resolution: float = RESOLUTION

    def checked(self) -> "AssessOptions":
        check_unit(self.theta_conf, "theta_conf")
        check_unit(self.resolution, "resolution", 0.0, float("inf"))
        return self


def assess(classifier, texts, labels, keyword_index, human_trust=None, text_pairs=None, embedders=None,
           explain: ExplainOptions | None = None, options: AssessOptions | None = None, **keywords) -> dict:
    """Pipeline 2 on ``texts`` with true ``labels``: trust labels of the correct predictions, and baselines.

    ``explain`` (:class:`textxai.toki.ExplainOptions`; default: the explainer and top-k the index was built
    with), ``options`` (:class:`AssessOptions`: theta_conf, resolution); ``keywords``: the same options as
    flat keywords (``explainer="omission"``, ``theta_conf=0.8``, ...; an unknown keyword is a TypeError).
    ``embedders``: default those the index was built with.

    No verdict on noise: when the top-k importance of a correct prediction sums to less than ``resolution``
    (``IS_rel + IS_unr``; e.g. a saturated probability that no removal moves), its label is None and its
    ``reason`` says "undetermined: attributions below ...". Such predictions are counted in
    ``n_undetermined`` and left out of every rate.

    Returns ``{"examples": [...], "trustworthy_rate", "n_correct", "n_undetermined", "reasons",
    "baselines": {...}, "evaluation": {...}}``; each example has ``label`` (True / False / None),
    ``reason`` (None, "wrong prediction" or "undetermined: ..."), ``predicted``, ``confidence``, ``is_rel``,
    ``is_unr``, ``top_words`` ([(word, score, related)]), ``naive`` and ``no_ki`` (the TOKI(-K.I) label).
    """
    from textxai.classifier import as_classifier
    from textxai.embeddings import distinct_voters, get_embedders
    from textxai.validation import check_text_pairs, check_texts

    given = {k: v for k, v in keywords.items() if not (k in ("explainer", "top_k") and v is None)}
    with_keywords("assess", given, ExplainOptions(), AssessOptions())   # an unknown keyword fails before loading
    clf = as_classifier(classifier).require_single_label(SINGLE_LABEL)
    index = check_index(keyword_index, clf)
    base = explain if explain is not None else ExplainOptions(explainer=index.explainer or "lime", top_k=index.top_k)
    explain, options = with_keywords("assess", given, (ExplainOptions, base), (AssessOptions, options))
    explain, options = explain.checked(), options.checked()
    texts = check_texts(texts, "texts")
    pairs = check_text_pairs(text_pairs, texts, "text_pairs")
    labels = clf.class_indices(labels, "references", n=len(texts))
    human_trust = check_human_trust(human_trust, len(texts))
    batch_size, theta_conf, resolution = explain.batch_size, options.theta_conf, options.resolution
    embs = distinct_voters(get_embedders(embedders if embedders is not None else index.embedders, clf))
    missing = [e.name for e in embs if e.name not in index.theta_relate]
    if missing:
        raise ValueError(f"embedders={[e.name for e in embs]}: {missing} not in the keyword index (built with "
                         f"{index.embedders}); expected the embedders the index was built with")
    proba = clf.predict_proba(texts, pairs, batch_size=batch_size)
    predicted = proba.argmax(axis=1)
    correct = np.flatnonzero(predicted == labels)
    explanations = explain_texts(clf, [texts[i] for i in correct], explain, targets=labels[correct],
                                 text_pairs=_pick(pairs, correct)) if len(correct) else []
    examples = [{"label": None, "reason": "wrong prediction", "predicted": int(predicted[i]),
                 "confidence": float(proba[i].max()), "is_rel": None, "is_unr": None, "top_words": [], "naive": None,
                 "no_ki": None} for i in range(len(texts))]
    for i, explanation in zip(correct, explanations):
        c = int(labels[i])
        words = [w for w, _ in explanation]
        r = relate_words(index, words, c, embs)
        res = trust_of_explanation(explanation, r)
        others = [index.anchors(k) for k in sorted(index.class_names) if k != c]
        no_ki = trust_of_explanation(explanation, relate_to_class_name(words, index.anchors(c), embs, index.theta_relate, others))
        reason = undetermined_reason(res["is_rel"] + res["is_unr"], float(proba[i, c]), resolution)
        examples[i].update(label=None if reason else res["trustworthy"], reason=reason, is_rel=res["is_rel"],
                           is_unr=res["is_unr"], top_words=[(w, s, bool(x)) for (w, s), x in zip(explanation, r)],
                           naive=None if reason else bool(proba[i, c] >= theta_conf),
                           no_ki=None if reason else no_ki["trustworthy"])
    assessed = [e for e in examples if e["label"] is not None]
    rate = lambda key: float(np.mean([e[key] for e in assessed])) if assessed else float("nan")  # noqa: E731
    out = {"examples": examples, "n_correct": len(correct), "n_undetermined": len(correct) - len(assessed),
           "reasons": [e["reason"] for e in examples], "trustworthy_rate": rate("label"),
           "baselines": {"naive_trustworthy_rate": rate("naive"), "no_ki_trustworthy_rate": rate("no_ki")}}
    if human_trust is not None:
        out["evaluation"] = evaluate_against_human(examples, human_trust)
    return out


def human_trust_label(value, row: int, name: str = "human_trust"):
    """One human trust label read from a table cell: 1 / 0 / true / false (any case), empty or None for none.

    >>> [human_trust_label(v, 0) for v in ("1", " false ", "", None, 0)]
    [True, False, None, None, False]
    >>> human_trust_label("yes", 2, "--human-trust-column")
    Traceback (most recent call last):
    ...
    ValueError: --human-trust-column: row 3 holds 'yes'; expected 1 (trustworthy), 0 or empty
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "0", "false"):
        return text in ("1", "true")
    raise ValueError(f"{name}: row {row + 1} holds {value!r}; expected 1 (trustworthy), 0 or empty")


def check_human_trust(human_trust, n: int) -> list[bool | None] | None:
    """Human trust labels, one per text: True / False / 1 / 0, or None / NaN for "no label".

    >>> check_human_trust([1, None, False], 3)
    [True, None, False]
    """
    if human_trust is None:
        return None
    if isinstance(human_trust, str) or not hasattr(human_trust, "__len__"):
        raise TypeError(f"human_trust={short_repr(human_trust)}: expected a list of True / False / None per text")
    if len(human_trust) != n:
        raise ValueError(f"human_trust has {len(human_trust)} items but there are {n} texts: expected the same length")
    out = []
    for i, h in enumerate(human_trust):
        if h is None or (isinstance(h, float) and math.isnan(h)):
            out.append(None)
        elif isinstance(h, (bool, int, float, np.integer, np.bool_)) and h in (0, 1):
            out.append(bool(h))
        else:
            raise ValueError(f"human_trust[{i}]={short_repr(h)}: expected True / False / 1 / 0 / None")
    return out


def evaluate_against_human(examples: list[dict], human_trust) -> dict:
    """Table 3: metrics of TOKI, Naive and TOKI(-K.I) on the correct predictions that have a human label."""
    human_trust = check_human_trust(human_trust, len(examples))
    rows = [(e, h) for e, h in zip(examples, human_trust) if h is not None and e["label"] is not None]
    if not rows:
        return {}
    human = [h for _, h in rows]
    return {name: trust_metrics([e[key] for e, _ in rows], human)
            for name, key in (("toki", "label"), ("naive", "naive"), ("toki_no_ki", "no_ki"))}
