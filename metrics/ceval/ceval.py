"""ceval: CEval's counterfactual and text-quality metrics for generated counterfactual texts."""
import datasets
import evaluate

from textxai import ceval
from textxai.module_base import TextxaiMetric

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
        original. Edit either side; copy the side you leave unchanged.
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
    lm (optional): causal LM for perplexity (GPT-2 in the paper): id, folder, .gguf file, `(model, tokenizer)`,
        pipeline, or the packaged "textxai/smollm2-135m-instruct".
    bos (default "auto"): the start token of perplexity: "auto" (the LM's BOS token, CEval's rule), None (none: the
        first token is not scored), a token or a token id; the result's `perplexity_start_token` names it.
    judge (optional): instruction-following causal LM (id, folder, `(model, tokenizer)`, pipeline), or a callable
        `list[str] prompts -> list[str] replies`, for the text-quality questions.
    judge_method (`str`, default "auto"): how the judge's score is read: "probabilities" (an LM's next-token
        distribution over "1".."5": the expected score, every text scored; what "auto" picks for an LM),
        "generate" (an LM decodes a reply, greedily unless `judge_generate_kwargs` says otherwise, which is parsed:
        CEval's reading) or "parsed_replies" (a callable's replies, parsed; what "auto" picks for a callable).
    judge_tokenizer (optional): the judge's tokenizer when `judge` is a loaded model.
    judge_topic (`str`, optional): what the texts are, in the prompts; default "movie review", or
        "natural language inference pair" for NLI.
    max_new_tokens (`int`, default 32), judge_generate_kwargs (`dict`, optional), seed (`int`, default 0): the
        judge's reply length; decoding is greedy unless e.g. `{"do_sample": True, "top_k": 50,
        "temperature": 0.7}` (CEval's sampling), then repeatable under `seed`. A reply counts only when it
        holds one score 1-5; a reply opening a numbered list ("1. The movie review is ...") is no score 1: it
        is unparsed, counted in `num_unparsed_judgements` and named in `judge_warning`.
    batch_size (`int`, default 32), device (`str`, optional), progress (`bool`, default False).
    return_per_example (`bool`, default False): also return `per_example`, a dict of per-example lists.
    outputs, quality, run (optional): the same options grouped as `textxai.ceval.ClassifierOutputs` (the
        precomputed outputs), `QualityOptions` (lm, judge ... seed) and `RunOptions` (tokenizer, batch_size,
        device, progress, return_per_example); a plain keyword overrides the same field of a group.
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ceval(TextxaiMetric):
    """CEval counterfactual metrics (Nguyen, Schlötterer & Seifert, INLG 2024)."""

    def _info(self):
        text, texts = datasets.Value("string"), datasets.List(datasets.Value("string"))
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2024.inlg-main.6",
            license="Apache-2.0",
            # one counterfactual or several per original: stored as a list (see textxai.module_base)
            features=[datasets.Features({"predictions": text, "references": text, "prediction_pairs": text,
                                         "reference_pairs": text}),
                      datasets.Features({"predictions": texts, "references": text, "prediction_pairs": texts,
                                         "reference_pairs": text})],
            reference_urls=["https://aclanthology.org/2024.inlg-main.6",
                            "https://github.com/aix-group/CEval-Counterfactual-Generation-Benchmark"],
        )

    def _compute(self, predictions, references, prediction_pairs=None, reference_pairs=None, model=None, targets=None,
                 contrast=None, outputs: ceval.ClassifierOutputs = None, quality: ceval.QualityOptions = None,
                 run: ceval.RunOptions = None, **options):
        return ceval.analyse(references, predictions, model, reference_pairs, prediction_pairs, intervals=None,
                             figures=False, targets=targets, contrast=contrast, outputs=outputs, quality=quality,
                             run=run, **options).summary
