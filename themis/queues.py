"""Intra-dimension queue disciplines (model.md §5): FIFO, SCF, and replay.

A discipline holds the stages waiting on one dimension; ``pop`` returns the
next one to start, or ``None`` if none may start now.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from topologies.errors import InputError


class Discipline(Protocol):
    """A per-dimension waiting queue of stage ids."""

    def push(self, sid: int, size: float, seq: int) -> None:
        """Queue stage ``sid`` of input ``size``; ``seq`` grows with every push."""
        ...

    def pop(self) -> int | None:
        """The stage to start next, or ``None``."""
        ...

    def __len__(self) -> int: ...


class Fifo:
    """Arrival order."""

    __slots__ = ("_q",)

    def __init__(self) -> None:
        self._q: deque[int] = deque()

    def push(self, sid: int, size: float, seq: int) -> None:
        """Append."""
        self._q.append(sid)

    def pop(self) -> int | None:
        """Oldest first."""
        return self._q.popleft() if self._q else None

    def __len__(self) -> int:
        return len(self._q)


class Scf:
    """Smallest chunk (stage input size) first; newest first among equal sizes."""

    __slots__ = ("_h",)

    def __init__(self) -> None:
        self._h: list[tuple[float, int, int]] = []

    def push(self, sid: int, size: float, seq: int) -> None:
        """Insert keyed by (size, -seq)."""
        heapq.heappush(self._h, (size, -seq, sid))

    def pop(self) -> int | None:
        """Smallest size, most recently queued among equals."""
        return heapq.heappop(self._h)[2] if self._h else None

    def __len__(self) -> int:
        return len(self._h)


class Replay:
    """Start stages strictly in a given order; wait if the next is not ready."""

    __slots__ = ("_order", "_pos", "_ready")

    def __init__(self, order: Sequence[int]) -> None:
        self._order = list(order)
        self._pos = 0
        self._ready: set[int] = set()

    def push(self, sid: int, size: float, seq: int) -> None:
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


DISCIPLINES: dict[str, Callable[[], Discipline]] = {"fifo": Fifo, "scf": Scf}


def canonical_intra(name: str) -> str:
    """``fifo`` or ``scf`` for any accepted spelling (``FIFO``, ``smallestFirst``...)."""
    from topologies.system import INTRA_ALIASES

    key = INTRA_ALIASES.get(str(name).strip().lower())
    if key is None:
        raise InputError("unknown intra-dimension discipline (expected fifo or scf)",
                         "intra", name)
    return key
