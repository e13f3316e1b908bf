"""fim_difficulty: how close each text sits to a classifier's decision boundary (largest FIM eigenvalue)."""
import datasets
import evaluate

from textxai import fim
from textxai.module_base import TextxaiMeasurement

_CITATION = """\
@misc{datta2021geometry,
  title  = {Geometry Matters: Exploring Language Examples at the Decision Boundary},
  author = {Datta, Debajyoti and Kumar, Shashwat and Barnes, Laura and Fletcher, Tom},
  year   = {2021},
  eprint = {2010.07212},
  archivePrefix = {arXiv},
  note   = {Anonymous ICLR 2021 submission}
}
"""

_DESCRIPTION = """\
FIM difficulty scores how fragile a classifier's prediction on each text is. The input x is the output
of the model's input-embedding layer (every non-padding token, special tokens included). With
p = softmax(logits) and J = d log p / d x, the Fisher information metric is G = J^T diag(p) J and the
difficulty is its largest eigenvalue lambda_max: to second order, the largest KL change of the predicted
distribution per unit squared L2 move of the embeddings. High values lie near the decision boundary,
where a meaningless word substitution can flip the label; low values are far from it.
G is never formed: its nonzero eigenvalues are those of a C x C matrix (C classes), at the cost of one
forward and C - 1 backward passes per batch.
"""

_KWARGS_DESCRIPTION = """
Args:
    texts (`list` of `str`): the texts to score.
    text_pairs (`list` of `str`, optional): second texts for sentence-pair classifiers (NLI).
    model: the classifier: a Hub id, a local folder, a loaded `PreTrainedModel` (with `tokenizer`), a
        `(model, tokenizer)` pair, a text-classification pipeline, a `textxai.classifier.TextClassifier`,
        or a demo model `"textxai/demo-sentiment"` / `"textxai/demo-topic"`.
    tokenizer: the tokenizer when `model` is a loaded model.
    batch_size (`int`, default 16): texts per forward/backward batch (results do not depend on it).
    device (`str`, optional): "cpu", "cuda", ... (default: the model's device, else cuda when available).
    return_eigenvector (`bool`, default False): also return each text's words and their sensitivity: the
        L2 norm of the unit top eigenvector v of G over the tokens of each word.
    return_all_eigenvalues (`bool`, default False): also return the C nonzero-spectrum eigenvalues
        (descending; G has L*d - C more zeros and rank <= C - 1).
    options (`textxai.fim.FIMOptions`, optional): every option above and the paper's experiments as one group
        (each field is also accepted as a keyword): `min_flip` (with `max_strength` 6, `tol` 1e-3) adds
        `min_flip_strength`, `min_flip_correlation`, `flipped_within_max_strength`; `random_flips` (with
        `fraction` 0.1, `trials` 20, `seed` 0, `vocabulary`) adds `random_flip_rate`, `random_flip_correlation`.
Returns:
    difficulty (`list` of `float`): lambda_max per text, >= 0; higher = closer to the decision boundary.
    predictions (`list` of `int`): the predicted class per text.
    summary (`dict`): n, mean, std, median, min, max, q10, q25, q75, q90 of the difficulties.
    words, word_sensitivity (`list` of `list`): with `return_eigenvector`.
    all_eigenvalues (`list` of `list` of `float`): with `return_all_eigenvalues`.
    warnings (`list` of `str`): only when there are any (texts that never flip within `max_strength`, a
        correlation that cannot be computed); the same sentences `textxai run` and the Space show.
Examples:
    >>> fim_difficulty = evaluate.load("textxai/fim_difficulty")  # doctest: +SKIP
    >>> import textxai
    >>> fim_difficulty = textxai.load("fim_difficulty")
    >>> texts = ["A wonderful, moving film.", "Not bad, but the ending dragged on."]
    >>> results = fim_difficulty.compute(texts=texts, model="textxai/demo-sentiment")
    >>> len(results["difficulty"]), results["summary"]["n"]
    (2, 2)
    >>> all(d >= 0 for d in results["difficulty"])
    True
    >>> results = fim_difficulty.compute(texts=texts[:1], model="textxai/demo-sentiment", return_eigenvector=True)
    >>> results["words"][0][:3], len(results["word_sensitivity"][0])
    (['A', 'wonderful', ','], 6)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FimDifficulty(TextxaiMeasurement):
    """Largest eigenvalue of the Fisher information metric of each text (Datta et al.)."""

    def _info(self):
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2010.07212",
            license="Apache-2.0",
            features=datasets.Features({"texts": datasets.Value("string"), "text_pairs": datasets.Value("string")}),
            reference_urls=["https://arxiv.org/abs/2010.07212"],
        )

    def _compute(self, texts, text_pairs=None, model=None, tokenizer=None, device=None,
                 options: fim.FIMOptions = None, **keywords):
        return fim.analyse(texts, model, text_pairs, tokenizer=tokenizer, device=device, options=options,
                           intervals=None, figures=False, **keywords).summary
