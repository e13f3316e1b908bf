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
  ``method="beam"`` is the paper's Algorithm 1 with both limits in one pass, every candidate scored
  incrementally (parent's partial sum + one new term), beam states deduplicated by removed set (only the
  best partial sum per set survives), model calls memoised per set and batched across beams and inputs.
  Beam limits are AOPCs of real orderings, so ``lower_beam >= lower_exact`` and ``upper_beam <= upper_exact``.
- :func:`rank_agreement`: Kendall tau between two rankings (the paper's Table 4).

:func:`compute_naopc` applies all of this to texts, word attributions and a
:class:`~textxai.classifier.TextClassifier`.

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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from textxai.progress import progress_bar
from textxai.validation import check_choice, check_positive_int, short_repr

__all__ = [
    "AOPCLimits",
    "aopc",
    "aopc_curve",
    "aopc_limits",
    "aopc_limits_many",
    "comprehensiveness_order",
    "sufficiency_order",
    "normalize",
    "rank_agreement",
    "compute_naopc",
    "compare_attributions",
    "NORMALIZATIONS",
    "PERTURBATIONS",
    "LIMIT_METHODS",
]

LIMIT_METHODS = ("exact", "beam")
NORMALIZATIONS = ("auto", "exact", "beam", "none")
PERTURBATIONS = ("mask", "delete")
DEFAULT_MAX_EXACT_WORDS = 16

ScoreFn = Callable[[np.ndarray], np.ndarray]
ScoreManyFn = Callable[[list], list]


# ----------------------------------------------------------------------------------------------- checks
def _check_order(order, n: int | None = None, name: str = "order") -> list[int]:
    try:
        arr = np.asarray(order)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name}={short_repr(order)}: expected a sequence of feature indices") from exc
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name}={short_repr(order)}: expected a 1-d sequence of integer feature indices")
    n = len(arr) if n is None else n
    if len(arr) != n or sorted(arr.tolist()) != list(range(n)):
        raise ValueError(f"{name}={short_repr(order)}: expected a permutation of 0..{n - 1}")
    if n == 0:
        raise ValueError(f"{name}=[]: expected at least one feature")
    return [int(i) for i in arr]


# ---------------------------------------------------------------------------------------------- orders
def comprehensiveness_order(attributions) -> list[int]:
    """Feature indices by decreasing attribution; ties: the earlier feature first.

    >>> comprehensiveness_order([0.1, 0.5, 0.1, -2.0])
    [1, 0, 2, 3]
    """
    a = np.asarray(attributions, dtype=float)
    return [int(i) for i in np.argsort(-a, kind="stable")]


def sufficiency_order(attributions) -> list[int]:
    """Feature indices by increasing attribution (least important removed first); ties: the earlier first.

    >>> sufficiency_order([0.1, 0.5, 0.1, -2.0])
    [3, 0, 2, 1]
    """
    a = np.asarray(attributions, dtype=float)
    return [int(i) for i in np.argsort(a, kind="stable")]


def normalize(score: float, lower: float, upper: float) -> float:
    """NAOPC = (score - lower) / (upper - lower); 0 when upper == lower; not clipped.

    >>> normalize(0.5, 0.25, 0.75), normalize(0.3, 0.3, 0.3), normalize(0.8, 0.25, 0.75)
    (0.5, 0.0, 1.1)
    """
    if upper == lower:
        return 0.0
    return float((score - lower) / (upper - lower))


