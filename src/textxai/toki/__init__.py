"""TOKI: a trustworthiness oracle through keyword identification, and the TOKI-guided attack.

Paper: "Trustworthiness oracle for text classifiers" (TOKI). A correct prediction is *trustworthy* when the
words that drove it (its explanation's top-k positive words) are mainly words related to the predicted
class. Relatedness is judged against *keywords*: clusters of decision-contributing words, gathered from
the explanations of correctly predicted training texts, whose mean embedding is close to the class name.

Pipeline 1 (once per model and training set, :func:`build_keyword_index`):

1. explain the correctly predicted training texts, keep the top-k words with positive scores;
2. word pool ``W_c``: each word's mean score over the explanations of class ``c`` (eq. 2);
3. cluster each pool's word embeddings hierarchically (cosine distance, **average linkage**, cut at
   ``theta_dist``; eq. 3);
4. keywords ``K_c``: the clusters whose mean embedding has cosine similarity >= ``theta_relate`` with the
   embedding of the class name; ``F_c`` = the other pool words (eq. 4).

Pipeline 2 (:func:`assess`): for each top-k word ``w`` of a correct prediction of class ``c``,
``r(w, c) = 1`` when ``w``'s most similar word in ``W_c`` is a keyword (eq. 5; ties go to the keyword);
``IS_rel = sum s_i r(w_i, c)``, ``IS_unr = sum s_i (1 - r(w_i, c))``; trustworthy iff ``IS_rel >= IS_unr``
(eq. 6). Incorrect predictions are not assessed (label ``None``).

Several embedders vote (plurality). **Tie rule**: when as many embedders say yes as no, the sum of their
signed margins decides (keyword selection: ``sim(cluster mean, class) - theta_relate`` of each embedder;
eq. 5: ``max sim to K_c - max sim to F_c``; TOKI(-K.I): ``sim(w, class) - theta_relate``); a zero sum counts
as yes, like the ``>=`` of eq. 4-6.

>>> import numpy as np
>>> scores = np.array([0.5, 0.3, 0.2]); related = np.array([1, 0, 0])
>>> importance_sums(scores, related)
(0.5, 0.5)
>>> round(balance_threshold(np.array([0.9, 0.8, 0.7]), np.array([0.1, 0.2, 0.75])), 6)   # 3 pairs called related
0.725
"""
from __future__ import annotations
# The package is split at the pipeline's seams; every public name stays importable as ``textxai.toki.<name>``:
#   core   - checks, cosine geometry, clusters (eq. 3-4), embedder votes, eq. 5-6 (pure numpy / scipy)
#   theta  - θ_relate from synonym vs random pairs (§3.1)
#   index  - pipeline 1: explanations, pools, keywords, the KeywordIndex
#   assess - pipeline 2: relatedness, trust labels, baselines, evaluation
#   trust  - the one analysis, analyse (every surface's entry point), in stages (validate first); toki_trust
#   analysis - what an analysis shows: results, the module's summary, warnings, figures, report (written once)
#   attack - the TOKI-guided attack (§4) and the attack as an editor
#   demo   - the demo models' keyword indexes
from textxai.toki.core import (LINKAGES, can_be_keyword, check_unit, cluster_words, cosine_matrix, importance_sums,
                               keyword_margins, normalize_rows, plurality, relatedness_margins, stop_words, vote,
                               with_keywords)
from textxai.toki.theta import (KNOWN_THETA, _clean_pairs, _pair_sims, _synonyms_digest, balance_threshold,
                                estimate_theta_relate, load_synonym_pairs, related_pair_scores, resolve_theta_relate)
from textxai.toki.index import (EXPLAINERS, INDEX_FORMAT, ExplainOptions, IndexOptions, KeywordIndex, build_keyword_index,
                                cached_keyword_index, check_index, explain, explain_texts, identify_keywords,
                                model_fingerprint, resolve_class_names, top_words, word_pools)
from textxai.toki.assess import (AssessOptions, assess, check_human_trust, human_trust_label, evaluate_against_human, naive_labels,
                                 relate_to_class_name, relate_words, trust_metrics, trust_of_explanation)
from textxai.toki.attack import AttackOptions, AttackResult, substitution_candidates, toki_attack, toki_editor
from textxai.toki.analysis import (OutputOptions, rate_figure, report, shape, summary_of, trust_columns, warnings_of,
                                   with_intervals)
from textxai.toki.trust import OPTION_GROUPS, TrainingData, analyse, label_ids, toki_trust
from textxai.toki.demo import demo_attack_options, demo_index
from textxai.deprecation import renamed

# the former name warns (CHANGELOG.md); textxai.toki.analyse gives everything (results, warnings, figures, report)
__getattr__ = renamed(__name__, {"compute": "toki_trust"})


__all__ = [
    "analyse", "OPTION_GROUPS", "OutputOptions", "rate_figure", "report", "shape", "summary_of", "trust_columns",
    "warnings_of", "with_intervals", "demo_attack_options", "demo_index", "human_trust_label", "label_ids",
    "LINKAGES", "can_be_keyword", "stop_words", "with_keywords", "check_unit", "cluster_words", "cosine_matrix", "importance_sums", "keyword_margins", "normalize_rows",
    "plurality", "relatedness_margins", "vote",
    "KNOWN_THETA", "balance_threshold", "estimate_theta_relate", "load_synonym_pairs", "related_pair_scores",
    "resolve_theta_relate",
    "EXPLAINERS", "INDEX_FORMAT", "explain_texts", "AssessOptions", "TrainingData", "KeywordIndex", "build_keyword_index", "cached_keyword_index", "check_index", "explain",
    "identify_keywords", "model_fingerprint", "resolve_class_names", "top_words", "word_pools",
    "assess", "check_human_trust", "evaluate_against_human", "ExplainOptions", "IndexOptions", "naive_labels", "relate_to_class_name", "relate_words", "toki_trust",
    "trust_metrics", "trust_of_explanation",
    "AttackOptions", "AttackResult", "substitution_candidates", "toki_attack", "toki_editor",
]
