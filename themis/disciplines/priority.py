"""ASTRA-sim 1.0's queues with collective priorities (internal; workloads.md §4).

A training run issues collectives over time, each with a priority
(``Sys::get_priority``: LIFO counts up, FIFO down, HIGHEST for DLRM's
all-to-all), which its stages carry in :attr:`StageTable.priority
<themis.stages.StageTable>`. ASTRA-sim keeps one list per dimension
(``Sys::insert_stream``):

* ``fifo-priority`` (the FIFO discipline): a stage passes every waiting stage
  of priority >= its own and goes in before the first of lower priority;
* ``astra-scf-priority`` (SmallestFirst): all-reduce and all-to-all stages take
  the FIFO path above; any other stage passes every waiting stage of smaller
  input size (so the newest first among equal sizes); priority is ignored.

Running stages are not in these lists (ASTRA skips them, they are at the front).

While every waiting stage takes one path, ASTRA's list is sorted by one key
(FIFO path: (-priority, arrival); size path: (size, -arrival)), so a heap pops
the same front in O(log n). Only while both paths wait in one list (all-to-all
or localBWAware all-reduce stages beside reduce-scatter ones under SCF) is the
list kept as ASTRA keeps it, scanned from the front.
"""

from __future__ import annotations

import heapq

from themis.disciplines.base import register_discipline
from themis.stages import StageTable

#: Phases that ASTRA-sim's SmallestFirst queue sends down its FIFO path.
FIFO_PATH_PHASES = frozenset({"AR", "A2A"})


@register_discipline("fifo-priority", public=False)
class PriorityFifo:
    """ASTRA's FIFO path only: sorted by priority (highest first), stable."""

    __slots__ = ("_prio", "_q", "_seq")

    def __init__(self, table: StageTable) -> None:
        self._prio = table.priority
        self._q: list[tuple[int, int, int]] = []
        self._seq = 0

    def push(self, sid: int) -> None:
        """Insert behind every waiting stage of priority >= its own."""
        self._seq += 1
        heapq.heappush(self._q, (-self._prio[sid], self._seq, sid))

    def pop(self) -> int | None:
        """The front."""
        return heapq.heappop(self._q)[2] if self._q else None

    def __len__(self) -> int:
        return len(self._q)


@register_discipline("astra-scf-priority", public=False)
class AstraPriorityScf:
    """ASTRA's SmallestFirst list: FIFO path for AR / A2A stages, size path otherwise.

    A heap while all waiting stages take one path (``_mode`` "fifo" or "size",
    see the module docstring); ASTRA's own list (``_list``, ``_mode`` "mixed")
    from the push that mixes the paths until the queue is empty again.
    """

    __slots__ = ("_heap", "_list", "_mode", "_phase", "_prio", "_seq", "_size")

    def __init__(self, table: StageTable) -> None:
        self._prio = table.priority
        self._size = table.input_bytes
        self._phase = table.phase
        self._heap: list[tuple[float, int, int]] = []
        self._list: list[int] = []
        self._mode = ""
        self._seq = 0

    def push(self, sid: int) -> None:
        """Insert as ``Sys::insert_stream`` does."""
        mode = "fifo" if self._phase[sid] in FIFO_PATH_PHASES else "size"
        if self._mode == "mixed":
            self._insert(sid, mode)
            return
        if self._heap and mode != self._mode:
            # Both paths from now on: ASTRA's list is the heap in key order.
            self._list = [s for *_, s in sorted(self._heap)]
            self._heap = []
            self._mode = "mixed"
            self._insert(sid, mode)
            return
        self._mode = mode
        self._seq += 1
        if mode == "fifo":
            heapq.heappush(self._heap, (-self._prio[sid], self._seq, sid))
        else:
            heapq.heappush(self._heap, (self._size[sid], -self._seq, sid))

    def _insert(self, sid: int, mode: str) -> None:
        q = self._list
        i, n = 0, len(q)
        if mode == "fifo":
            prio = self._prio
            p = prio[sid]
            while i < n and prio[q[i]] >= p:
                i += 1
        else:
            size = self._size
            m = size[sid]
            while i < n and size[q[i]] < m:
                i += 1
        q.insert(i, sid)

    def pop(self) -> int | None:
        """The front."""
        if self._mode == "mixed":
            sid = self._list.pop(0)
            if not self._list:
                self._mode = ""
            return sid
        return heapq.heappop(self._heap)[2] if self._heap else None

    def __len__(self) -> int:
        return len(self._list) if self._mode == "mixed" else len(self._heap)
