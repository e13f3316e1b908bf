"""What one TOKI analysis shows, written once for every surface: results, summary, warnings, figures, report.

:func:`textxai.toki.analyse` computes the trust labels once (:func:`textxai.toki.assess`) and hands them here:
:func:`shape` makes the results ``textxai run toki_trust`` and ``textxai demo`` write, :func:`summary_of` the
evaluate module's output, :func:`warnings_of` the plain sentences every surface shows, :func:`rate_figure`
and :func:`with_intervals` the figures, :func:`report` the printed text.

>>> trust_columns([{"label": True, "naive": False, "no_ki": True}, {"label": None, "naive": None, "no_ki": None}])
{'trust_labels': [True, None], 'naive_labels': [False, None], 'no_ki_labels': [True, None]}
>>> warnings_of({"examples": [], "n_correct": 0, "n_undetermined": 0}, top_k=10, resolution=1e-6)
['no prediction is correct: TOKI labels correct predictions only, so the trustworthy rates are undefined']
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from textxai.toki.attack import AttackOptions
from textxai.validation import short_repr

#: fewer correct predictions with a verdict than this: a warning (the reading layer's stated n: below it, "too few")
MIN_VERDICTS = 10   # == textxai.readings.MIN_N (tests/test_readings.py)
#: the trust columns of an example and the per-text lists of the module's output (and of the intervals)
COLUMNS = {"trust_labels": "label", "naive_labels": "naive", "no_ki_labels": "no_ki"}
#: the three trustworthy rates: (summary key, the verdict's name, what the count says of its predictions)
RATES = (("trustworthy_rate", "TOKI", "rest on words related to their class"),
         ("naive_trustworthy_rate", "Naive", "are called trustworthy by Naive"),
         ("no_ki_trustworthy_rate", "TOKI(-K.I)", "are called trustworthy by TOKI(-K.I)"))
#: what the rates count
RATE_UNITS = "correct predictions with a verdict"


@dataclass(frozen=True)
class OutputOptions:
    """What :func:`textxai.toki.analyse` adds to the trust labels.

    ``intervals``: the bootstrap options of :func:`textxai.render.analysis_intervals` (``confidence_level``,
    ``n_resamples``, ``seed``, ``sample_size_sweep``, ``sweep_sizes``; None: no intervals); ``figures``: draw
    them; the report's ``title`` (default "TOKI trust — <model name>") and ``max_examples``; ``attack``: also
    run the TOKI-guided attack on the first N predictions with a verdict (single texts only) under
    ``attack_options``.
    """

    intervals: Mapping | None = None
    figures: bool = True
    title: str | None = None
    max_examples: int = 6
    attack: int = 0
    attack_options: AttackOptions = field(default_factory=AttackOptions)

    def checked(self) -> "OutputOptions":
        from textxai import render

        render.check_interval_options(self.intervals)
        if not isinstance(self.figures, (bool, np.bool_)):
            raise TypeError(f"figures={short_repr(self.figures)}: expected True or False")
        if self.title is not None and not isinstance(self.title, str):
            raise TypeError(f"title={short_repr(self.title)}: expected a string or None")
        for name, low in (("max_examples", 0), ("attack", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{name}={short_repr(value)}: expected a non-negative integer")
        if not isinstance(self.attack_options, AttackOptions):
            raise TypeError(f"attack_options={short_repr(self.attack_options)}: expected an AttackOptions")
        self.attack_options.checked()
        return self


# ----------------------------------------------------------------------------- the one reshaping
def trust_columns(examples) -> dict:
    """The per-text trust lists (TOKI, Naive, TOKI(-K.I); None = no verdict) of :func:`assess`'s examples."""
    return {column: [e[key] for e in examples] for column, key in COLUMNS.items()}


def keywords_of(index) -> dict:
    """``{class name: keywords, most important first}`` in class order."""
    return {index.class_names[c]: index.keyword_list(c) for c in sorted(index.class_names)}


def shape(result: dict, index, attack: dict | None = None) -> dict:
    """The results of one analysis (``textxai run toki_trust``'s JSON, a ``textxai demo`` section) from
    :func:`assess`'s ``result``, the keyword index and the attack's result."""
    out = {"trustworthy_rate": result["trustworthy_rate"], "n_correct": result["n_correct"], **result["baselines"],
           "keywords": keywords_of(index), "theta_relate": index.theta_relate, "examples": result["examples"],
           "n_undetermined": result["n_undetermined"]}
    if "evaluation" in result:
        out["evaluation"] = result["evaluation"]
    if attack is not None:
        out["attack"] = {k: v for k, v in attack.items() if k != "examples"}
        out["attack"]["examples"] = [r.__dict__ for r in attack["examples"]]
    return out


