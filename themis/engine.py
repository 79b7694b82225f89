"""The simulator's one event loop and its resource models (model.md §5).

Each dimension runs at most k stages at once; stages wait in a per-dimension
:class:`~themis.disciplines.Discipline`. How running stages progress is a
resource model:

* :class:`Exclusive` - a stage runs alone at its full duration (k = 1, or a
  timing model without bandwidth sharing);
* :class:`Shared` - a stage first spends its fixed (latency) time, then sends
  its bytes at B / n, n the stages of its dimension sending at that time.

Events sit in one heap keyed by (time, tie, code): issue events first, then
completions; ``tie`` is the start order (``tie_order="start"``), or the
dimension and then the start order (``"dim"``), so equal-time completions are
processed in a deterministic order.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import partial

from themis.disciplines import Discipline, PriorityDiscipline
from themis.disciplines.base import SID_BITS, SID_MASK, TIE_TOP
from themis.stages import StageTable

#: Tie keys of completions on dimension d start at d << _DIM_SHIFT (tie order "dim").
_DIM_SHIFT = 44


def _tie_base(ndims: int, tie_dim: bool) -> list[int]:
    return [(d << _DIM_SHIFT) if tie_dim else 0 for d in range(ndims)]


class Exclusive:
    """Stages run alone: a stage started at t ends at t + its duration.

    The event loop schedules these completions itself (they are known at the
    start), with tie keys ``tie_base[d] + start order``.
    """

    def __init__(self, ndims: int, tie_dim: bool) -> None:
        self.tie_base = _tie_base(ndims, tie_dim)


class Shared:
    """Bandwidth shared equally among a dimension's sending stages.

    A running stage is ``[fixed_end_ns, remaining_bytes]``; between events the
    set of sending stages is constant, so the bytes fall linearly. Each
    dimension has one live completion event (older ones carry a stale version).
    """

    #: A stage is done when its remaining bytes are below this fraction of its total.
    TOL = 1e-9

    def __init__(self, table: StageTable, ndims: int, heap: list, tie_dim: bool,
                 bandwidth_bytes_per_ns: Sequence[float]) -> None:
        self._fixed = table.fixed_ns
        self._sent = table.sent_bytes
        self._heap = heap
        self._nd = ndims
        self._bw = list(bandwidth_bytes_per_ns)
        self.tie_base = _tie_base(ndims, tie_dim)
        self._seq = 0
        self._running: list[dict[int, list[float]]] = [{} for _ in range(ndims)]
        self._last_t = [0.0] * ndims
        self._version = [0] * ndims
        self._dirty = [False] * ndims

    def _advance(self, d: int, t: float) -> None:
        run = self._running[d]
        last = self._last_t[d]
        sending = [v for v in run.values() if v[0] <= last]
        if sending and t > last:
            per = (t - last) * self._bw[d] / len(sending)
            for v in sending:
                v[1] -= per
        self._last_t[d] = t

    def _reschedule(self, d: int) -> None:
        self._version[d] += 1
        run = self._running[d]
        if not run:
            return
        now = self._last_t[d]
        sending = [v for v in run.values() if v[0] <= now]
        nxt = min((v[0] for v in run.values() if v[0] > now), default=float("inf"))
        if sending:
            rem = min(v[1] for v in sending)
            nxt = min(nxt, now + max(rem, 0.0) * len(sending) / self._bw[d])
        self._seq += 1
        heapq.heappush(self._heap, (nxt, self.tie_base[d] + self._seq,
                                    self._version[d] * self._nd + d))

    def begin(self, sid: int, d: int, t: float) -> None:
        """Stage ``sid`` starts on ``d`` at ``t``."""
        if not self._dirty[d]:
            self._advance(d, t)
            self._dirty[d] = True
        self._running[d][sid] = [t + self._fixed[sid], self._sent[sid]]

    def after_dispatch(self, d: int) -> None:
        """Reschedule ``d``'s completion if stages started on it."""
        if self._dirty[d]:
            self._dirty[d] = False
            self._reschedule(d)

    def complete(self, t: float, code: int) -> tuple[int, Sequence[int]] | None:
        """The dimension and the stages (ascending) that end at ``t``, or ``None``
        for a stale event."""
        d = code % self._nd
        if code // self._nd != self._version[d]:
            return None
        self._advance(d, t)
        run = self._running[d]
        sent, tol = self._sent, self.TOL
        done = sorted(sid for sid, v in run.items()
                      if v[0] <= t and v[1] <= tol * max(sent[sid], 1.0))
        for sid in done:
            del run[sid]
        return d, done

    def after_event(self, d: int) -> None:
        """Reschedule the dimension whose event was processed."""
        self._reschedule(d)


