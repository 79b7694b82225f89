"""ASTRA-sim 1.0's per-NPU event lists under boost mode 1: the order of same-tick stage ends.

What decides that order in the binary (tag ``tutorial-asplos2023``; read from its
sources and checked with trace prints, docs/astra-sim-1.0-timing.md):

* every NPU's ``Sys`` keeps one event list per tick (``Sys::try_register_event``); the
  first registration for a tick schedules the list on the backend
  (``AnalyticalNetwork::sim_schedule``), whose queue runs the events of one time in the
  order they were scheduled (``EventQueue::add_event``). So the lists of a tick run in
  the order they were *created*, and a message's arrival handler (scheduled by
  ``sim_send`` / ``sim_recv`` when the second of the two is posted) runs in that same
  order among them;
* with boost mode 1 only the NPUs on dimension d's line through NPU 0 (its *group*)
  run a stage on d (``RingTopology::is_enabled``); the others declare the chunk ready
  and suspend when it enters the phase (``Sys::proceed_to_next_vnet_baseline``);
* a stage of a group runs on every member in lockstep: an event d (the endpoint delay)
  after its start the member sends its first message (``Ring::ready``,
  ``HalvingDoubling::ready``) and posts the matching receive; the arrival is followed
  by d (``MemBus``), then by the reduce time if the packet is processed
  (``PacketBundle::call``; 0 ns registers on the running list), then by the next send,
  or after the last step by the exit (``Algorithm::exit``);
* a chunk leaves a stage when its last member exits (``BaseStream::declare_ready``):
  that member releases the chunk on every NPU, the suspended ones first in the order
  they suspended, then itself (``BaseStream::resume_ready``). Each NPU, in that order,
  restarts the stage's dimension (the next waiting chunk starts on it) and enters the
  chunk's next phase (it starts if that dimension is free); an issue starts the first
  stages NPU by NPU in NPU-id order.

:class:`NpuLists` runs exactly this for the NPUs of the groups (the sum of the
dimension sizes, not all NPUs): each started stage is a chain of per-member events on a
heap keyed by (tick, creation number); :meth:`NpuLists.release` runs the lists of a tick
until a stage's last member exits and returns that stage, which the event loop then ends
(:attr:`themis.engine.rules.Rules.npu_lists`). The cost per stage is its members times
its message steps.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from heapq import heappop, heappush

#: A stage's message steps: (kind, offset, message ns, reduce ns, processed) per step
#: (``AstraSim10Timing.npu_steps``).
Steps = tuple[tuple[int, int, int, int, bool], ...]

# Callback kinds on an NPU's list.
_SEND, _PROC, _CONT, _WORK = 0, 1, 2, 3
#: Stands for the NPUs in no group (all alike: they run no stage, only the workload) in
#: an order of NPUs: where the first of them is.
OTHERS = -1
# Heap entry kinds.
_LIST, _ARRIVAL = 0, 1


class _Chain:
    """One stage running on its dimension's group."""

    __slots__ = ("sid", "members", "n", "steps", "sent", "posted", "got", "exits")

    def __init__(self, sid: int, members: tuple[int, ...], steps: Steps) -> None:
        self.sid = sid
        self.members = members
        n = self.n = len(members)
        self.steps = steps
        self.sent = [[False] * n for _ in steps]
        self.posted = [[False] * n for _ in steps]
        self.got = [0] * n  # direct: messages matched per member
        self.exits: list[int] = []


