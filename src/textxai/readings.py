"""The reading layer: the rules by which a number earns a sentence (docs/readings.md), one place every surface
uses (the audit's sections, its comparison, the methods' analyses).

Rules (each tested on constructed cases in tests/test_readings.py):

1. Counts ("k of n ...") get exact Clopper–Pearson intervals (:func:`count_interval`), never a bootstrap interval:
   0 of 4 -> [0, 2.4] of 4, 3 of 3 -> [0.9, 3], 10 of 10 -> [6.9, 10].
2. Below :data:`MIN_N` units a reading says "too few to conclude" whatever the estimate (:func:`too_few`).
3. A zero-width interval (every resampled value equal) is no certainty: it is shown as "no interval" and read
   as inconclusive (:func:`zero_width`).
4. "No relation" only from an equivalence test: the interval lies inside ±:data:`EQUIVALENCE_MARGIN`
   (:func:`relation_reading`); an interval that includes 0 but reaches past the margin reads "no evidence either
   way at n = ...".
5. Ranks are shared where two entries cannot be told apart (:func:`shared_order`): no order is printed for
   0.704 vs 0.702.
6. A comparison of two models gives a verdict only on quantities their method declares comparable across
   models (``Method.comparable`` in :mod:`textxai.registry`; :func:`comparable`); the others are shown without one.
7. Accuracy is read beside the majority-class baseline and the predicted-class shares (:func:`accuracy_context`).
8. A relation built into a quantity's definition is named as such (:data:`BUILT_IN`).

>>> r = count_interval(3, 3)
>>> round(r[0] * 3, 1), r[1] * 3
(0.9, 3.0)
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from textxai.stats import count_interval  # noqa: F401  (the exact interval of a count: a statistic, kept in stats)

#: Below this many units (texts, predictions, chains) no reading concludes: "too few to conclude (n = k < 10)".
MIN_N = 10
#: An interval wider than this on a [0, 1] scale (a rate) is too wide to conclude.
WIDE = 0.35
#: The equivalence margin of "no relation": a correlation whose interval lies inside (-0.1, 0.1).
EQUIVALENCE_MARGIN = 0.1

#: Relations that hold by construction, named in every reading of them.
BUILT_IN = {
    "fim_confidence": ("built in: for a two-class softmax model λ_max = p(1−p)·‖∇(z₁−z₀)‖², so log λ_max contains "
                       "log p(1−p) by construction"),
}


def too_few(n) -> bool:
    """Fewer than :data:`MIN_N` units: no reading concludes."""
    return not n or int(n) < MIN_N


def too_few_note(n) -> str:
    return f"too few to conclude (n = {int(n or 0)} < {MIN_N})"


def zero_width(entry: Mapping) -> bool:
    """An interval whose bounds are equal (the bootstrap's resamples all alike): not a certainty."""
    low, high = entry.get("ci_low"), entry.get("ci_high")
    return low is not None and high is not None and math.isfinite(low) and math.isfinite(high) and high - low <= 1e-12


def finite_interval(entry: Mapping) -> bool:
    low, high = entry.get("ci_low"), entry.get("ci_high")
    return low is not None and high is not None and math.isfinite(low) and math.isfinite(high)


def conclusive(entry: Mapping, scale: float = 1.0) -> bool:
    """Whether an entry may carry a verdict: enough units, a finite interval of non-zero width no wider than
    :data:`WIDE` times ``scale``."""
    if too_few(entry.get("n")) or not finite_interval(entry) or zero_width(entry):
        return False
    return entry["ci_high"] - entry["ci_low"] <= WIDE * scale


def _count(x: float) -> str:
    """A count bound with one decimal, whole counts without one: 2.4, 3, 0."""
    r = round(x, 1)
    return str(int(r)) if float(r).is_integer() else f"{r:.1f}"


def count_reading(entry: Mapping, what: str, of: str) -> str:
    """The reading of a count's entry (``score`` = k / n, ``n``, its exact ``ci_low`` / ``ci_high``, as
    :func:`textxai.stats.count_interval` gives them): ``"4 of 10 <of> <what> [1.2, 7.4] (exact 95 %)"``; below
    :data:`MIN_N` or when the interval is wider than :data:`WIDE`: "; too few to conclude". Every surface that shows
    a share of 0/1 units (trust rates, flip rates, attack successes, accuracy) says it with this sentence.

    >>> count_reading({"score": 0.75, "n": 4, "ci_low": 0.194, "ci_high": 0.994}, "flip", "edited texts")
    '3 of 4 edited texts flip [0.8, 4] (exact 95 %); too few to conclude (n = 4 < 10).'
    """
    n = int(entry.get("n") or 0)
    if not n:
        return f"no {of}: nothing to count."
    k = int(round(entry["score"] * n))
    low, high = entry["ci_low"], entry["ci_high"]
    level = f"{100 * entry.get('confidence_level', 0.95):g} %"
    text = f"{k} of {n} {of} {what} [{_count(low * n)}, {_count(high * n)}] (exact {level})"
    if too_few(n):
        text += "; " + too_few_note(n)
    elif high - low > WIDE:
        text += "; too few to conclude (the interval is wider than {:.0%} of them)".format(WIDE)
    return text + "."


def count_estimate(flags, what: str, of: str, confidence_level: float = 0.95) -> dict:
    """Share of True among ``flags`` (None / NaN left out) with its exact interval and its :func:`count_reading`.

    >>> count_estimate([False] * 4, "flip", "predictions")["reading"]
    '0 of 4 predictions flip [0, 2.4] (exact 95 %); too few to conclude (n = 4 < 10).'
    """
    values = [bool(f) for f in flags if f is not None and not (isinstance(f, float) and math.isnan(f))]
    n, k = len(values), sum(values)
    low, high = count_interval(k, n, confidence_level)
    entry = {"score": k / n if n else float("nan"), "ci_low": low, "ci_high": high, "n": n, "k": k,
             "method": "Clopper-Pearson (exact)", "confidence_level": confidence_level}
    entry["reading"] = count_reading(entry, what, of)
    return entry


def estimate_reading(entry: Mapping, what: str, scale: float = 1.0, meaning: str = "") -> str:
    """The reading of a mean's entry (``score``, ``ci_low``, ``ci_high``, ``n``): ``"<what> 0.750 [0.38, 1.00]:
    <meaning>."``; below :data:`MIN_N` "too few to conclude"; a zero-width interval "no interval (not a
    certainty)"; wider than :data:`WIDE` x ``scale``: "too wide to conclude". The one sentence of a mean on every
    surface (the audit's sections, the methods' reports).

    >>> estimate_reading({"score": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 11}, "inc@1", 5.0, "0 = consistent")
    'inc@1 0.000: every one of the 11 values is the same, so the bootstrap gives no interval (not a certainty); too few to conclude.'
    """
    from textxai.render import format_interval

    if not entry.get("n"):
        return f"{what}: no data."
    verdict = estimate_verdict(entry, scale, meaning)
    number = f"{entry['score']:.3f}" if zero_width(entry) and not too_few(entry["n"]) else format_interval(entry)
    return f"{what} {number}" + (f": {verdict}" if verdict else ".")


def estimate_verdict(entry: Mapping, scale: float = 1.0, meaning: str = "") -> str:
    """What a mean's entry lets one conclude: :func:`estimate_reading`'s sentence after its number ("" when it
    concludes and no ``meaning`` is given).

    >>> estimate_verdict({"score": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 4})
    'too few to conclude (n = 4 < 10); more texts needed.'
    """
    n = entry.get("n")
    if not n:
        return "no data."
    if too_few(n):
        return f"{too_few_note(n)}; more texts needed."
    if zero_width(entry):
        return (f"every one of the {n} values is the same, so the bootstrap gives no interval (not a certainty); "
                "too few to conclude.")
    if not conclusive(entry, scale):
        return f"the interval is too wide to conclude (n={n}); more texts needed."
    return f"{meaning}." if meaning else ""


def shared_verdict(entries, scale: float = 1.0) -> str | None:
    """The verdict every one of several means' entries gets (:func:`estimate_verdict`), else None: a report whose
    table shows the numbers says it once instead of once per number.

    >>> shared_verdict([{"score": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 6}, {"score": 0.4, "ci_low": 0.2, "ci_high": 0.5, "n": 6}])
    'too few to conclude (n = 6 < 10); more texts needed.'
    """
    verdicts = {estimate_verdict(e, scale) for e in entries}
    return verdicts.pop() if len(entries) > 1 and len(verdicts) == 1 and "" not in verdicts else None


def entry_reading(entry: Mapping, what: str, of: str = "units", scale: float = 1.0, meaning: str = "") -> str:
    """:func:`count_reading` for an exact count's entry (``method`` Clopper–Pearson), else :func:`estimate_reading`:
    how a method's report phrases one of its ``results["intervals"]`` entries."""
    if str(entry.get("method", "")).startswith("Clopper"):
        return count_reading(entry, what, of)
    return estimate_reading(entry, what, scale, meaning)


def relation_reading(entry: Mapping, what: str, built_in: str | None = None,
                     margin: float = EQUIVALENCE_MARGIN) -> str:
    """The reading of a correlation's entry (``score``, ``ci_low``, ``ci_high``, ``n``): "no relation" only when
    the interval lies inside ±``margin`` (an equivalence test at that margin); an interval including 0 but
    reaching past it: "no evidence either way at n = ..."; else the direction and strength. ``built_in``: the
    relation holds by construction (:data:`BUILT_IN`): said first.

    >>> relation_reading({"score": 0.113, "ci_low": -0.07, "ci_high": 0.30, "n": 100}, "r")
    'r: 0.113 [-0.07, 0.30] (n=100): no evidence either way at n = 100 (the interval includes 0 and reaches past ±0.1, the equivalence margin).'
    """
    from textxai.render import format_interval

    score, n = entry.get("score", float("nan")), int(entry.get("n") or 0)
    if score is None or not math.isfinite(score):
        return f"{what}: undefined on these texts (n={n}, or a constant side)."
    head = f"{what}: {format_interval(entry)} (n={n})"
    prefix = f" [{built_in}]" if built_in else ""
    if too_few(n) or not finite_interval(entry) or zero_width(entry):
        return head + prefix + ": " + (too_few_note(n) if too_few(n) else "no interval: too few to conclude") + "."
    low, high = entry["ci_low"], entry["ci_high"]
    if -margin < low and high < margin:
        return head + prefix + f": no relation (the interval lies inside ±{margin:g}, the equivalence margin)."
    if low <= 0 <= high:
        return head + prefix + (f": no evidence either way at n = {n} (the interval includes 0 and reaches past "
                                f"±{margin:g}, the equivalence margin).")
    if high - low > 2 * WIDE:
        return head + prefix + ": the interval is too wide to say how strong."
    near = min(abs(low), abs(high))
    strength = "strong" if near >= 0.5 else "moderate" if near >= 0.2 else "weak"
    return head + prefix + f": a {strength} {'positive' if score > 0 else 'negative'} relation."


def no_relation(entry: Mapping, margin: float = EQUIVALENCE_MARGIN) -> bool:
    """The equivalence test of rule 4: enough units and the interval inside ±``margin``."""
    return (not too_few(entry.get("n")) and finite_interval(entry) and not zero_width(entry)
            and -margin < entry["ci_low"] and entry["ci_high"] < margin)


def significant(entry: Mapping) -> bool:
    """Whether a paired difference (``ci_low``, ``ci_high``, ``n``, optionally ``p_value`` and ``confidence_level``)
    ranks its two sides: at least :data:`MIN_N` units, a finite interval of non-zero width that excludes 0, and the
    paired test agreeing at the interval's level (on a handful of texts the bootstrap's interval can exclude 0
    where no test could).

    >>> significant({"n": 2, "ci_low": 0.1, "ci_high": 0.4, "p_value": 0.5, "confidence_level": 0.95})
    False
    >>> significant({"n": 20, "ci_low": 0.1, "ci_high": 0.4, "p_value": 0.01, "confidence_level": 0.95})
    True
    """
    if too_few(entry.get("n")) or not finite_interval(entry) or zero_width(entry):
        return False
    if entry["ci_low"] <= 0 <= entry["ci_high"]:
        return False
    p = entry.get("p_value")
    return p is None or p != p or p < 1 - entry.get("confidence_level", 0.95)


def overlap(a: Mapping, b: Mapping) -> bool:
    """Whether two entries' intervals overlap (no interval: they do)."""
    if not (finite_interval(a) and finite_interval(b)):
        return True
    return a["ci_low"] <= b["ci_high"] and b["ci_low"] <= a["ci_high"]


def shared_order(names: Sequence[str], scores: Mapping[str, float], told_apart: Callable[[str, str], bool],
                 higher_is_better: bool = True) -> tuple[list[list[str]], str]:
    """The ranking with shared ranks: ``names`` sorted by score, neighbours joined into one rank unless
    ``told_apart(a, b)`` (the paired difference is significant, or the intervals do not overlap). Returns the
    groups and the text: ``"omission > gradient = integrated_gradients"`` (``=`` joins a shared rank).

    >>> shared_order(["a", "b", "c"], {"a": 0.704, "b": 0.702, "c": 0.1}, lambda x, y: {x, y} != {"a", "b"})
    ([['a', 'b'], ['c']], 'a = b > c')
    """
    order = sorted(names, key=lambda m: (-scores[m] if higher_is_better else scores[m]))
    groups: list[list[str]] = []
    for m in order:
        if groups and not told_apart(groups[-1][-1], m):
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups, " > ".join(" = ".join(g) for g in groups)


def comparable(method_name: str, key: str) -> bool:
    """Whether ``key`` of method ``method_name`` is comparable across models (``Method.comparable``)."""
    from textxai import registry

    return key in registry.get(method_name).comparable


def accuracy_context(labels, predictions, class_names: Sequence[str]) -> dict:
    """What an accuracy is read beside: the majority-class baseline (always predicting the commonest gold class)
    and the share of each predicted class.

    >>> c = accuracy_context([1, 1, 0, 1], [1, 1, 1, 1], ["neg", "pos"])
    >>> c["baseline"], c["majority_class"], c["predicted_shares"]
    (0.75, 'pos', {'neg': 0.0, 'pos': 1.0})
    """
    labels, predictions = [int(y) for y in labels], [int(p) for p in predictions]
    n = len(labels)
    counts = [labels.count(c) for c in range(len(class_names))]
    majority = max(range(len(class_names)), key=lambda c: (counts[c], -c))
    shares = {str(class_names[c]): (predictions.count(c) / len(predictions) if predictions else float("nan"))
              for c in range(len(class_names))}
    gold = {str(class_names[c]): (counts[c] / n if n else float("nan")) for c in range(len(class_names))}
    base = counts[majority] / n if n else float("nan")
    top = max(shares, key=shares.get) if predictions else None
    text = (f"majority-class baseline {base:.3f} (always '{class_names[majority]}'); the model predicts "
            + ", ".join(f"'{c}' for {s:.0%}" for c, s in shares.items()))
    return {"baseline": base, "majority_class": str(class_names[majority]), "gold_shares": gold,
            "predicted_shares": shares, "most_predicted": top, "reading": text}


def confusion(labels, predictions, class_names: Sequence[str]) -> dict:
    """The confusion matrix ``{"classes", "matrix"}``: ``matrix[gold][predicted]`` counts.

    >>> confusion([0, 1, 1], [0, 0, 1], ["neg", "pos"])["matrix"]
    [[1, 0], [1, 1]]
    """
    k = len(class_names)
    m = [[0] * k for _ in range(k)]
    for y, p in zip(labels, predictions):
        m[int(y)][int(p)] += 1
    return {"classes": [str(c) for c in class_names], "matrix": m}
