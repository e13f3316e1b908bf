"""NAOPC limits: the lower / upper AOPC over all orderings, exact (DP over sets) or by beam search.

This module holds the options, the exact DP over sets and the public :func:`aopc_limits` / :func:`aopc_limits_many`;
the beam searches are :mod:`textxai.naopc.beam` (re-exported here: ``Lazy``, ``LAZY``, ``_beam_many``,
``_memo_chain``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from textxai.naopc.beam import LAZY, Lazy, _beam_many, _memo_chain  # noqa: F401  (re-exported: the beam's names)
from textxai.naopc.core import (AOPCLimits, ScoreFn, ScoreManyFn, UserScores, _evaluate, _Memo, _single)
from textxai.validation import check_choice, check_positive_int, short_repr

LIMIT_METHODS = ("exact", "beam", "beam-paper")
DEFAULT_BEAM_SIZE = {"beam": 1, "beam-paper": 5}  # beam_size=None picks these
DEFAULT_MAX_EXACT_WORDS = 16  # cap of the model-agnostic exact limits (texts: see texts.EXACT_WORDS_BY_DEVICE)
#: The largest exact search textxai runs: 2^20 = 1,048,576 sets per input (model inputs), each held in memory
#: (about EXACT_BYTES_PER_SET bytes: the memo and the DP's tables; measured 231-260 at N = 16-18).
EXACT_WORDS_LIMIT = 20
EXACT_BYTES_PER_SET = 260


def check_max_exact_words(value, name: str = "max_exact_words") -> int:
    """A positive integer at most :data:`EXACT_WORDS_LIMIT`, else a ``ValueError`` with the cost it would have.

    >>> check_max_exact_words(64)
    Traceback (most recent call last):
    ...
    ValueError: max_exact_words=64: exact limits of N words evaluate all 2^N word sets (N = 64: 1.8e+19 model inputs and about 4.8e+21 bytes of memory per text); expected at most 20 (2^20 = 1,048,576 inputs, about 0.27 GB)
    """
    value = check_positive_int(value, name)
    if value > EXACT_WORDS_LIMIT:
        raise ValueError(
            f"{name}={value}: exact limits of N words evaluate all 2^N word sets (N = {value}: {2.0 ** value:.2g} model "
            f"inputs and about {EXACT_BYTES_PER_SET * 2.0 ** value:.2g} bytes of memory per text); expected at most "
            f"{EXACT_WORDS_LIMIT} (2^{EXACT_WORDS_LIMIT} = {2 ** EXACT_WORDS_LIMIT:,} inputs, about "
            f"{EXACT_BYTES_PER_SET * 2 ** EXACT_WORDS_LIMIT / 1e9:.2f} GB)"
        )
    return value


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
        _evaluate(memos, requests, score_many, f"the exact limits (every subset of inputs {start}..{stop - 1})")
        start = stop
    results = []
    for memo in memos:
        n = memo.n
        p = np.fromiter((memo.values[k] for k in range(1 << n)), dtype=float, count=1 << n)
        if not np.isfinite(p).all():  # a NaN would leave the DP's backtrack without a valid step (an endless loop)
            raise ValueError(f"the exact limits met a non-finite probability (NaN or inf) among the 2^{n} word sets: "
                             "expected finite model outputs")
        g = p[0] - p
        up, up_order, lo, lo_order = _exact_dp(g, n)
        results.append((lo / n, up / n, lo_order, up_order))
    return results


# --------------------------------------------------------------------------------------------- limits
def _check_n(n, name: str = "n") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name}={short_repr(n)}: expected a positive integer number of features")
    return int(n)


def _check_limit_args(method, beam_size, max_exact_words) -> int | None:
    """Checks the options; returns the beam width (``beam_size`` or the method's default)."""
    check_choice(method, "method", LIMIT_METHODS)
    check_max_exact_words(max_exact_words)
    if beam_size is None:
        return DEFAULT_BEAM_SIZE.get(method)
    return check_positive_int(beam_size, "beam_size")


def _beam_limits(memos, score_many, method: str, beam_size: int, progress: bool = False) -> list[tuple]:
    """``method="beam"`` (lazy, saturation-bounded) or ``"beam-paper"`` (Algorithm 1) on every input at once."""
    return _beam_many(memos, score_many, beam_size, progress, lazy=LAZY if method == "beam" else None)


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
    beam_size: int | None = None,
    max_exact_words: int = DEFAULT_MAX_EXACT_WORDS,
    progress: bool = False,
) -> list[AOPCLimits]:
    """AOPC limits of many inputs at once; ``score_many(list of bool [k_i, n_i]) -> list of [k_i]``.

    Every round of model calls (all subsets for ``"exact"``, one beam level for the beams) goes to
    ``score_many`` in ONE call holding the new sets of every input (inputs with nothing new get a
    ``[0, n_i]`` array and must get an empty array back).

    >>> fs = [lambda m: (~m) @ np.array([0.2, 0.3, 0.1, 0.4]), lambda m: (~m) @ np.array([0.0, 0.1, 0.7, 0.2])]
    >>> many = lambda masks: [f(m) for f, m in zip(fs, masks)]
    >>> [(round(l.lower, 3), round(l.upper, 3)) for l in aopc_limits_many(many, [4, 4], method="beam")]
    [(0.5, 0.75), (0.35, 0.9)]
    """
    beam_size = _check_limit_args(method, beam_size, max_exact_words)
    ns = [_check_n(n, f"ns[{i}]") for i, n in enumerate(ns)]
    if method == "exact":
        for i, n in enumerate(ns):
            if n > max_exact_words:
                raise _too_many_words(n, max_exact_words, f"ns[{i}]: ")
    if not isinstance(score_many, UserScores):
        score_many = UserScores(score_many, "score_many", many=True)
    memos = [_Memo(n) for n in ns]
    if not memos:
        return []
    _evaluate(memos, [[0] for _ in memos], score_many, "the intact inputs")
    if method == "exact":
        results = _exact_many(memos, score_many)
    else:
        results = _beam_limits(memos, score_many, method, beam_size, progress)
    return _limits(memos, results, method)