class NpuLists:
    """The per-NPU event lists of ASTRA-sim 1.0 under boost mode 1 (module docstring).

    ``sizes`` are the NPUs per dimension (NPU ids with dimension 0 fastest), ``dims``
    and ``last`` the stage table's columns, ``steps`` per stage its message steps (the
    caller extends it as stages are added); ``delta`` the endpoint delay (ns; the caller
    sets it before the first issue)."""

    def __init__(self, sizes: Sequence[int], dims: list[int], last: list[bool],
                 steps: list[Steps]) -> None:
        self.delta = -1
        stride = 1
        self.groups: list[tuple[int, ...]] = []
        for p in sizes:
            self.groups.append(tuple(i * stride for i in range(p)) if p > 1 else ())
            stride *= p
        self.gsets = [frozenset(g) for g in self.groups]
        union: set[int] = {0}
        for g in self.groups:
            union.update(g)
        self.members = tuple(sorted(union))
        ids = list(self.members)
        if stride > len(union):  # NPUs in no group: the first of them stands for all
            first = next(i for i in range(stride) if i not in union)
            ids.append(first)
            ids.sort()
            ids[ids.index(first)] = OTHERS
        #: The workload's order at time 0: NPU ids ascending.
        self.id_order: tuple[int, ...] = tuple(ids)
        self.dims, self.last, self.steps = dims, last, steps
        self.heap: list[tuple[int, int, int, int, int, int]] = []
        self.seq = 0
        #: Per (NPU, tick) its list: the creation number, then the callbacks.
        self.lists: dict[tuple[int, int], list] = {}
        self.chains: dict[int, _Chain] = {}
        #: Per stage not yet started or running, the order its chunk entered the phase in.
        self.entry: dict[int, tuple[int, ...]] = {}
        #: The order of the event being processed (an issue's or a workload event's: the
        #: workload's order; a release's: suspended NPUs, then the releasing one).
        self.order: tuple[int, ...] = self.id_order
        self.pending: list[int] = []
        self.pending_t = 0
        self.pending_issue = False
        self.limit = -1.0
        self.now = 0
        self._run: Generator[int | None, None, None] = self._process()
        next(self._run)

    # -- what the event loop calls ---------------------------------------------------
    def issue(self, firsts: Sequence[int], t: float) -> None:
        """A collective is issued at ``t`` with these first stages. Collectives issued
        together start NPU by NPU: each NPU generates all of them in its turn
        (``Sys::generate_collective`` from its workload's event), so the stages they
        start join those of an issue just before (same tick, nothing in between)."""
        if not (self.pending and self.pending_issue and self.pending_t == int(t)):
            self._flush()
        self._advance(t - 0.5)
        self.pending_issue = True
        for sid in firsts:
            self.entry[sid] = self.order

    def work_at(self, t: float) -> tuple[int, ...]:
        """The workload registers an event for ``t`` on every NPU, in the order of the
        event being processed; returns the order the NPUs run it in at ``t``: first those
        whose list for ``t`` already exists (a stage's event), by creation, then the others
        in registration order."""
        self._flush()
        tick = int(t)
        lists = self.lists
        early = sorted((lists[(x, tick)][0], x) for x in self.members if (x, tick) in lists)
        if early:
            first = {x for _, x in early}
            order = tuple([x for _, x in early] + [x for x in self.order if x not in first])
        else:
            order = self.order
        for x in self.order:
            if x != OTHERS:
                self._register(x, tick, (_WORK, None, 0, 0))
        return order

    def begin_work(self, order: tuple[int, ...], t: float) -> None:
        """A workload event runs at ``t`` on the NPUs in ``order`` (:meth:`work_at`)."""
        self._flush()
        self.pending_issue = False
        self._advance(t - 0.5)
        self.order = order

    @property
    def npu0_first(self) -> bool:
        """Whether NPU 0 runs the event being processed first (ASTRA-sim's Themis resets
        its loads only when NPU 0 generates a collective at a new tick)."""
        return self.order[0] == 0

    def start(self, sid: int, t: float) -> None:
        """Stage ``sid`` starts at ``t`` (in the event being processed)."""
        self.pending.append(sid)
        self.pending_t = int(t)

    def release(self, t: float, sid: int) -> int:
        """The stage a stage end at ``t`` ends: the next one whose last member exits in
        the lists of tick ``t`` (``sid`` if none does, which means the timing's steps do
        not add up to its stage times)."""
        self._flush()
        self.pending_issue = False
        self.limit = t
        got = next(self._run)
        if got is None:
            return sid
        chain = self.chains.pop(got)
        d = self.dims[got]
        gset = self.gsets[d]
        order = tuple(x for x in self.entry.pop(got, self.id_order) if x not in gset)
        self.order = order + tuple(chain.exits)
        if not self.last[got]:
            self.entry[got + 1] = self.order
        return got

    # -- the lists -------------------------------------------------------------------
    def _advance(self, limit: float) -> None:
        self.limit = limit
        got = next(self._run)
        if got is not None:  # pragma: no cover - a stage end the loop has not reached
            raise RuntimeError(f"stage {got} ended before the event loop's time {limit}")

    def _flush(self) -> None:
        """Register the first event of the stages started in the last event: NPU by NPU in
        the order of that event (an issue's or a release's), each NPU's stages in the
        order they started."""
        if not self.pending:
            return
        t = self.pending_t + self.delta
        chains = []
        for sid in self.pending:
            d = self.dims[sid]
            members = self.groups[d]
            c = _Chain(sid, members, self.steps[sid])
            self.chains[sid] = c
            chains.append((c, self.gsets[d], len(members), members[1] if len(members) > 1 else 1))
        self.pending = []
        for x in self.order:
            for c, gset, n, stride in chains:
                if x in gset:
                    self._register(x, t, (_SEND, c, (x // stride) % n, 0))

    def _register(self, npu: int, tick: int, cb: tuple[int, _Chain | None, int, int]) -> None:
        key = (npu, tick)
        lst = self.lists.get(key)
        if lst is None:
            self.lists[key] = [self.seq, cb]
            heappush(self.heap, (tick, self.seq, _LIST, npu, 0, 0))
            self.seq += 1
        else:
            lst.append(cb)

    def _arrival(self, c: _Chain, idx: int, j: int, msg: int) -> None:
        heappush(self.heap, (self.now + msg, self.seq, _ARRIVAL, c.sid, idx, j))
        self.seq += 1

    def _process(self) -> Generator[int | None, None, None]:
        """Run the heap up to ``self.limit``; yield a stage whose last member exited
        (and go on from there when resumed), or None when the limit is reached."""
        heap, lists, chains = self.heap, self.lists, self.chains
        while True:
            if not heap or heap[0][0] > self.limit:
                yield None
                continue
            tick, _, kind, a, b, j = heappop(heap)
            self.now = tick
            if kind == _ARRIVAL:
                c = chains[a]
                self._register(c.members[b], tick + self.delta, (_PROC, c, b, j))
                continue
            key = (a, tick)
            lst = lists[key]
            i = 1
            while i < len(lst):
                op, c, idx, j = lst[i]
                i += 1
                if op == _WORK:
                    continue
                steps = c.steps
                if op == _PROC:
                    _, _, _, red, processed = steps[j]
                    if processed:
                        self._register(a, tick + red, (_CONT, c, idx, j))
                        continue
                    op = _CONT
                if op == _CONT:
                    j += 1
                    if j == len(steps):
                        c.exits.append(a)
                        if len(c.exits) == c.n:
                            yield c.sid
                        continue
                # send step j and post its receive
                kind_j, off, msg, _, _ = steps[j]
                n = c.n
                sent, posted = c.sent[j], c.posted[j]
                if kind_j == 2:
                    sent[idx] = True
                    for s in range(1, n):
                        dst = (idx + s) % n
                        if posted[dst]:
                            c.got[dst] += 1
                            if c.got[dst] == n - 1:
                                self._arrival(c, dst, j, msg)
                    posted[idx] = True
                    for s in range(1, n):
                        if sent[(idx - s) % n]:
                            c.got[idx] += 1
                    if c.got[idx] == n - 1:
                        self._arrival(c, idx, j, msg)
                    continue
                if kind_j == 0:
                    dst, src = (idx + 1) % n, (idx - 1) % n
                else:
                    dst = src = idx ^ off
                sent[idx] = True
                if posted[dst]:
                    self._arrival(c, dst, j, msg)
                posted[idx] = True
                if sent[src]:
                    self._arrival(c, idx, j, msg)
            del lists[key]
