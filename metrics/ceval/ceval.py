"""ceval: CEval's counterfactual and text-quality metrics for generated counterfactual texts."""
import datasets
import evaluate
import numpy as np

from textxai import ceval

_CITATION = """\
@inproceedings{nguyen2024ceval,
  title     = {{CEval}: A Benchmark for Evaluating Counterfactual Text Generation},
  author    = {Nguyen, Van Bach and Schl{\\"o}tterer, J{\\"o}rg and Seifert, Christin},
  booktitle = {Proceedings of the 17th International Natural Language Generation Conference},
  pages     = {55--69},
  year      = {2024},
  address   = {Tokyo, Japan},
  publisher = {Association for Computational Linguistics},
  url       = {https://aclanthology.org/2024.inlg-main.6}
}
"""

_DESCRIPTION = """\
CEval scores counterfactual texts (minimal edits meant to change a classifier's prediction) from any
generator (MiCE, GBDA, CREST, an LLM, humans) on the counterfactual criteria and on text quality, with the
definitions of CEval's own code: flip rate (argmax changes), probability change p(c'|x') - p(c'|x) of the
contrast class c', token distance (Levenshtein over spaCy tokens, whitespace tokens kept), diversity (mean
pairwise distance between several counterfactuals of one original), perplexity under a causal LM, and
four 1-5 text-quality judgements (grammar, cohesiveness, likability, fluency) by an instruction-following
LM with CEval's prompts. Failed generations ("-1", empty, None) are counted, scored as unchanged (not
flipped, probability change 0) and left out of distance, diversity, perplexity and quality.
The classifier is given as `model`, or its outputs are given precomputed (`original_probs`,
`counterfactual_probs`, or just labels), so published counterfactuals can be re-scored without it.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`, or `list` of `list` of `str`): the counterfactual of each original, or
        several per original (the first is "the" counterfactual; all give the diversity). A failed
        generation is `None`, `""` or `"-1"`. For NLI: the counterfactual premises.
    references (`list` of `str`): the originals (NLI: original premises).
    prediction_pairs, reference_pairs (`list` of `str`, optional): NLI hypotheses, counterfactual and
        original, passed to `compute` (not `add_batch`). Edit either side; copy the side you leave unchanged.
    model: the classifier (Hub id, folder, loaded model with `tokenizer`, `(model, tokenizer)`, pipeline,
        `textxai.classifier.TextClassifier`, `"textxai/demo-sentiment"`). Not needed with precomputed outputs.
    tokenizer: the classifier's tokenizer when `model` is a loaded model.
    original_probs, counterfactual_probs (array [n, C], optional): precomputed softmax probabilities.
    original_labels, counterfactual_labels (`list` of `int`, optional): precomputed predicted classes
        (enough for the flip rate).
    targets (`list` of `int` or label names, optional): the target class of each counterfactual.
    contrast (`str`, optional): the contrast class c' of the probability change: "target", "argmin"
        (least likely class of the original) or "counterfactual_argmax" (predicted class of the
        counterfactual). Default: "target" with targets, else CEval's choice: "argmin" for single texts,
        "counterfactual_argmax" for NLI.
    lm (optional): causal LM for perplexity (GPT-2 in the paper): id, folder, `(model, tokenizer)`.
    judge (optional): instruction-following causal LM (id, folder, `(model, tokenizer)`, pipeline) decoded
        greedily, or a callable `list[str] prompts -> list[str] replies`, for the text-quality questions.
    judge_topic (`str`, optional): what the texts are, in the prompts; default "movie review", or
        "natural language inference pair" for NLI.
    max_new_tokens (`int`, default 4), judge_generate_kwargs (`dict`, optional), seed (`int`, default 0): the
        judge's reply length; decoding is greedy unless e.g. `{"do_sample": True, "top_k": 50,
        "temperature": 0.7}` (CEval's sampling), then repeatable under `seed`.
    batch_size (`int`, default 32), device (`str`, optional), progress (`bool`, default False).
    return_per_example (`bool`, default False): also return `per_example`, a dict of per-example lists.
Returns:
    num_examples, num_failed, num_flipped (`int`).
    flip_rate (`float`, 0-1, higher = more label changes).
    probability_change, probability_change_flipped (`float`, -1..1, higher = closer to the contrast class);
        contrast (`str`): the contrast mode used.
    token_distance, token_distance_flipped (`float`, >= 0 tokens, lower = more minimal) and their
        `_normalized` versions (divided by the original's token count).
    diversity, diversity_normalized (`float`, higher = more diverse), num_diversity_examples,
        num_failed_counterfactuals: with several counterfactuals per original.
    perplexity, perplexity_flipped (`float`, lower = more natural): with `lm`.
    grammar, cohesiveness, likability, fluency, text_quality (`float`, 1-5, higher = better),
        num_unparsed_judgements (`int`): with `judge`.
    per_example (`dict` of lists): with `return_per_example`.
Examples:
    >>> ceval_metric = evaluate.load("textxai/ceval")  # doctest: +SKIP
    >>> import textxai
    >>> ceval_metric = textxai.load("ceval")
    >>> results = ceval_metric.compute(
    ...     references=["The film was dull and far too long."],
    ...     predictions=["The film was gripping and never too long."],
    ...     original_probs=[[0.95, 0.05]], counterfactual_probs=[[0.10, 0.90]])
    >>> results["flip_rate"], round(results["probability_change"], 2), results["token_distance"]
    (1.0, 0.85, 2.0)
    >>> results = ceval_metric.compute(
    ...     references=["a dull film", "it was awful"],
    ...     predictions=[["a fine film", "a great film"], ["it was great", "-1"]],
    ...     model="textxai/demo-sentiment")
    >>> results["num_failed_counterfactuals"], results["diversity"], results["num_diversity_examples"]
    (1, 1.0, 1)
"""


