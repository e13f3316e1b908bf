"""NAOPC beam limits: the paper's beam search (Algorithm 1) and its lazy, polished variant (``method="beam"``).

The seam of the limits (:mod:`textxai.naopc.limits`): this module searches orderings over a memo of removed sets
(:class:`~textxai.naopc.core._Memo`), one model round per level for every input at once (:func:`_beam_many`);
the exact DP over all sets, the option checks and the public :func:`~textxai.naopc.limits.aopc_limits` stay in
``limits``, which re-exports the names here.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from textxai.naopc.core import ScoreManyFn, _evaluate, _Memo, _order_to_keys
from textxai.progress import progress_bar


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
    ``logit``: a feature's estimate is its last measured change of the LOGIT of p (probabilities in [0, 1]), read
    at the current state as the change of p it predicts there: a word's effect on a classifier's logit depends
    little on which other words are gone, while its effect on p shrinks by p (1 - p) as p saturates, so gains
    measured early (p near p0) and late (p near 0 or 1) compare in logits and not in p (``False``: p itself, the
    default up to ``turn_above`` features; above it ``logit_turned`` makes them logits: on five 40-80-word
    reviews 13 % fewer inputs with limits as tight, docs/performance.md).
    ``turn``: on inputs of more than ``turn_above`` features, once a limit's chain has gone ``turn`` levels without
    beating its extreme probability (the bottom of the upper limit's curve, the top of the lower's), the forward
    search stops there and a backward one orders the words left from the other end: it keeps the word that alone
    holds p down (up) longest, then the pair, ... (the keep-one sets are its first level), each word kept first
    being removed last (:class:`_View`). A forward chain picks the tail of the curve blindly, where the gains are
    small; from the other end they are the largest (``None``: forward only).
    """

    saturation: float = 3e-4
    children: int = 3
    confirm: float = 5e-3
    refresh: int = 4
    ties: float = 1e-2
    margin: float | None = 0.03
    polish: float = 0.28
    moves: int = 4
    logit: bool = False
    turn: int | None = 3
    turn_above: int = 12
    polish_turned: float = 0.2
    logit_turned: bool = True

    def for_input(self, n: int) -> Lazy:
        """The settings for an input of ``n`` features: above ``turn_above`` (where the chains turn) the local search
        gets ``polish_turned`` and the estimates are logits when ``logit_turned`` (the backward beam does part of
        what polishing did there; measured on 40-80-word reviews, docs/performance.md)."""
        if self.turn is None or n <= self.turn_above:
            return self
        return replace(self, polish=self.polish_turned, logit=self.logit or self.logit_turned)


LAZY = Lazy()  # the settings of method="beam" (measured in bench/bench_naopc.py)
_LOGIT_EPS = 1e-6  # probabilities are clipped to [eps, 1 - eps] before their logit


def _logit(p: float) -> float:
    p = min(max(p, _LOGIT_EPS), 1.0 - _LOGIT_EPS)
    return math.log(p / (1.0 - p))


class _View:
    """The frame a beam searches in: forward (a key is the removed set) or backward (a key is the KEPT set).

    A backward view starts where a forward chain turned: ``used`` (the set the chain had removed at its extreme)
    stays removed, and the beam "keeps" the other words one by one, the word kept first being the one removed
    last; key ``K`` (which includes ``used``) stands for the removed set ``all ^ K ^ used``.
    """

    __slots__ = ("memo", "n", "used", "full", "p0")

    def __init__(self, memo: _Memo, used: int | None = None):
        self.memo, self.n, self.used, self.full = memo, memo.n, used, (1 << memo.n) - 1
        self.p0 = memo.p0

    def real(self, key: int) -> int:
        return key if self.used is None else self.full ^ key ^ self.used

    def __getitem__(self, key: int) -> float:
        return self.memo.values[self.real(key)]