# ------------------------------------------------------------------------------------------ set memo
def _keys_to_masks(keys: Sequence[int], n: int) -> np.ndarray:
    """Integer bitmasks (bit j = feature j removed) -> bool masks [k, n]."""
    if not keys:
        return np.zeros((0, n), dtype=bool)
    if n <= 62:
        arr = np.asarray(keys, dtype=np.int64)
        return ((arr[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)
    nbytes = (n + 7) // 8
    buf = np.frombuffer(b"".join(int(k).to_bytes(nbytes, "little") for k in keys), dtype=np.uint8)
    bits = np.unpackbits(buf.reshape(len(keys), nbytes), axis=1, bitorder="little")
    return bits[:, :n].astype(bool)


def _order_to_keys(order: Sequence[int]) -> list[int]:
    """Prefix sets of an ordering as bitmasks: [{r1}, {r1, r2}, ..., all]."""
    keys, key = [], 0
    for j in order:
        key |= 1 << int(j)
        keys.append(key)
    return keys


class _Memo:
    """Target probability per removed set of one input; counts distinct sets evaluated."""

    __slots__ = ("n", "values")

    def __init__(self, n: int):
        self.n = n
        self.values: dict[int, float] = {}

    @property
    def p0(self) -> float:
        return self.values[0]

    def drops(self, order: Sequence[int]) -> np.ndarray:
        p0 = self.values[0]
        return np.array([p0 - self.values[k] for k in _order_to_keys(order)], dtype=float)


def _evaluate(memos: list[_Memo], requests: list[Sequence[int]], score_many: ScoreManyFn) -> int:
    """Evaluate every requested set not yet in its memo, in ONE call of ``score_many`` across inputs."""
    missing = []
    for memo, req in zip(memos, requests):
        seen = memo.values
        todo = list(dict.fromkeys(k for k in req if k not in seen))
        missing.append(todo)
    total = sum(len(m) for m in missing)
    if total == 0:
        return 0
    masks = [_keys_to_masks(todo, memo.n) for memo, todo in zip(memos, missing)]
    outs = score_many(masks)
    if len(outs) != len(masks):
        raise ValueError(f"score_fn returned {len(outs)} arrays for {len(masks)} inputs: expected one per input")
    for i, (memo, todo, out) in enumerate(zip(memos, missing, outs)):
        out = np.asarray(out, dtype=float).reshape(-1) if len(todo) else np.zeros(0)
        if out.shape != (len(todo),):
            raise ValueError(
                f"score_fn returned shape {np.shape(out)} for input {i} with {len(todo)} masks: "
                f"expected ({len(todo)},), one probability per mask"
            )
        if not np.all(np.isfinite(out)):
            raise ValueError(f"score_fn returned non-finite values for input {i}: expected finite probabilities")
        memo.values.update(zip(todo, out.tolist()))
    return total


def _single(score_fn: ScoreFn) -> ScoreManyFn:
    def score_many(masks_list):
        return [score_fn(m) if len(m) else np.zeros(0) for m in masks_list]

    return score_many


# ------------------------------------------------------------------------------------------------ AOPC
def aopc_curve(score_fn: ScoreFn, order: Sequence[int]) -> np.ndarray:
    """The N perturbation-curve terms ``p(x) - p(x without r_1..r_k)``, k = 1..N (one model call).

    >>> f = lambda masks: 1.0 - masks.mean(axis=1)
    >>> aopc_curve(f, [2, 0, 1]).round(3).tolist()
    [0.333, 0.667, 1.0]
    """
    order = _check_order(order)
    keys = [0] + _order_to_keys(order)
    probs = np.asarray(score_fn(_keys_to_masks(keys, len(order))), dtype=float).reshape(-1)
    if probs.shape != (len(keys),):
        raise ValueError(f"score_fn returned shape {probs.shape} for {len(keys)} masks: expected ({len(keys)},)")
    return probs[0] - probs[1:]


def aopc(score_fn: ScoreFn, order: Sequence[int]) -> float:
    """AOPC of removing features in ``order``: the mean of :func:`aopc_curve`.

    >>> f = lambda masks: 1.0 - masks.mean(axis=1)
    >>> round(aopc(f, [2, 0, 1]), 6)
    0.666667
    """
    return float(np.mean(aopc_curve(score_fn, order)))


@dataclass
class AOPCLimits:
    """Lower and upper AOPC limits of one input, the orderings reaching them and their curves."""

    lower: float
    upper: float
    lower_order: list[int]
    upper_order: list[int]
    lower_curve: np.ndarray = field(repr=False)
    upper_curve: np.ndarray = field(repr=False)
    method: str = "exact"
    n_evaluations: int = 0

    def normalize(self, score: float) -> float:
        return normalize(score, self.lower, self.upper)


# ------------------------------------------------------------------------------------------ exact DP
def _popcount_layers(n: int) -> list[np.ndarray]:
    keys = np.arange(1 << n, dtype=np.int64)
    pop = np.zeros(1 << n, dtype=np.int64)
    for j in range(n):
        pop += (keys >> j) & 1
    order = np.argsort(pop, kind="stable")
    bounds = np.searchsorted(pop[order], np.arange(n + 2))
    return [order[bounds[k] : bounds[k + 1]] for k in range(n + 1)]


def _exact_dp(g: np.ndarray, n: int):
    """Max and min over orderings of sum_k g(prefix set k), by DP over sets. ``g`` indexed by bitmask.

    Returns (upper_sum, upper_order, lower_sum, lower_order).
    """
    size = 1 << n
    hi = np.empty(size)
    lo = np.empty(size)
    hi_arg = np.zeros(size, dtype=np.int16)
    lo_arg = np.zeros(size, dtype=np.int16)
    hi[0] = lo[0] = 0.0
    for layer in _popcount_layers(n)[1:]:
        best_hi = np.full(len(layer), -np.inf)
        best_lo = np.full(len(layer), np.inf)
        arg_hi = np.zeros(len(layer), dtype=np.int16)
        arg_lo = np.zeros(len(layer), dtype=np.int16)
        for j in range(n):
            has = ((layer >> j) & 1).astype(bool)
            prev = layer[has] ^ (1 << j)
            v_hi, v_lo = hi[prev], lo[prev]
            idx = np.flatnonzero(has)
            better = v_hi > best_hi[idx]  # strict: the lowest j wins ties (deterministic)
            best_hi[idx[better]] = v_hi[better]
            arg_hi[idx[better]] = j
            better = v_lo < best_lo[idx]
            best_lo[idx[better]] = v_lo[better]
            arg_lo[idx[better]] = j
        hi[layer] = best_hi + g[layer]
        lo[layer] = best_lo + g[layer]
        hi_arg[layer] = arg_hi
        lo_arg[layer] = arg_lo

    def backtrack(arg):
        key, rev = size - 1, []
        while key:
            j = int(arg[key])
            rev.append(j)
            key ^= 1 << j
        return rev[::-1]

    return float(hi[size - 1]), backtrack(hi_arg), float(lo[size - 1]), backtrack(lo_arg)


EXACT_SETS_PER_CALL = 1 << 16  # inputs per model round of the exact search (bounds memory, keeps batching)


def _exact_many(memos: list[_Memo], score_many: ScoreManyFn) -> list[tuple]:
    # every subset of every input, in rounds of at most EXACT_SETS_PER_CALL sets (whole inputs per round)
    start = 0
    while start < len(memos):
        stop, total = start, 0
        while stop < len(memos) and (stop == start or total + (1 << memos[stop].n) <= EXACT_SETS_PER_CALL):
            total += 1 << memos[stop].n
            stop += 1
        requests = [range(1 << m.n) if start <= i < stop else [] for i, m in enumerate(memos)]
        _evaluate(memos, requests, score_many)
        start = stop
    results = []
    for memo in memos:
        n = memo.n
        p = np.fromiter((memo.values[k] for k in range(1 << n)), dtype=float, count=1 << n)
        g = p[0] - p
        up, up_order, lo, lo_order = _exact_dp(g, n)
        results.append((lo / n, up / n, lo_order, up_order))
    return results


# ------------------------------------------------------------------------------------------------ beam
class _Beam:
    """One side (upper or lower) of the beam search for one input. States: (removed set, order, sum)."""

    __slots__ = ("sign", "states")

    def __init__(self, sign: float):
        self.sign = sign  # +1 maximises (upper), -1 minimises (lower)
        self.states = [(0, (), 0.0)]

    def candidates(self, n: int):
        out = []
        for key, _, _ in self.states:
            out.extend(key | (1 << j) for j in range(n) if not key >> j & 1)
        return out

    def advance(self, memo: _Memo, n: int, beam_size: int) -> None:
        p0, values, sign = memo.values[0], memo.values, self.sign
        best: dict[int, tuple[float, int, int]] = {}  # child set -> (signed partial sum, parent index, j)
        for parent, (key, _, psum) in enumerate(self.states):
            for j in range(n):
                if key >> j & 1:
                    continue
                child = key | (1 << j)
                score = sign * (psum + (p0 - values[child]))
                old = best.get(child)
                if old is None or score > old[0]:  # dedup by set: only the best partial sum survives
                    best[child] = (score, parent, j)
        # generation order is deterministic; sort is stable -> ties keep generation order
        ranked = sorted(best.items(), key=lambda item: -item[1][0])[:beam_size]
        self.states = [
            (child, self.states[parent][1] + (j,), sign * score) for child, (score, parent, j) in ranked
        ]

    def best(self):
        key, order, psum = self.states[0]
        return list(order), psum


def _beam_many(memos: list[_Memo], score_many: ScoreManyFn, beam_size: int, progress: bool = False,
               sides: tuple[str, ...] = ("upper", "lower")) -> list[tuple]:
    """Both beams of every input advanced step by step; one ``score_many`` call per step for all of them.

    ``sides`` can restrict the search to one limit (the other is then returned as NaN); used to check the
    per-limit bound of B N(N+1)/2 candidate sets.
    """
    uppers = [_Beam(+1.0) for _ in memos]
    lowers = [_Beam(-1.0) for _ in memos]
    max_n = max(m.n for m in memos)
    steps = progress_bar(range(1, max_n + 1), progress, "NAOPC beam", unit="step")
    for step in steps:
        active = [i for i, m in enumerate(memos) if m.n >= step]
        requests = [[] for _ in memos]
        for i in active:
            n = memos[i].n
            requests[i] = (uppers[i].candidates(n) if "upper" in sides else []) + (
                lowers[i].candidates(n) if "lower" in sides else [])
        _evaluate(memos, requests, score_many)
        for i in active:
            if "upper" in sides:
                uppers[i].advance(memos[i], memos[i].n, beam_size)
            if "lower" in sides:
                lowers[i].advance(memos[i], memos[i].n, beam_size)
    results = []
    for memo, up, lo in zip(memos, uppers, lowers):
        up_order, up_sum = up.best() if "upper" in sides else (None, math.nan)
        lo_order, lo_sum = lo.best() if "lower" in sides else (None, math.nan)
        results.append((lo_sum / memo.n, up_sum / memo.n, lo_order, up_order))
    return results


# --------------------------------------------------------------------------------------------- limits
def _check_n(n, name: str = "n") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name}={short_repr(n)}: expected a positive integer number of features")
    return int(n)


def _check_limit_args(method, beam_size, max_exact_words):
    check_choice(method, "method", LIMIT_METHODS)
    check_positive_int(beam_size, "beam_size")
    check_positive_int(max_exact_words, "max_exact_words")


def _too_many_words(n: int, max_exact_words: int, where: str = "") -> ValueError:
    return ValueError(
        f"{where}N={n} words > max_exact_words={max_exact_words}: the exact limits need 2^N = {2 ** n} model "
        f"evaluations; use normalization/method='beam' (or 'auto'), or raise max_exact_words"
    )


def _limits(memos, results, method, start_counts=None) -> list[AOPCLimits]:
    out = []
    for memo, (lo, up, lo_order, up_order) in zip(memos, results):
        out.append(
            AOPCLimits(
                lower=float(lo),
                upper=float(up),
                lower_order=lo_order,
                upper_order=up_order,
                lower_curve=memo.drops(lo_order),
                upper_curve=memo.drops(up_order),
                method=method,
                n_evaluations=len(memo.values),
            )
        )
    return out


def aopc_limits_many(
    score_many: ScoreManyFn,
    ns: Sequence[int],
    method: str = "exact",
    beam_size: int = 5,
    max_exact_words: int = DEFAULT_MAX_EXACT_WORDS,
    progress: bool = False,
) -> list[AOPCLimits]:
    """AOPC limits of many inputs at once; ``score_many(list of bool [k_i, n_i]) -> list of [k_i]``.

    Every round of model calls (all subsets for ``"exact"``, one beam step for ``"beam"``) goes to
    ``score_many`` in ONE call holding the new sets of every input (inputs with nothing new get a
    ``[0, n_i]`` array and must get an empty array back).

    >>> fs = [lambda m: (~m) @ np.array([0.2, 0.3, 0.1, 0.4]), lambda m: (~m) @ np.array([0.0, 0.1, 0.7, 0.2])]
    >>> many = lambda masks: [f(m) for f, m in zip(fs, masks)]
    >>> [(round(l.lower, 3), round(l.upper, 3)) for l in aopc_limits_many(many, [4, 4], method="beam")]
    [(0.5, 0.75), (0.35, 0.9)]
    """
    _check_limit_args(method, beam_size, max_exact_words)
    ns = [_check_n(n, f"ns[{i}]") for i, n in enumerate(ns)]
    if method == "exact":
        for i, n in enumerate(ns):
            if n > max_exact_words:
                raise _too_many_words(n, max_exact_words, f"ns[{i}]: ")
    memos = [_Memo(n) for n in ns]
    if not memos:
        return []
    _evaluate(memos, [[0] for _ in memos], score_many)
    if method == "exact":
        results = _exact_many(memos, score_many)
    else:
        results = _beam_many(memos, score_many, int(beam_size), progress)
    return _limits(memos, results, method)


def aopc_limits(
    score_fn: ScoreFn,
    n: int,
    method: str = "exact",
    beam_size: int = 5,
    max_exact_words: int = DEFAULT_MAX_EXACT_WORDS,
    progress: bool = False,
) -> AOPCLimits:
    """Lower and upper AOPC limits of one input with ``n`` features.

    ``score_fn`` maps bool removal masks ``[k, n]`` (True = removed) to target probabilities ``[k]``.
    ``method="exact"``: DP over subsets (2^n evaluations, refuses ``n > max_exact_words``);
    ``"beam"``: the paper's Algorithm 1, deduplicated and memoised (at most ``1 + 2 B n(n+1)/2``
    evaluations for both limits, never the same set twice).

    The paper's Table 2: f3 = 0.7 (x1 or x2) + 0.3 (x3 or x4), f4 = 0.7 (x1 and x2) + 0.3 (x3 and x4):

    >>> f3 = lambda m: 0.7 * (~m[:, 0] | ~m[:, 1]) + 0.3 * (~m[:, 2] | ~m[:, 3])
    >>> f4 = lambda m: 0.7 * (~m[:, 0] & ~m[:, 1]) + 0.3 * (~m[:, 2] & ~m[:, 3])
    >>> [(round(l.upper, 3), round(l.lower, 3)) for l in (aopc_limits(f3, 4), aopc_limits(f4, 4))]
    [(0.6, 0.325), (0.925, 0.65)]
    """
    n = _check_n(n)
    return aopc_limits_many(_single(score_fn), [n], method, beam_size, max_exact_words, progress)[0]


# --------------------------------------------------------------------------------------- agreement
def rank_agreement(a, b) -> float:
    """Kendall tau (tau-b, scipy) between two rankings or two score vectors over the same items.

    >>> rank_agreement([1, 2, 3, 4], [1, 2, 4, 3])
    0.6666666666666669
    """
    from scipy.stats import kendalltau

    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or b.ndim != 1 or len(a) != len(b):
        raise ValueError(f"a has shape {a.shape} and b has shape {b.shape}: expected two 1-d sequences of equal length")
    if len(a) < 2:
        raise ValueError(f"a has {len(a)} items: expected at least 2 to rank")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b: expected finite numbers")
    return float(kendalltau(a, b).statistic)


# ------------------------------------------------------------------------------------ model-facing
def _subset_score_many(score_many: ScoreManyFn, idx: list[int], total: int) -> ScoreManyFn:
    """``score_many`` over a sub-list of the inputs (positions ``idx`` of ``total``)."""

    def sub(masks_list):
        full = [None] * total
        for i, m in zip(idx, masks_list):
            full[i] = m
        outs = score_many(full)
        return [outs[i] for i in idx]

    return sub


def _check_attributions(attributions, words: list[list[str]], texts: list[str]) -> list[np.ndarray]:
    if isinstance(attributions, (str, bytes)) or not hasattr(attributions, "__len__"):
        raise TypeError(f"attributions={short_repr(attributions)}: expected one sequence of scores per text")
    if len(attributions) != len(texts):
        raise ValueError(
            f"attributions has {len(attributions)} items but texts has {len(texts)}: expected one score list per text"
        )
    out = []
    for i, (scores, w) in enumerate(zip(attributions, words)):
        if isinstance(scores, (str, bytes)):
            raise TypeError(f"attributions[{i}]={short_repr(scores)}: expected a sequence of numbers")
        try:
            arr = np.asarray(scores, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"attributions[{i}]={short_repr(scores)}: expected a sequence of numbers") from exc
        if arr.ndim != 1:
            raise ValueError(f"attributions[{i}] has shape {arr.shape}: expected a flat list of {len(w)} scores")
        if len(arr) != len(w):
            raise ValueError(
                f"attributions[{i}] has {len(arr)} scores but texts[{i}] has {len(w)} words "
                f"{short_repr(w, 120)}: expected one score per word of classifier.words(text)"
            )
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"attributions[{i}][{j}]={float(arr[j])!r}: expected finite numbers (no NaN or inf)")
        out.append(arr)
    return out


