"""How results are shown: intervals as text (``0.880 [0.71, 0.97]``), text tables and matplotlib figures.

One presentation layer for every surface (CLI reports, the demo, the Spaces, the audit report); the numbers
themselves come from :mod:`textxai.stats`.

>>> format_interval({"score": 0.392, "ci_low": 0.2604, "ci_high": 0.5649, "n": 6})
'0.392 [0.26, 0.56]'
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from textxai import stats
from textxai.stats import SWEEP_SIZES, IntervalOptions, value_at
from textxai.validation import short_repr

__all__ = ["DEMO_OPTIONS", "highlight_words", "analysis_intervals", "format_interval", "format_value", "fmt", "interval_note",
           "intervals_table", "compare_table",
           "plot_intervals", "plot_sample_size_sweep"]


def _fmt(x: float, decimals: int) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{decimals}f}"


def format_interval(entry: Mapping, digits: int = 3) -> str:
    """``"0.880 [0.71, 0.97]"``: the score with ``digits`` decimals, the bounds with one fewer (more when
    that would hide the width); ``digits + 1`` significant digits for scores outside [0.01, 100).

    >>> format_interval({"score": 0.88, "ci_low": 0.712, "ci_high": 0.968, "n": 6})
    '0.880 [0.71, 0.97]'
    >>> format_interval({"score": 0.5, "ci_low": float("nan"), "ci_high": float("nan"), "n": 1})
    '0.500 [no interval: n=1]'
    >>> format_interval({"score": 144.09, "ci_low": 78.7, "ci_high": 258.48, "n": 90})
    '144.1 [78.7, 258.5]'
    """
    score, low, high = entry.get("score"), entry.get("ci_low"), entry.get("ci_high")
    text = _fmt(score, digits)
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"{text} [no interval: n={entry.get('n', 0)}]"
    if score is not None and math.isfinite(score) and score != 0 and not 0.01 <= abs(score) < 100:
        g = lambda x: f"{x:.{digits + 1}g}"  # noqa: E731 - very large / small values: significant digits
        return f"{g(score)} [{g(low)}, {g(high)}]"
    decimals = max(digits - 1, 0)
    while decimals < digits + 3 and high > low and _fmt(low, decimals) == _fmt(high, decimals):
        decimals += 1
    return f"{text} [{_fmt(low, decimals)}, {_fmt(high, decimals)}]"


def format_value(value, interval: Mapping | None = None, digits: int = 3) -> str:
    """``value`` with its interval when there is one (``format_interval``), else the plain number.

    >>> format_value(0.25), format_value(None)
    ('0.250', '-')
    """
    if interval is not None:
        return format_interval(interval, digits)
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (int, np.integer)):
        return str(value)
    return _fmt(float(value), digits)


def intervals_table(intervals: Mapping, title: str | None = None) -> str:
    """A text table of ``result["intervals"]``: key, score [low, high], n units, method.

    >>> print(intervals_table({"flip_rate": {"score": 0.75, "ci_low": 0.5, "ci_high": 1.0, "n": 8,
    ...     "unit": "original", "method": "BCa", "confidence_level": 0.95}}))
    flip_rate     0.750 [0.50, 1.00]   n=8 originals  95% BCa
    """
    if not intervals:
        return ""
    width = max(len(k) for k in intervals) + 4
    lines = [title] if title else []
    for key, e in intervals.items():
        unit = e.get("unit", "unit")
        plural = unit if e.get("n") == 1 else unit + "s"
        lines.append(f"{key:<{width}} {format_interval(e):<20} n={e.get('n')} {plural}  "
                     f"{e.get('confidence_level', 0.95) * 100:.0f}% {e.get('method', '')}".rstrip())
    return "\n".join(lines)


def compare_table(comparison: Mapping, name_a: str = "A", name_b: str = "B") -> str:
    """A text table of :func:`compare`: a, b, a - b [CI], n, Wilcoxon p.

    >>> print(compare_table({"inc@1": {"a": 1.2, "b": 0.4, "difference": 0.8, "ci_low": 0.3, "ci_high": 1.3,
    ...     "n": 20, "unit": "chain", "p_value": 0.004, "method": "BCa", "confidence_level": 0.95}}, "mice", "poly"))
    summary   mice     poly     mice - poly [95% CI]  n   Wilcoxon p
    inc@1     1.200    0.400    0.800 [0.30, 1.30]    20  0.004
    """
    if not comparison:
        return ""
    kw = max(len("summary"), *(len(k) for k in comparison)) + 2
    aw, bw = max(8, len(name_a) + 1), max(8, len(name_b) + 1)
    level = next(iter(comparison.values())).get("confidence_level", 0.95)
    head = f"{name_a} - {name_b} [{level * 100:.0f}% CI]"
    dw = max(21, len(head) + 1)
    lines = [f"{'summary':<{kw}} {name_a:<{aw}} {name_b:<{bw}} {head:<{dw}} {'n':<3} Wilcoxon p"]
    for key, c in comparison.items():
        diff = format_interval({"score": c["difference"], "ci_low": c["ci_low"], "ci_high": c["ci_high"], "n": c["n"]})
        p = c.get("p_value")
        lines.append(f"{key:<{kw}} {_fmt(c['a'], 3):<{aw}} {_fmt(c['b'], 3):<{bw}} {diff:<{dw}} {c['n']:<3} "
                     f"{'nan' if p is None or not math.isfinite(p) else f'{p:.3g}'}")
    return "\n".join(lines)


def plot_intervals(intervals: Mapping, keys: Sequence[str] | None = None, title: str | None = None, cols: int = 4):
    """Error bars of intervals: ``result["intervals"]``, or ``{group name: intervals}`` to set groups (methods,
    editors, models) side by side. One panel per summary (their scales differ). A matplotlib Figure.

    >>> iv = {"flip_rate": {"score": 0.7, "ci_low": 0.5, "ci_high": 0.9, "n": 9}}
    >>> fig = plot_intervals({"mice": iv, "polyjuice": iv})
    >>> [ax.get_title() for ax in fig.axes]
    ['flip_rate']
    """
    from matplotlib.figure import Figure

    groups = intervals if intervals and all(isinstance(v, Mapping) and "score" not in v and
                                            all(isinstance(x, Mapping) for x in v.values())
                                            for v in intervals.values()) else {"": intervals}
    names = list(groups)
    all_keys = list(dict.fromkeys(k for g in groups.values() for k in g))
    keys = all_keys if keys is None else [k for k in keys if k in all_keys]
    if not keys:
        raise ValueError(f"intervals={short_repr(intervals)}: expected at least one interval to draw")
    if all(_at_n(k) for k in keys) and len(keys) > 1:
        return _plot_at_n(groups, keys, title)
    cols = min(cols, len(keys))
    rows = math.ceil(len(keys) / cols)
    fig = Figure(figsize=(3.2 * cols, 0.5 + (0.35 * len(names) + 1.1) * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, key in zip(axes, keys):
        for i, name in enumerate(names):
            e = groups[name].get(key)
            if e is None:
                continue
            y = len(names) - 1 - i
            low, high = e.get("ci_low"), e.get("ci_high")
            has = low is not None and high is not None and math.isfinite(low) and math.isfinite(high)
            err = [[e["score"] - low], [high - e["score"]]] if has else None
            ax.errorbar([e["score"]], [y], xerr=err, fmt="o", color=f"C{i}", capsize=4,
                        label=f"{name} (n={e.get('n')})" if name else f"n={e.get('n')}")
        ax.set_yticks(range(len(names)), [n or "" for n in reversed(names)])
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.set_title(key)
        ax.grid(axis="x", alpha=0.3)
        if not any(names):
            ax.set_yticks([])
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    level = next((e.get("confidence_level") for g in groups.values() for e in g.values()), 0.95) or 0.95
    fig.suptitle(title or f"{level * 100:.0f}% bootstrap confidence intervals")
    return fig


def _at_n(key: str):
    """("inc", 3) for "inc@3", else None."""
    name, _, k = key.rpartition("@")
    return (name, int(k)) if name and k.isdigit() else None


def _plot_at_n(groups: Mapping, keys: Sequence[str], title: str | None):
    """Summaries reported at several n (inconsistency's inc@n, ...): one panel per summary, error bars against n."""
    from matplotlib.figure import Figure

    metrics = list(dict.fromkeys(_at_n(k)[0] for k in keys))
    fig = Figure(figsize=(3.6 * len(metrics), 3.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(metrics), squeeze=False)).ravel()
    width = 0.25 / max(len(groups), 1)
    for ax, metric in zip(axes, metrics):
        for i, (name, ivs) in enumerate(groups.items()):
            pts = sorted((_at_n(k)[1], e) for k, e in ivs.items() if k in keys and _at_n(k)[0] == metric)
            if not pts:
                continue
            x = np.array([p[0] for p in pts], dtype=float) + (i - (len(groups) - 1) / 2) * width
            y = np.array([p[1]["score"] for p in pts], dtype=float)
            low = np.array([p[1]["ci_low"] for p in pts], dtype=float)
            high = np.array([p[1]["ci_high"] for p in pts], dtype=float)
            err = np.nan_to_num(np.vstack([y - low, high - y]), nan=0.0)
            ax.errorbar(x, y, yerr=np.maximum(err, 0), fmt="o-", color=f"C{i}", capsize=4, label=name or None)
        ax.set_xlabel("n (feedback step)")
        ax.set_title(f"{metric}@n")
        ax.grid(alpha=0.3)
        if any(groups):
            ax.legend(fontsize=8)
    level = next((e.get("confidence_level") for g in groups.values() for e in g.values()), 0.95) or 0.95
    fig.suptitle(title or f"{level * 100:.0f}% bootstrap confidence intervals")
    return fig


def plot_sample_size_sweep(sweep: Mapping, title: str | None = None):
    """Interval width against n (log-log) for each summary of :func:`sample_size_sweep`, with the 1/sqrt(n)
    line through the first point; hollow markers are projected sizes (more units than the result has).

    >>> fig = plot_sample_size_sweep({"inc@1": [{"n": 10, "width": 1.0, "width_low": 0.8, "width_high": 1.2,
    ...     "projected": False}, {"n": 40, "width": 0.5, "width_low": 0.45, "width_high": 0.55, "projected": True}]})
    >>> fig.axes[0].get_xlabel()
    'number of units (n)'
    """
    from matplotlib.figure import Figure

    if not sweep:
        raise ValueError("sweep={}: expected the output of sample_size_sweep")
    fig = Figure(figsize=(6.5, 4.2), layout="constrained")
    ax = fig.subplots()
    for i, (key, rows) in enumerate(sweep.items()):
        rows = [r for r in rows if math.isfinite(r["width"]) and r["width"] > 0]
        if not rows:
            continue
        n = np.array([r["n"] for r in rows], dtype=float)
        w = np.array([r["width"] for r in rows])
        err = [w - np.array([r["width_low"] for r in rows]), np.array([r["width_high"] for r in rows]) - w]
        ax.errorbar(n, w, yerr=np.maximum(err, 0), color=f"C{i}", capsize=3, lw=1, label=key)
        for r in rows:
            ax.plot(r["n"], r["width"], "o", color=f"C{i}", markerfacecolor="white" if r["projected"] else f"C{i}")
        ax.plot(n, w[0] * np.sqrt(n[0] / n), ":", color=f"C{i}", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of units (n)")
    ax.set_ylabel("width of the confidence interval")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, title="dotted: 1/sqrt(n); hollow: projected", title_fontsize=7)
    ax.set_title(title or "How many examples? Interval width against sample size")
    return fig


def fmt(result: Mapping, key: str, digits: int = 3, value=None) -> str:
    """``result[key]`` (or ``value``) for a report: with its interval from ``result["intervals"]`` when there is one.

    >>> fmt({"flip_rate": 0.5, "intervals": {"flip_rate": {"score": 0.5, "ci_low": 0.2, "ci_high": 0.8, "n": 9}}},
    ...     "flip_rate")
    '0.500 [0.20, 0.80]'
    >>> fmt({"flip_rate": 0.5}, "flip_rate")
    '0.500'
    """
    entry = (result.get("intervals") or {}).get(key)
    return format_value(value_at(result, key) if value is None else value, entry, digits)


def interval_note(intervals: Mapping) -> str:
    """One line under a report: what the brackets are.

    >>> interval_note({"inc@1": {"score": 1, "ci_low": 0, "ci_high": 2, "n": 8, "unit": "chain", "method": "BCa",
    ...                          "confidence_level": 0.95}})
    '[brackets]: 95% bootstrap confidence intervals, chains resampled (BCa; scipy.stats.bootstrap, textxai.stats).'
    >>> interval_note({"rate": {"score": 0.8, "ci_low": 0.5, "ci_high": 0.9, "n": 12, "unit": "correct prediction",
    ...                         "method": "Clopper-Pearson (exact)", "confidence_level": 0.95}})
    '[brackets]: 95% exact confidence intervals of counts of correct predictions (Clopper-Pearson; scipy.stats.beta, textxai.stats).'
    """
    entries = list(intervals.values())
    if not entries:
        return ""
    level = entries[0].get("confidence_level", 0.95)
    units = ' / '.join(u + 's' for u in sorted({e.get("unit", "example") for e in entries}))
    named = [str(e.get("method") or "") for e in entries]
    exact = ["exact" in m for m in named]
    methods = sorted({m for m, x in zip(named, exact) if m and not x}, key=lambda m: (m != "BCa", m))
    if all(exact):
        return (f"[brackets]: {level * 100:.0f}% exact confidence intervals of counts of {units} (Clopper-Pearson; "
                f"scipy.stats.beta, textxai.stats).")
    boot = (f"{level * 100:.0f}% bootstrap confidence intervals, {units} resampled ({', '.join(methods)}; "
            f"scipy.stats.bootstrap, textxai.stats)")
    return f"[brackets]: {boot}; counts: exact (Clopper-Pearson)." if any(exact) else f"[brackets]: {boot}."


# ---------------------------------------------------------------------------------------------- an analysis' intervals

#: intervals in ``textxai demo`` (on by default there and in ``textxai run``; off by default in ``compute``)
DEMO_OPTIONS = {**dataclasses.asdict(IntervalOptions(n_resamples=2000)), "sample_size_sweep": False,
                "sweep_sizes": SWEEP_SIZES}


INTERVAL_KEYS = ("confidence_level", "n_resamples", "seed", "sample_size_sweep", "sweep_sizes")


def check_interval_options(intervals, name: str = "intervals") -> Mapping | None:
    """``intervals`` (the options of :func:`analysis_intervals`) when it is None or a dict of known keys with valid
    values, else a TypeError / ValueError naming the key: checked before any model call (a misspelt key was
    silently ignored, a bad value refused only after the whole run).

    >>> check_interval_options({"confidence_level": 0.9, "n_resamples": 500})
    {'confidence_level': 0.9, 'n_resamples': 500}
    >>> check_interval_options({"confidence": 0.9})
    Traceback (most recent call last):
    ...
    TypeError: intervals has the key 'confidence': expected some of ['confidence_level', 'n_resamples', 'seed', 'sample_size_sweep', 'sweep_sizes']
    """
    if intervals is None:
        return None
    if not isinstance(intervals, Mapping):
        raise TypeError(f"{name}={short_repr(intervals)}: expected a dict of interval options "
                        f"({', '.join(INTERVAL_KEYS)}) or None")
    for key in intervals:
        if key not in INTERVAL_KEYS:
            raise TypeError(f"{name} has the key {key!r}: expected some of {list(INTERVAL_KEYS)}")
    options = {**DEMO_OPTIONS, **intervals}
    if options["confidence_level"] is not None:  # None: no intervals
        IntervalOptions(options["confidence_level"], options["n_resamples"], options["seed"])
    if not isinstance(options["sample_size_sweep"], (bool, np.bool_)):
        raise TypeError(f"sample_size_sweep={short_repr(options['sample_size_sweep'])}: expected True or False")
    sizes = options["sweep_sizes"]
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0 for n in sizes):
        raise ValueError(f"sweep_sizes={short_repr(sizes)}: expected a non-empty list of positive integers")
    return intervals