def summary_of(results: dict) -> dict:
    """The evaluate module's output (see its card) from :func:`shape`'s results."""
    ex = results["examples"]
    columns = trust_columns(ex)
    out = {
        "trust_labels": columns["trust_labels"],
        "is_rel": [e["is_rel"] for e in ex],
        "is_unr": [e["is_unr"] for e in ex],
        "related_words": [[w for w, _, r in e["top_words"] if r] for e in ex],
        "unrelated_words": [[w for w, _, r in e["top_words"] if not r] for e in ex],
        "top_words": [[[w, s, r] for w, s, r in e["top_words"]] for e in ex],
        "predictions": [e["predicted"] for e in ex],
        "confidences": [e["confidence"] for e in ex],
        "trustworthy_rate": results["trustworthy_rate"],
        "n_correct": results["n_correct"],
        "naive_trustworthy_rate": results["naive_trustworthy_rate"],
        "no_ki_trustworthy_rate": results["no_ki_trustworthy_rate"],
        "naive_labels": columns["naive_labels"],  # per text, as trust_labels: the baselines' intervals need them
        "no_ki_labels": columns["no_ki_labels"],
        "keywords": dict(results["keywords"]),
        "theta_relate": dict(results["theta_relate"]),
        "reasons": [e["reason"] for e in ex],
        "n_undetermined": results["n_undetermined"],
    }
    if "evaluation" in results:
        out["evaluation"] = results["evaluation"]
    return out


# ----------------------------------------------------------------------------- warnings
def index_warnings(index) -> list[str]:
    """One sentence per class whose keywords decide nothing: no keyword (every word unrelated) or no other
    pool word (a saturated index: every word related)."""
    out = []
    for c in sorted(index.class_names):
        name, pool, keywords = index.class_names[c], index.pools.get(c, {}), index.keywords.get(c, set())
        if not keywords:
            out.append(f"class {name!r} has no keywords (0 of {len(pool)} pool words related to its name): every top "
                       "word of its predictions counts as unrelated, so none of them is trustworthy")
        elif not index.non_keywords(c):
            out.append(f"class {name!r}: all {len(pool)} pool words are keywords (saturated keyword index): every top "
                       "word of its predictions counts as related, so all are trustworthy")
    return out


def warnings_of(results: dict, index=None, top_k: int = 10, resolution: float = 0.0) -> list[str]:
    """The warnings of one analysis, plain sentences, the same on every surface: classes whose keywords decide
    nothing, undetermined verdicts, and no or few correct predictions with a verdict."""
    out = index_warnings(index) if index is not None else []
    undetermined, correct = results["n_undetermined"], results["n_correct"]
    if undetermined:
        out.append(f"{undetermined} of {correct} correct predictions undetermined: their top-{top_k} attributions "
                   f"sum below the resolution {resolution:g} (no verdict; left out of every rate)")
    verdicts = correct - undetermined
    if correct == 0:
        out.append("no prediction is correct: TOKI labels correct predictions only, so the trustworthy rates are undefined")
    elif verdicts == 0:
        out.append("no correct prediction has a verdict: the trustworthy rates are undefined")
    elif verdicts < MIN_VERDICTS:
        out.append(f"only {verdicts} correct prediction(s) with a verdict: each moves the trustworthy rates by "
                   f"{1 / verdicts:.0%}; read them with their intervals")
    return out


