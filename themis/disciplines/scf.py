"""SCF: smallest chunk (stage input size) first."""

from __future__ import annotations

import heapq

from themis.disciplines.base import register_discipline
from themis.stages import StageTable


@register_discipline("scf")
class Scf:
    """Smallest stage input first; the most recently queued first among equal sizes."""

    __slots__ = ("_h", "_seq", "_size")

    def __init__(self, table: StageTable) -> None:
        self._h: list[tuple[float, int, int]] = []
        self._size = table.input_bytes
        self._seq = 0

    def push(self, sid: int) -> None:
        """Insert keyed by (size, -arrival)."""
        self._seq -= 1
        heapq.heappush(self._h, (self._size[sid], self._seq, sid))

    def pop(self) -> int | None:
        """Smallest size, most recently queued among equals."""
        return heapq.heappop(self._h)[2] if self._h else None

    def __len__(self) -> int:
        return len(self._h)
