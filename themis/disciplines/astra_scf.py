"""``astra-scf``: ASTRA-sim 1.0's SmallestFirst queue, exactly (internal)."""

from __future__ import annotations

from bisect import bisect_left

from themis.disciplines.base import register_discipline
from themis.stages import StageTable


@register_discipline("astra-scf", public=False)
class AstraScf:
    """ASTRA-sim 1.0's SmallestFirst queue (``Sys::insert_stream``), exactly.

    One list, started from the front. A stage whose phase is in
    :attr:`fifo_phases` (all-reduce: ASTRA sends it down its FIFO path) is
    appended at the end; any other stage is inserted before the first waiting
    stage whose input size is not smaller than its own (so the newest first
    among equal sizes). It is what the ``astra-sim-1.0`` runs of SCF use.
    """

    __slots__ = ("_fifo", "_keys", "_phase", "_sids", "_size")

    #: Phases queued by arrival instead of by size.
    fifo_phases: tuple[str, ...] = ("AR",)

    def __init__(self, table: StageTable) -> None:
        self._size = table.input_bytes
        self._phase = table.phase
        self._keys: list[float] = []
        self._sids: list[int] = []
        self._fifo = 0  # FIFO-path stages waiting (while 0, the keys are sorted)

    def push(self, sid: int) -> None:
        """Insert as ASTRA-sim does (see the class docstring)."""
        m = self._size[sid]
        fifo = self._phase[sid] in self.fifo_phases
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