# ----------------------------------------------------------------------------- figures and intervals
def rate_figure(results: dict, class_names: dict[int, str], labels):
    """Bars: the trustworthy share of the correct predictions of each true class, TOKI and both baselines (a
    ``matplotlib.figure.Figure`` outside pyplot: a Space drawing one per request keeps none open)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.2))
    ax = fig.subplots()
    classes = sorted(class_names)
    width = 0.27
    for j, (key, name) in enumerate((("label", "TOKI"), ("naive", "Naive"), ("no_ki", "TOKI(-K.I)"))):
        rates = []
        for c in classes:
            vals = [e[key] for e, y in zip(results["examples"], labels) if e["label"] is not None and y == c]
            rates.append(np.mean(vals) if vals else 0.0)
        ax.bar(np.arange(len(classes)) + (j - 1) * width, rates, width, label=name)
    ax.set_xticks(np.arange(len(classes)), [class_names[c] for c in classes])
    ax.set_ylim(0, 1)
    ax.set_ylabel("trustworthy share of correct predictions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def with_intervals(results: dict, options: Mapping | None, figures: dict | None = None) -> dict:
    """``results["intervals"]`` of the three trustworthy rates, resampling the correct predictions (and the
    sample-size sweep when ``options`` ask for it); their plots into ``figures``. Returns ``results``."""
    from textxai import render

    shaped = {**trust_columns(results["examples"]), "trustworthy_rate": results["trustworthy_rate"],
              "naive_trustworthy_rate": results["naive_trustworthy_rate"],
              "no_ki_trustworthy_rate": results["no_ki_trustworthy_rate"]}
    intervals = render.analysis_intervals("toki_trust", shaped, options, figures)
    if intervals:
        results["intervals"] = intervals
        results["readings"] = rate_readings(intervals)
    if "sample_size_sweep" in shaped:
        results["sample_size_sweep"] = shaped["sample_size_sweep"]
    return results


def rate_readings(intervals: Mapping) -> dict:
    """``{summary key: sentence}`` of the three trustworthy rates' interval entries, in counts
    (:func:`textxai.readings.count_reading`: exact intervals, "too few to conclude" below ``readings.MIN_N``).

    >>> rate_readings({"trustworthy_rate": {"score": 1.0, "n": 3, "ci_low": 0.292, "ci_high": 1.0,
    ...                                     "method": "Clopper-Pearson (exact)"}})["trustworthy_rate"]
    '3 of 3 correct predictions with a verdict rest on words related to their class [0.9, 3] (exact 95 %); too few to conclude (n = 3 < 10).'
    """
    from textxai import readings

    return {key: readings.entry_reading(intervals[key], what, RATE_UNITS) for key, _, what in RATES if key in intervals}


# ----------------------------------------------------------------------------- report
def report(index, results: dict, texts, title: str, max_examples: int = 6) -> str:
    """The plain-text report of one analysis: keywords, rates (with intervals), some verdicts, the attack."""
    from textxai import render

    lines = [f"## {title}", ""]
    lines.append("theta_relate: " + ", ".join(f"{k} {v:.3f}" for k, v in index.theta_relate.items())
                 + f"; theta_dist {index.theta_dist}; explainer {index.explainer}")
    for c in sorted(index.class_names):
        kw = index.keyword_list(c)
        lines.append(f"  keywords of {index.class_names[c]!r} ({len(kw)} of {len(index.pools[c])} pool words): "
                     + ", ".join(kw[:15]) + (" …" if len(kw) > 15 else ""))
    lines.append("")
    undetermined = results.get("n_undetermined", 0)
    ivs = results.get("intervals") or {}
    rate = lambda key: render.format_value(results[key], ivs.get(key))  # noqa: E731
    lines.append(f"{results['n_correct']} correct predictions"
                 + (f", {undetermined} undetermined (attributions below the resolution: no verdict)" if undetermined else "")
                 + f". Trustworthy: TOKI {rate('trustworthy_rate')}, Naive {rate('naive_trustworthy_rate')}, "
                 f"TOKI(-K.I) {rate('no_ki_trustworthy_rate')}")
    if ivs:
        lines.append(render.interval_note(ivs))
    lines += [f"  {name}: {results['readings'][key]}" for key, name, _ in RATES if key in results.get("readings", {})]
    for name, m in results.get("evaluation", {}).items():
        lines.append(f"  vs human labels, {name:>10}: " + "  ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "n")
                     + f"  (n={m['n']})")
    lines.append("")
    lines += _verdict_lines(results["examples"], texts, max_examples)
    if results.get("attack") is not None:
        lines += [""] + _attack_lines(results["attack"])
    return "\n".join(lines).rstrip() + "\n"


def _verdict_lines(examples, texts, max_examples: int) -> list[str]:
    lines, shown = [], 0
    for text, e in zip(texts, examples):
        if e.get("reason") == "wrong prediction" or e["is_rel"] is None or shown >= max_examples:
            continue
        shown += 1
        words = " ".join(f"[{w}]" if r else w for w, _, r in e["top_words"][:6])
        verdict = "undetermined" if e["label"] is None else "trustworthy" if e["label"] else "UNTRUSTWORTHY"
        lines.append(f"  {verdict:>13} IS_rel {e['is_rel']:.3f} IS_unr {e['is_unr']:.3f} | top words ([related]): {words}")
        lines.append(f"  {'':>13} {text[:100]}")
    return lines


def attack_reading(attack: dict) -> str:
    """The attack's success as a count (:func:`textxai.readings.count_estimate`: its exact interval, "too few to
    conclude" below ``readings.MIN_N`` attacked predictions), not a bare rate.

    >>> attack_reading({"n_attacked": 3, "examples": [{"success": True}] * 2 + [{"success": False}]})
    '2 of 3 attacked predictions are flipped by the TOKI-guided attack [0.3, 3] (exact 95 %); too few to conclude (n = 3 < 10).'
    """
    from textxai import readings

    flags = [bool(r["success"] if isinstance(r, Mapping) else r.success) for r in attack["examples"]]
    return readings.count_estimate(flags, "are flipped by the TOKI-guided attack", "attacked predictions")["reading"]


def _attack_lines(attack: dict) -> list[str]:
    lines = [f"TOKI-guided attack on {attack['n_attacked']} texts: {attack_reading(attack)} Avg perturbations "
             f"{attack['avg_perturbations']:.2f}, avg similarity {attack['avg_similarity']:.3f}."]
    shown = sorted((r for r in attack["examples"] if r["success"]), key=lambda r: -r["similarity"])[:3]
    if shown:
        lines.append("Successful attacks, most similar first (sentence cosine; read them: a substitute can change "
                     "the meaning):")
    for r in shown:
        lines.append(f"  {r['original']}")
        lines.append(f"  -> {r['adversarial']}   ({', '.join(f'{a}->{b}' for a, b in r['substitutions'])}; "
                     f"similarity {r['similarity']:.3f})")
    return lines