def aopc_limits(
    score_fn: ScoreFn,
    n: int,
    method: str = "exact",
    beam_size: int | None = None,
    max_exact_words: int = DEFAULT_MAX_EXACT_WORDS,
    progress: bool = False,
) -> AOPCLimits:
    """Lower and upper AOPC limits of one input with ``n`` features.

    ``score_fn`` maps bool removal masks ``[k, n]`` (True = removed) to target probabilities ``[k]``.
    ``method="exact"``: DP over subsets (2^n evaluations, refuses ``n > max_exact_words``);
    ``"beam-paper"``: the paper's Algorithm 1 with both limits in one pass, deduplicated by removed set and
    memoised (at most ``1 + 2 B n(n+1)/2`` evaluations, never the same set twice; default B = 5).
    ``"beam"`` (default B = 1): the same beam made lazy (:class:`Lazy`, settings ``LAZY``): a state first
    evaluates its 3 best children by estimate and expands fully only when none is saturated and their
    estimates are not confirmed (or every 4 levels); then a local search moves single features of each
    ordering (:func:`_polish`) and the limits are the best chains through every evaluated set — about 3.1x
    fewer model inputs than the authors' B = 5 beam on the demo model, with limits as tight on average
    (bench/bench_naopc.py); a heuristic that can be looser than the paper's beam on single inputs.
    Beam limits are AOPCs of real orderings: inside the exact limits.

    The paper's Table 2: f3 = 0.7 (x1 or x2) + 0.3 (x3 or x4), f4 = 0.7 (x1 and x2) + 0.3 (x3 and x4):

    >>> f3 = lambda m: 0.7 * (~m[:, 0] | ~m[:, 1]) + 0.3 * (~m[:, 2] | ~m[:, 3])
    >>> f4 = lambda m: 0.7 * (~m[:, 0] & ~m[:, 1]) + 0.3 * (~m[:, 2] & ~m[:, 3])
    >>> [(round(l.upper, 3), round(l.lower, 3)) for l in (aopc_limits(f3, 4), aopc_limits(f4, 4))]
    [(0.6, 0.325), (0.925, 0.65)]
    """
    n = _check_n(n)
    return aopc_limits_many(_single(score_fn), [n], method, beam_size, max_exact_words, progress)[0]


