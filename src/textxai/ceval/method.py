"""The ceval method's descriptor (:mod:`textxai.registry`)."""
from textxai.ceval.score import QualityOptions, RunOptions
from textxai.registry import Method, register


def _estimands(result):
    from textxai import stats

    return stats._EXTRACTORS["ceval"](result)


METHOD = register(Method(
    name="ceval", kind="metric", order=50,
    help="CEval metrics of counterfactual texts: flip rate, probability change, distance, diversity, perplexity, quality",
    inputs={"references": "texts", "reference_pairs": "text_pairs", "predictions": "counterfactuals",
            "prediction_pairs": "counterfactual_pairs"}, required=("texts", "counterfactuals"),
    option_groups={"quality": QualityOptions, "run": RunOptions}, unit="original", estimands=_estimands,
    runner="textxai.runners.ceval", data_parallel=True,
))
