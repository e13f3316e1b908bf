"""Example difficulty from the Fisher information metric (FIM) of a classifier's input.

Paper: "Geometry matters: exploring language examples at the decision boundary" (Datta et al.).
For an input ``x`` (flattened to ``D`` numbers) and class probabilities ``p = softmax(f(x))``, let
``J = d log p / d x`` (``[C, D]``). The FIM is ``G = J^T diag(p) J`` (``[D, D]``, Algorithm 1) and the
difficulty of the example is ``lambda_max(G)``: how much the predicted distribution can change (in KL,
to second order) under a small move of the input. High values lie near the decision boundary.

``G`` is never formed (:mod:`~textxai.fim.eigen` says how): one forward and ``C - 1`` backward passes per batch.
In the text functions ``x`` is the output of the model's input-embedding layer at every non-padding position.

>>> summarize([0.5, 2.0, 8.0])["median"]
2.0

The package, split at its seams: :mod:`~textxai.fim.eigen` (:func:`fisher_eigen`, :func:`tensor_difficulty`),
:mod:`~textxai.fim.text` (:func:`difficulty` of texts, word sensitivity, :func:`summarize`),
:mod:`~textxai.fim.perturb` (moves along the eigenvector, min flip strength, random substitutions),
:mod:`~textxai.fim.experiments` (correlation, shift, the perturbed test set), :mod:`~textxai.fim.staged`
(the staged :func:`compute`, :class:`FIMOptions`), :mod:`~textxai.fim.analysis` (:func:`analyse`: the one
analysis every surface shows), :mod:`~textxai.fim.plots` (its figures), :mod:`~textxai.fim.runner` (``textxai
run fim_difficulty``).
"""
from textxai.fim.analysis import ShowOptions, analyse
from textxai.fim.eigen import FisherEigen, fisher_eigen, tensor_difficulty
from textxai.fim.experiments import difficulty_correlation, difficulty_shift, perturbed_test_set
from textxai.fim.perturb import min_flip_strength, perturb_along_eigenvector, random_substitution_flip_rate
from textxai.fim.staged import FIMOptions, compute
from textxai.fim.text import SUMMARY_QUANTILES, difficulty, summarize, top_words

__all__ = [
    "FIMOptions",
    "FisherEigen",
    "SUMMARY_QUANTILES",
    "ShowOptions",
    "analyse",
    "compute",
    "difficulty",
    "difficulty_correlation",
    "difficulty_shift",
    "fisher_eigen",
    "min_flip_strength",
    "perturb_along_eigenvector",
    "perturbed_test_set",
    "random_substitution_flip_rate",
    "summarize",
    "tensor_difficulty",
    "top_words",
]
