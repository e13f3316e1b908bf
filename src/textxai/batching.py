"""Batching shared by every model call: inputs grouped by similar length, results put back in input order.

>>> list(length_sorted_batches([5, 1, 3, 2], batch_size=2))
[[1, 3], [2, 0]]
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from textxai.progress import progress_bar


def length_sorted_batches(lengths: Sequence[int], batch_size: int, progress: bool = False,
                          desc: str = "batches") -> Iterator[list[int]]:
    """Indices of the inputs in batches of ``batch_size``, shortest inputs first (little padding per batch).

    The sort is stable, so the batches depend only on the lengths; ``progress`` shows a bar (:func:`textxai.progress.progress_bar`).
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for start in progress_bar(range(0, len(order), batch_size), progress, desc, unit="batch"):
        yield order[start: start + batch_size]
