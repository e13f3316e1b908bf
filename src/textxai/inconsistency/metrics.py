"""Word distances along a chain and the paper's metrics from them: minimality, inc (eq. 1), inc@n (eq. 2), flip rate."""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from textxai.inconsistency.checks import (DEFAULT_N, _check_labels, _check_pooling, _check_word_tokenizer, check_chain,
                                          check_chains, check_n)
from textxai.progress import progress_bar
from textxai.validation import check_positive_int, short_repr
from textxai.words import tokenize_many, word_distance


def step_distances(chain, word_tokenizer: str = "spacy") -> np.ndarray:
    """``[d(x_0, x_1), d(x_1, x_2), ...]``: the minimality of every step of one chain (int array).

    >>> step_distances(["a b c", "a x c", "a x", None]).tolist()
    [1, 1]
    """
    _check_word_tokenizer(word_tokenizer)
    texts = check_chain(chain)
    words = tokenize_many(texts, word_tokenizer)
    return np.array([word_distance(words[i - 1], words[i]) for i in range(1, len(words))], dtype=np.int64)


def _inc_from_distances(d: np.ndarray) -> np.ndarray:
    return np.maximum(np.diff(d), 0) if len(d) > 1 else np.zeros(0, dtype=np.int64)


def step_inconsistency(chain, word_tokenizer: str = "spacy") -> np.ndarray:
    """``[inc_1, inc_2, ...]`` with ``inc_i = relu(d(x_i, x_{i+1}) - d(x_{i-1}, x_i))`` (eq. 1).

    >>> step_inconsistency(["a b c", "a x c", "y z w", "y z w v"]).tolist()
    [2, 0]
    """
    return _inc_from_distances(step_distances(chain, word_tokenizer))


def chain_inc_at(chain, n: int, word_tokenizer: str = "spacy") -> float:
    """inc@n of one chain: the mean of inc at steps 1..n (eq. 2); ``nan`` if the chain lacks ``x_{n+1}``.

    >>> chain_inc_at(["a b c", "a x c", "y z w", "y z w v"], 2)
    1.0
    """
    check_positive_int(int(n) if isinstance(n, np.integer) else n, "n")
    inc = step_inconsistency(chain, word_tokenizer)
    return float(inc[:n].mean()) if len(inc) >= n else float("nan")


def _all_distances(texts_per_chain: list[list[str]], word_tokenizer: str, progress: bool = False) -> list[np.ndarray]:
    flat = [t for texts in texts_per_chain for t in texts]
    words = tokenize_many(flat, word_tokenizer)
    out, pos = [], 0
    for texts in progress_bar(texts_per_chain, progress, "inconsistency: distances", unit="chain"):
        w = words[pos : pos + len(texts)]
        pos += len(texts)
        out.append(np.array([word_distance(w[i - 1], w[i]) for i in range(1, len(w))], dtype=np.int64))
    return out


def _warn_empty(metric: str, n: int) -> None:
    warnings.warn(f"{metric}@{n}: no chain reaches step {n}; the value is NaN (0 contributing chains)", stacklevel=3)


def _inc_stats(distances: list[np.ndarray], n: int, pooling: str) -> tuple[float, int, int]:
    """(inc@n, contributing chains, contributing (chain, step) pairs)."""
    incs = [_inc_from_distances(d) for d in distances]
    if pooling == "pooled":
        parts = [inc[:n] for inc in incs if len(inc) > 0]
        steps = sum(len(p) for p in parts)
        value = float(np.concatenate(parts).mean()) if steps else float("nan")
        return value, len(parts), steps
    means = [float(inc[:n].mean()) for inc in incs if len(inc) >= n]
    value = float(np.mean(means)) if means else float("nan")
    return value, len(means), len(means) * n


