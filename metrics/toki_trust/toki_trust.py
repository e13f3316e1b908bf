"""toki_trust: is each correct prediction made for the right reasons? The TOKI trustworthiness oracle."""
import datasets
import evaluate

from textxai import toki
from textxai.module_base import TextxaiMetric

_CITATION = """\
@misc{nguyentung2024toki,
  title  = {Automated Trustworthiness Oracle Generation for Machine Learning Text Classifiers},
  author = {Nguyen Tung, Lam and Cho, Steven and Du, Xiaoning and Neelofar, Neelofar and Terragni, Valerio and
            Ruberto, Stefano and Aleti, Aldeida},
  year   = {2024},
  note   = {Preprint; replication package https://doi.org/10.5281/zenodo.13751580}
}
"""

_DESCRIPTION = """\
TOKI (Trustworthiness Oracle through Keyword Identification) labels each CORRECT prediction of a text
classifier trustworthy or untrustworthy, without human annotation. Pipeline 1 (once per model and training
set) explains the correctly predicted training texts, pools the top-k positive words of each class with
their mean importance, clusters each pool's word embeddings (cosine, average linkage, cut at theta_dist)
and keeps as keywords the clusters whose mean embedding is at least theta_relate similar to the class
name. Pipeline 2 explains a prediction of class c and calls each top-k word related when its most similar
pool word of c is a keyword; the prediction is trustworthy iff the summed importance of related words
(IS_rel) is >= that of unrelated words (IS_unr). Wrong predictions get no label (None). Several word
embedders (the classifier's own input embeddings, MiniLM) vote; a tie is broken by the summed margins.
"""

_KWARGS_DESCRIPTION = """
Args:
    texts (`list` of `str`): texts to assess.
    references (`list` of `int`): their true class indices.
    text_pairs (`list` of `str`, optional): second texts (NLI and other sentence-pair models).
    model: the classifier (Hub id, folder, loaded model with `tokenizer`, pipeline, TextClassifier,
        "textxai/demo-sentiment").
    tokenizer (optional): the tokenizer when `model` is a loaded model.
    keyword_index (optional): a `textxai.toki.KeywordIndex` or a folder written by its `save`; it must
        have been built for this model (checked by a fingerprint of the model name and labels).
    train_texts, train_labels (optional): build the keyword index from these when `keyword_index` is
        not given (`train_text_pairs` for pair models).
    save_index (`str`, optional): folder where the index built from the training texts is saved.
    explainer (`str`, default "lime"): "lime" (5000 samples, as the paper), "omission", "gradient", ...
    explainer_options (`dict`, optional): passed to `textxai.attribution.word_attributions`
        (e.g. {"n_samples": 500}, {"perturbation": "delete"}).
    top_k (`int`, default 10): words kept per explanation.
    theta_dist (`float` in [0, 1], default 0.3): dendrogram cut (cosine distance).
    theta_relate (`float` in [-1, 1] or `dict` embedder -> float, optional): relatedness threshold;
        default: estimated per embedder by balancing precision and recall on synonym vs random pairs.
    theta_conf (`float` in [0, 1], default 0.9): threshold of the Naive (confidence) baseline.
    embedders (optional): names ("classifier", "minilm") or embedder objects; default both.
    class_names (`list` of `str`, optional): names of the classes (default: the model's id2label).
    human_trust (`list` of `bool`/None, optional): human trust labels, one per text; enables the
        evaluation of TOKI, Naive and TOKI(-K.I) (accuracy, precision, sensitivity, F1, specificity, G-mean).
    batch_size (`int`, default 32), seed (`int`, default 0), device (optional), progress (`bool`, default False).
    linkage (`str`, default "average"), resolution (`float`, default 1e-3): the clusters' linkage; the smallest
        top-k importance sum given a verdict (below: label None, reason "undetermined: ...").
    train, explain, index, assess (optional): the same options as groups (`textxai.toki.TrainingData`,
        `ExplainOptions`, `IndexOptions`, `AssessOptions`, whose defaults are the ones above); a flat keyword
        overrides the field of a group given beside it.
Returns:
    trust_labels (`list` of `bool`/None): per text, True = trustworthy, None = wrong prediction.
    is_rel, is_unr (`list` of `float`/None): the summed importance of related / unrelated top words.
    related_words, unrelated_words (`list` of `list` of `str`): the top words of each explanation.
    predictions (`list` of `int`), confidences (`list` of `float`).
    trustworthy_rate (`float` in [0, 1]): share of correct predictions labelled trustworthy (higher = the
        model is more often right for the right reasons); NaN when no prediction is correct.
    n_correct (`int`): correct predictions assessed.
    naive_trustworthy_rate, no_ki_trustworthy_rate (`float`): the same rate for the two baselines.
    keywords (`dict` class name -> `list` of `str`): the keywords, most important first.
    theta_relate (`dict` embedder -> `float`).
    evaluation (`dict`, with `human_trust`): {"toki"|"naive"|"toki_no_ki": {"accuracy", "precision",
        "sensitivity", "f1", "specificity", "g_mean", "n"}}, positive class = trustworthy.
    reasons (`list` of `str`/None), n_undetermined (`int`): why a text has no verdict; how many correct ones.
    warnings (`list` of `str`): what to read the numbers with (undetermined verdicts, few verdicts, a class
        without keywords or with a saturated keyword index); the same sentences `textxai run` and the Space show.
Examples:
    >>> toki_trust = evaluate.load("textxai/toki_trust")  # doctest: +SKIP
    >>> import textxai
    >>> toki_trust = textxai.load("toki_trust")
    >>> train = ["a wonderful , moving film", "a dull and boring film", "great acting , great story",
    ...          "awful plot and terrible acting", "a lovely , charming story", "bad , boring and far too long"]
    >>> results = toki_trust.compute(texts=["a great and moving story", "a boring , awful film"],
    ...     references=[1, 0], model="textxai/demo-sentiment", train_texts=train, train_labels=[1, 0, 1, 0, 1, 0],
    ...     explainer="omission", embedders=["minilm"], theta_relate=0.33)
    >>> len(results["trust_labels"]), 0.0 <= results["trustworthy_rate"] <= 1.0
    (2, True)
"""

@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TokiTrust(TextxaiMetric):
    """TOKI trust labels of correct predictions (texts + references, and text_pairs for NLI)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://doi.org/10.5281/zenodo.13751580",
            license="Apache-2.0",
            features=datasets.Features({"texts": datasets.Value("string"), "references": datasets.Value("int64"),
                                        "text_pairs": datasets.Value("string")}),
            reference_urls=["https://doi.org/10.5281/zenodo.13751580"],
        )

    def _compute(self, texts, references, text_pairs=None, model=None, tokenizer=None, device=None, keyword_index=None,
                 human_trust=None, train: toki.TrainingData = None, explain: toki.ExplainOptions = None,
                 index: toki.IndexOptions = None, assess: toki.AssessOptions = None, **options):
        return toki.analyse(texts, references, text_pairs, model, keyword_index, human_trust, tokenizer=tokenizer,
                            device=device, train=train, explain=explain, index=index, assess=assess, figures=False,
                            **options).summary