class _Beam:
    """One side (upper or lower) of the beam search of one input, in one frame (:class:`_View`).

    A state is ``(key, order, signed partial sum, signed marginal estimates or None)``. Children of
    a state are scored incrementally (partial sum + one new term); states are deduplicated by key
    (the best partial sum survives). ``lazy=None`` is the paper's Algorithm 1 (every child of every state
    evaluated); a :class:`Lazy` asks for fewer children (see there), and its forward beam turns (``Lazy.turn``):
    where its chain's probability stopped improving, a backward beam orders the words left from the other end.
    """

    __slots__ = ("sign", "view", "states", "plan", "prior", "lazy", "logit", "head", "level")

    def __init__(self, sign: float, view: _View, lazy: Lazy | None = None, prior: dict[int, float] | None = None,
                 logit: bool = False, head: tuple = ()):
        self.sign = sign  # +1 maximises (upper), -1 minimises (lower)
        self.view = view
        root = 0 if view.used is None else view.used
        self.states = [(root, (), 0.0, None)]
        self.plan: list[list[int]] = []
        self.lazy = lazy
        self.prior = prior  # feature -> signed score: the tie-breaker of the lazy beam
        self.logit = logit  # estimates as changes of the logit of p (see Lazy.logit)
        self.head = head  # a backward beam: the forward chain's order up to where it turned
        self.level = 0

    @property
    def done(self) -> bool:
        return self.states[0][0] == self.view.full

    def _gain(self, p: float, child: float) -> float:
        """A feature's signed estimate from the state's p and the child's: the change of p, or of its logit."""
        if self.logit:
            return self.sign * (_logit(p) - _logit(child))
        return self.sign * (p - child)

    def _predicted(self, p: float, marg) -> np.ndarray:
        """The signed change of p each feature's estimate predicts at a state whose probability is ``p``."""
        if not self.logit:
            return marg
        z = _logit(p) - self.sign * np.asarray(marg)
        return self.sign * (p - 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60))))

    def first_requests(self) -> list[int]:
        """Ranks every state's free features (best estimate first); returns the first children of lazy states."""
        self.plan = []
        lazy, prior, view = self.lazy, self.prior, self.view
        for key, _, _, marg in self.states:
            free = [j for j in range(view.n) if not key >> j & 1]
            if lazy is not None and marg is not None:  # stable: then the lower index first
                gain = self._predicted(view[key], marg)
                free.sort(key=lambda j: (-round(gain[j] / lazy.saturation), -prior[j]))
            self.plan.append(free)
        if lazy is None:
            return []
        return [view.real(key | 1 << j) for (key, _, _, marg), free in zip(self.states, self.plan)
                if marg is not None for j in free[: lazy.children]]

    def _enough(self, key: int, marg, first: list[int]) -> bool:
        """Whether a lazy state keeps its first children only (saturated, or estimates confirmed off-refresh)."""
        lazy, view, sign = self.lazy, self.view, self.sign
        probs = [view[key | 1 << j] for j in first]
        if (min(probs) if sign > 0 else 1.0 - max(probs)) <= lazy.saturation:
            return True
        if self.level % lazy.refresh == 0:
            return False
        gain = self._predicted(view[key], marg)
        return all(abs(sign * (view[key] - p) - gain[j]) <= lazy.confirm for j, p in zip(first, probs))

    def full_requests(self) -> list[int]:
        """Every child of the states that need them; lazy states that do not keep their first children only."""
        out = []
        for i, ((key, _, _, marg), free) in enumerate(zip(self.states, self.plan)):
            if self.lazy is not None and marg is not None:
                first = free[: self.lazy.children]
                if len(first) == len(free) or self._enough(key, marg, first):
                    self.plan[i] = first
                    continue
            out.extend(self.view.real(key | 1 << j) for j in free)
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

    def advance(self, beam_size: int) -> None:
        view, sign = self.view, self.sign
        p0 = view.p0
        best: dict[int, tuple[float, int, int]] = {}  # child key -> (signed partial sum, parent index, j)
        for parent, ((key, _, psum, _), pick) in enumerate(zip(self.states, self.plan)):
            for j in sorted(pick):  # generation order: parent, then feature index
                child = key | 1 << j
                score = psum + sign * (p0 - view[child])
                old = best.get(child)
                if old is None or score > old[0]:  # dedup by set: only the best partial sum survives
                    best[child] = (score, parent, j)
        ranked = self._ranked(best, beam_size)
        margs = {}
        if self.lazy is not None:
            for parent in {parent for _, (_, parent, _) in ranked}:
                key, _, _, marg = self.states[parent]
                new = np.zeros(view.n) if marg is None else marg.copy()
                for j in self.plan[parent]:
                    new[j] = self._gain(view[key], view[key | 1 << j])  # signed gain of j after key
                margs[parent] = new
        self.states = [(child, self.states[parent][1] + (j,), score, margs.get(parent))
                       for child, (score, parent, j) in ranked]
        self.level += 1

    def turned(self) -> _Beam | None:
        """A forward lazy beam whose best chain has not improved on its extreme for ``Lazy.turn`` levels: the
        backward beam that orders the words left from the other end (the forward order up to the extreme kept)."""
        lazy, view = self.lazy, self.view
        if lazy is None or lazy.turn is None or view.used is not None or view.n <= lazy.turn_above or self.done:
            return None
        order = self.states[0][1]
        keys = _order_to_keys(order)
        extreme = int(np.argmin([self.sign * view[k] for k in keys]))  # the first of ties
        if len(order) - 1 - extreme < lazy.turn:
            return None
        prior = {j: self.sign * view.memo.values[1 << j] for j in range(view.n)}  # p without j alone (level 1)
        return _Beam(self.sign, _View(view.memo, keys[extreme]), lazy, prior, self.logit, order[: extreme + 1])

    def best(self):
        _, order, _, _ = self.states[0]
        order = list(self.head) + list(order[::-1]) if self.view.used is not None else list(order)
        return order, float(self.view.memo.drops(order).sum())


