"""inconsistency: inc@n of a counterfactual editor, by feeding it its own output (Filandrianos et al., 2023)."""
import datasets
import evaluate

from textxai import inconsistency as inc
from textxai.module_base import TextxaiMetric

_CITATION = """\
@inproceedings{filandrianos-etal-2023-counterfactuals,
  title     = {Counterfactuals of Counterfactuals: a back-translation-inspired approach to analyse counterfactual editors},
  author    = {Filandrianos, Giorgos and Dervakos, Edmund and Menis-Mastromichalakis, Orfeas and Zerva, Chrysoula and Stamou, Giorgos},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2023},
  year      = {2023},
  note      = {Code and data: https://github.com/geofila/Counterfactuals-of-Counterfactuals}
}
"""

_DESCRIPTION = """\
Inconsistency evaluates a counterfactual editor (MiCE, Polyjuice, TextFooler, an LLM, your own) without
ground truth. Feed the editor its own edit: x_1 = f(x_0), x_2 = f(x_1), ... Since x_{i-1} is a valid
counterfactual of x_i at distance d(x_{i-1}, x_i), an editor that answers x_i with an edit larger than that
has provably missed a smaller one. With d the word-level Levenshtein distance, minimality at step i is
d(x_{i-1}, x_i), inc at step i is relu(d(x_i, x_{i+1}) - d(x_{i-1}, x_i)) and inc@n is the mean of inc at
steps 1..n (it needs x_{n+1}). One example is one chain [x_0, x_1, x_2, ...]; a trailing None or empty
string marks a step where the editor failed.
"""

_KWARGS_DESCRIPTION = """
Args:
    edits (`list` of `list` of `str`): one chain per example, [original, edit 1, edit 2, ...]; at least
        two items; a trailing `None` / `""` ends a chain whose editor failed.
    labels (`list` of `list` of `int`, optional): the predicted label of every text of each chain (one per
        item; `None` allowed at failed steps). Enables flip_rate@n.
    n (`int` or `list` of `int`, default [1, 2, 3, 5, 9]): the steps to report.
    model (optional): a classifier (Hub id, folder, loaded model with `tokenizer`, pipeline,
        TextClassifier, "textxai/demo-sentiment") to compute the labels when `labels` is not given.
    tokenizer (optional): the tokenizer when `model` is a loaded model.
    lm (optional): a causal language model (Hub id, folder, .gguf file, (model, tokenizer), pipeline, or the
        packaged "textxai/smollm2-135m-instruct") for perplexity@n, with its BOS token prepended to each text;
        call twice with two LMs for the paper's ppl-base and ppl-fine.
    word_tokenizer (`str`, default "spacy"): "spacy" (spaCy's blank English tokenizer, whitespace tokens
        dropped, as the authors' code) or "whitespace".
    pooling (`str`, default "pooled"): "pooled" = mean of inc over every available (chain, step <= n) pair,
        as the authors' table; "per_chain" = mean of per-chain inc@n over chains that reach step n.
    return_per_example (`bool`, default False): also return per-chain step values.
    batch_size (`int`, default 32): batch size for `model` and `lm` (results do not depend on it).
    device (`str`, optional): device for `model`.
    progress (`bool`, default False): progress bars.
    scoring (`textxai.inconsistency.ScoreOptions`, optional): n, word_tokenizer, pooling and
        return_per_example as one group (the keywords above override its fields).
Returns:
    inc@n (`float`): >= 0, lower is better; 0 = the editor never answered its own edit with a larger edit.
    minimality@n (`float`): mean d(x_{n-1}, x_n) over chains that have x_n, in words.
    flip_rate@n (`float`, with `labels` or `model`): fraction of chains whose label at step n differs
        from step n - 1, over chains that attempted step n (a failed step counts as no flip).
    perplexity@n (`float`, with `lm`): mean perplexity of x_n.
    <metric>@n_chains (`int`): how many chains contributed to each value; inc@n_steps counts the
        (chain, step) pairs. A value nobody contributes to is NaN, with a warning.
    per_example (`dict`, with `return_per_example`): per chain "minimality", "inc", "inc@n", "labels".
Examples:
    >>> inconsistency = evaluate.load("textxai/inconsistency")  # doctest: +SKIP
    >>> import textxai
    >>> inconsistency = textxai.load("inconsistency")
    >>> chains = [["the film was great", "the film was awful", "the film was not awful at all"],
    ...           ["a fine cast", "a poor cast", "a fine cast"]]
    >>> results = inconsistency.compute(edits=chains, n=[1])
    >>> results["inc@1"], results["minimality@1"], results["inc@1_chains"]
    (1.0, 1.0, 2)
    >>> results = inconsistency.compute(edits=chains, labels=[[1, 0, 1], [1, 0, 0]], n=[1, 2])
    >>> results["flip_rate@1"], results["flip_rate@2"]
    (1.0, 0.5)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Inconsistency(TextxaiMetric):
    """inc@n, minimality@n, flip_rate@n and perplexity@n of counterfactual-editor feedback chains."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://github.com/geofila/Counterfactuals-of-Counterfactuals",
            license="Apache-2.0",
            features=datasets.Features({"edits": datasets.List(datasets.Value("string")),
                                        "labels": datasets.List(datasets.Value("int64"))}),
            codebase_urls=["https://github.com/geofila/Counterfactuals-of-Counterfactuals"],
        )

    def _compute(self, edits, labels=None, model=None, tokenizer=None, lm=None, batch_size=32, device=None,
                 progress=False, scoring: inc.ScoreOptions = None, **keywords):
        if labels is None and model is not None:
            from textxai.classifier import as_classifier  # torch only when a classifier is needed

            model = as_classifier(model, tokenizer=tokenizer, device=device)
        else:
            model = None  # labels given: no model call
        with inc.argument_named("chains", "edits"):  # the library's chains are this module's edits
            return inc.analyse(edits, labels, model, lm, intervals=None, figures=False, scoring=scoring,
                               batch_size=batch_size, progress=progress, **keywords).summary
