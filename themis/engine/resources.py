"""The engine's two resource models: how a dimension's running stages progress (model.md §5).

* :class:`Exclusive` - a stage runs alone at its full duration (k = 1, or a
  timing model without bandwidth sharing). A stage's end is known when it
  starts, so the event loop schedules it itself (:mod:`themis.engine.loop`).
* :class:`Shared` - a stage first spends its fixed (latency) time, then sends
  its bytes at B / n, n the stages of its dimension sending at that time. Each
  dimension has one live event, re-planned whenever its running set changes
  (older ones carry a stale version).

Heap entries are ``(time, scheduled at, tie, code)``; a resource's ties are
``tie_base[d] + a counter``, so ties of one resource never repeat and equal-time
events of one scheduling time are processed by start order, or with
``tie_dim`` by dimension first (see :class:`~themis.engine.rules.Rules`).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from themis.engine.rules import SHARED_TOL
from themis.stages import StageTable

#: Tie keys on dimension d start at d << TIE_DIM_SHIFT (``tie_dim``).
TIE_DIM_SHIFT = 44

#: An event heap entry: (time, scheduled at, tie, code).
HeapEntry = tuple[float, float, int, int]


def tie_base(ndims: int, tie_dim: bool) -> list[int]:
    """Per dimension, the first tie key of its events."""
    return [(d << TIE_DIM_SHIFT) if tie_dim else 0 for d in range(ndims)]


class Exclusive:
    """Stages run alone: a stage started at t ends at t + its duration.

    The event loop pushes these ends itself, with tie keys ``tie_base[d] +``
    the start order and code = the stage id. ``running`` holds each
    dimension's running stages when the loop keeps loads.
    """

    def __init__(self, ndims: int, tie_dim: bool) -> None:
        self.tie_base = tie_base(ndims, tie_dim)
        self.running: list[set[int]] = [set() for _ in range(ndims)]

    def inflight(self, t: float, table: StageTable, start: Sequence[float],
                 out: list[float]) -> None:
        """Take from ``out`` the part of each running stage's bytes sent by ``t``
        (its share of its time elapsed)."""
        for d, run in enumerate(self.running):
            for sid in run:
                dur = table.duration_ns[sid]
                if dur > 0:
                    out[d] -= table.sent_bytes[sid] * min(1.0, (t - start[sid]) / dur)


class Shared:
    """Bandwidth shared equally among a dimension's sending stages.

    A running stage is ``[fixed_end_ns, remaining_bytes]``; between events the
    set of sending stages is constant, so the bytes fall linearly. A stage is
    sending at ``t`` once ``fixed_end <= t + time_tol_ns``; it is done when
    also its remaining bytes are at most :data:`SHARED_TOL` of its total (or
    would take less time at its share than ``t`` can resolve: ``t + rest <= t``,
    late in a long run).
    Codes are ``version * ndims + d``. With ``busy`` and ``sent`` (per-dimension
    loads), the time each dimension has a stage running is added to ``busy``,
    and each stage's bytes to ``sent`` when it starts.
    """

    TOL = SHARED_TOL

    def __init__(self, table: StageTable, ndims: int, heap: list[HeapEntry], tie_dim: bool,
                 bandwidth_bytes_per_ns: Sequence[float], time_tol_ns: float = 0.0,
                 busy: list[float] | None = None, sent: list[float] | None = None) -> None:
        self._fixed = table.fixed_ns
        self._sent = table.sent_bytes
        self._heap = heap
        self._nd = ndims
        self._bw = list(bandwidth_bytes_per_ns)
        self._tol_ns = time_tol_ns
        self._busy = busy
        self._sent_d = sent
        self.tie_base = tie_base(ndims, tie_dim)
        self._seq = 0
        self.running: list[dict[int, list[float]]] = [{} for _ in range(ndims)]
        self._last_t = [0.0] * ndims
        self._version = [0] * ndims
        self._dirty = [False] * ndims

    def _advance(self, d: int, t: float) -> None:
        run = self.running[d]
        last = self._last_t[d]
        if run and t > last:
            if self._busy is not None:
                self._busy[d] += t - last
            lim = last + self._tol_ns
            sending = [v for v in run.values() if v[0] <= lim]
            if sending:
                per = (t - last) * self._bw[d] / len(sending)
                for v in sending:
                    v[1] -= per
        self._last_t[d] = t

    def _reschedule(self, d: int) -> None:
        self._version[d] += 1
        run = self.running[d]
        if not run:
            return
        lim = self._last_t[d] + self._tol_ns
        sending = [v for v in run.values() if v[0] <= lim]
        nxt = min((v[0] for v in run.values() if v[0] > lim), default=float("inf"))
        if sending:
            now, n, bw = self._last_t[d], len(sending), self._bw[d]
            at = now + max(min(v[1] for v in sending), 0.0) * n / bw
            if at <= now:
                self._unstick(d, n)
            nxt = min(nxt, at)
        self._seq += 1
        heapq.heappush(self._heap, (nxt, nxt, self.tie_base[d] + self._seq,
                                    self._version[d] * self._nd + d))

    def _unstick(self, d: int, n: int) -> None:
        """Sending stages whose rest would take less time than the dimension's clock
        can add to it (late in a long run) have sent it: otherwise such a stage is
        re-planned at the same time for ever. (Nothing else changes: a stage whose
        bytes are sent to the tolerance keeps its count.)"""
        now, bw, lim, tol = self._last_t[d], self._bw[d], self._last_t[d] + self._tol_ns, self.TOL
        for sid, v in self.running[d].items():
            if v[0] <= lim and v[1] > tol * max(self._sent[sid], 1.0) \
                    and now + v[1] * n / bw <= now:
                v[1] = 0.0

    def begin(self, sid: int, d: int, t: float) -> None:
        """Stage ``sid`` starts on ``d`` at ``t``."""
        if not self._dirty[d]:
            self._advance(d, t)
            self._dirty[d] = True
        self.running[d][sid] = [t + self._fixed[sid], self._sent[sid]]
        if self._sent_d is not None:
            self._sent_d[d] += self._sent[sid]

    def after_dispatch(self, d: int) -> None:
        """Reschedule ``d``'s event if stages started on it."""
        if self._dirty[d]:
            self._dirty[d] = False
            self._reschedule(d)

    def complete(self, t: float, code: int) -> tuple[int, list[int]] | None:
        """The dimension and the stages (ascending) that end at ``t``, or ``None``
        for a stale event."""
        d = code % self._nd
        if code // self._nd != self._version[d]:
            return None
        self._advance(d, t)
        run = self.running[d]
        sent, tol = self._sent, self.TOL
        lim = t + self._tol_ns
        done = sorted(sid for sid, v in run.items()
                      if v[0] <= lim and v[1] <= tol * max(sent[sid], 1.0))
        for sid in done:
            del run[sid]
        return d, done

    def after_event(self, d: int) -> None:
        """Reschedule the dimension whose event was processed."""
        self._reschedule(d)

    def inflight(self, t: float, table: StageTable, start: Sequence[float],
                 out: list[float]) -> None:
        """Take from ``out`` the bytes each running stage has sent (as of its
        dimension's last event)."""
        for d, run in enumerate(self.running):
            for sid, v in run.items():
                out[d] -= self._sent[sid] - max(v[1], 0.0)
