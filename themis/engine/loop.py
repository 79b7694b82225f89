"""The one event loop of every simulation (model.md §5).

Each dimension runs at most k stages at once; a stage is never preempted.
Stages wait in a per-dimension :class:`~themis.disciplines.Discipline`; how
running stages progress is a resource law, named by the caller (the run's timing
model names it; :mod:`themis.engine.resources`:
:class:`~themis.engine.resources.Exclusive`,
:class:`~themis.engine.resources.Shared` or a registered
:class:`~themis.engine.resources.EventLaw`). Collectives are *issued* into the
loop: an issue queues the first stage of each of its chunks, one at a time (a
dimension idle at the issue tick starts chunk 0 before chunk 1 is queued); a
chunk's next stage is queued when its stage ends. A dimension is served (its
discipline asked for stages to start) while it has a free slot and waiting
stages.

One heap holds every event, keyed by ``(time, scheduled at, tie, code)``:

* issues (:meth:`EventLoop.issue_at`) are scheduled at minus infinity: they
  come before every other event of their time, in the order they were made;
  one made by a callback therefore runs when that callback returns;
* stage ends and bandwidth-sharing events count as scheduled at their own time
  (with :attr:`Rules.final_message_ties`, a stage end at its end minus its
  final message's duration), with the resource's ties;
* a caller's events (:meth:`EventLoop.at`) are scheduled when they are made
  and come after the stage ends of the same time and scheduling time, in the
  order they were made.

The orders a caller chooses are its :class:`~themis.engine.rules.Rules`. With
:attr:`EventLoop.npu_lists` (ASTRA-sim 1.0's boost mode 1) a popped stage end ends the
stage the per-NPU lists release next at that time (:mod:`themis.engine.npu_lists`), issues
and the caller's events are noted there too.

Queues are driven one way, ``push(entry)`` / ``pop() -> entry`` with ``entry
& SID_MASK`` the stage id: a discipline's own ``push`` / ``pop`` (entry = the
stage id), except that a :class:`~themis.disciplines.PriorityDiscipline` of one
class on every dimension of a table that does not grow is run on int heaps
directly (entry = rank + tie + stage id, exactly the order its ``push`` /
``pop`` give; see :meth:`PriorityDiscipline.shifted_ranks
<themis.disciplines.PriorityDiscipline.shifted_ranks>`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from heapq import heappop, heappush

from themis.disciplines import Discipline, PriorityDiscipline
from themis.disciplines.base import SID_BITS, SID_MASK, TIE_TOP
from themis.engine.npu_lists import NpuLists
from themis.engine.resources import EventLaw, Exclusive, HeapEntry, ResourceLaw, resource_law
from themis.engine.rules import Rules, ServeOrder
from themis.stages import StageTable

#: Ties of a caller's events start here: after every resource tie.
EVENT_TIE = 1 << 62
#: When an issue counts as scheduled: before everything else of its time.
ISSUE_SCHEDULED = float("-inf")

_Call = Callable[[], object]
_QueueOps = tuple[list[Callable[[int], object]], list[Callable[[], int | None]], list[int], int]


class EventLoop:
    """The event loop over ``table``'s stages on ``ndims`` dimensions of ``active_chunks``
    slots each, under ``rules`` and the resource law named ``law``
    (:func:`~themis.engine.resources.law_at` of the timing's law and k;
    ``bandwidth_bytes_per_ns``, each dimension's, for a law that reads it).

    ``queues`` (one :class:`Discipline` per dimension) must be set before
    :meth:`run`. With ``growing`` the caller adds stages to ``table`` (whole
    chunks) and calls :meth:`grow` before issuing them. ``start`` / ``end`` are
    every stage's times (-1: not yet); ``on_chunk_end(sid, t)``, if set, is
    called when a chunk's last stage ``sid`` ends, before its dimension is
    served. ``now`` is the time of the event being processed.
    """

    def __init__(self, table: StageTable, ndims: int, active_chunks: int, rules: Rules,
                 law: str = "exclusive",
                 bandwidth_bytes_per_ns: Sequence[float] | None = None,
                 growing: bool = False) -> None:
        n = len(table)
        self.table = table
        self.ndims = ndims
        self.k = active_chunks
        self.rules = rules
        self.start = [-1.0] * n
        self.end = [-1.0] * n
        #: Per stage, its final message's duration (read with ``final_message_ties``).
        self.last_msg: list[float] = [0.0] * n if rules.final_message_ties else []
        self.heap: list[HeapEntry] = []
        self.now = 0.0
        self.free = [active_chunks] * ndims
        self.waiting = [0] * ndims
        #: With ``rules.loads``: per dimension, busy time, bytes sent by started stages,
        #: and bytes of issued stages not yet ended (the caller adds issued bytes).
        self.busy = [0.0] * ndims
        self.sent = [0.0] * ndims
        self.unsent = [0.0] * ndims
        self.queues: list[Discipline] = []
        self.on_chunk_end: Callable[[int, float], None] | None = None
        #: The resource law's instance running this loop's dimensions.
        self.resource: ResourceLaw = resource_law(law)(
            table, ndims, self.heap, rules.tie_dim, bandwidth_bytes_per_ns, rules.time_tol_ns,
            self.busy if rules.loads else None, self.sent if rules.loads else None)
        self._growing = growing
        self._qkey: list[int] = [0] * n if growing else []
        self._calls: list[_Call | list[int] | None] = []
        self._events = 0
        self._starts = 0
        self._qseq = 0
        self._ops: _QueueOps | None = None
        #: With :attr:`Rules.npu_lists`, the per-NPU event lists that order same-tick stage
        #: ends (:class:`~themis.engine.npu_lists.NpuLists`; the caller sets it).
        self.npu_lists: NpuLists | None = None
        #: With :attr:`npu_lists`, per caller event the order the NPUs run it in.
        self._work: dict[int, tuple[int, ...]] = {}

    # -- what a caller schedules -----------------------------------------------------
    def at(self, t: float, fn: _Call) -> None:
        """Run ``fn`` at time ``t`` (scheduled now)."""
        if self.npu_lists is not None:  # a workload event on every NPU
            self._work[len(self._calls)] = self.npu_lists.work_at(t)
        self._calls.append(fn)
        self._events += 1
        heappush(self.heap, (t, self.now, EVENT_TIE + self._events, -len(self._calls)))

    def issue_at(self, t: float, firsts: Sequence[int]) -> None:
        """Issue a collective at ``t``: queue the stages ``firsts`` (its chunks' first
        stages) one at a time, before any other event of that time."""
        self._calls.append(list(firsts))
        self._events += 1
        heappush(self.heap, (t, ISSUE_SCHEDULED, self._events, -len(self._calls)))

    def grow(self, n: int) -> None:
        """``n`` stages were added to the table (a growing loop)."""
        if not self._growing:
            raise ValueError("stages added to a table that was not declared growing")
        if len(self.table) > SID_MASK:
            raise ValueError(f"at most {SID_MASK} stages per run")
        self.start.extend([-1.0] * n)
        self.end.extend([-1.0] * n)
        self._qkey.extend([0] * n)

    # -- what a planner reads ----------------------------------------------------------
    def inflight_sent(self, t: float) -> list[float]:
        """Bytes per dimension still to send by queued and running stages at ``t``
        (needs ``rules.loads``): stages running alone count the part of their time still
        ahead, stages sharing bandwidth their bytes not yet sent."""
        out = list(self.unsent)
        self.resource.inflight(t, self.table, self.start, out)
        return out

    # -- the loop ------------------------------------------------------------------------
    def _queue_ops(self) -> _QueueOps:
        """Per dimension push and pop, the rank of every stage and the tie step."""
        queues = self.queues
        if len(queues) != self.ndims:
            raise ValueError(f"expected {self.ndims} queues, got {len(queues)}")
        first = queues[0] if queues else None
        if (not self._growing and isinstance(first, PriorityDiscipline)
                and all(type(q) is type(first) for q in queues)):
            heaps: list[list[int]] = [[] for _ in queues]
            qkey = type(first).shifted_ranks(self.table)
            newest = type(first).newest_first
            self._qseq = TIE_TOP if newest else 0
            return ([partial(heappush, h) for h in heaps],
                    [partial(heappop, h) for h in heaps], qkey,
                    -(1 << SID_BITS) if newest else 1 << SID_BITS)
        qkey = self._qkey if self._growing else [0] * len(self.table)
        return [q.push for q in queues], [q.pop for q in queues], qkey, 0

    def run(self) -> None:
        """Process events until none is left.

        The hot path is written out inline: under a law of exact durations
        (:class:`Exclusive`) the loop schedules stage ends itself (an end is known at
        the start); an :class:`EventLaw` plans them on the heap.
        """
        if self._ops is None:
            self._ops = self._queue_ops()
        pushes, pops, qkey, qstep = self._ops
        qseq = self._qseq
        table = self.table
        s_dim, s_last, s_dur, s_sent = table.dim, table.last, table.duration_ns, table.sent_bytes
        start, end, free, waiting = self.start, self.end, self.free, self.waiting
        busy, sent, unsent = self.busy, self.sent, self.unsent
        heap, calls = self.heap, self._calls
        rules = self.rules
        loads = rules.loads
        own_first = rules.serve is ServeOrder.OWN_FIRST
        ascending = rules.serve is ServeOrder.ASCENDING
        own_maybe = own_first or ascending  # own dimension first (ascending: if smaller)
        on_end = self.on_chunk_end
        res = self.resource
        base = res.tie_base
        exclusive = isinstance(res, Exclusive)
        if not exclusive and not isinstance(res, EventLaw):
            raise TypeError(f"resource law {res.name!r} is neither Exclusive nor an EventLaw")
        running = res.running if isinstance(res, Exclusive) else []
        # Under Exclusive, what the rules may add to a stage start: the final-message
        # times and the loads (one name for dispatch to test; see below).
        npl = self.npu_lists if exclusive else None
        extras = None
        if exclusive and (loads or rules.final_message_ties or npl is not None):
            extras = (self.last_msg if rules.final_message_ties else None,
                     (running, busy, sent, s_sent) if loads else None,
                     npl.start if npl is not None else None)
        begin: Callable[[int, int, float], None] | None = None
        after_dispatch: Callable[[int], None] | None = None
        if isinstance(res, EventLaw):
            begin, complete = res.begin, res.complete
            after_dispatch, after_event = res.after_dispatch, res.after_event
        seq = self._starts  # start order (the resource's ties under Exclusive)

        def dispatch(d: int, t: float) -> None:
            # Start stages on d while it has a free slot and its discipline offers one.
            # (Its names from run() are few on purpose: every call copies each of them.)
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
                if begin is None:  # Exclusive: the loop schedules the end
                    seq += 1
                    e = t + s_dur[sid]
                    if extras is None:
                        heappush(heap, (e, e, base[d] + seq, sid))
                        continue
                    lastm, loads_of, npl_start = extras
                    heappush(heap, (e, e if lastm is None else e - lastm[sid], base[d] + seq,
                                    sid))
                    if npl_start is not None:
                        npl_start(sid, t)
                    if loads_of is not None:
                        run_d, busy_d, sent_d, sent_of = loads_of
                        run_d[d].add(sid)
                        busy_d[d] += s_dur[sid]
                        sent_d[d] += sent_of[sid]
                else:
                    begin(sid, d, t)
            if after_dispatch is not None:
                after_dispatch(d)

        t = self.now
        while heap:
            t, _, _, code = heappop(heap)
            if code < 0:  # an issue, or a caller's event
                item = calls[-code - 1]
                calls[-code - 1] = None
                if isinstance(item, list):  # queue the first stage of every chunk
                    if npl is not None:
                        npl.issue(item, t)
                    for sid in item:
                        d = s_dim[sid]
                        qseq += qstep
                        pushes[d](qkey[sid] + qseq + sid)
                        waiting[d] += 1
                        if free[d]:
                            dispatch(d, t)
                elif item is not None:
                    self.now = t
                    if npl is not None:
                        npl.begin_work(self._work.pop(-code - 1), t)
                    item()
                continue
            if exclusive:  # one stage ends: queue its successor, serve the two dimensions
                if npl is not None:  # the stage the NPUs' lists release now
                    code = npl.release(t, code)
                d = s_dim[code]
                end[code] = t
                free[d] += 1
                if loads:
                    running[d].discard(code)
                    unsent[d] -= s_sent[code]
                if s_last[code]:
                    if on_end is not None:
                        self.now = t
                        on_end(code, t)
                    if waiting[d]:
                        dispatch(d, t)
                    continue
                sid = code + 1
                d2 = s_dim[sid]
                qseq += qstep
                pushes[d2](qkey[sid] + qseq + sid)
                waiting[d2] += 1
                if d2 == d:
                    dispatch(d, t)
                elif own_maybe and (own_first or d < d2):
                    if waiting[d]:
                        dispatch(d, t)
                    if free[d2]:
                        dispatch(d2, t)
                else:
                    if free[d2]:
                        dispatch(d2, t)
                    if waiting[d]:
                        dispatch(d, t)
                continue
            got = complete(t, code)
            if got is None:  # a stale event
                continue
            d, done = got
            free[d] += len(done)
            for sid in done:
                end[sid] = t
                if loads:
                    unsent[d] -= s_sent[sid]
            nexts: list[int] = []
            for sid in done:
                if not s_last[sid]:
                    d2 = s_dim[sid + 1]
                    qseq += qstep
                    pushes[d2](qkey[sid + 1] + qseq + sid + 1)
                    waiting[d2] += 1
                    nexts.append(d2)
                elif on_end is not None:
                    self.now = t
                    on_end(sid, t)
            if ascending:
                serve = sorted({d, *nexts})
            else:
                others = [d2 for d2 in dict.fromkeys(nexts) if d2 != d]
                serve = [d, *others] if own_first else [*others, d]
            for dd in serve:
                dispatch(dd, t)
            after_event(d)
        self.now = t
        self._qseq = qseq
        self._starts = seq
