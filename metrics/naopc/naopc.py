"""naopc: AOPC comprehensiveness / sufficiency of word attributions and their Normalized AOPC."""
import datasets
import evaluate

from textxai import naopc
from textxai.classifier import as_classifier
from textxai.module_base import TextxaiMetric

_CITATION = """\
@article{edin2024normalized,
  title   = {Normalized {AOPC}: Fixing Misleading Faithfulness Metrics for Feature Attribution Explainability},
  author  = {Edin, Joakim and Motzfeldt, Andreas Geert and Christensen, Casper L. and Ruotsalo, Tuukka and
             Maal{\\o}e, Lars and Maistro, Maria},
  journal = {arXiv preprint arXiv:2408.08137},
  year    = {2024},
  url     = {https://arxiv.org/abs/2408.08137}
}
"""

_DESCRIPTION = """\
Faithfulness of word attributions by the Area Over the Perturbation Curve, and its normalization.
Words (the classifier's word tokens) are removed one after another -- every subword token of a removed
word becomes the mask token ("mask") or is dropped ("delete") -- and AOPC is the mean drop of the target
probability over the N steps (first step: one word removed; last step: all words removed).
Comprehensiveness removes words by decreasing attribution (higher is better), sufficiency by increasing
attribution (the least important first, lower is better); ties go by word position.
Raw AOPC is not comparable across models or inputs: each model and input has its own lower / upper AOPC
limits (the minimum / maximum over all N! orderings). NAOPC = (AOPC - lower) / (upper - lower) puts every
score on the same scale (0 = the worst ordering, 1 = the best; 0 when upper == lower; not clipped).
Limits are exact (dynamic programme over word subsets, 2^N model calls, N <= max_exact_words) or
approximated by the paper's beam search (both limits in one pass, deduplicated and memoised): beam limits
are real orderings' AOPCs, so they are inside the exact ones and NAOPC_beam can leave [0, 1].
"""

_KWARGS_DESCRIPTION = """
Args:
    texts (`list` of `str`): the texts; the features are their words (`classifier.words(text)`).
    attributions (`list` of `list` of `float`): one attribution score per word per text. Leave out and
        set `attribution_method` to compute them.
    text_pairs (`list` of `str`, optional): second texts for sentence-pair models (NLI); their words
        follow the first text's words.
    model: a Hub id, a local folder, a loaded model (with `tokenizer`), a `(model, tokenizer)` pair, a
        text-classification pipeline, a `textxai.classifier.TextClassifier`, or a demo model
        `"textxai/demo-sentiment"` / `"textxai/demo-topic"`.
    tokenizer: the tokenizer when `model` is a loaded model.
    target (default `"predicted"`): the class whose probability is tracked: the class predicted on the
        intact input, one class index for all texts, or one per text.
    normalization (`str`, default `"auto"`): `"exact"`, `"beam"`, `"beam-paper"`, `"auto"` (exact when N <=
        max_exact_words, else beam) or `"none"` (plain AOPC, no limits).
    beam_size (`int`, optional): beam width (default 1 for "beam", 5 for "beam-paper").
    max_exact_words (`int`, optional): the largest N for exact limits (2^N model calls per text); default 12 on
        CPU, 16 on CUDA.
    perturbation (`str`, default `"mask"`): `"mask"` or `"delete"`.
    attribution_method (`str`, optional): compute the attributions with `textxai.attribution`
        (gradient, input_x_gradient, integrated_gradients, omission, lime, kernel_shap).
    batch_size (`int`, default 32): model batch size (results do not depend on it).
    device (`str`, optional): "cpu", "cuda", ...
    return_per_example (`bool`, default False): also return the per-text details.
    seed (`int`, default 0): seed of sampling attribution methods (lime, kernel_shap).
    progress (`bool`, default False): progress bars.
    options (`textxai.naopc.NAOPCOptions`, optional): normalization, beam_size, max_exact_words,
        perturbation, batch_size, seed and progress as one group (the keywords above override its fields).
Returns:
    comprehensiveness (`float`): mean AOPC, words removed by decreasing attribution; higher is better.
    sufficiency (`float`): mean AOPC, words removed by increasing attribution; lower is better.
    naopc_comprehensiveness (`float`): mean normalized comprehensiveness, ~[0, 1], higher is better
        (`None` with normalization="none").
    naopc_sufficiency (`float`): mean normalized sufficiency, ~[0, 1], lower is better.
    per_example (`list` of `dict`, with return_per_example): words, attributions, target, p_full, n_words,
        normalization ("exact" / "beam" / "none"), comprehensiveness, sufficiency, naopc_*, lower, upper,
        their orders, comprehensiveness_curve, sufficiency_curve, lower_curve, upper_curve (the N
        probability drops along each ordering) and n_evaluations (distinct perturbed inputs evaluated).
Examples:
    >>> naopc = evaluate.load("textxai/naopc")  # doctest: +SKIP
    >>> import textxai
    >>> naopc = textxai.load("naopc")
    >>> texts = ["A wonderful, moving film.", "Dull and far too long."]
    >>> attributions = [[0.0, 0.9, 0.0, 0.5, 0.3, 0.0], [0.8, 0.0, 0.1, 0.2, 0.4, 0.0]]
    >>> results = naopc.compute(texts=texts, attributions=attributions, model="textxai/demo-sentiment")
    >>> sorted(results)
    ['comprehensiveness', 'naopc_comprehensiveness', 'naopc_sufficiency', 'sufficiency']
    >>> 0 <= results["naopc_comprehensiveness"] <= 1  # exact limits: NAOPC is inside [0, 1]
    True
    >>> results = naopc.compute(texts=texts[:1], model="textxai/demo-sentiment", attribution_method="omission",
    ...                         normalization="beam", return_per_example=True)
    >>> row = results["per_example"][0]
    >>> row["n_words"], row["normalization"], len(row["upper_curve"]), row["n_evaluations"] <= 1 + 5 * 6 * 7
    (6, 'beam', 6, True)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Naopc(TextxaiMetric):
    """AOPC comprehensiveness / sufficiency and Normalized AOPC (Edin et al.)."""

    def _info(self):
        scores = datasets.Sequence(datasets.Value("float64"))
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2408.08137",
            license="Apache-2.0",
            features=datasets.Features(
                {"texts": datasets.Value("string"), "text_pairs": datasets.Value("string"), "attributions": scores}
            ),
            reference_urls=["https://arxiv.org/abs/2408.08137", "https://github.com/JoakimEdin/naopc"],
        )

    def _compute(self, texts, attributions=None, text_pairs=None, model=None, tokenizer=None, device=None,
                 target="predicted", attribution_method=None, return_per_example=False,
                 options: naopc.NAOPCOptions = None, **keywords):
        analysis = naopc.analyse(texts, as_classifier(model, tokenizer=tokenizer, device=device), attributions,
                                 text_pairs, target, attribution_method, options, intervals=None, figures=False,
                                 **keywords)
        out = dict(analysis.summary)
        if return_per_example:
            out["per_example"] = next(iter(analysis.results["per_example"].values()))
        return out
