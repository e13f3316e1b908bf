"""The figures of the FIM difficulty analysis (matplotlib, Agg): the same on the CLI, the demo and the Space."""
from __future__ import annotations

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def difficulty_histogram(values, title: str):
    """Histogram of log10 lambda_max over the texts (lambda_max = 0 left out)."""
    fig, ax = _pyplot().subplots(figsize=(6, 3.5))
    vals = np.asarray(values, dtype=float)
    vals = vals[vals > 0]
    if vals.size:
        ax.hist(np.log10(vals), bins=30, color="#4f46e5")
    ax.set_xlabel("log10 lambda_max (FIM difficulty)")
    ax.set_ylabel("texts")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def difficulty_scatter(x, y, xlabel: str, ylabel: str, title: str):
    """``y`` against log10 ``x`` (pairs with a non-finite value or ``x <= 0`` left out)."""
    fig, ax = _pyplot().subplots(figsize=(5, 4))
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0)
    ax.scatter(np.log10(x[keep]), y[keep], s=10, alpha=0.6, color="#db2777")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def shift_histogram(shift):
    """Histogram of lambda_max(perturbed) - lambda_max(original) per pair."""
    fig, ax = _pyplot().subplots(figsize=(6, 3.5))
    ax.hist(shift, bins=40, color="#0d9488")
    ax.axvline(0, color="black", lw=1)
    ax.set_xlabel("lambda_max(perturbed) - lambda_max(original)")
    ax.set_ylabel("pairs")
    ax.set_title(f"difficulty shift: mean {shift.mean():.3g}, std {shift.std():.3g}")
    fig.tight_layout()
    return fig


def figures(r: dict, n: int) -> dict:
    """``{name: Figure}`` of a :func:`textxai.fim.compute` result over ``n`` texts: the difficulty histogram, and
    the min-flip / random-flip scatter plots and the shift histogram when those experiments ran."""
    d = r["difficulty"]
    out = {"difficulty_histogram": difficulty_histogram(d, f"FIM difficulty of {n} texts")}
    if "min_flip_strength" in r:
        out["min_flip_strength"] = difficulty_scatter(d, r["min_flip_strength"], "log10 lambda_max",
                                                      "min L2 strength that flips",
                                                      f"r = {r['min_flip_correlation']['pearson_r']:.2f} (log lambda)")
    if "random_flip_rate" in r:
        out["random_flip_rate"] = difficulty_scatter(d, r["random_flip_rate"], "log10 lambda_max",
                                                     "random substitution flip rate",
                                                     f"r = {r['random_flip_correlation']['pearson_r']:.2f} (log lambda)")
    if "shift" in r:
        out["difficulty_shift"] = shift_histogram(r["shift"]["values"])
    return out
