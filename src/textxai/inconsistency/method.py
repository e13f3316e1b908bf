"""The inconsistency method's descriptor (:mod:`textxai.registry`)."""
from textxai.registry import Method, register


def _estimands(result):
    from textxai import stats

    return stats._EXTRACTORS["inconsistency"](result)


METHOD = register(Method(
    name="inconsistency", kind="metric", order=10,
    help="inc@n of a counterfactual editor: feed it its own edits and count how much larger they get",
    inputs={"edits": "edits"}, required=("edits",), unit="chain", estimands=_estimands,
    runner="textxai.runners.inconsistency", data_parallel=True,
))
