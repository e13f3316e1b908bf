"""NAOPC limits: the lower / upper AOPC over all orderings, exact (DP over sets) or by beam search."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from textxai.naopc.core import (AOPCLimits, ScoreFn, ScoreManyFn, UserScores, _evaluate, _Memo, _order_to_keys, _single)
from textxai.progress import progress_bar
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


# ------------------------------------------------------------------------------------------------ beam
@dataclass(frozen=True)
class Lazy:
    """The lazy steps of ``method="beam"`` (``None`` instead: the paper's Algorithm 1, every child evaluated).

    A state first asks for its ``children`` best children by estimate (the last marginal gain seen for each
    feature along its own chain) and asks for all the others only when (a) none of them is saturated (within
    ``saturation`` of probability 0 for the upper limit, 1 for the lower: no child can beat it by more) and
    (b) their measured gains differ from their estimates by more than ``confirm`` (the estimates are stale
    there) or the level is a multiple of ``refresh`` (every child re-measured periodically). Children whose
    partial sums fall in the same ``ties``-wide bin are ranked by the keep-one prior (:func:`_keep_one`);
    states more than ``margin`` below the best one are dropped (the width adapts: ``None`` keeps B states).
    Then a local search (:func:`_polish`) moves single features of each limit's ordering, ``moves`` candidate
    moves per round, until it has evaluated ``polish`` times the sets the steps evaluated (half per limit);
    the limits are the best chains through every evaluated set (:func:`_memo_chain`).
    """

    saturation: float = 3e-4
    children: int = 3
    confirm: float = 5e-3
    refresh: int = 4
    ties: float = 1e-2
    margin: float | None = 0.03
    polish: float = 0.28
    moves: int = 4


LAZY = Lazy()  # the settings of method="beam" (measured in bench/bench_naopc.py)


class _Beam:
    """One side (upper or lower) of the beam search of one input.

    A state is ``(removed set, order, signed partial sum, signed marginal estimates or None)``. Children of
    a state are scored incrementally (partial sum + one new term); states are deduplicated by removed set
    (the best partial sum survives). ``lazy=None`` is the paper's Algorithm 1 (every child of every state
    evaluated); a :class:`Lazy` asks for fewer children (see there).
    """

    __slots__ = ("sign", "states", "plan", "prior", "lazy")

    def __init__(self, sign: float, lazy: Lazy | None = None, prior: dict[int, float] | None = None):
        self.sign = sign  # +1 maximises (upper), -1 minimises (lower)
        self.states = [(0, (), 0.0, None)]
        self.plan: list[list[int]] = []
        self.lazy = lazy
        self.prior = prior  # feature -> signed keep-one score: the tie-breaker of the lazy beam

    def first_requests(self, n: int) -> list[int]:
        """Ranks every state's free features (best estimate first); returns the first children of lazy states."""
        self.plan = []
        lazy, prior = self.lazy, self.prior
        for key, _, _, marg in self.states:
            free = [j for j in range(n) if not key >> j & 1]
            if lazy is not None and marg is not None:  # stable: then the lower index first
                free.sort(key=lambda j: (-round(marg[j] / lazy.saturation), -prior[j]))
            self.plan.append(free)
        if lazy is None:
            return []
        return [key | 1 << j for (key, _, _, marg), free in zip(self.states, self.plan) if marg is not None
                for j in free[: lazy.children]]

    def _enough(self, memo: _Memo, key: int, marg, first: list[int]) -> bool:
        """Whether a lazy state keeps its first children only (saturated, or estimates confirmed off-refresh)."""
        lazy, values, sign = self.lazy, memo.values, self.sign
        probs = [values[key | 1 << j] for j in first]
        if (min(probs) if sign > 0 else 1.0 - max(probs)) <= lazy.saturation:
            return True
        if bin(key).count("1") % lazy.refresh == 0:
            return False
        return all(abs(sign * (values[key] - p) - marg[j]) <= lazy.confirm for j, p in zip(first, probs))

    def full_requests(self, memo: _Memo) -> list[int]:
        """Every child of the states that need them; lazy states that do not keep their first children only."""
        out = []
        for i, ((key, _, _, marg), free) in enumerate(zip(self.states, self.plan)):
            if self.lazy is not None and marg is not None:
                first = free[: self.lazy.children]
                if len(first) == len(free) or self._enough(memo, key, marg, first):
                    self.plan[i] = first
                    continue
            out.extend(key | 1 << j for j in free)
        return out

    def _ranked(self, best: dict, beam_size: int) -> list:
        lazy = self.lazy
        if lazy is None:  # the sort is stable: ties keep generation order (deterministic)
            return sorted(best.items(), key=lambda item: -item[1][0])[:beam_size]
        prior = self.prior
        ranked = sorted(best.items(), key=lambda item: (-math.floor(item[1][0] / lazy.ties), -prior[item[1][2]]))
        ranked = ranked[:beam_size]
        if lazy.margin is not None:
            ranked = [r for r in ranked if r[1][0] >= ranked[0][1][0] - lazy.margin]
        return ranked

    def advance(self, memo: _Memo, beam_size: int) -> None:
        p0, values, sign = memo.values[0], memo.values, self.sign
        best: dict[int, tuple[float, int, int]] = {}  # child set -> (signed partial sum, parent index, j)
        for parent, ((key, _, psum, _), pick) in enumerate(zip(self.states, self.plan)):
            for j in sorted(pick):  # generation order: parent, then feature index
                child = key | 1 << j
                score = psum + sign * (p0 - values[child])
                old = best.get(child)
                if old is None or score > old[0]:  # dedup by set: only the best partial sum survives
                    best[child] = (score, parent, j)
        ranked = self._ranked(best, beam_size)
        margs = {}
        if self.lazy is not None:
            for parent in {parent for _, (_, parent, _) in ranked}:
                key, _, _, marg = self.states[parent]
                new = np.zeros(memo.n) if marg is None else marg.copy()
                for j in self.plan[parent]:
                    new[j] = sign * (values[key] - values[key | 1 << j])  # signed gain of removing j after key
                margs[parent] = new
        self.states = [(child, self.states[parent][1] + (j,), score, margs.get(parent))
                       for child, (score, parent, j) in ranked]

    def best(self):
        _, order, psum, _ = self.states[0]
        return list(order), self.sign * psum


