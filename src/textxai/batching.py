"""Batching shared by every model call: inputs grouped by similar length, results put back in input order.

>>> list(length_sorted_batches([5, 1, 3, 2], batch_size=2))
[[1, 3], [2, 0]]
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from textxai.loading import LRUCache, cache_size
from textxai.progress import progress_bar


_clock = time.monotonic  # the budget's clock (tests replace it by a simulated one)


class WorkBudgetExceeded(RuntimeError):
    """A request went over its budget of model evaluations or wall time (see :func:`work_budget`)."""


class _Budget:
    def __init__(self, max_evaluations: int | None, seconds: float | None, what: str, parent=None):
        self.max_evaluations, self.what, self.used = max_evaluations, what, 0
        self.seconds = seconds
        self.deadline = None if seconds is None else _clock() + seconds
        self.parent = parent  # the enclosing budget (a Space request around an audit stage's own): charged too

    def charge(self, n: int) -> None:
        if self.parent is not None:
            self.parent.charge(n)
        self.used += n
        if self.max_evaluations is not None and self.used > self.max_evaluations:
            raise WorkBudgetExceeded(f"{self.what}: stopped after {self.used - n:,} model evaluations; the budget is "
                                     f"{self.max_evaluations:,} (--max-evaluations); ask for less work or raise it")
        if self.deadline is not None and _clock() > self.deadline:
            raise WorkBudgetExceeded(f"{self.what}: stopped after {self.seconds:g} s (its time budget) and "
                                     f"{self.used - n:,} model evaluations; ask for less work or run textxai locally")


_BUDGET: ContextVar[_Budget | None] = ContextVar("textxai_work_budget", default=None)


@contextmanager
def work_budget(max_evaluations: int | None = None, seconds: float | None = None, what: str = "this request"):
    """Inside the block, every model evaluation batched here counts; past ``max_evaluations`` inputs or
    ``seconds`` of wall time the next batch raises :class:`WorkBudgetExceeded` (checked before every batch of
    every model: classifier, embedder, LM — each long loop makes its model calls in batches, so it is stopped
    within one batch of its budget). The block yields the budget: ``budget.used`` is the count so far.

    >>> with work_budget(max_evaluations=3):
    ...     [len(b) for b in length_sorted_batches([1, 2, 3, 4], 2)]
    Traceback (most recent call last):
    ...
    textxai.batching.WorkBudgetExceeded: this request: stopped after 2 model evaluations; the budget is 3 (--max-evaluations); ask for less work or raise it
    """
    budget = _Budget(max_evaluations, seconds, what, parent=_BUDGET.get())  # a nested block counts in both
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def charge(n: int) -> None:
    """Count ``n`` more model evaluations against the current :func:`work_budget` (none: nothing happens); used
    where work is not a batch of rows, e.g. each token a language model generates is one evaluation per row."""
    budget = _BUDGET.get()
    if budget is not None and n > 0:
        budget.charge(int(n))


_ROWS: ContextVar[dict | None] = ContextVar("textxai_remembered_rows", default=None)


@contextmanager
def remembered_rows():
    """Inside the block, a classifier answers a token row it has already scored -- the same tokens, in the same
    precision, on the same model -- from memory: no forward pass, no evaluation counted (:func:`work_budget`
    counts the rows computed). For a block over which no model's weights change, e.g. an audit's stages, where
    one stage asks again for rows another has scored (the texts themselves) and the deletion editor, fed its own
    edit, scores the deletions it scored one step earlier. A remembered row's probabilities are those of its
    first computation (float32: equal to a new pass within the rounding of other batch neighbours, ~1e-7;
    bfloat16: within its rounding). Nested blocks share the outer block's memory.

    >>> with remembered_rows():
    ...     row_memory("a model") is row_memory("a model") is not None
    True
    >>> row_memory("a model") is None
    True
    """
    memory = _ROWS.get()
    token = _ROWS.set(memory if memory is not None else {})   # per model: an LRUCache of REMEMBERED_ROWS rows
    try:
        yield
    finally:
        _ROWS.reset(token)


#: The most rows remembered per model (least recently used dropped first; ~300 bytes each): reuse is local (a
#: text's edits, one stage after another), and an audit of many long texts must not grow without bound.
#: ``TEXTXAI_REMEMBERED_ROWS`` sets it.
REMEMBERED_ROWS = cache_size("TEXTXAI_REMEMBERED_ROWS", 1 << 18)


def row_memory(model):
    """The remembered rows of ``model`` inside :func:`remembered_rows` (a :class:`~textxai.loading.LRUCache` the
    caller fills), else None. Kept per model by identity, the model held for the block (so no other object takes
    its ``id`` meanwhile)."""
    memory = _ROWS.get()
    if memory is None:
        return None
    if id(model) not in memory:
        memory[id(model)] = (model, LRUCache(REMEMBERED_ROWS))
    return memory[id(model)][1]


# Under a wall-time budget (a Space request) a batch holds at most this many tokens (rows x longest row), so
# the check before each batch comes every few seconds even where a caller asks for large batches (a
# batch_size of 4,096 rows of 50 tokens: ~20 s on 2 cores). Results do not depend on the batch size.
DEADLINE_BATCH_TOKENS = 1 << 13


# On a CPU a batch of long inputs holds at most this many tokens: past ~2-4 thousand tokens the activations
# (the attention's [rows, heads, L, L] above all) leave the caches and each input costs more. Per input of the
# demo MiniLM on 2 idle cores (bench/bench_batch_tokens.py, 2026-11-25, best of 3), 32 rows vs rows up to 2,048
# tokens: 220 tokens 30.5 -> 26.7 ms in float32 (12.1 -> 10.8 in bfloat16), 400 tokens 59.8 -> 49.5 (26.0 ->
# 23.1), 512 tokens 80.7 -> 70.6 (37.2 -> 33.3): 1.12-1.21x from 120 tokens on; rows of <= 64 tokens (32 x 64 =
# 2,048) are not split. float32 probabilities do not depend on the batches (within 1e-6); bfloat16 ones move
# within its rounding (the 200-review audit: the same 118 TOKI verdicts, NAOPC's means within 0.0003).
CPU_BATCH_TOKENS = 1 << 11


def _batches(order: list[int], lengths: Sequence[int], batch_size: int, max_tokens: int | None,
             fill_tokens: int | None = None) -> list[list[int]]:
    if max_tokens is None and fill_tokens is None:
        return [order[start: start + batch_size] for start in range(0, len(order), batch_size)]
    out, chunk = [], []
    for i in order:  # shortest first: the newest row is the longest of its batch
        if chunk:
            rows, padded = len(chunk) + 1, (len(chunk) + 1) * max(int(lengths[i]), 1)
            full = rows > batch_size and (fill_tokens is None or padded > fill_tokens)
            if full or (max_tokens is not None and padded > max_tokens):
                out.append(chunk)
                chunk = []
        chunk.append(i)
    return out + ([chunk] if chunk else [])


def length_sorted_batches(lengths: Sequence[int], batch_size: int, progress: bool = False,
                          desc: str = "batches", fill_tokens: int | None = None,
                          max_tokens: int | None = None) -> Iterator[list[int]]:
    """Indices of the inputs in batches of ``batch_size``, shortest inputs first (little padding per batch).

    ``fill_tokens``: a batch takes more than ``batch_size`` inputs while its padded size (inputs x the longest)
    stays within ``fill_tokens`` (inputs of very different lengths, e.g. texts with words deleted: many short
    ones per batch, few long ones):

    >>> [len(b) for b in length_sorted_batches([10] * 6 + [100] * 3, 2, fill_tokens=200)]
    [6, 2, 1]

    ``max_tokens``: a batch holds fewer than ``batch_size`` inputs when its padded size would pass this many
    tokens (an input longer than that alone), e.g. :data:`CPU_BATCH_TOKENS` for the forward passes on a CPU:

    >>> [len(b) for b in length_sorted_batches([300] * 10, 32, max_tokens=CPU_BATCH_TOKENS)]
    [6, 4]

    The sort is stable, so the batches depend only on the lengths; ``progress`` shows a bar (:func:`textxai.progress.progress_bar`).
    Inside a :func:`work_budget` with ``seconds``, a batch also holds at most ``DEADLINE_BATCH_TOKENS`` tokens
    (``lengths`` in tokens) so that the budget is checked every few seconds.

    >>> with work_budget(seconds=60):
    ...     [len(b) for b in length_sorted_batches([4096] * 3 + [10] * 3, 32)]
    [3, 2, 1]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    budget = _BUDGET.get()
    if budget is not None and budget.deadline is not None:
        max_tokens = min(max_tokens or DEADLINE_BATCH_TOKENS, DEADLINE_BATCH_TOKENS)
    for chunk in progress_bar(_batches(order, lengths, batch_size, max_tokens, fill_tokens), progress, desc, unit="batch"):
        if budget is not None:
            budget.charge(len(chunk))
        yield chunk


def right_padded(rows: Sequence[Sequence[int]], chunk: Sequence[int], pad_id: int):
    """``(ids, attention_mask)``: the token-id rows ``rows[i]`` for ``i`` in ``chunk``, right-padded with ``pad_id`` to
    the longest, as two ``[len(chunk), longest]`` long tensors (the mask 1 on each row's own tokens).

    >>> ids, mask = right_padded([[5, 6, 7], [8]], [1, 0], 0)
    >>> ids.tolist(), mask.tolist()
    ([[8, 0, 0], [5, 6, 7]], [[1, 0, 0], [1, 1, 1]])
    """
    import torch

    length = max(len(rows[i]) for i in chunk)
    ids = torch.full((len(chunk), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(chunk), length), dtype=torch.long)
    for j, i in enumerate(chunk):
        ids[j, : len(rows[i])] = torch.as_tensor(rows[i], dtype=torch.long)
        mask[j, : len(rows[i])] = 1
    return ids, mask
