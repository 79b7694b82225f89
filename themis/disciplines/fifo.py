"""FIFO: stages start in the order they became ready."""

from __future__ import annotations

from collections import deque

from themis.disciplines.base import register_discipline
from themis.stages import StageTable


@register_discipline("fifo")
class Fifo:
    """Arrival order."""

    __slots__ = ("_q",)

    def __init__(self, table: StageTable) -> None:
        self._q: deque[int] = deque()

    def push(self, sid: int) -> None:
        """Append."""
        self._q.append(sid)

    def pop(self) -> int | None:
        """Oldest first."""
        return self._q.popleft() if self._q else None

    def __len__(self) -> int:
        return len(self._q)
