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
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from themis.disciplines import Discipline, PriorityDiscipline, canonical_intra, make_discipline
from themis.disciplines.base import SID_BITS, SID_MASK, TIE_TOP
from themis.plans import Plan
from themis.stages import StageTable
from themis.timing.base import Timing
from topologies.network import Network

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


# -- collectives issued while the engine runs ----------------------------------------

#: The discipline a name runs as when stages carry collective priorities (ASTRA-sim
#: 1.0's lists, :mod:`themis.disciplines.priority`); other names run as they are.
_PRIORITY_DISCIPLINES = {"fifo": "fifo-priority"}
_ASTRA_PRIORITY_DISCIPLINES = {"scf": "astra-scf-priority"}
#: Workload events come after stage ends scheduled at the same time (tie field).
_EVENT_TIE = 1 << 30


def priority_discipline(intra: str, astra: bool) -> str:
    """The discipline ``intra`` runs as with collective priorities: FIFO keeps
    ASTRA-sim's priority order; SCF under ``astra-sim-1.0`` its SmallestFirst list."""
    key = canonical_intra(intra)
    if key in _PRIORITY_DISCIPLINES:
        return _PRIORITY_DISCIPLINES[key]
    if astra and key in _ASTRA_PRIORITY_DISCIPLINES:
        return _ASTRA_PRIORITY_DISCIPLINES[key]
    return key