def _search(memos: list[_Memo], score_many: ScoreManyFn, beams: list[list[_Beam]], beam_size: int,
            progress: bool) -> None:
    """Advances the given beams of every input level by level; each round of new sets in ONE ``score_many`` call."""
    lazy = any(beam.lazy is not None for pair in beams for beam in pair)
    for step in progress_bar(range(1, max(m.n for m in memos) + 1), progress, "NAOPC beam", unit="level"):
        active = [i for i, m in enumerate(memos) if m.n >= step]
        requests = [[] for _ in memos]
        for i in active:
            requests[i] = [k for beam in beams[i] for k in beam.first_requests(memos[i].n)]
        if lazy:
            _evaluate(memos, requests, score_many, f"beam level {step}")
            requests = [[] for _ in memos]
        for i in active:
            requests[i] = [k for beam in beams[i] for k in beam.full_requests(memos[i])]
        _evaluate(memos, requests, score_many, f"beam level {step}")
        for i in active:
            for beam in beams[i]:
                beam.advance(memos[i], beam_size)


def _keep_one(memos: list[_Memo], score_many: ScoreManyFn) -> list[list[float]]:
    """p(x with only feature j kept) for every j (N model inputs per input, one call): the beams' tie-breaker.

    Where a beam's candidates are saturated (probabilities within the tolerance of 0 or 1, all alike), this
    is the information left: the lower limit keeps for last the features that hold the prediction up alone,
    the upper limit removes them first.
    """
    requests = [[((1 << m.n) - 1) ^ (1 << j) for j in range(m.n)] for m in memos]
    _evaluate(memos, requests, score_many, "the keep-one-feature sets")
    return [[memo.values[((1 << memo.n) - 1) ^ (1 << j)] for j in range(memo.n)] for memo in memos]