def run_events(
    table: StageTable,
    queues: Sequence[Discipline],
    resource: Exclusive | Shared,
    heap: list,
    active_chunks: int,
    issue_ns: Sequence[float],
    first_sids: Sequence[Sequence[int]],
) -> tuple[list[float], list[float]]:
    """Run every stage of ``table``; returns (start, end) per stage id (-1: never ran).

    ``heap`` is the (empty) event heap ``resource`` pushes completions onto;
    collective i is issued at ``issue_ns[i]`` and queues the stages
    ``first_sids[i]``. A chunk's next stage is queued when its stage ends. A
    dimension is dispatched (its queue asked for stages to start) only when it
    has a free slot and waiting stages.

    The hot path is written out inline: under :class:`Exclusive` the loop
    schedules completions itself (a stage's end is known when it starts), and
    :class:`~themis.disciplines.PriorityDiscipline` queues are run on their
    heaps directly (exactly as their ``push`` / ``pop`` would).
    """
    n = len(table)
    start = [-1.0] * n
    end = [-1.0] * n
    s_dim, s_last, s_dur = table.dim, table.last, table.duration_ns
    ndims = len(queues)
    free = [active_chunks] * ndims
    waiting = [0] * ndims
    # Queue entries: a PriorityDiscipline of one class on every dimension runs inline
    # on int heaps (entry rank + tie + sid, see PriorityDiscipline); any other
    # discipline is called through its push / pop with entry = sid (rank and tie 0).
    prio = bool(queues) and all(type(q) is type(queues[0]) for q in queues) \
        and isinstance(queues[0], PriorityDiscipline)
    if prio:
        heaps: list[list[int]] = [[] for _ in queues]
        qkey = type(queues[0]).shifted_ranks(table)  # type: ignore[attr-defined]
        newest = queues[0].newest_first  # type: ignore[attr-defined]
        qstep = -(1 << SID_BITS) if newest else 1 << SID_BITS
        qseq = TIE_TOP if newest else 0
        pushes = [partial(heapq.heappush, h) for h in heaps]
        pops = [partial(heapq.heappop, h) for h in heaps]
    else:
        qkey, qstep, qseq = [0] * n, 0, 0
        pushes = [q.push for q in queues]
        pops = [q.pop for q in queues]
    exclusive = isinstance(resource, Exclusive)
    if not exclusive:
        assert isinstance(resource, Shared)
        begin, complete = resource.begin, resource.complete
        after_dispatch, after_event = resource.after_dispatch, resource.after_event
    base = resource.tie_base
    heappush, heappop = heapq.heappush, heapq.heappop
    seq = 0  # start order (completion ties)
    n_issue = len(issue_ns)
    for ci, t in enumerate(issue_ns):
        heappush(heap, (t, ci - n_issue, -(ci + 1)))  # negative ties: before completions

    def dispatch(d: int, t: float) -> None:
        # Start stages on d while it has a free slot and its discipline offers one.
        nonlocal seq
        pop = pops[d]
        while free[d] and waiting[d]:
            entry = pop()
            if entry is None:  # a discipline that holds back its waiting stages
                break
            sid = entry & SID_MASK
            free[d] -= 1
            waiting[d] -= 1
            start[sid] = t
            if exclusive:
                seq += 1
                heappush(heap, (t + s_dur[sid], base[d] + seq, sid))
            else:
                begin(sid, d, t)
        if not exclusive:
            after_dispatch(d)

    while heap:
        t, _, code = heappop(heap)
        if code < 0:  # an issue: queue the first stage of every chunk
            for sid in first_sids[-code - 1]:
                d = s_dim[sid]
                qseq += qstep
                pushes[d](qkey[sid] + qseq + sid)
                waiting[d] += 1
                if free[d]:
                    dispatch(d, t)
            continue
        if exclusive:  # one stage ends; its successor's dimension first, then its own
            d = s_dim[code]
            end[code] = t
            free[d] += 1
            if not s_last[code]:
                sid = code + 1
                d2 = s_dim[sid]
                qseq += qstep
                pushes[d2](qkey[sid] + qseq + sid)
                waiting[d2] += 1
                if d2 != d and free[d2]:
                    dispatch(d2, t)
            if waiting[d]:
                dispatch(d, t)
            continue
        got = complete(t, code)
        if got is None:  # a stale event
            continue
        d, done = got
        free[d] += len(done)
        touched = {d}
        for sid in done:
            end[sid] = t
            if not s_last[sid]:
                d2 = s_dim[sid + 1]
                qseq += qstep
                pushes[d2](qkey[sid + 1] + qseq + sid + 1)
                waiting[d2] += 1
                touched.add(d2)
        for dd in sorted(touched):
            dispatch(dd, t)
        after_event(d)
    return start, end
