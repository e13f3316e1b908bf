"""The naopc method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
from collections.abc import Mapping

from textxai import stats
from textxai.naopc.analysis import analyse
from textxai.naopc.texts import NAOPCOptions
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


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`textxai.estimates.naopc_evaluations`): per attribution method its
    explanation and both curves, per text its limits (none when the attributions are given as a column)."""
    from textxai.estimates import naopc_evaluations
    from textxai.naopc.texts import default_max_exact_words

    methods = None if options.get("attributions_column") else options["attribution_methods"]
    return naopc_evaluations(words, options["normalization"], options["beam_size"],
                             options["max_exact_words"] or default_max_exact_words(device), methods)


METHOD = register(Method(
    name="naopc", kind="metric", order=40,
    help="faithfulness of word attributions: AOPC comprehensiveness / sufficiency and Normalized AOPC",
    flags={"attributions": "--attributions-column"},
    inputs={"texts": "texts", "text_pairs": "text_pairs"}, required=("texts",),
    option_groups={"options": NAOPCOptions}, unit="example", estimands=estimands, estimate=estimate,
    run_results=run_results,
    runner="textxai.naopc.runner", data_parallel=True, analyse=analyse,
))
