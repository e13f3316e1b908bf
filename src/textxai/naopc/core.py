"""NAOPC core: orderings, AOPC of one ordering, the per-input memo of removed sets, limits' result type.

Model-agnostic: a ``score_fn`` maps bool removal masks ``[k, n]`` (True = feature removed) to target
probabilities ``[k]``; removed sets are handled as integer bitmasks (bit j = feature j removed).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from textxai.validation import call_user, callable_name, check_finite, short_repr

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
    check_finite(attributions, "attributions")
    a = np.asarray(attributions, dtype=float)
    return [int(i) for i in np.argsort(-a, kind="stable")]


def sufficiency_order(attributions) -> list[int]:
    """Feature indices by increasing attribution (least important removed first); ties: the earlier first.

    >>> sufficiency_order([0.1, 0.5, 0.1, -2.0])
    [3, 0, 2, 1]
    """
    check_finite(attributions, "attributions")
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


NARROW_LIMITS = 1e-3  # upper - lower below this: the text's NAOPC rescales noise (the model barely reacts)


def narrow_limit_texts(per_example: Sequence[dict], tol: float = NARROW_LIMITS) -> list[int]:
    """Indices of the texts whose AOPC limits nearly coincide (``upper - lower < tol``): NAOPC is meaningless there.

    >>> narrow_limit_texts([{"lower": 0.1, "upper": 0.5}, {"lower": 0.2, "upper": 0.2004}, {"lower": None, "upper": None}])
    [1]
    """
    return [i for i, r in enumerate(per_example)
            if r.get("lower") is not None and r.get("upper") is not None and r["upper"] - r["lower"] < tol]


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


class UserScores:
    """A user's scoring callable used as ``score_many``: its errors wrapped with context, its outputs checked.

    ``fn`` is a ``score_fn`` (one input: bool masks ``[k, n]`` -> ``[k]``; ``many=False``) or a
    ``score_many`` (a list of mask arrays -> a list of probability arrays; ``many=True``). An exception
    inside it becomes a :class:`~textxai.validation.CallbackError` naming the argument, the callable and
    the step, chained to the original; a wrong shape or a non-finite value is a ValueError naming them.
    """

    def __init__(self, fn, argument: str, many: bool):
        if not callable(fn):
            raise TypeError(f"{argument}={short_repr(fn)}: expected a callable mapping bool removal masks to probabilities")
        self.fn, self.argument, self.many = fn, argument, many

    def __call__(self, masks_list: list, step: str = "a model round") -> list:
        if self.many:
            where = f"{step} ({sum(len(m) for m in masks_list)} removal masks of {len(masks_list)} inputs)"
            outs = call_user(self.fn, self.argument, where, masks_list)
            if not isinstance(outs, (list, tuple)) or len(outs) != len(masks_list):
                raise ValueError(f"{self.argument}={callable_name(self.fn)} returned {short_repr(outs, 80)} on {step} for "
                                 f"{len(masks_list)} inputs: expected a list of {len(masks_list)} probability arrays")
            return [self.checked(out, len(m), f"{step}, input {i}") for i, (m, out) in enumerate(zip(masks_list, outs))]
        return [self.checked(call_user(self.fn, self.argument, f"{step} ({len(m)} removal masks)", m), len(m), step)
                if len(m) else np.zeros(0) for m in masks_list]

    def checked(self, out, k: int, where: str) -> np.ndarray:
        """``out`` as ``k`` finite floats, else a ValueError naming the callable, ``where`` and what was expected."""
        name = f"{self.argument}={callable_name(self.fn)}"
        if k == 0:
            return np.zeros(0)
        try:
            arr = np.asarray(out, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} returned {short_repr(out, 80)} on {where}: expected {k} probabilities") from exc
        if arr.shape not in ((k,), (k, 1)):
            raise ValueError(f"{name} returned shape {arr.shape} on {where} for {k} masks: expected ({k},), "
                             "one target probability per mask")
        arr = arr.reshape(-1)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValueError(f"{name} returned {float(arr[bad[0]])!r} for mask {int(bad[0])} on {where}: expected finite "
                             "probabilities (no NaN or inf)")
        return arr


def _evaluate(memos: list[_Memo], requests: list[Sequence[int]], score_many: ScoreManyFn, step: str = "a model round") -> int:
    """Evaluate every requested set not yet in its memo, in ONE call of ``score_many`` across inputs.

    A :class:`UserScores` gets ``step`` (named in its errors); internal ``score_many`` (the classifier's) do not.
    """
    missing = []
    for memo, req in zip(memos, requests):
        seen = memo.values
        todo = list(dict.fromkeys(k for k in req if k not in seen))
        missing.append(todo)
    total = sum(len(m) for m in missing)
    if total == 0:
        return 0
    masks = [_keys_to_masks(todo, memo.n) for memo, todo in zip(memos, missing)]
    outs = score_many(masks, step=step) if isinstance(score_many, UserScores) else score_many(masks)
    for memo, todo, out in zip(memos, missing, outs):
        if todo:
            memo.values.update(zip(todo, np.asarray(out, dtype=float).reshape(-1).tolist()))
    return total


def _single(score_fn: ScoreFn) -> UserScores:
    return UserScores(score_fn, "score_fn", many=False)


# ------------------------------------------------------------------------------------------------ AOPC
def aopc_curve(score_fn: ScoreFn, order: Sequence[int]) -> np.ndarray:
    """The N perturbation-curve terms ``p(x) - p(x without r_1..r_k)``, k = 1..N (one model call).

    >>> f = lambda masks: 1.0 - masks.mean(axis=1)
    >>> aopc_curve(f, [2, 0, 1]).round(3).tolist()
    [0.333, 0.667, 1.0]
    """
    order = _check_order(order)
    keys = [0] + _order_to_keys(order)
    probs = _single(score_fn)([_keys_to_masks(keys, len(order))], step=f"the {len(keys)} prefix sets of order={short_repr(order, 60)}")[0]
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