class Engine:
    """The event engine of collectives issued while it runs (a training iteration).

    One NPU's view (model.md §2): each dimension runs at most k stages at once;
    a stage is never preempted. :meth:`issue` adds a collective's chunks to
    the :class:`StageTable` at the current time, with a priority, and queues
    and serves them one at a time (a dimension idle at the issue tick starts
    chunk 0 before chunk 1 exists); its ``on_done`` is called when the last
    chunk's last stage ends. :meth:`at` schedules any other event (the
    workload's compute, waits and updates). On a stage's end its chunk is
    first inserted into its next queue, then the old dimension is served,
    then the new one (workloads.md §4).

    One heap holds every event, keyed by (time, when it was scheduled, tie,
    sequence). A stage end counts as scheduled when its final message was
    (its end minus the timing model's ``last_message_ns``, ASTRA-sim 1.0's
    same-tick rule; 0 for other models), then by dimension (``tie_by_dim``,
    ASTRA's boost mode) or start order. This is the :class:`Exclusive`
    resource model; :class:`SharedEngine` is the :class:`Shared` one.
    """

    def __init__(self, network: Network, timings: Mapping[str, Timing], intra: str,
                 active_chunks: int, tie_by_dim: bool, astra: bool) -> None:
        self.network = network
        self.ndims = network.ndims
        self.timings = timings
        self.k = active_chunks
        self.tie_by_dim = tie_by_dim
        self.table = StageTable()
        self.prio = self.table.priority
        self.intra = priority_discipline(intra, astra)
        self.queues = [make_discipline(self.intra, self.table) for _ in range(self.ndims)]
        self.start: list[float] = []
        self.end: list[float] = []
        self.coll: list[int] = []
        self.chunk: list[int] = []
        self.free = [active_chunks] * self.ndims
        self.busy = [0.0] * self.ndims
        self.sent = [0.0] * self.ndims
        self.heap: list[tuple] = []
        self.seq = 0
        self.start_seq = 0
        self.now = 0.0
        self.pending: list[int] = []  # chunks still running, per collective
        self.done_cb: list[Callable[[int, float], None]] = []
        self.coll_end: list[float] = []
        self.issue_ns: list[float] = []
        self._blocks: dict[tuple, tuple] = {}
        self.last_msg: list[float] = []  # per stage: its final message's duration
        self.unsent = [0.0] * self.ndims  # bytes of queued and running stages, per dim
        self.running: list[set[int]] = [set() for _ in range(self.ndims)]

    # -- events ------------------------------------------------------------------
    def at(self, t: float, fn: Callable[[], None], tie: int = _EVENT_TIE) -> None:
        """Run ``fn`` at time ``t`` (scheduled now)."""
        self.seq += 1
        heapq.heappush(self.heap, (t, self.now, tie, self.seq, fn))

    def run(self) -> None:
        """Process events until none is left."""
        heap = self.heap
        pop = heapq.heappop
        while heap:
            t, _, _, _, what = pop(heap)
            self.now = t
            if what.__class__ is int:
                self._stage_end(what, t)
            else:
                what()

    # -- collectives -------------------------------------------------------------
    def _block(self, kind: str, plan: Plan, size: int) -> tuple:
        """The stage columns of a chunk and the final-message time of each stage."""
        key = (kind, plan, size)
        hit = self._blocks.get(key)
        if hit is None:
            tm = self.timings[kind]
            last_of = getattr(tm, "last_message_ns", None)
            costs = []
            lasts = []
            m: float = size
            for phase, d in plan:
                c = tm.stage(phase, d, m)
                costs.append((m, c))
                lasts.append(float(last_of(phase, d, m)) if last_of is not None else 0.0)
                m = c.output_bytes
            hit = self._blocks[key] = (StageTable.block(plan, costs), lasts)
        return hit

    def issue(self, kind: str, sizes: Sequence[int], plans: Sequence[Plan], priority: int,
              on_done: Callable[[int, float], None]) -> int:
        """Issue a collective now: chunk ``k`` of ``sizes[k]`` bytes (an all-gather's
        per-NPU input) follows ``plans[k]``; returns the collective's id."""
        cid = len(self.pending)
        self.pending.append(len(sizes))
        self.done_cb.append(on_done)
        self.coll_end.append(-1.0)
        self.issue_ns.append(self.now)
        table = self.table
        firsts = []
        unsent = self.unsent
        blocks = self._blocks
        last_msg, prio, start, end = self.last_msg, self.prio, self.start, self.end
        coll, chunk = self.coll, self.chunk
        for k, (size, plan) in enumerate(zip(sizes, plans, strict=True)):
            block, lasts = blocks.get((kind, plan, size)) or self._block(kind, plan, size)
            firsts.append(table.add_block(cid, k, block))
            last_msg.extend(lasts)
            for d, b in zip(block[0], block[3], strict=True):
                unsent[d] += b
            n = len(plan)
            prio.extend([priority] * n)
            start.extend([-1.0] * n)
            end.extend([-1.0] * n)
            coll.extend([cid] * n)
            chunk.extend([k] * n)
        # The chunks' stages are all in the table (a discipline keyed on the table then
        # reads it once per collective); they are still queued and served one at a time.
        for first, plan in zip(firsts, plans, strict=True):
            d = plan[0][1]
            self.queues[d].push(first)
            self._serve(d, self.now)
        return cid

    def _serve(self, d: int, t: float) -> None:
        q = self.queues[d]
        free = self.free
        table = self.table
        while free[d] and len(q):
            sid = q.pop()
            if sid is None:
                return
            free[d] -= 1
            self.start[sid] = t
            self.running[d].add(sid)
            dur = table.duration_ns[sid]
            self.busy[d] += dur
            self.sent[d] += table.sent_bytes[sid]
            self.seq += 1
            self.start_seq += 1
            tie = d if self.tie_by_dim else self.start_seq
            end = t + dur
            heapq.heappush(self.heap, (end, end - self.last_msg[sid], tie, self.seq, sid))

    def _stage_end(self, sid: int, t: float) -> None:
        table = self.table
        d = table.dim[sid]
        self.end[sid] = t
        self.free[d] += 1
        self.running[d].discard(sid)
        self.unsent[d] -= table.sent_bytes[sid]
        if not table.last[sid]:
            nxt = sid + 1
            d2 = table.dim[nxt]
            self.queues[d2].push(nxt)
            self._serve(d, t)
            if d2 != d:
                self._serve(d2, t)
            return
        self._chunk_done(sid, t)
        self._serve(d, t)

    def _chunk_done(self, sid: int, t: float) -> None:
        cid = self.coll[sid]
        self.pending[cid] -= 1
        if self.pending[cid] == 0:
            self.coll_end[cid] = t
            self.done_cb[cid](cid, t)

    # -- what a planner reads ------------------------------------------------------
    def inflight_sent(self, t: float) -> list[float]:
        """Bytes per dimension still to send by queued and running stages at ``t``
        (a running stage counts the part of its time still ahead)."""
        out = list(self.unsent)
        table = self.table
        for d, run in enumerate(self.running):
            for sid in run:
                dur = table.duration_ns[sid]
                if dur > 0:
                    out[d] -= table.sent_bytes[sid] * min(1.0, (t - self.start[sid]) / dur)
        return out


