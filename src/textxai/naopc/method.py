"""The naopc method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
from collections.abc import Mapping, Sequence

from textxai import stats
from textxai.estimates import attribution_evaluations
from textxai.naopc.analysis import analyse
from textxai.naopc.limits import DEFAULT_BEAM_SIZE
from textxai.naopc.texts import EXACT_WORDS_BY_DEVICE, NAOPCOptions, limit_method
from textxai.registry import Method, register


def estimands(result):
    """One interval per AOPC summary, over the per-example rows (resampled by example)."""
    per = stats.require_values(result, "per_example", "naopc", "compute with return_per_example=True")
    out = {}
    for key in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency"):
        if key in result and result[key] is not None:
            out[key] = stats.values_estimand([row[key] for row in per])
    return out


def run_results(results, label: str) -> dict:
    """A ``textxai run naopc`` file holds one result per attribution method: ``{"<label>:<method>": its summaries
    and per-example rows}`` (``"<method>"`` for an empty label)."""
    if not (isinstance(results.get("methods"), Mapping) and isinstance(results.get("per_example"), Mapping)):
        return {label: results}
    return {(name if label == "" else f"{label}:{name}"): {**summary, "per_example": results["per_example"][name]}
            for name, summary in results["methods"].items() if name in results["per_example"]}


def naopc_evaluations(n_words: Sequence[int], normalization: str = "auto", beam_size: int | None = None,
                      max_exact_words: int = EXACT_WORDS_BY_DEVICE["cpu"], method="integrated_gradients", samples: int | None = None) -> int:
    """NAOPC for texts of ``n_words`` words: per attribution ``method`` (a name, a list of names, or ``None``
    when the attributions are given) the explanation and both AOPC curves (2 n); once per text the limits —
    exact (2^n subsets) where :func:`textxai.naopc.texts.limit_method` picks exact, else two beams of B states
    over n steps (about B n (n + 1); B from ``beam_size`` or the method's default).

    >>> naopc_evaluations([3], "auto", 5, 12, "omission"), naopc_evaluations([3], "none", method=["lime", "gradient"])
    (18, 23)
    """
    methods = [method] if method is None or isinstance(method, str) else list(method)
    total = 0
    for n in n_words:
        total += sum(attribution_evaluations(m, n, samples) + 2 * n for m in methods)
        kind = limit_method(n, normalization, max_exact_words)
        if kind == "none":
            continue
        beam = beam_size or DEFAULT_BEAM_SIZE.get(kind, 1)
        total += 2 ** n if kind == "exact" else beam * n * (n + 1)
    return int(total)


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`naopc_evaluations`): per attribution method its
    explanation and both curves, per text its limits (none when the attributions are given as a column)."""
    from textxai.naopc.texts import default_max_exact_words

    methods = None if options.get("attributions_column") else options["attribution_methods"]
    return naopc_evaluations(words, options["normalization"], options["beam_size"],
                             options["max_exact_words"] or default_max_exact_words(device), methods)


METHOD = register(Method(
    name="naopc", kind="metric", order=40,
    comparable=("naopc_comprehensiveness", "naopc_sufficiency"),  # across models (docs/readings.md); the others shown without a verdict
    help="faithfulness of word attributions: AOPC comprehensiveness / sufficiency and Normalized AOPC",
    flags={"attributions": "--attributions-column"},
    inputs={"texts": "texts", "text_pairs": "text_pairs"}, required=("texts",),
    option_groups={"options": NAOPCOptions}, unit="example", estimands=estimands, estimate=estimate,
    run_results=run_results,
    runner="textxai.naopc.runner", data_parallel=True, analyse=analyse,
))
