"""The naopc method's descriptor (:mod:`textxai.registry`)."""
from textxai.naopc.texts import NAOPCOptions
from textxai.registry import Method, register


def _estimands(result):
    from textxai import stats

    return stats._EXTRACTORS["naopc"](result)


METHOD = register(Method(
    name="naopc", kind="metric", order=40,
    help="faithfulness of word attributions: AOPC comprehensiveness / sufficiency and Normalized AOPC",
    inputs={"texts": "texts", "text_pairs": "text_pairs"}, required=("texts",),
    option_groups={"options": NAOPCOptions}, unit="example", estimands=_estimands,
    runner="textxai.runners.naopc", data_parallel=True,
))