def compute_naopc(
    texts,
    attributions,
    classifier,
    text_pairs=None,
    target="predicted",
    normalization: str = "auto",
    beam_size: int = 5,
    max_exact_words: int = DEFAULT_MAX_EXACT_WORDS,
    perturbation: str = "mask",
    batch_size: int = 32,
    attribution_method: str | None = None,
    seed: int = 0,
    progress: bool = False,
) -> dict:
    """Comprehensiveness, sufficiency and their NAOPC for word attributions on a text classifier.

    Args:
        texts: the texts; features are the words ``classifier.words(text, text_pair)``.
        attributions: one score per word per text, or ``None`` with ``attribution_method`` set
            (computed by :func:`textxai.attribution.word_attributions` with ``seed``).
        classifier: a ``TextClassifier`` or anything ``as_classifier`` accepts.
        text_pairs: second texts for sentence-pair models (their words follow the first text's).
        target: ``"predicted"`` (the class predicted on the intact input), a class index, or one per text.
        normalization: ``"auto"`` (exact when N <= max_exact_words, else beam), ``"exact"``, ``"beam"``,
            ``"none"`` (plain AOPC, no limits).
        beam_size: beam width B of the beam limits.
        max_exact_words: the largest N for exact limits (2^N model evaluations).
        perturbation: ``"mask"`` (every subword of a removed word -> mask token) or ``"delete"``.
        batch_size: model batch size (results do not depend on it beyond float32 noise).

    Returns a dict with the means ``comprehensiveness``, ``sufficiency``, ``naopc_comprehensiveness``,
    ``naopc_sufficiency`` (``None`` with ``normalization="none"``) and ``per_example``: one dict per text
    with words, attributions, target, p_full, n_words, the scores, limits (lower, upper, their orders and
    curves), the comprehensiveness / sufficiency curves, the method used and n_evaluations (distinct
    perturbed inputs the model saw for that text).
    """
    if attributions is None:
        if attribution_method is None:
            raise ValueError(
                "attributions=None: expected one score per word per text, or attribution_method= one of "
                "textxai.attribution.available_methods() to compute them"
            )
        sets = {attribution_method: None}
    elif attribution_method is not None:
        raise ValueError(
            f"attribution_method={attribution_method!r} with attributions given: expected one of the two"
        )
    else:
        sets = {"attributions": attributions}
    out = compare_attributions(texts, classifier, sets, text_pairs=text_pairs, target=target,
                               normalization=normalization, beam_size=beam_size, max_exact_words=max_exact_words,
                               perturbation=perturbation, batch_size=batch_size, seed=seed, progress=progress)
    return next(iter(out.values()))


