"""Two editors compared on their per-chain inc@n: paired (same originals) or Welch (App. E)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from textxai.inconsistency.checks import DEFAULT_N, _check_word_tokenizer, check_chains, check_n
from textxai.inconsistency.metrics import _all_distances, _inc_from_distances
from textxai.inconsistency.scoring import compute
from textxai.stats import IntervalOptions
from textxai.validation import short_repr


def _same_originals(texts_a: list[list[str]], texts_b: list[list[str]]) -> bool:
    return len(texts_a) == len(texts_b) and all(a[0] == b[0] for a, b in zip(texts_a, texts_b))


def _welch(va: np.ndarray, vb: np.ndarray, k: int) -> tuple[float, float]:
    from scipy import stats as scipy_stats

    if len(va) < 2 or len(vb) < 2:
        warnings.warn(f"n={k}: chains_a has {len(va)} and chains_b has {len(vb)} chains reaching step {k}; a t-test "
                      "needs at least 2 on each side, p-value is NaN", stacklevel=3)
        return float("nan"), float("nan")
    if va.var() == 0 and vb.var() == 0:
        if va.mean() == vb.mean():
            return float("nan"), float("nan")
        return math.copysign(math.inf, va.mean() - vb.mean()), 0.0
    res = scipy_stats.ttest_ind(va, vb, equal_var=False)
    return float(res.statistic), float(res.pvalue)


def compare_editors(chains_a, chains_b, n_values=DEFAULT_N, word_tokenizer: str = "spacy", paired="auto",
                    confidence_level: float = IntervalOptions.confidence_level,
                    n_resamples: int = IntervalOptions.n_resamples, seed: int = IntervalOptions.seed) -> dict[int, dict]:
    """Compare the per-chain inc@n of two editors, for every n.

    Paired (``paired="auto"`` when chain ``i`` of both editors starts from the same original, or ``True``):
    :func:`textxai.stats.compare` over the chains that reach step ``n`` on both sides -- a paired bootstrap
    interval of mean(a) - mean(b) and the Wilcoxon signed-rank test of the per-chain differences. The same
    originals edited by two editors are paired data; a two-sample test would throw that pairing away.
    Unpaired (different originals, or ``paired=False``): Welch's t-test between the chains reaching step
    ``n`` on each side (the paper's App. E); the p-value is NaN (with a warning) under 2 chains a side.

    Returns ``{n: {"test", "statistic", "p_value", "mean_a", "mean_b", "difference", "ci_low", "ci_high",
    "chains_a", "chains_b"}}`` (``ci_low`` / ``ci_high`` NaN for Welch).

    >>> a = [["a", "b", "b c d e"], ["x", "b", "c d e f"], ["y", "b", "b c d"], ["z", "b c", "d e"]]
    >>> b = [["a", "c", "d"], ["x", "c", "d"], ["y", "c", "d"], ["z", "c", "d"]]
    >>> r = compare_editors(a, b, [1], n_resamples=999)[1]
    >>> r["test"], r["mean_a"], r["mean_b"], r["chains_a"], round(r["p_value"], 3)
    ('wilcoxon signed-rank', 1.5, 0.0, 4, 0.25)
    >>> compare_editors(a, b[:3], [1])[1]["test"]      # different originals: Welch (App. E)
    'welch t'
    """
    ns = check_n(n_values, "n_values")
    _check_word_tokenizer(word_tokenizer)
    ta, tb = check_chains(chains_a, "chains_a"), check_chains(chains_b, "chains_b")
    if paired not in ("auto", True, False):
        raise ValueError(f"paired={short_repr(paired)}: expected 'auto', True or False")
    same = _same_originals(ta, tb)
    if paired is True and not same:
        raise ValueError("paired=True: chains_a and chains_b must start from the same originals, in the same order "
                         f"({len(ta)} and {len(tb)} chains given)")
    if paired == "auto":
        paired = same
    if paired:
        from textxai import stats

        results = [compute(list(c), n=ns, word_tokenizer=word_tokenizer, pooling="per_chain", return_per_example=True)
                   for c in (chains_a, chains_b)]  # as given: a chain the editor ended at step 1 stays valid
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = stats.compare("inconsistency", *results, confidence_level=confidence_level,
                                  n_resamples=n_resamples, seed=seed, keys=[f"inc@{k}" for k in ns])
        return {k: {"test": table[f"inc@{k}"]["test"], "statistic": table[f"inc@{k}"]["statistic"],
                    "p_value": table[f"inc@{k}"]["p_value"], "mean_a": table[f"inc@{k}"]["a"],
                    "mean_b": table[f"inc@{k}"]["b"], "difference": table[f"inc@{k}"]["difference"],
                    "ci_low": table[f"inc@{k}"]["ci_low"], "ci_high": table[f"inc@{k}"]["ci_high"],
                    "chains_a": table[f"inc@{k}"]["n"], "chains_b": table[f"inc@{k}"]["n"]} for k in ns}
    da, db = _all_distances(ta, word_tokenizer), _all_distances(tb, word_tokenizer)
    out = {}
    for k in ns:
        va = np.array([_inc_from_distances(d)[:k].mean() for d in da if len(d) > k], dtype=float)
        vb = np.array([_inc_from_distances(d)[:k].mean() for d in db if len(d) > k], dtype=float)
        stat, p = _welch(va, vb, k)
        mean_a = float(va.mean()) if len(va) else float("nan")
        mean_b = float(vb.mean()) if len(vb) else float("nan")
        out[k] = {"test": "welch t", "statistic": stat, "p_value": p, "mean_a": mean_a, "mean_b": mean_b,
                  "difference": mean_a - mean_b, "ci_low": float("nan"), "ci_high": float("nan"),
                  "chains_a": int(len(va)), "chains_b": int(len(vb))}
    return out