# ------------------------------------------------------------------------------- polishing (method="beam")
def _memo_chain(memo: _Memo, sign: float) -> tuple[float, list[int]]:
    """The best chain ``{} = S_0 < S_1 < ... < S_n = all`` (one feature per step) through the EVALUATED sets.

    Returns ``(signed sum of g(S_k), ordering)``; ``sign=+1`` maximises (upper), ``-1`` minimises (lower). The
    chain of any ordering whose prefix sets were all evaluated competes, so this is never worse than the beam's
    own chain; the lowest feature index wins ties (deterministic, independent of evaluation order).

    >>> memo = _Memo(2); memo.values.update({0: 1.0, 1: 0.5, 2: 0.9, 3: 0.0})
    >>> _memo_chain(memo, +1.0), _memo_chain(memo, -1.0)
    ((1.5, [0, 1]), (-1.1, [1, 0]))
    """
    values, n = memo.values, memo.n
    p0 = values[0]
    best: dict[int, tuple[float, int]] = {0: (0.0, -1)}
    for key in sorted(values, key=lambda k: (k.bit_count(), k)):
        if key == 0:
            continue
        top, arg, rest = -math.inf, -1, key
        while rest:
            low = rest & -rest
            rest ^= low
            prev = best.get(key ^ low)
            if prev is not None and prev[0] > top:
                top, arg = prev[0], low.bit_length() - 1
        if arg >= 0:
            best[key] = (top + sign * (p0 - values[key]), arg)
    key, order = (1 << n) - 1, []
    while key:
        j = best[key][1]
        order.append(j)
        key ^= 1 << j
    return best[(1 << n) - 1][0], order[::-1]


def _moves(memo: _Memo, order: list[int], sign: float) -> list[tuple[float, int, int, int]]:
    """Every move of one feature of ``order`` to another position: ``(estimated gain, unknown sets, i, j)``.

    Moving the feature at position i (1-based) to position j changes |i - j| prefix sets: later (j > i) the sets
    ``S_{k+1} - {y}`` (k = i..j-1), earlier the sets ``S_{k-1} + {y}`` (k = j..i-1). A set already evaluated
    counts with its value; an unknown one is estimated from the feature's marginal gain, interpolated linearly
    in the level between three measured points: alone (level 0), at its position, and last (its keep-one set).
    """
    values, n = memo.values, memo.n
    p0, full = values[0], (1 << n) - 1
    keys = [0] + _order_to_keys(order)
    g = [p0 - values[k] for k in keys]  # g[k] = p0 - p(S_k)
    out = []
    for i, y in enumerate(order, start=1):
        bit = 1 << y
        here, last, alone = g[i] - g[i - 1], g[n] - (p0 - values[full ^ bit]), p0 - values[bit]

        def marginal(level: int) -> float:
            if level >= i - 1:
                return here + (last - here) * (level - i + 1) / max(n - i, 1)
            return alone + (here - alone) * level / max(i - 1, 1)

        gain, unknown = 0.0, 0
        for j in range(i + 1, n + 1):  # later: S'_{j-1} = S_j - y
            key = keys[j] ^ bit
            if key in values:
                value = p0 - values[key]
            else:
                value, unknown = g[j] - marginal(j - 1), unknown + 1
            gain += sign * (value - g[j - 1])
            out.append((gain, unknown, i, j))
        gain, unknown = 0.0, 0
        for j in range(i - 1, 0, -1):  # earlier: S'_j = S_{j-1} + y
            key = keys[j - 1] | bit
            if key in values:
                value = p0 - values[key]
            else:
                value, unknown = g[j - 1] + marginal(j - 1), unknown + 1
            gain += sign * (value - g[j])
            out.append((gain, unknown, i, j))
    return out


def _moved(order: list[int], i: int, j: int) -> list[int]:
    new = order[: i - 1] + order[i:]
    new.insert(j - 1, order[i - 1])
    return new


