"""Inconsistency of counterfactual editors: feed an editor its own output (Filandrianos et al., 2023).

Paper: "Counterfactuals of Counterfactuals: a back-translation-inspired approach to analyse counterfactual
editors", Findings of ACL 2023 (code: https://github.com/geofila/Counterfactuals-of-Counterfactuals).

A *chain* for one input is ``[x_0, x_1, x_2, ...]``: the original text, the editor's counterfactual of it,
the editor's counterfactual of that, and so on. With ``d`` the word-level Levenshtein distance:

- minimality at step ``i >= 1`` is ``d(x_{i-1}, x_i)``;
- inc at step ``i >= 1`` is ``relu(d(x_i, x_{i+1}) - d(x_{i-1}, x_i))`` (eq. 1): when positive, the editor
  missed a smaller edit that provably exists (the previous text);
- inc@n of one chain is the mean of inc at steps ``1..n`` (eq. 2; it needs ``x_{n+1}``).

A trailing ``None`` or empty string ends a chain (the editor failed); every ``@n`` reports how many chains
contributed.

Modules: ``checks`` (inputs), ``metrics`` (distances, inc, minimality, flip rate), ``scoring`` (the staged
:func:`compute`), ``feedback`` (the editor loop), ``compare`` (two editors), ``plots`` (Fig. 3), ``options``
(the option groups), ``analysis`` (:func:`analyse`, what every surface shows), ``reporting`` (its text),
``demo`` (the ``textxai demo`` section) and ``runner`` (``textxai run inconsistency``).

>>> chain = ["the film was good", "the film was bad", "a film that was good and fun"]
>>> step_distances(chain).tolist()
[1, 5]
>>> step_inconsistency(chain).tolist()
[4]
>>> r = compute([chain, ["nice", "not nice", "nice"]], n=[1])
>>> r["inc@1"], r["inc@1_chains"], r["minimality@1"]
(2.0, 2, 1.0)
"""
from __future__ import annotations

from textxai.inconsistency.analysis import analyse
from textxai.inconsistency.checks import (DEFAULT_N, POOLINGS, SELECTIONS, argument_named, check_chain, check_chains,
                                          check_n, read_chains, unchanged)
from textxai.inconsistency.compare import compare_editors
from textxai.inconsistency.feedback import FeedbackChains, feedback_chains
from textxai.inconsistency.metrics import (chain_inc_at, flip_rate_at, inc_at, minimality_at, step_distances,
                                           step_inconsistency)
from textxai.inconsistency.options import EditorOptions, Presentation, RunOptions, ScoreOptions, editor_options
from textxai.inconsistency.plots import plot_steps
from textxai.inconsistency.reporting import (chains_to_show, comparison_lines, editors_table, explain_step, llm_edits,
                                             most_inconsistent, report)
from textxai.inconsistency.scoring import compute
from textxai.deprecation import renamed

__all__ = [
    "DEFAULT_N",
    "POOLINGS",
    "SELECTIONS",
    "FeedbackChains",
    "unchanged",
    "check_chain",
    "check_chains",
    "check_n",
    "step_distances",
    "step_inconsistency",
    "chain_inc_at",
    "inc_at",
    "minimality_at",
    "flip_rate_at",
    "compute",
    "feedback_chains",
    "compare_editors",
    "plot_steps",
    "analyse",
    "ScoreOptions",
    "EditorOptions",
    "RunOptions",
    "Presentation",
    "editor_options",
    "read_chains",
    "argument_named",
    "most_inconsistent",
    "explain_step",
    "chains_to_show",
    "report",
    "editors_table",
    "llm_edits",
    "comparison_lines",
]

__getattr__ = renamed(__name__, {"inconsistency": "compute"})  # the former name warns (CHANGELOG.md)