def inc_at(chains, n=DEFAULT_N, pooling: str = "pooled", word_tokenizer: str = "spacy") -> dict[int, dict]:
    """inc@n over a dataset of chains, for every ``n``: ``{n: {"value", "chains", "steps"}}``.

    ``pooling="pooled"`` (the authors' table): mean of inc over every available (chain, step <= n) pair;
    ``"per_chain"``: mean of the per-chain inc@n over the chains that reach step ``n`` (have ``x_{n+1}``).
    ``chains`` counts contributing chains, ``steps`` contributing (chain, step) pairs.

    >>> inc_at([["a", "b", "b c d"], ["a", "b c", "d"]], n=[1, 2])[1]
    {'value': 0.5, 'chains': 2, 'steps': 2}
    >>> inc_at([["a", "b", "b c d"], ["a", "b c", "d"]], n=[2], pooling="per_chain")[2]["chains"]
    0
    """
    n_values = check_n(n)
    _check_pooling(pooling)
    _check_word_tokenizer(word_tokenizer)
    distances = _all_distances(check_chains(chains), word_tokenizer)
    out = {}
    for k in n_values:
        value, count, steps = _inc_stats(distances, k, pooling)
        if count == 0:
            _warn_empty("inc", k)
        out[k] = {"value": value, "chains": count, "steps": steps}
    return out


def _minimality_stats(distances: list[np.ndarray], n: int) -> tuple[float, int]:
    vals = [float(d[n - 1]) for d in distances if len(d) >= n]
    return (float(np.mean(vals)) if vals else float("nan")), len(vals)


def minimality_at(chains, n=DEFAULT_N, word_tokenizer: str = "spacy") -> dict[int, dict]:
    """minimality@n: mean ``d(x_{n-1}, x_n)`` over the chains that have ``x_n``: ``{n: {"value", "chains"}}``.

    >>> minimality_at([["a", "b", "b c d"], ["a", "b c"]], n=[1, 2])
    {1: {'value': 1.5, 'chains': 2}, 2: {'value': 2.0, 'chains': 1}}
    """
    n_values = check_n(n)
    _check_word_tokenizer(word_tokenizer)
    distances = _all_distances(check_chains(chains), word_tokenizer)
    out = {}
    for k in n_values:
        value, count = _minimality_stats(distances, k)
        if count == 0:
            _warn_empty("minimality", k)
        out[k] = {"value": value, "chains": count}
    return out


def _flip_stats(labels: list[list[int]], failed: list[bool], n: int) -> tuple[float, int]:
    """Chains that attempted step n: they have x_n, or their editor failed exactly at step n."""
    attempted = flipped = 0
    for lab, fail in zip(labels, failed):
        if len(lab) > n:
            attempted += 1
            flipped += lab[n] != lab[n - 1]
        elif fail and len(lab) == n:
            attempted += 1
    return (flipped / attempted if attempted else float("nan")), attempted


def flip_rate_at(labels, n=DEFAULT_N) -> dict[int, dict]:
    """flip_rate@n from per-step labels (one list per chain, ``labels[c][i]`` = predicted label of ``x_i``).

    The fraction of chains whose label at step ``n`` differs from the label at step ``n - 1``, over the chains
    that attempted step ``n``: those that have ``x_n``, and those whose editor failed at step ``n`` (marked by a
    trailing ``None`` label, as a trailing ``None`` marks the chain), which count as not flipped. A chain that
    simply ends (no more feedback steps were run) does not take part.

    >>> flip_rate_at([[0, 1, 0], [0, 1, 1], [1, 1, None], [0, 1]], n=[1, 2])
    {1: {'value': 0.75, 'chains': 4}, 2: {'value': 0.3333333333333333, 'chains': 3}}
    """
    n_values = check_n(n)
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise TypeError(f"labels={short_repr(labels)}: expected one list of integer labels per chain")
    chains = []
    for i, lab in enumerate(labels):
        if isinstance(lab, str) or not isinstance(lab, Sequence) and not hasattr(lab, "__array__"):
            raise TypeError(f"labels[{i}]={short_repr(lab)}: expected a list of integer labels, one per text of the chain")
        lab = list(lab)
        k = len(lab)
        while k > 0 and lab[k - 1] is None:
            k -= 1
        chains.append((lab[:k], k < len(lab)))
    labs = _check_labels([c[0] for c in chains], [c[0] for c in chains], [len(c[0]) for c in chains])
    failed = [c[1] for c in chains]
    out = {}
    for k in n_values:
        value, count = _flip_stats(labs, failed, k)
        if count == 0:
            _warn_empty("flip_rate", k)
        out[k] = {"value": value, "chains": count}
    return out