class SharedEngine(Engine):
    """:class:`Engine` under the :class:`Shared` resource model (k > 1, a timing
    that shares bandwidth): a stage first spends its fixed time, then sends its
    bytes at B / (that dimension's stages sending). Each dimension keeps one
    pending event, re-planned whenever its running set changes; outdated ones
    are skipped by a version number."""

    TOL = 1e-9

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        nd = self.ndims
        self.bw = [d.bandwidth_bytes_per_ns for d in self.network.dims]
        self.sharing: list[dict[int, list[float]]] = [{} for _ in range(nd)]
        self.last_t = [0.0] * nd
        self.version = [0] * nd

    def _advance(self, d: int, t: float) -> None:
        run = self.sharing[d]
        dt = t - self.last_t[d]
        if run and dt > 0:
            self.busy[d] += dt
            sending = [v for v in run.values() if v[0] <= self.last_t[d] + self.TOL]
            if sending:
                per = dt * self.bw[d] / len(sending)
                for v in sending:
                    v[1] -= per
        self.last_t[d] = t

    def _reschedule(self, d: int) -> None:
        self.version[d] += 1
        run = self.sharing[d]
        if not run:
            return
        now = self.last_t[d]
        tol = self.TOL
        sending = [v for v in run.values() if v[0] <= now + tol]
        nxt = min((v[0] for v in run.values() if v[0] > now + tol), default=float("inf"))
        if sending:
            rem = min(v[1] for v in sending)
            nxt = min(nxt, now + max(rem, 0.0) * len(sending) / self.bw[d])
        ver = self.version[d]
        self.seq += 1
        heapq.heappush(self.heap, (nxt, nxt, d if self.tie_by_dim else 0, self.seq,
                                   partial(self._dim_event, d, ver)))

    def _serve(self, d: int, t: float) -> None:
        q = self.queues[d]
        table = self.table
        changed = False
        while self.free[d] and len(q):
            sid = q.pop()
            if sid is None:
                break
            if not changed:
                self._advance(d, t)
                changed = True
            self.free[d] -= 1
            self.start[sid] = t
            self.sent[d] += table.sent_bytes[sid]
            self.sharing[d][sid] = [t + table.fixed_ns[sid], table.sent_bytes[sid]]
        if changed:
            self._reschedule(d)

    def _dim_event(self, d: int, ver: int) -> None:
        if ver != self.version[d]:
            return
        t = self.now
        self._advance(d, t)
        run = self.sharing[d]
        table = self.table
        tol = self.TOL
        done = sorted(sid for sid, v in run.items()
                      if v[0] <= t + tol and v[1] <= tol * max(table.sent_bytes[sid], 1.0))
        touched: list[int] = []
        for sid in done:
            del run[sid]
            self.end[sid] = t
            self.free[d] += 1
            self.unsent[d] -= table.sent_bytes[sid]
        for sid in done:
            if not table.last[sid]:
                d2 = table.dim[sid + 1]
                self.queues[d2].push(sid + 1)
                touched.append(d2)
            else:
                self._chunk_done(sid, t)
        self._serve(d, t)
        for d2 in dict.fromkeys(touched):
            if d2 != d:
                self._serve(d2, t)
        self._reschedule(d)

    def inflight_sent(self, t: float) -> list[float]:
        """Bytes per dimension still to send: queued stages whole, running ones their rest."""
        out = list(self.unsent)
        for d, run in enumerate(self.sharing):
            for sid, v in run.items():
                out[d] -= self.table.sent_bytes[sid] - max(v[1], 0.0)
        return out


def make_engine(network: Network, timings: Mapping[str, Timing], intra: str,
                active_chunks: int, tie_by_dim: bool, astra: bool, shared: bool) -> Engine:
    """An :class:`Engine` (stages alone) or, with ``shared``, a :class:`SharedEngine`."""
    cls = SharedEngine if shared else Engine
    return cls(network, timings, intra, active_chunks, tie_by_dim, astra)
