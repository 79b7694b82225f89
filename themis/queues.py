"""Intra-dimension queue disciplines (model.md §5): FIFO, SCF, and replay.

A discipline holds the stages waiting on one dimension; ``pop`` returns the
next one to start, or ``None`` if none may start now.

``astra-scf`` is ASTRA-sim 1.0's SmallestFirst exactly (one list, all-reduce
stages appended by arrival); it is what the ``astra-sim-1.0`` runs use.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
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


class AstraScf:
    """ASTRA-sim 1.0's SmallestFirst queue (``Sys::insert_stream``), exactly.

    One list, started from the front. A stage whose phase is in
    :attr:`fifo_phases` (all-reduce: ASTRA sends it down its FIFO path) is
    appended at the end; any other stage is inserted before the first waiting
    stage whose input size is not smaller than its own (so the newest first
    among equal sizes). The simulator passes ``size`` as ``(bytes, fifo)``.
    """

    __slots__ = ("_fifo", "_keys", "_sids")

    #: Phases queued by arrival instead of by size.
    fifo_phases: tuple[str, ...] = ("AR",)

    def __init__(self) -> None:
        self._keys: list[float] = []
        self._sids: list[int] = []
        self._fifo = 0  # FIFO-path stages waiting (while 0, the keys are sorted)

    def push(self, sid: int, size: tuple[float, bool], seq: int) -> None:  # type: ignore[override]
        """Insert as ASTRA-sim does (see the class docstring)."""
        m, fifo = size
        keys = self._keys
        if fifo:
            i = len(keys)
            self._fifo += 1
        elif not self._fifo:
            i = bisect_left(keys, m)
        else:
            i, n = 0, len(keys)
            while i < n and keys[i] < m:
                i += 1
        keys.insert(i, m)
        self._sids.insert(i, sid * 2 + fifo)

    def pop(self) -> int | None:
        """The front of the list."""
        if not self._sids:
            return None
        self._keys.pop(0)
        code = self._sids.pop(0)
        if code & 1:
            self._fifo -= 1
        return code >> 1

    def __len__(self) -> int:
        return len(self._sids)


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


DISCIPLINES: dict[str, Callable[[], Discipline]] = {"fifo": Fifo, "scf": Scf,
                                                    "astra-scf": AstraScf}


def canonical_intra(name: str) -> str:
    """``fifo`` or ``scf`` for any accepted spelling (``FIFO``, ``smallestFirst``...).

    A name of :data:`DISCIPLINES` (such as the internal ``astra-scf``) passes as it is.
    """
    from topologies.system import INTRA_ALIASES

    if name in DISCIPLINES:
        return name
    key = INTRA_ALIASES.get(str(name).strip().lower())
    if key is None:
        raise InputError("unknown intra-dimension discipline (expected fifo or scf)",
                         "intra", name)
    return key