def analysis_intervals(module_name: str, result: dict, options: Mapping | None, figures: dict | None = None,
                       keys: Sequence[str] | None = None, title: str | None = None) -> dict:
    """The intervals an analysis shows, in one call: ``result["intervals"]`` (``options["confidence_level"]``
    None = nothing), their error bars as ``figures["intervals"]`` (the summaries ``keys``, default all), and with
    ``options["sample_size_sweep"]`` the sweep as ``result["sample_size_sweep"]`` / ``figures["sample_size_sweep"]``.
    Returns ``result["intervals"]`` (``{}`` when off).

    >>> r = {"trust_labels": [True, False, True, True, None, True], "trustworthy_rate": 0.8}
    >>> analysis_intervals("toki_trust", r, DEMO_OPTIONS)["trustworthy_rate"]["n"]
    5
    """
    options = {**DEMO_OPTIONS, **(options or {})}
    if options.get("confidence_level") is None:
        return {}
    stats.add_intervals(module_name, result, options["confidence_level"], options["n_resamples"], options["seed"])
    shown = [k for k in (keys or result["intervals"]) if k in result["intervals"]]
    if figures is not None and shown:
        figures["intervals"] = plot_intervals(result["intervals"], shown, title=title)
    if options.get("sample_size_sweep") and shown:
        sweep = stats.sample_size_sweep(module_name, result, keys=shown, sizes=options["sweep_sizes"],
                                        confidence_level=options["confidence_level"],
                                        n_resamples=min(options["n_resamples"], stats.SWEEP_N_RESAMPLES),
                                        seed=options["seed"])
        result["sample_size_sweep"] = sweep
        if figures is not None:
            figures["sample_size_sweep"] = plot_sample_size_sweep(sweep)
    return result["intervals"]