def _polish(memo: _Memo, order: list[int], sign: float, budget: list[int], moves: int):
    """Local search on one limit's ordering: a generator yielding the sets to evaluate next (one round each).

    Per round: a move whose sets are all known and that improves is taken at once (no model input); otherwise
    the ``moves`` untried moves of highest estimated gain are evaluated together and the best real improvement
    is taken (first improvement). Stops when ``budget[0]`` (new sets, shared with the other limit's search)
    is spent, no move is left, or after 2 n + 8 rounds.
    """
    values, tried = memo.values, set()
    for _ in range(2 * memo.n + 8):
        if budget[0] <= 0:
            return
        found = _moves(memo, order, sign)
        free = max((m for m in found if m[1] == 0), default=None)
        if free is not None and free[0] > 1e-12:
            order, tried = _moved(order, free[2], free[3]), set()
            continue
        ranked = sorted((m for m in found if m[1] > 0 and (order[m[2] - 1], m[3]) not in tried),
                        key=lambda m: (-m[0], m[2], m[3]))
        candidates, request = [], {}
        for _, _, i, j in ranked:  # the best moves whose new sets fit in the budget
            tried.add((order[i - 1], j))
            new = _moved(order, i, j)
            unknown = [k for k in _order_to_keys(new) if k not in values and k not in request]
            if len(request) + len(unknown) <= budget[0]:
                candidates.append(new)
                request.update(dict.fromkeys(unknown))
            if len(candidates) == moves:
                break
        if not candidates:
            return
        budget[0] -= len(request)
        yield list(request)
        base = sign * memo.drops(order).sum()
        top = max(((sign * memo.drops(c).sum(), c) for c in candidates), key=lambda s: s[0])  # the first of ties
        if top[0] > base + 1e-12:
            order, tried = top[1], set()


def _polish_many(memos: list[_Memo], score_many: ScoreManyFn, pairs: list[list], lazy: Lazy, cap: list[int]) -> None:
    """Polishes every input's orderings (``pairs[i]`` = [(sign, order), ...]), each round in ONE model call.

    Each input may evaluate ``lazy.polish`` times the sets it has, at most up to ``cap[i]`` sets in all, split
    evenly between its limits (a search that stalls on one limit does not take the other's budget).
    """
    searches = []
    for memo, pair, limit in zip(memos, pairs, cap):
        share = min(int(lazy.polish * len(memo.values)), limit - len(memo.values)) // max(len(pair), 1)
        searches.append([_polish(memo, list(order), sign, [share], lazy.moves) for sign, order in pair])
    while any(searches):
        requests = [[] for _ in memos]
        for i, gens in enumerate(searches):
            alive = []
            for gen in gens:
                try:
                    requests[i].extend(next(gen))
                    alive.append(gen)
                except StopIteration:
                    pass
            searches[i] = alive
        _evaluate(memos, requests, score_many, "beam polishing")


def _beam_many(memos: list[_Memo], score_many: ScoreManyFn, beam_size: int, progress: bool = False,
               sides: tuple[str, ...] = ("upper", "lower"), lazy: Lazy | None = None) -> list[tuple]:
    """Beam limits of every input: ``(lower, upper, lower_order, upper_order)`` per input.

    ``lazy=None``: the paper's Algorithm 1 (one model call per level). A :class:`Lazy`: the lazy beam of
    ``method="beam"``: first the N "keep one feature" sets (the tie-breaker, see :func:`_keep_one`), then
    two calls per level. Both sides advance together, sharing every call.
    ``sides`` can restrict the search to one limit (the other is then returned as NaN).
    """
    signs = [+1.0 if side == "upper" else -1.0 for side in sides]
    if lazy is None:
        beams = [[_Beam(sign) for sign in signs] for _ in memos]
    else:
        beams = [[_Beam(sign, lazy, {j: sign * p for j, p in enumerate(ps)}) for sign in signs]
                 for ps in _keep_one(memos, score_many)]
    _search(memos, score_many, beams, beam_size, progress)
    if lazy is not None and lazy.polish > 0:
        cap = [1 + len(signs) * beam_size * m.n * (m.n + 1) // 2 for m in memos]  # never above the paper's beam
        _polish_many(memos, score_many, [[(b.sign, b.best()[0]) for b in pair] for pair in beams], lazy, cap)
    results = []
    for memo, pair in zip(memos, beams):
        found = {side: beam.best() for side, beam in zip(sides, pair)}
        if lazy is not None:  # the best chain through every evaluated set: never worse than the beam's own
            for side, sign in zip(sides, signs):
                total, order = _memo_chain(memo, sign)
                found[side] = (order, sign * total)
        up_order, up_sum = found.get("upper", (None, math.nan))
        lo_order, lo_sum = found.get("lower", (None, math.nan))
        results.append((lo_sum / memo.n, up_sum / memo.n, lo_order, up_order))
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


