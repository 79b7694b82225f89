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
_SEND, _PROC, _CONT = 0, 1, 2
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
        union: set[int] = set()
        for g in self.groups:
            union.update(g)
        #: The order of an issue: NPU ids ascending (the workload runs NPU by NPU).
        self.issue_order: tuple[int, ...] = tuple(sorted(union))
        self.dims, self.last, self.steps = dims, last, steps
        self.heap: list[tuple[int, int, int, int, int, int]] = []
        self.seq = 0
        self.lists: dict[tuple[int, int], list[tuple[int, _Chain, int, int]]] = {}
        self.chains: dict[int, _Chain] = {}
        #: Per stage not yet started or running, the order its chunk entered the phase in.
        self.entry: dict[int, tuple[int, ...]] = {}
        self.order: tuple[int, ...] = ()
        self.pending: list[int] = []
        self.pending_t = 0
        self.limit = -1.0
        self.now = 0
        self._run: Generator[int | None, None, None] = self._process()
        next(self._run)

    # -- what the event loop calls ---------------------------------------------------
    def issue(self, firsts: Sequence[int], t: float) -> None:
        """A collective is issued at ``t`` with these first stages."""
        self._flush()
        self._advance(t - 0.5)
        self.order = self.issue_order
        for sid in firsts:
            self.entry[sid] = self.issue_order

    def start(self, sid: int, t: float) -> None:
        """Stage ``sid`` starts at ``t`` (in the event being processed)."""
        self.pending.append(sid)
        self.pending_t = int(t)

    def release(self, t: float, sid: int) -> int:
        """The stage a stage end at ``t`` ends: the next one whose last member exits in
        the lists of tick ``t`` (``sid`` if none does, which means the timing's steps do
        not add up to its stage times)."""
        self._flush()
        self.limit = t
        got = next(self._run)
        if got is None:
            return sid
        chain = self.chains.pop(got)
        d = self.dims[got]
        gset = self.gsets[d]
        order = tuple(x for x in self.entry.pop(got, self.issue_order) if x not in gset)
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

    def _register(self, npu: int, tick: int, cb: tuple[int, _Chain, int, int]) -> None:
        key = (npu, tick)
        lst = self.lists.get(key)
        if lst is None:
            self.lists[key] = [cb]
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
            i = 0
            while i < len(lst):
                op, c, idx, j = lst[i]
                i += 1
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
