"""CEval: counterfactual and text-quality metrics for generated counterfactual texts.

Nguyen, Schlötterer & Seifert (2024), "CEval: A Benchmark for Evaluating Counterfactual Text Generation",
INLG 2024 (https://aclanthology.org/2024.inlg-main.6). The definitions are those of CEval's own code,
checked against the results it stored (../shared/reference/ceval):

- flip rate: share of examples whose predicted class changes, ``argmax f(x') != argmax f(x)``;
- probability change: ``p(c' | x') - p(c' | x)`` with ``c'`` the contrast class (``contrast=``):
  ``"target"`` (a given target label), ``"argmin"`` (least likely class of the original; CEval's IMDb code)
  or ``"counterfactual_argmax"`` (predicted class of the counterfactual; CEval's SNLI code);
- token distance: Levenshtein distance over spaCy blank-English tokens, whitespace tokens kept, not
  normalised (what CEval stores); ``normalized=True`` divides by the original's token count;
- diversity: mean pairwise token distance between the counterfactuals of one original;
- perplexity of the counterfactual under a causal LM (``textxai.lm``), "premise hypothesis" for NLI;
- text quality: four 1-5 questions (grammar, cohesiveness, likability, fluency) asked to an
  instruction-following LM with CEval's prompt wording.

A failed generation (``None``, NaN, ``""`` or ``"-1"``) is kept in the counts: it is scored as the
unchanged original for the flip rate (not flipped) and the probability change (0), and left out of
distance, diversity, perplexity and text quality.

>>> token_distance("the film was good", "the film was bad")
1
>>> token_distance("a  b", "a b")   # the extra space is a token of its own
1
>>> diversity([["a good film", "a great film", "-1"]])[0]
1.0
>>> flip_rate([0, 1, 1], [1, 1, 0])
0.6666666666666666
>>> probability_change([[0.9, 0.1]], [[0.2, 0.8]]).round(2).tolist()   # contrast class 1 = argmin of the original
[0.7]

The package is split at its seams: ``distances`` (token distance, diversity, method matrix),
``probabilities`` (flips, contrast classes, probability change), ``judge`` (LLM text quality),
``score`` (everything at once: :func:`compute`, staged; ``score_counterfactuals`` is its deprecated old
name), ``plots`` (the paper's figures), ``baselines`` (a deletion generator), ``analysis`` (:func:`analyse`,
the one analysis every surface shows, and :func:`generate`). Every public name stays importable from
``textxai.ceval``.
"""
from __future__ import annotations

from textxai.ceval._checks import FAILED_MARKERS, _check_generation, _check_list, _check_originals, _check_probs, is_failed
from textxai.ceval.baselines import _delete_words, deletion_candidates, pick_counterfactuals
from textxai.ceval.distances import _tokens, diversity, method_distance_matrix, token_distance, token_distances
from textxai.ceval.judge import (JUDGE_METHODS, QUALITY_ASPECTS, TOPICS, check_judge, judge_quality, parse_score,
                                 probability_scores, quality_prompt)
from textxai.ceval.plots import plot_method_distances, plot_probability_histogram
from textxai.ceval.probabilities import CONTRASTS, contrast_classes, flip_rate, flips, probability_change
from textxai.ceval.score import ClassifierOutputs, QualityOptions, RunOptions, compute
from textxai.ceval.analysis import analyse, generate
from textxai.deprecation import renamed

__getattr__ = renamed(__name__, {"score_counterfactuals": "compute"})  # the former name warns (CHANGELOG.md)

__all__ = [
    "compute", "analyse", "generate",
    "CONTRASTS", "FAILED_MARKERS", "JUDGE_METHODS", "QUALITY_ASPECTS", "TOPICS", "ClassifierOutputs", "QualityOptions", "RunOptions",
    "check_judge", "contrast_classes", "deletion_candidates", "diversity", "flip_rate", "flips", "is_failed", "judge_quality",
    "method_distance_matrix", "parse_score", "pick_counterfactuals", "plot_method_distances",
    "plot_probability_histogram", "probability_change", "probability_scores", "quality_prompt", "token_distance",
    "token_distances",
]
