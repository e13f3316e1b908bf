"""The NAOPC authors' beam search, re-implemented from how their code runs (the baseline of bench_naopc).

Source of the behaviour: JoakimEdin/naopc, ``src/.../bound_approximation_methods.py``
(``get_pertubation_solver_callable``; read, not copied). As it runs, for ONE input at a time:

- one model call on the intact input (p(x));
- two beams of B states each, "descending" (the upper limit) and "ascending" (the lower limit), both
  starting from the empty ordering;
- per step: every state of BOTH beams is extended by every remaining feature (in increasing feature
  order); the DISTINCT removed sets of all candidates of both directions go to the model in ONE batched
  call; a candidate's cumulative score is its parent's plus ``p(x) - p(x without its set)``;
- the top B of each direction by cumulative score are kept (Python's stable sort: ties keep generation
  order); states that reach the same set by different orders are NOT merged, and nothing is memoised
  across steps (each step's sets have a new size anyway);
- after N steps the first state of each beam is the limit's ordering; the limit is its cumulative / N.

``authors_beam`` takes the same ``score_fn`` as :func:`textxai.naopc.aopc_limits` (bool removal masks
``[k, n]`` -> target probabilities ``[k]``) and returns the limits, their orderings and the number of
model inputs the authors' code would send (1 + the distinct sets of every step).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class AuthorsResult:
    upper: float
    lower: float
    upper_order: list[int]
    lower_order: list[int]
    model_inputs: int
    sets_per_step: list[int]


def _masks(keys: list[int], n: int) -> np.ndarray:
    return ((np.asarray(keys, dtype=object)[:, None] >> np.arange(n)) & 1).astype(bool)


def authors_beam(score_fn, n: int, beam_size: int = 5) -> AuthorsResult:
    """Lower and upper AOPC limits by the authors' beam (see the module docstring)."""
    p0 = float(np.asarray(score_fn(np.zeros((1, n), dtype=bool)), dtype=float).reshape(-1)[0])
    inputs, per_step = 1, []
    # a state: (order, removed-set bitmask, cumulative score); descending = upper, ascending = lower
    beams = {True: [((), 0, 0.0)], False: [((), 0, 0.0)]}
    for _ in range(n):
        candidates = []  # (descending, order, key, parent cumulative), descending beam first as in their list
        for descending in (True, False):
            for order, key, cumulative in beams[descending]:
                for j in range(n):
                    if not key >> j & 1:
                        candidates.append((descending, order + (j,), key | 1 << j, cumulative))
        keys = list(dict.fromkeys(c[2] for c in candidates))  # the distinct sets of both directions
        probs = np.asarray(score_fn(_masks(keys, n)), dtype=float).reshape(-1)
        inputs += len(keys)
        per_step.append(len(keys))
        drop = {k: p0 - p for k, p in zip(keys, probs.tolist())}
        for descending in (True, False):
            scored = [(o, k, c + drop[k]) for d, o, k, c in candidates if d == descending]
            scored = sorted(scored, key=lambda s: s[2], reverse=descending)  # stable, also with reverse=True
            beams[descending] = scored[:beam_size]
    (up_order, _, up_sum), (lo_order, _, lo_sum) = beams[True][0], beams[False][0]
    return AuthorsResult(up_sum / n, lo_sum / n, list(up_order), list(lo_order), inputs, per_step)