# ---------------------------------------------------------------------------------------------- word heat map
def _escape(text) -> str:
    import html

    return html.escape(str(text), quote=True)


def _color(score: float, scale: float, positive: tuple[int, int, int], negative: tuple[int, int, int]) -> str:
    if scale <= 0 or not math.isfinite(score):
        return "transparent"
    alpha = min(abs(score) / scale, 1.0) * 0.8
    r, g, b = positive if score >= 0 else negative
    return f"rgba({r}, {g}, {b}, {alpha:.3f})"


def highlight_words(words: Sequence[str], scores: Sequence[float], max_abs: float | None = None,
                    positive: tuple[int, int, int] = (220, 38, 38), negative: tuple[int, int, int] = (37, 99, 235),
                    label: str | None = None) -> str:
    """HTML of ``words`` with a background colored by score (red positive, blue negative), every word escaped.

    ``max_abs`` is the score of full color (default: the largest absolute score). Each word's exact score
    is in its tooltip. Non-finite scores are left uncolored.

    >>> highlight_words(["<b>", "ok"], [1.0, -0.5]).count("&lt;b&gt;")
    1
    """
    words = [str(w) for w in words]
    values = [float(s) for s in scores]
    if len(words) != len(values):
        raise ValueError(f"scores has {len(values)} items but words has {len(words)}: expected the same length")
    finite = [abs(v) for v in values if math.isfinite(v)]
    scale = float(max_abs) if max_abs is not None else (max(finite) if finite else 0.0)
    spans = []
    for word, score in zip(words, values):
        spans.append(
            f'<span class="textxai-word" title="{_escape(f"{score:.4g}")}" '
            f'style="background-color: {_color(score, scale, positive, negative)}; padding: 1px 2px; '
            f'border-radius: 3px; line-height: 1.9;">{_escape(word)}</span>'
        )
    head = f'<div class="textxai-label"><b>{_escape(label)}</b></div>' if label is not None else ""
    return f'<div class="textxai-highlight">{head}{" ".join(spans)}</div>'
