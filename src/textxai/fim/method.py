"""The fim_difficulty method's descriptor (:mod:`textxai.registry`)."""
from textxai.fim import FIMOptions
from textxai.registry import Method, register


def _estimands(result):
    from textxai import stats

    return stats._EXTRACTORS["fim_difficulty"](result)


METHOD = register(Method(
    name="fim_difficulty", kind="measurement", order=20,
    help="example difficulty: largest eigenvalue of the Fisher information metric of the input embeddings",
    inputs={"texts": "texts", "text_pairs": "text_pairs"}, required=("texts",),
    option_groups={"options": FIMOptions}, unit="example", estimands=_estimands,
    runner="textxai.runners.fim_difficulty", data_parallel=True,
))
