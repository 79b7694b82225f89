"""LRW: largest remaining work first.

A stage's remaining work is its own duration plus the durations of its
chunk's later stages (in ns, from the run's timing model, as each would take
alone). The waiting stage with the most remaining work starts first, so the
chunks furthest from done (the longest tails of the critical path) are served
first; equal remaining work starts in arrival order.
"""

from __future__ import annotations

from collections.abc import Sequence

from themis.disciplines.base import PriorityDiscipline, register_discipline
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
class Lrw(PriorityDiscipline):
    """Most remaining work (this stage and the chunk's later ones) first; FIFO among equals."""

    __slots__ = ()
    newest_first = False

    @classmethod
    def keys(cls, table: StageTable) -> Sequence[float]:
        """Minus the remaining work (the smallest key starts first)."""
        return [-r for r in remaining_work_ns(table)]

    @classmethod
    def grown_keys(cls, table: StageTable, keys: Sequence[float]) -> Sequence[float]:
        """``keys`` (a list :meth:`keys` made) extended by the stages added since: a
        stage's remaining work depends on its own chunk only, and chunks are added whole."""
        start = len(keys)
        if not isinstance(keys, list) or (start and not table.last[start - 1]):
            return cls.keys(table)
        tail = []
        after = 0.0
        for sid in range(len(table) - 1, start - 1, -1):
            if table.last[sid]:
                after = 0.0
            after += table.duration_ns[sid]
            tail.append(-after)
        keys.extend(reversed(tail))
        return keys
