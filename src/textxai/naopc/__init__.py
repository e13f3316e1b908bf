"""AOPC comprehensiveness / sufficiency and Normalized AOPC (Edin et al., 2024, arXiv:2408.08137).

The paper: "Normalized AOPC: Fixing Misleading Faithfulness Metrics for Feature Attribution Explainability".
AOPC of an ordering ``r`` of the ``N`` features of an input ``x`` (a feature = a word):

    AOPC(r) = 1/N * sum_{k=1..N} [ p(x) - p(x without r_1..r_k) ]

(first term: one word removed; last term: every word removed). Comprehensiveness removes words by
decreasing attribution, sufficiency by increasing attribution (the authors' definition: the least
important first). Ties are broken by word position (the earlier word first) in both. The lower / upper
AOPC limits are the minimum / maximum of AOPC over all N! orderings, and

    NAOPC = (AOPC - lower) / (upper - lower)      (0 when upper == lower, never clipped).

The model-agnostic core works on a ``score_fn`` mapping a boolean batch of removal masks ``[k, n]``
(True = feature removed) to target probabilities ``[k]``:

- :func:`aopc` / :func:`aopc_curve`: the AOPC of one ordering;
- :func:`aopc_limits` (one input) / :func:`aopc_limits_many` (many inputs, model calls batched across them):
  ``method="exact"`` is a dynamic programme over removed SETS: AOPC depends only on the chain of removed
  sets, so ``best(S) = g(S) + max_{j in S} best(S - {j})`` with ``g(S) = p(x) - p(x without S)`` —
  2^N model evaluations and O(2^N N) work instead of N! orderings; it handles all-negative cases (the
  authors' enumeration starts its running maximum at 0 and over-estimates those upper limits).
  ``method="beam-paper"`` is the paper's Algorithm 1 with both limits in one pass, every candidate scored
  incrementally (parent's partial sum + one new term), beam states deduplicated by removed set (only the
  best partial sum per set survives), model calls memoised per set and batched across beams and inputs;
  ``method="beam"`` (the default) is the same beam made lazy (``limits.Lazy``: few children per state
  where the estimates are confirmed or saturated), then polished by a local search over single-feature
  moves; its limits are the best chains through every set it evaluated.
  Beam limits are AOPCs of real orderings, so ``lower_beam >= lower_exact`` and ``upper_beam <= upper_exact``.
- :func:`rank_agreement`: Kendall tau between two rankings (the paper's Table 4).

:func:`compute` applies all of this to texts, word attributions and a
:class:`~textxai.classifier.TextClassifier`; :func:`analyse` (``textxai.naopc.analysis``) is the one analysis
every surface shows (module, ``textxai run naopc``, the demo, the Space): numbers, warnings, figures, report.

The paper's Table 1 model f1(x) = 0.2 x1 + 0.3 x2 + 0.1 x3 + 0.4 x4 at x = (1, 1, 1, 1):

>>> import numpy as np
>>> w = np.array([0.2, 0.3, 0.1, 0.4])
>>> f1 = lambda masks: (~masks) @ w
>>> aopc(f1, comprehensiveness_order(w)), aopc(f1, sufficiency_order(w))
(0.75, 0.5)
>>> lim = aopc_limits(f1, 4)
>>> round(lim.lower, 6), round(lim.upper, 6), lim.upper_order
(0.5, 0.75, [3, 1, 0, 2])
>>> round(lim.normalize(0.6), 6)
0.4
"""
from __future__ import annotations

from textxai.naopc.core import (NARROW_LIMITS, AOPCLimits, aopc, aopc_curve, comprehensiveness_order, narrow_limit_texts,
                                normalize, rank_agreement, sufficiency_order)
from textxai.naopc.limits import DEFAULT_MAX_EXACT_WORDS, LIMIT_METHODS, aopc_limits, aopc_limits_many
from textxai.naopc.texts import (EXACT_WORDS_BY_DEVICE, NORMALIZATIONS, PERTURBATIONS, NAOPCOptions,
                                 attribution_sets, compare_attributions, compute, default_max_exact_words,
                                 explain_choice, limit_method)
from textxai.naopc.analysis import analyse

from textxai.deprecation import renamed

__getattr__ = renamed(__name__, {"compute_naopc": "compute"})  # the former name warns (CHANGELOG.md)

__all__ = [
    "compute",
    "analyse",
    "attribution_sets",
    "AOPCLimits",
    "aopc",
    "aopc_curve",
    "aopc_limits",
    "aopc_limits_many",
    "comprehensiveness_order",
    "sufficiency_order",
    "normalize",
    "narrow_limit_texts",
    "NARROW_LIMITS",
    "rank_agreement",
    "compare_attributions",
    "NORMALIZATIONS",
    "PERTURBATIONS",
    "LIMIT_METHODS",
    "NAOPCOptions",
    "EXACT_WORDS_BY_DEVICE",
    "default_max_exact_words",
    "limit_method",
    "explain_choice",
]