def _search(memos: list[_Memo], score_many: ScoreManyFn, beams: list[list[_Beam]], beam_size: int,
            progress: bool) -> None:
    """Advances the given beams of every input round by round until each is done (a forward beam may turn into
    a backward one on the way); each round of new sets in ONE ``score_many`` call."""
    lazy = any(beam.lazy is not None for pair in beams for beam in pair)
    bar = progress_bar(None, progress, "NAOPC beam", total=max(m.n for m in memos), unit="level")
    for step in itertools.count(1):
        active = [(i, beam) for i, pair in enumerate(beams) for beam in pair if not beam.done]
        if not active:
            break
        requests = [[] for _ in memos]
        for i, beam in active:
            requests[i].extend(beam.first_requests())
        if lazy:
            _evaluate(memos, requests, score_many, f"beam level {step}")
            requests = [[] for _ in memos]
        for i, beam in active:
            requests[i].extend(beam.full_requests())
        _evaluate(memos, requests, score_many, f"beam level {step}")
        for i, beam in active:
            beam.advance(beam_size)
        for pair in beams:
            for k, beam in enumerate(pair):
                pair[k] = beam.turned() or beam
        left = max(((b.view.full ^ b.states[0][0]).bit_count() for pair in beams for b in pair), default=0)
        if bar.total is not None and step + left > bar.total:  # a turned beam has up to Lazy.turn levels more
            bar.total = step + left
            bar.refresh()
        bar.update(1)
    bar.close()


def _keep_one(memos: list[_Memo], score_many: ScoreManyFn) -> list[list[float]]:
    """p(x with only feature j kept) for every j (N model inputs per input, one call): the beams' tie-breaker.

    Where a beam's candidates are saturated (probabilities within the tolerance of 0 or 1, all alike), this
    is the information left: the lower limit keeps for last the features that hold the prediction up alone,
    the upper limit removes them first.
    """
    requests = [[((1 << m.n) - 1) ^ (1 << j) for j in range(m.n)] + [(1 << m.n) - 1] for m in memos]  # + all gone
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


def _polish_many(memos: list[_Memo], score_many: ScoreManyFn, pairs: list[list], lazies: list[Lazy],
                 cap: list[int]) -> None:
    """Polishes every input's orderings (``pairs[i]`` = [(sign, order), ...]), each round in ONE model call.

    Each input may evaluate its ``Lazy.polish`` times the sets it has, at most up to ``cap[i]`` sets in all, split
    evenly between its limits (a search that stalls on one limit does not take the other's budget).
    """
    searches = []
    for memo, pair, limit, lazy in zip(memos, pairs, cap, lazies):
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
        beams = [[_Beam(sign, _View(memo)) for sign in signs] for memo in memos]
    else:
        lazies = [lazy.for_input(memo.n) for memo in memos]
        beams = [[_Beam(sign, _View(memo), lz, {j: sign * p for j, p in enumerate(ps)},
                        lz.logit and 0.0 <= memo.values[0] <= 1.0) for sign in signs]
                 for memo, ps, lz in zip(memos, _keep_one(memos, score_many), lazies)]
    _search(memos, score_many, beams, beam_size, progress)
    if lazy is not None and any(lz.polish > 0 for lz in lazies):
        cap = [1 + len(signs) * beam_size * m.n * (m.n + 1) // 2 for m in memos]  # never above the paper's beam
        _polish_many(memos, score_many, [[(b.sign, b.best()[0]) for b in pair] for pair in beams], lazies, cap)
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
