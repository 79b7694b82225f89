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
(:attr:`themis.engine.rules.Rules.npu_lists`).

The members of a stage act in lockstep, so a stage's events of one tick are kept as one
*batch* (its members in the order their events run). A batch alone at its tick runs as a
whole: a send step maps the members' order to the order of the arrivals it schedules
(cached per order), so a stage costs about one batch per message step. Batches that
share a tick (NPU 0 is in every group; the workload's events are on every NPU) are
merged member by member, by creation number.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from heapq import heappop, heappush

#: A stage's message steps: (kind, offset, message ns, reduce ns, processed) per step
#: (``AstraSim10Timing.npu_steps``).
Steps = tuple[tuple[int, int, int, int, bool], ...]

#: Stands for the NPUs in no group (all alike: they run no stage, only the workload) in
#: an order of NPUs: where the first of them is.
OTHERS = -1

# Batch kinds: events on the members' lists (the first send, the processing after an
# arrival, the continuation after a reduce, the workload's) and message arrivals.
_SEND, _PROC, _CONT, _WORK, _ARR = 0, 1, 2, 3, 4

_perms: dict[tuple, tuple[int, ...]] = {}


def _send_post(kind: int, off: int, n: int, idx: int, sent: list[bool], posted: list[bool],
               got: list[int]) -> list[int]:
    """Member ``idx`` sends its message and posts its receive (``sent``, ``posted`` and
    ``got``, the messages each member has, are updated): the members whose arrival this
    schedules, in order (a member's arrival is scheduled by the later of its sender's
    send and its own receive; direct, kind 2: once all n - 1 messages are there)."""
    out = []
    if kind == 2:
        sent[idx] = True
        for s in range(1, n):
            dst = (idx + s) % n
            if posted[dst]:
                got[dst] += 1
                if got[dst] == n - 1:
                    out.append(dst)
        posted[idx] = True
        got[idx] += sum(sent[(idx - s) % n] for s in range(1, n))
        if got[idx] == n - 1:
            out.append(idx)
        return out
    if kind == 0:
        dst, src = (idx + 1) % n, (idx - 1) % n
    else:
        dst = src = idx ^ off
    sent[idx] = True
    if posted[dst]:
        out.append(dst)
    posted[idx] = True
    if sent[src]:
        out.append(idx)
    return out


def _arrivals(kind: int, off: int, n: int, order: tuple[int, ...]) -> tuple[int, ...]:
    """The members (ring indices) whose message arrives, in the order the arrivals are
    scheduled, when the members send and post their receives in ``order``."""
    key = (kind, off, n, order)
    hit = _perms.get(key)
    if hit is not None:
        return hit
    sent, posted, count = [False] * n, [False] * n, [0] * n
    out: list[int] = []
    for idx in order:
        out.extend(_send_post(kind, off, n, idx, sent, posted, count))
    hit = _perms[key] = tuple(out)
    return hit


class _Chain:
    """One stage running on its dimension's group (members by ring index)."""

    __slots__ = ("sid", "members", "n", "steps", "exits", "open", "sent", "posted", "got")

    def __init__(self, sid: int, members: tuple[int, ...], steps: Steps) -> None:
        self.sid = sid
        self.members = members
        self.n = len(members)
        self.steps = steps
        self.exits: list[int] = []
        #: Batches being filled member by member (merged ticks), per (kind, step).
        self.open: dict[tuple[int, int], _Batch] = {}
        #: Per step, member by member: sent, receive posted, messages matched (direct).
        self.sent: dict[int, list[bool]] = {}
        self.posted: dict[int, list[bool]] = {}
        self.got: dict[int, list[int]] = {}


class _Batch:
    """Events of one kind, of one stage's members (or the workload's on every NPU) at one
    tick. ``order``: the members (ring indices; NPU ids for the workload) in run order.
    Their keys (creation number, registration number): ``base + i`` for the i-th when the
    batch was made whole at a tick without other lists, else ``keys``."""

    __slots__ = ("kind", "chain", "j", "tick", "order", "base", "keys", "npus")

    def __init__(self, kind: int, chain: _Chain | None, j: int, tick: int) -> None:
        self.kind, self.chain, self.j, self.tick = kind, chain, j, tick
        self.order: list[int] = []
        self.base = -1
        self.keys: list[tuple[int, int]] = []
        self.npus: dict[int, int] | None = None  # NPU -> its list's creation number

    def npu(self, i: int) -> int:
        c = self.chain
        return self.order[i] if c is None else c.members[self.order[i]]

    def key(self, i: int) -> tuple[int, int]:
        return (self.base + i, self.base + i) if self.base >= 0 else self.keys[i]

    def list_of(self, npu: int) -> int | None:
        """The creation number of ``npu``'s list at this tick, if this batch is on it."""
        if self.npus is None:
            self.npus = {self.npu(i): self.key(i)[0] for i in range(len(self.order))}
        return self.npus.get(npu)


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
        self.heap: list[tuple[int, int, _Batch]] = []
        #: Creation numbers (backend events: lists and arrivals) and heap entries.
        self.seq = 0
        self.hseq = 0
        #: Per tick, the batches on lists of that tick.
        self.lists: dict[int, list[_Batch]] = {}
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
        there = self.lists.get(tick)
        order = self.order
        if there:
            early = sorted((s, x) for x in self.members
                           if (s := self._list_seq(there, x)) is not None)
            if early:
                first = {x for _, x in early}
                order = tuple([x for _, x in early] + [x for x in order if x not in first])
        b = _Batch(_WORK, None, 0, tick)
        for x in self.order:
            if x != OTHERS:
                self._add_list(b, x, x)
        self._push(b)
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
        gset = self.gsets[self.dims[got]]
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
        tick = self.pending_t + self.delta
        started = []
        for sid in self.pending:
            d = self.dims[sid]
            members = self.groups[d]
            c = self.chains[sid] = _Chain(sid, members, self.steps[sid])
            started.append((_Batch(_SEND, c, 0, tick), self.gsets[d], c.n, members[1]))
        self.pending = []
        if len(started) == 1 and not self.lists.get(tick):
            b, gset, n, stride = started[0]
            b.order = [(x // stride) % n for x in self.order if x in gset]
            self._whole(b)
            return
        for x in self.order:
            for b, gset, n, stride in started:
                if x in gset:
                    self._add_list(b, (x // stride) % n, x)
        for b, _, _, _ in started:
            self._push(b)

    @staticmethod
    def _list_seq(batches: list[_Batch], npu: int) -> int | None:
        for ob in batches:
            s = ob.list_of(npu)
            if s is not None:
                return s
        return None

    def _push(self, b: _Batch) -> None:
        heappush(self.heap, (b.tick, self.hseq, b))
        self.hseq += 1

    def _whole(self, b: _Batch) -> None:
        """Register a batch whose members were all added at once, in order (new lists, or
        new arrivals: creation numbers ``seq`` onwards)."""
        if b.kind != _ARR:
            there = self.lists.get(b.tick)
            if there:  # lists of this tick exist: member by member
                c = b.chain
                assert c is not None
                order, b.order = b.order, []
                for m in order:
                    self._add_list(b, m, c.members[m])
                self._push(b)
                return
            self.lists[b.tick] = [b]
        b.base = self.seq
        self.seq += len(b.order)
        self._push(b)

    def _add_list(self, b: _Batch, m: int, npu: int) -> None:
        """Add member ``m`` (on NPU ``npu``) to batch ``b`` of list events: on the NPU's
        list of that tick if it exists, else on a new one."""
        there = self.lists.get(b.tick)
        if there is None:
            there = self.lists[b.tick] = []
        s = self._list_seq(there, npu) if there else None
        if not b.order and b not in there:
            there.append(b)
        if s is None:
            s = self.seq
            self.seq += 1
        b.order.append(m)
        b.keys.append((s, self.seq))
        self.seq += 1
        if b.npus is not None:
            b.npus[npu] = s

    def _add_arrival(self, b: _Batch, m: int) -> None:
        b.order.append(m)
        b.keys.append((self.seq, self.seq))
        self.seq += 1

    def _open(self, c: _Chain, kind: int, j: int, tick: int) -> _Batch:
        """The batch of ``c``'s ``kind`` events of step ``j`` being filled member by
        member (made, and put on the heap, by its first member)."""
        b = c.open.get((kind, j))
        if b is None:
            b = c.open[(kind, j)] = _Batch(kind, c, j, tick)
            self._push(b)
        return b

    def _process(self) -> Generator[int | None, None, None]:
        """Run the heap up to ``self.limit``; yield a stage whose last member exited
        (and go on from there when resumed), or None when the limit is reached."""
        heap, lists = self.heap, self.lists
        cur = -1
        while True:
            if not heap or heap[0][0] > self.limit:
                yield None
                continue
            tick, _, b = heappop(heap)
            if tick != cur:
                lists.pop(cur, None)
                cur = tick
            if not heap or heap[0][0] != tick:  # alone at its tick: as a whole
                done = self._run_whole(b)
                if done is not None:
                    yield done
                continue
            # Several batches share the tick: member by member, by creation number.
            batches = [b]
            while heap and heap[0][0] == tick:
                batches.append(heappop(heap)[2])
            local: list[tuple[tuple[int, int], int, _Batch, int]] = []
            for ob in batches:
                for i in range(len(ob.order)):
                    local.append((ob.key(i), i, ob, ob.order[i]))
            local.sort(key=lambda e: e[0])
            k = 0
            extra: list[tuple[tuple[int, int], _Batch, int, int]] = []  # reduces of 0 ns
            while k < len(local) or extra:
                if extra and (k == len(local) or local[k][0][0] != extra[0][0][0]):
                    key, ob, m, kind = extra.pop(0)
                else:
                    key, _, ob, m = local[k]
                    k += 1
                    kind = ob.kind
                done = self._run_member(kind, ob, m, key, extra)
                if done is not None:
                    yield done

    def _run_whole(self, b: _Batch) -> int | None:
        kind, c, j, tick = b.kind, b.chain, b.j, b.tick
        if c is None:  # the workload's events
            return None
        order = tuple(b.order)
        if kind == _SEND:
            self._send_all(c, 0, order, tick)
            return None
        if kind == _ARR:
            nb = _Batch(_PROC, c, j, tick + self.delta)
            nb.order = list(order)
            self._whole(nb)
            return None
        if kind == _PROC:
            _, _, _, red, processed = c.steps[j]
            if processed and red > 0:
                nb = _Batch(_CONT, c, j, tick + red)
                nb.order = list(order)
                self._whole(nb)
                return None
        # continue: the next send, or the exit
        if j + 1 < len(c.steps):
            self._send_all(c, j + 1, order, tick)
            return None
        c.exits.extend(c.members[m] for m in order)
        return c.sid

    def _send_all(self, c: _Chain, j: int, order: tuple[int, ...], tick: int) -> None:
        kind, off, msg, _, _ = c.steps[j]
        nb = _Batch(_ARR, c, j, tick + msg)
        nb.order = list(_arrivals(kind, off, c.n, order))
        self._whole(nb)

    def _run_member(self, kind: int, b: _Batch, m: int, key: tuple[int, int],
                    extra: list) -> int | None:
        """One member's event in a merged tick."""
        c, j, tick = b.chain, b.j, b.tick
        if c is None:
            return None
        if kind == _ARR:
            self._add_list(self._open(c, _PROC, j, tick + self.delta), m, c.members[m])
            return None
        if kind == _PROC:
            _, _, _, red, processed = c.steps[j]
            if processed:
                if red > 0:
                    self._add_list(self._open(c, _CONT, j, tick + red), m, c.members[m])
                else:  # on the running list, after its other events
                    extra.append(((key[0], self.seq), b, m, _CONT))
                    self.seq += 1
                return None
            kind = _CONT
        if kind == _CONT:
            j += 1
            if j == len(c.steps):
                c.exits.append(c.members[m])
                return c.sid if len(c.exits) == c.n else None
        self._send_one(c, j, m, tick)
        return None

    def _send_one(self, c: _Chain, j: int, idx: int, tick: int) -> None:
        """Member ``idx`` sends its step-``j`` message and posts the receive."""
        kind_j, off, msg, _, _ = c.steps[j]
        n = c.n
        sent = c.sent.get(j)
        if sent is None:
            sent = c.sent[j] = [False] * n
            c.posted[j] = [False] * n
            c.got[j] = [0] * n
        posted, got = c.posted[j], c.got[j]
        arrive = tick + msg
        for m in _send_post(kind_j, off, n, idx, sent, posted, got):
            self._add_arrival(self._open(c, _ARR, j, arrive), m)
