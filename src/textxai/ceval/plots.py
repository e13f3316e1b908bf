"""CEval's figures: probability histograms (the paper's Fig. 1) and the method-distance heat map (Fig. 2)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from textxai.ceval.distances import method_distance_matrix
from textxai.validation import short_repr


def plot_probability_histogram(probabilities, bins: int = 20, title: str | None = None,
                               xlabel: str = "p(contrast class | text)"):
    """Histograms of classifier probabilities, one panel per method (the paper's Fig. 1).

    ``probabilities``: one array of probabilities in [0, 1], or a dict method -> array (e.g. the
    originals' and each generator's ``per_example["counterfactual_contrast_prob"]``). Mass near 0.5 means
    texts near the decision boundary; two narrow peaks at 0 and 1, an over-confident classifier.

    >>> fig = plot_probability_histogram({"original": [0.01, 0.02], "mice": [0.6, 0.97]})
    >>> len(fig.axes)
    2
    """
    from matplotlib.figure import Figure

    if not isinstance(probabilities, Mapping):
        probabilities = {"": probabilities}
    if not probabilities:
        raise ValueError("probabilities={}: expected at least one method -> array of probabilities")
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise ValueError(f"bins={short_repr(bins)}: expected a positive integer")
    series = {}
    for name, values in probabilities.items():
        arr = np.asarray(values, dtype=np.float64).ravel()
        arr = arr[~np.isnan(arr)]
        if arr.size and (arr.min() < 0 or arr.max() > 1):
            raise ValueError(f"probabilities[{name!r}] has values in [{arr.min():.3g}, {arr.max():.3g}]: expected probabilities in [0, 1]")
        series[name] = arr
    k = len(series)
    fig = Figure(figsize=(2.6 * k + 0.6, 2.8), layout="constrained")
    axes = fig.subplots(1, k, sharey=True, squeeze=False)[0]
    edges = np.linspace(0, 1, bins + 1)
    for ax, (name, arr) in zip(axes, series.items()):
        weights = np.full(arr.size, 1 / arr.size) if arr.size else None
        ax.hist(arr, bins=edges, weights=weights, color="#4c72b0", edgecolor="white")
        ax.set_title(f"{name} (n={arr.size})" if name else f"n={arr.size}", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xlabel(xlabel, fontsize=8)
    axes[0].set_ylabel("share of texts")
    if title:
        fig.suptitle(title)
    return fig


def plot_method_distances(texts_by_method=None, normalized: bool = False, names=None, matrix=None, title: str | None = None):
    """Heat map of the mean pairwise token distance between methods (the paper's Fig. 2).

    Give ``texts_by_method`` (see :func:`method_distance_matrix`) or a precomputed ``names`` + ``matrix``.

    >>> fig = plot_method_distances({"original": ["a b c"], "x": ["a b d"], "y": ["a"]})
    >>> fig.axes[0].get_title()
    'mean token distance between methods'
    """
    from matplotlib.figure import Figure

    if matrix is None:
        if texts_by_method is None:
            raise ValueError("texts_by_method=None: expected a dict method -> texts, or names= and matrix=")
        names, matrix = method_distance_matrix(texts_by_method, normalized=normalized)
    matrix = np.asarray(matrix, dtype=np.float64)
    names = list(names) if names is not None else [str(i) for i in range(len(matrix))]
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] != len(names):
        raise ValueError(f"matrix has shape {matrix.shape}: expected ({len(names)}, {len(names)}), one row and column per name")
    k = len(names)
    fig = Figure(figsize=(1.0 * k + 2.2, 0.85 * k + 1.2), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(matrix, cmap="viridis")
    ax.set_xticks(range(k), names, rotation=45, ha="right")
    ax.set_yticks(range(k), names)
    top = np.nanmax(matrix) if np.isfinite(matrix).any() else 1.0
    for i in range(k):
        for j in range(k):
            value = matrix[i, j]
            ax.text(j, i, f"{value:.2f}" if normalized else f"{value:.1f}", ha="center", va="center", fontsize=8,
                    color="white" if value < 0.6 * top else "black")
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(title or "mean token distance between methods")
    return fig
