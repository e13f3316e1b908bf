"""The toki_trust method's descriptor (:mod:`textxai.registry`)."""
from textxai.registry import Method, register


def _estimands(result):
    from textxai import stats

    return stats._EXTRACTORS["toki_trust"](result)


METHOD = register(Method(
    name="toki_trust", kind="metric", order=30,
    help="TOKI: is each correct prediction made for the right reasons (words related to its class)?",
    inputs={"texts": "texts", "text_pairs": "text_pairs", "references": "labels"}, required=("texts", "labels"),
    unit="correct prediction", estimands=_estimands,
    runner="textxai.runners.toki_trust", data_parallel=True,
))
