"""The fim_difficulty method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
import math

from textxai import stats
from textxai.fim import FIMOptions, analyse
from textxai.registry import Method, register


def estimands(result):
    """The mean, spread and quantiles of the per-text difficulties (resampled by example)."""
    values = stats.require_values(result, "difficulty", "fim_difficulty", "the per-text 'difficulty' list")
    out = {"summary.mean": stats.values_estimand(values)}
    stats_of = {"summary.std": stats.std_statistic, "summary.median": stats.median_statistic}
    from textxai.fim import SUMMARY_QUANTILES

    for q in SUMMARY_QUANTILES:
        stats_of[f"summary.q{int(round(q * 100)):02d}"] = stats.quantile_statistic(q)
    for key, statistic in stats_of.items():
        out[key] = stats.values_estimand(values, statistic)
    return out  # min / max get no interval: the bootstrap cannot go beyond the observed extremes


def fim_evaluations(n_texts: int, num_labels: int = 2, min_flip: bool = False, max_strength: float = FIMOptions.max_strength,
                    tol: float = FIMOptions.tol, random_flips: bool = False, trials: int = FIMOptions.trials, shift_texts: int = 0) -> int:
    """FIM difficulty: per text one forward and C - 1 backward passes (C classes); the min-flip search adds
    that again and 1 + log2(max_strength / tol) forwards; random flips ``trials`` + 1; a shift file C per text.

    >>> fim_evaluations(10), fim_evaluations(10, min_flip=True, max_strength=6.0, tol=1e-2)
    (20, 150)
    """
    total = n_texts * num_labels + shift_texts * num_labels
    if min_flip:
        total += n_texts * (num_labels + 1 + max(1, math.ceil(math.log2(max_strength / tol))))
    if random_flips:
        total += n_texts * (trials + 1)
    return int(total)


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`fim_evaluations`), read from its options."""
    n = len(words)
    return fim_evaluations(n, num_labels, bool(options["min_flip"]), options["max_strength"], options["tol"],
                           bool(options["random_flips"]), options["trials"], n if options.get("shift_against") else 0)


METHOD = register(Method(
    name="fim_difficulty", kind="measurement", order=20,
    comparable=(),  # across models (docs/readings.md); the others shown without a verdict
    help="example difficulty: largest eigenvalue of the Fisher information metric of the input embeddings",
    inputs={"texts": "texts", "text_pairs": "text_pairs"}, required=("texts",),
    option_groups={"options": FIMOptions}, unit="example", estimands=estimands, estimate=estimate,
    runner="textxai.fim.runner", data_parallel=True, analyse=analyse,
))
