"""LRW: largest remaining work first.

A stage's remaining work is its own duration plus the durations of its
chunk's later stages (in ns, from the run's timing model, as each would take
alone). The waiting stage with the most remaining work starts first, so the
chunks furthest from done (the longest tails of the critical path) are served
first; equal remaining work starts in arrival order.
"""

from __future__ import annotations

import heapq

from themis.disciplines.base import register_discipline
from themis.stages import StageTable


def remaining_work_ns(table: StageTable) -> list[float]:
    """Per stage: its duration plus those of its chunk's later stages (cached on ``table``)."""
    cached = table.cache.get("remaining_ns")
    if isinstance(cached, list) and len(cached) == len(table):
        return cached
    rem = [0.0] * len(table)
    after = 0.0
    for sid in range(len(table) - 1, -1, -1):
        if table.last[sid]:
            after = 0.0
        after += table.duration_ns[sid]
        rem[sid] = after
    table.cache["remaining_ns"] = rem
    return rem


@register_discipline("lrw")
class Lrw:
    """Most remaining work (this stage and the chunk's later ones) first; FIFO among equals."""

    __slots__ = ("_h", "_rem", "_seq")

    def __init__(self, table: StageTable) -> None:
        self._h: list[tuple[float, int, int]] = []
        self._rem = remaining_work_ns(table)
        self._seq = 0

    def push(self, sid: int) -> None:
        """Insert keyed by (-remaining work, arrival)."""
        self._seq += 1
        heapq.heappush(self._h, (-self._rem[sid], self._seq, sid))

    def pop(self) -> int | None:
        """The waiting stage with the most remaining work."""
        return heapq.heappop(self._h)[2] if self._h else None

    def __len__(self) -> int:
        return len(self._h)
