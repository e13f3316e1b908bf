"""The toki_trust method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
import inspect
import math
from collections.abc import Sequence

from textxai import stats
from textxai.estimates import attribution_evaluations
from textxai.registry import Method, register
from textxai.toki.analysis import trust_columns
from textxai.toki.attack import AttackOptions
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
                                   [float(x is not None) for x in column], share=True)
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


def toki_evaluations(train_words: Sequence[int], text_words: Sequence[int], explainer: str,
                     samples: int | None = None, index_cached: bool = False, attack_words: Sequence[int] = (),
                     max_rate: float = AttackOptions.max_rate, min_words: int = AttackOptions.min_words,
                     n_candidates: int = 5, width: int = AttackOptions.width) -> int:
    """TOKI: one prediction and one explanation per training text (unless its keyword index is cached) and per
    assessed text; per attacked text of n words a gradient, the substitutes of its words (1 + 30 MiniLM rows
    per word) and, at each greedy step, ``width`` x ``n_candidates`` edits (predicted and compared with
    MiniLM), over at most n / width + max(min_words, rate n) steps.

    >>> toki_evaluations([10, 20], [5], "omission"), toki_evaluations([10], [5], "lime", 500, index_cached=True)
    (41, 35)
    >>> toki_evaluations([], [], "omission", attack_words=[9])
    430
    """
    texts = list(text_words) + ([] if index_cached else list(train_words))
    total = sum(attribution_evaluations(explainer, n, samples) + 1 for n in texts)
    for n in attack_words:  # + the substitutes of each word ranked by MiniLM over its GloVe neighbours
        steps = math.ceil(n / width) + max(min_words, int(max_rate * n))
        total += 1 + 2 * steps * width * n_candidates + (1 + _generator_neighbours()) * n
    return int(total)


def _generator_neighbours() -> int:
    """GloVe neighbours the shared substitute generator ranks per word (its default, read from its signature)."""
    from textxai.editors import SubstituteGenerator

    return int(inspect.signature(SubstituteGenerator.__init__).parameters["n_neighbours"].default)


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`toki_evaluations`): the keyword index's training texts,
    the assessed texts, and the attacked ones (single texts only)."""

    explainer = options["explainer"]
    samples = options["lime_samples"] if explainer == "lime" else None
    attacked = [] if pairs else list(words[: options["attack"] or 0])
    return toki_evaluations(_train_words(options), words, explainer, samples, attack_words=attacked,
                            max_rate=options["max_rate"])


METHOD = register(Method(
    name="toki_trust", kind="metric", order=30,
    comparable=("trustworthy_rate", "naive_trustworthy_rate", "no_ki_trustworthy_rate"),  # across models (docs/readings.md); the others shown without a verdict
    help="TOKI: is each correct prediction made for the right reasons (words related to its class)?",
    flags={"references": "--label-column", "human_trust": "--human-trust-column",
           "train_labels": "--train-data --label-column", "train_texts": "--train-data --text-column"},
    inputs={"texts": "texts", "text_pairs": "text_pairs", "references": "labels"}, required=("texts", "labels"),
    unit="correct prediction", estimands=estimands, estimate=estimate, option_groups=OPTION_GROUPS,
    run_results=run_results, runner="textxai.toki.runner", data_parallel=True, analyse=analyse,
))
