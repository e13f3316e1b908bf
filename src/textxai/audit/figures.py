"""The report's figures: matplotlib drawings of the sections' plain data, embedded as SVG data URIs (no file,
no request) with their alt text."""
from __future__ import annotations

import base64
import io

import numpy as np

BLUE, ORANGE, GREEN, RED, GREY = "#4f46e5", "#f59e0b", "#059669", "#dc2626", "#6b7280"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def data_uri(fig) -> str:
    """The figure as an SVG data URI (text kept as text: small files); the figure is closed."""
    plt = _plt()
    buf = io.BytesIO()
    with plt.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _err(entries) -> np.ndarray:
    low = [e["score"] - e["ci_low"] if e.get("ci_low") is not None else 0 for e in entries]
    high = [e["ci_high"] - e["score"] if e.get("ci_high") is not None else 0 for e in entries]
    return np.nan_to_num(np.abs([low, high]))


def reliability(bins: list[dict]) -> object:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.2, 3.4))
    full = [b for b in bins if b["n"]]
    ax.plot([0, 1], [0, 1], "--", color=GREY, lw=1, label="perfect calibration")
    ax.bar([(b["low"] + b["high"]) / 2 for b in full], [b["accuracy"] for b in full], width=0.09, color=BLUE,
           alpha=0.8, label="accuracy in bin")
    ax.plot([b["confidence"] for b in full], [b["accuracy"] for b in full], "o", color=ORANGE, label="mean confidence")
    ax.set_xlim(0, 1), ax.set_ylim(0, 1.02)
    ax.set_xlabel("confidence (max probability)"), ax.set_ylabel("accuracy")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def histogram(values, xlabel: str) -> object:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    v = np.asarray(values, dtype=np.float64)
    ax.hist(v[np.isfinite(v)], bins=20, color=BLUE, alpha=0.85)
    ax.set_xlabel(xlabel), ax.set_ylabel("texts")
    fig.tight_layout()
    return fig


def side_by_side(groups: dict[str, list[dict]], ylabel: str = "accuracy") -> object:
    """One panel per group of bins (e.g. by difficulty, by confidence), bars with their intervals."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(groups), figsize=(4.0 * len(groups), 3.0), squeeze=False, sharey=True)
    for ax, (title, bins) in zip(axes[0], groups.items()):
        entries = [b["accuracy"] for b in bins]
        x = np.arange(len(bins))
        ax.bar(x, [e["score"] for e in entries], yerr=_err(entries), capsize=3, color=BLUE, alpha=0.85)
        ax.set_xticks(x, [f"{k + 1}" for k in x])
        ax.set_xlabel(title), ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def curves(x, series: dict[str, list[float]], xlabel: str, ylabel: str) -> object:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    styles = [(RED, "o-"), (RED, "s--"), (GREEN, "o-"), (GREEN, "s--")] if len(series) == 4 else \
        [(c, "o-") for c in (RED, GREEN, BLUE, ORANGE)]
    for (name, y), (color, style) in zip(series.items(), styles):
        ax.plot(x, y, style, color=color, label=name)
    ax.set_xlabel(xlabel), ax.set_ylabel(ylabel), ax.set_ylim(-0.02, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def bars(entries: dict[str, dict], ylabel: str, ylim=(0, 1.05)) -> object:
    """One bar per named estimate, with its interval."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(entries), 3.0))
    x = np.arange(len(entries))
    values = list(entries.values())
    ax.bar(x, [e["score"] if e.get("score") is not None else np.nan for e in values], yerr=_err(values), capsize=4,
           color=[BLUE, ORANGE, GREEN, RED, GREY][: len(values)] * 3)
    ax.set_xticks(x, list(entries), rotation=12, fontsize=8)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    fig.tight_layout()
    return fig