def compare_attributions(
    texts,
    classifier,
    attributions: dict,
    text_pairs=None,
    target="predicted",
    normalization: str = "auto",
    beam_size: int = 5,
    max_exact_words: int = DEFAULT_MAX_EXACT_WORDS,
    perturbation: str = "mask",
    batch_size: int = 32,
    seed: int = 0,
    progress: bool = False,
) -> dict:
    """:func:`compute_naopc` for several attribution sets at once, sharing p(x), the limits and every model call.

    ``attributions`` maps a name to one score list per text, or an attribution method name (see
    :func:`textxai.attribution.available_methods`) to ``None`` to compute it. Returns name -> the
    :func:`compute_naopc` result for that set.
    """
    from textxai.classifier import as_classifier
    from textxai.validation import check_text_pairs, check_texts

    texts = check_texts(texts)
    pairs = check_text_pairs(text_pairs, texts)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    check_choice(perturbation, "perturbation", PERTURBATIONS)
    beam_size = check_positive_int(beam_size, "beam_size")
    max_exact_words = check_positive_int(max_exact_words, "max_exact_words")
    batch_size = check_positive_int(batch_size, "batch_size")
    if not isinstance(attributions, dict) or not attributions:
        raise TypeError(f"attributions={short_repr(attributions)}: expected a non-empty dict name -> attributions (or None)")
    clf = as_classifier(classifier)
    words = [clf.words(t, None if pairs is None else pairs[i]) for i, t in enumerate(texts)]
    for i, w in enumerate(words):
        if not w:
            where = f"texts[{i}]={short_repr(texts[i])}" + ("" if pairs is None else f" with text_pairs[{i}]={short_repr(pairs[i])}")
            raise ValueError(f"{where} has no words: expected at least one word to remove")
    sets = {}
    for name, attrs in attributions.items():
        if attrs is None:
            from textxai.attribution import METHODS

            check_choice(name, "attribution_method", METHODS)
            sets[name] = None
        else:
            sets[name] = _check_attributions(attrs, words, texts)
    if normalization == "exact":
        for i, w in enumerate(words):
            if len(w) > max_exact_words:
                raise _too_many_words(len(w), max_exact_words, f"texts[{i}]: normalization='exact': ")

    # p(x) for every text (one batched call), then the targets
    full = clf.masked_proba_many(texts, [np.zeros((1, len(w)), dtype=bool) for w in words], pairs,
                                 batch_size=batch_size, perturbation=perturbation)
    full = np.stack([f[0] for f in full])
    from textxai.attribution import resolve_targets

    targets = resolve_targets(target, full)
    for name, attrs in sets.items():
        if attrs is None:
            from textxai.attribution import word_attributions

            computed = word_attributions(texts, clf, name, target=targets, text_pairs=pairs, seed=seed,
                                         batch_size=batch_size, progress=progress)
            sets[name] = _check_attributions(computed, words, texts)

    def score_many(masks_list, show=False):
        idx = [i for i, m in enumerate(masks_list) if m is not None and len(m)]
        outs = [np.zeros(0) for _ in masks_list]
        if idx:
            probs = clf.masked_proba_many([texts[i] for i in idx], [masks_list[i] for i in idx],
                                          None if pairs is None else [pairs[i] for i in idx],
                                          batch_size=batch_size, perturbation=perturbation, progress=show)
            for i, p in zip(idx, probs):
                outs[i] = p[:, targets[i]]
        return outs

    memos = [_Memo(len(w)) for w in words]
    for memo, t, f in zip(memos, targets, full):
        memo.values[0] = float(f[t])
    orders = {name: ([comprehensiveness_order(a) for a in attrs], [sufficiency_order(a) for a in attrs])
              for name, attrs in sets.items()}
    requests = [[] for _ in texts]
    for comp_orders, suff_orders in orders.values():
        for i in range(len(texts)):
            requests[i] += _order_to_keys(comp_orders[i]) + _order_to_keys(suff_orders[i])
    _evaluate(memos, requests, score_many)

    methods = []
    for w in words:
        if normalization == "none":
            methods.append("none")
        elif normalization == "auto":
            methods.append("exact" if len(w) <= max_exact_words else "beam")
        else:
            methods.append(normalization)
    limits: list[AOPCLimits | None] = [None] * len(texts)
    for method in ("exact", "beam"):
        idx = [i for i, m in enumerate(methods) if m == method]
        if not idx:
            continue
        sub_memos = [memos[i] for i in idx]
        if method == "exact":
            sub = _subset_score_many(lambda ml: score_many(ml, show=progress), idx, len(texts))
            results = _exact_many(sub_memos, sub)
        else:
            results = _beam_many(sub_memos, _subset_score_many(score_many, idx, len(texts)), beam_size, progress)
        for i, lim in zip(idx, _limits(sub_memos, results, method)):
            limits[i] = lim

    out = {}
    for name, attrs in sets.items():
        comp_orders, suff_orders = orders[name]
        per_example = []
        for i, memo in enumerate(memos):
            comp_curve, suff_curve = memo.drops(comp_orders[i]), memo.drops(suff_orders[i])
            comp, suff = float(comp_curve.mean()), float(suff_curve.mean())
            lim = limits[i]
            per_example.append({
                "words": words[i],
                "attributions": [float(a) for a in attrs[i]],
                "target": int(targets[i]),
                "p_full": float(memo.p0),
                "n_words": memo.n,
                "normalization": methods[i],
                "comprehensiveness": comp,
                "sufficiency": suff,
                "naopc_comprehensiveness": None if lim is None else lim.normalize(comp),
                "naopc_sufficiency": None if lim is None else lim.normalize(suff),
                "lower": None if lim is None else lim.lower,
                "upper": None if lim is None else lim.upper,
                "comprehensiveness_order": comp_orders[i],
                "sufficiency_order": suff_orders[i],
                "comprehensiveness_curve": comp_curve.tolist(),
                "sufficiency_curve": suff_curve.tolist(),
                "lower_order": None if lim is None else lim.lower_order,
                "upper_order": None if lim is None else lim.upper_order,
                "lower_curve": None if lim is None else lim.lower_curve.tolist(),
                "upper_curve": None if lim is None else lim.upper_curve.tolist(),
                # distinct perturbed inputs the model saw for this text (shared by all attribution sets)
                "n_evaluations": len(memo.values),
            })

        def mean(key, rows=per_example):
            values = [r[key] for r in rows]
            return None if any(v is None for v in values) else float(np.mean(values))

        out[name] = {
            "comprehensiveness": mean("comprehensiveness"),
            "sufficiency": mean("sufficiency"),
            "naopc_comprehensiveness": mean("naopc_comprehensiveness"),
            "naopc_sufficiency": mean("naopc_sufficiency"),
            "per_example": per_example,
        }
    return out
