"""The toki_trust method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
from textxai import stats
from textxai.registry import Method, register
from textxai.toki.analysis import trust_columns
from textxai.toki.trust import OPTION_GROUPS, analyse


def estimands(result):
    """The trustworthy rates over the correct predictions (a wrong one, None, is no unit of them)."""
    labels = stats.require_values(result, "trust_labels", "toki_trust", "the per-text 'trust_labels' list")
    out = {}
    for key, column in (("trustworthy_rate", labels), ("naive_trustworthy_rate", result.get("naive_labels")),
                        ("no_ki_trustworthy_rate", result.get("no_ki_labels"))):
        if column is None or key not in result:
            continue
        # over the correct predictions only (None = wrong prediction, not a unit of this rate)
        out[key] = stats.ratio_estimand([float(bool(x)) if x is not None else 0.0 for x in column],
                                   [float(x is not None) for x in column])
    return out


def run_results(results, label: str) -> dict:
    """A ``textxai run toki_trust`` file keeps the per-text verdicts of :func:`textxai.toki.assess` as
    ``examples``; as a result the estimands read: ``{label: results + trust_labels, naive_labels, no_ki_labels}``."""
    if "trust_labels" in results or not isinstance(results.get("examples"), list):
        return {label: results}
    return {label: {**results, **trust_columns(results["examples"])}}


def _train_words(options) -> list:
    """Words per training text of the keyword index still to build (none with a saved index)."""
    from textxai.estimates import approx_words
    from textxai.tables import load_table

    if not options.get("train_data") or options.get("keyword_index"):
        return []
    train, train_pairs, _ = load_table(options["train_data"], options["text_column"], options.get("pair_column"), None,
                                       "train", options["train_limit"], "--train-data")
    words = [approx_words(t) for t in train]
    return words if train_pairs is None else [a + approx_words(b) for a, b in zip(words, train_pairs)]


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`textxai.estimates.toki_evaluations`): the keyword index's training texts,
    the assessed texts, and the attacked ones (single texts only)."""
    from textxai.estimates import toki_evaluations

    explainer = options["explainer"]
    samples = options["lime_samples"] if explainer == "lime" else None
    attacked = [] if pairs else list(words[: options["attack"] or 0])
    return toki_evaluations(_train_words(options), words, explainer, samples, attack_words=attacked,
                            max_rate=options["max_rate"])


METHOD = register(Method(
    name="toki_trust", kind="metric", order=30,
    help="TOKI: is each correct prediction made for the right reasons (words related to its class)?",
    flags={"references": "--label-column", "human_trust": "--human-trust-column",
           "train_labels": "--train-data --label-column", "train_texts": "--train-data --text-column"},
    inputs={"texts": "texts", "text_pairs": "text_pairs", "references": "labels"}, required=("texts", "labels"),
    unit="correct prediction", estimands=estimands, estimate=estimate, option_groups=OPTION_GROUPS,
    run_results=run_results, runner="textxai.toki.runner", data_parallel=True, analyse=analyse,
))
