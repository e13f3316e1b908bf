"""The fim_difficulty method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
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


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`textxai.estimates.fim_evaluations`), read from its options."""
    from textxai.estimates import fim_evaluations

    n = len(words)
    return fim_evaluations(n, num_labels, bool(options["min_flip"]), options["max_strength"], options["tol"],
                           bool(options["random_flips"]), options["trials"], n if options.get("shift_against") else 0)


METHOD = register(Method(
    name="fim_difficulty", kind="measurement", order=20,
    help="example difficulty: largest eigenvalue of the Fisher information metric of the input embeddings",
    inputs={"texts": "texts", "text_pairs": "text_pairs"}, required=("texts",),
    option_groups={"options": FIMOptions}, unit="example", estimands=estimands, estimate=estimate,
    runner="textxai.fim.runner", data_parallel=True, analyse=analyse,
))
