"""``replay``: start stages strictly in a given per-dimension order (internal)."""

from __future__ import annotations

from collections.abc import Sequence

from themis.disciplines.base import register_discipline
from themis.stages import StageTable


@register_discipline("replay", public=False)
class Replay:
    """Start stages in ``order``; wait while the next one is not ready."""

    __slots__ = ("_order", "_pos", "_ready")

    def __init__(self, table: StageTable, order: Sequence[int] = ()) -> None:
        self._order = list(order)
        self._pos = 0
        self._ready: set[int] = set()

    def push(self, sid: int) -> None:
        """Mark ready."""
        self._ready.add(sid)

    def pop(self) -> int | None:
        """The next stage in the order, if it is ready."""
        if self._pos < len(self._order) and self._order[self._pos] in self._ready:
            sid = self._order[self._pos]
            self._ready.discard(sid)
            self._pos += 1
            return sid
        return None

    def __len__(self) -> int:
        return len(self._ready)