def _fill(value, name):
    if ceval.is_failed(value):
        return "-1"
    if not isinstance(value, str):
        raise TypeError(f"{name}={value!r:.80} ({type(value).__name__}): expected a string (or None / '-1' for a failed generation)")
    return value


def _normalize_predictions(predictions, name="predictions"):
    """Every example as a list of counterfactuals (Arrow keeps one column type across batches)."""
    if isinstance(predictions, str) or not hasattr(predictions, "__len__"):
        raise TypeError(f"{name}={predictions!r:.80} ({type(predictions).__name__}): expected a list of counterfactual texts")
    out = []
    for i, p in enumerate(predictions):
        if isinstance(p, (list, tuple, np.ndarray)):
            if len(p) == 0:
                raise ValueError(f"{name}[{i}]=[]: expected at least one counterfactual (use '-1' for a failed generation)")
            out.append([_fill(q, f"{name}[{i}][{j}]") for j, q in enumerate(p)])
        else:
            out.append([_fill(p, f"{name}[{i}]")])
    return out


def _check_references(references, name="references"):
    if isinstance(references, str) or not hasattr(references, "__len__"):
        raise TypeError(f"{name}={references!r:.80} ({type(references).__name__}): expected a list of original texts")
    references = list(references)
    for i, r in enumerate(references):
        if not isinstance(r, str):
            raise TypeError(f"{name}[{i}]={r!r:.80} ({type(r).__name__}): expected the original text as a string")
    return references


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ceval(evaluate.Metric):
    """CEval counterfactual metrics (Nguyen, Schlötterer & Seifert, INLG 2024)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
                datasets.Features({"predictions": datasets.Sequence(datasets.Value("string")),
                                   "references": datasets.Value("string")}),
            ],
            reference_urls=["https://aclanthology.org/2024.inlg-main.6",
                            "https://github.com/aix-group/CEval-Counterfactual-Generation-Benchmark"],
        )

    # Arrow needs one type per column across batches: every example is stored as a list of counterfactuals (a lone
    # string in a list column would be split into characters) and a failed generation None as "-1".
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of counterfactuals (predictions) and originals (references) to the module."""
        if predictions is not None:
            predictions = _normalize_predictions(predictions)
        if references is not None:
            references = _check_references(references)
        if references is not None and len(references) == 0:
            raise ValueError("references=[]: expected at least one original text")
        if predictions is not None and references is not None and len(predictions) != len(references):
            raise ValueError(f"predictions has {len(predictions)} items but references has {len(references)}: "
                             f"expected the same length")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one counterfactual (or list of counterfactuals) and its original to the module."""
        if prediction is not None or reference is not None:
            prediction = _normalize_predictions([prediction], "prediction")[0]
            reference = _check_references([reference], "reference")[0]
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(self, predictions, references, prediction_pairs=None, reference_pairs=None, model=None, tokenizer=None,
                 lm=None, judge=None, judge_topic=None, targets=None, contrast=None, original_probs=None,
                 counterfactual_probs=None, original_labels=None, counterfactual_labels=None, batch_size=32,
                 device=None, max_new_tokens=4, judge_generate_kwargs=None, seed=0, return_per_example=False,
                 progress=False):
        for name, flag in (("return_per_example", return_per_example), ("progress", progress)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name}={flag!r}: expected True or False")
        return ceval.score_counterfactuals(
            references, predictions, reference_pairs, prediction_pairs, model=model, tokenizer=tokenizer, lm=lm,
            judge=judge, judge_topic=judge_topic, targets=targets, contrast=contrast, original_probs=original_probs,
            counterfactual_probs=counterfactual_probs, original_labels=original_labels,
            counterfactual_labels=counterfactual_labels, batch_size=batch_size, device=device,
            max_new_tokens=max_new_tokens, judge_generate_kwargs=judge_generate_kwargs, seed=seed,
            return_per_example=bool(return_per_example), progress=bool(progress))
