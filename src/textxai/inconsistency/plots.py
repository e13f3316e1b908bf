"""The paper's Fig. 3a-b: minimality and inc per feedback step, as box-plots."""
from __future__ import annotations

from textxai.inconsistency.checks import _check_word_tokenizer, check_chains
from textxai.inconsistency.metrics import _all_distances, _inc_from_distances
from textxai.validation import check_positive_int


def plot_steps(chains, word_tokenizer: str = "spacy", max_steps: int | None = None, title: str | None = None):
    """Box-plots of minimality and inc per feedback step (paper Fig. 3a-b), a matplotlib Figure.

    Boxes show quartiles and the median (black line); the white diamond is the mean (what inc@n averages).

    ``chains`` is a list of chains, or ``{editor name: list of chains}`` to compare editors side by side.

    >>> fig = plot_steps([["a", "b", "b c d"], ["a", "b c", "d"]])
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['minimality (words)', 'inc (words)']
    """
    from matplotlib.figure import Figure

    _check_word_tokenizer(word_tokenizer)
    groups = chains if isinstance(chains, dict) else {"": chains}
    if not groups:
        raise ValueError("chains={}: expected a list of chains or a non-empty {editor name: chains} dict")
    data = {}
    for name, cs in groups.items():
        label = f"chains[{name!r}]" if name else "chains"
        data[name] = _all_distances(check_chains(cs, label), word_tokenizer)
    longest = max((len(d) for ds in data.values() for d in ds), default=0)
    if max_steps is not None:
        check_positive_int(max_steps, "max_steps")
        longest = min(longest, max_steps)

    fig = Figure(figsize=(max(6.0, 0.9 * longest * max(1, len(data)) + 2), 6.5), layout="constrained")
    axes = fig.subplots(2, 1)
    width = 0.8 / len(data)
    colors = [f"C{i}" for i in range(len(data))]
    for panel, (ax, what) in enumerate(zip(axes, ("minimality", "inc"))):
        for g, (name, ds) in enumerate(data.items()):
            per_step, positions = [], []
            last = longest if what == "minimality" else longest - 1
            for step in range(1, last + 1):
                if what == "minimality":
                    vals = [d[step - 1] for d in ds if len(d) >= step]
                else:
                    vals = [_inc_from_distances(d)[step - 1] for d in ds if len(d) > step]
                if vals:
                    per_step.append(vals)
                    positions.append(step + (g - (len(data) - 1) / 2) * width)
            if per_step:
                bp = ax.boxplot(per_step, positions=positions, widths=width * 0.9, patch_artist=True, manage_ticks=False,
                                showmeans=True, medianprops={"color": "black"},
                                meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black",
                                           "markersize": 4})
                for box in bp["boxes"]:
                    box.set_facecolor(colors[g])
                    box.set_alpha(0.6)
                if name and panel == 0:
                    bp["boxes"][0].set_label(str(name))
        ax.set_xticks(range(1, max(longest, 1) + 1))
        ax.set_xlim(0.4, max(longest, 1) + 0.6)
        ax.set_xlabel("feedback step")
        ax.set_ylabel("minimality (words)" if what == "minimality" else "inc (words)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_title(title or "Minimality and inconsistency per feedback step")
    if len(data) > 1:
        axes[0].legend()
    return fig
