"""The network event engine of a training run: chunks, stages and per-dimension queues.

One NPU's view (model.md §2): each logical dimension is a resource running at
most k stages at once; a stage never shares bandwidth (the ``astra-sim-1.0``
backend) and is never preempted. Collectives are cut into chunks that are
created and queued one at a time (a dimension idle at the issue tick starts
chunk 0 before chunk 1 exists). On a stage's end its chunk is first inserted
into its next queue, then the old dimension is served, then the new one
(workloads.md §4). One heap holds stage ends and the workload's own events,
keyed by (time, when the event was scheduled, tie, sequence).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from themis.stages import StageTable
from themis.timing.base import StageCost, Timing
from themis.training.queues import make_queue
from themis.training.ties import last_message_ns
from topologies.network import Network

Plan = tuple[tuple[str, int], ...]
#: An all-to-all stage: every NPU of the dimension sends 1/P of the chunk to every other.
A2A = "A2A"


class Engine:
    """Stages of every collective issued so far, the queues, and the event heap."""

    def __init__(self, network: Network, timings: dict[str, Timing], intra: str,
                 active_chunks: int, tie_by_dim: bool, astra: bool) -> None:
        self.network = network
        self.ndims = network.ndims
        self.timings = timings
        self.k = active_chunks
        self.tie_by_dim = tie_by_dim
        self.astra = astra
        self.table = StageTable()
        self.prio: list[int] = []
        self.start: list[float] = []
        self.end: list[float] = []
        self.coll: list[int] = []
        self.chunk: list[int] = []
        self.queues = [make_queue(intra, astra, self.table, self.prio)
                       for _ in range(self.ndims)]
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
        self._cost: dict[tuple[str, str, int, float], tuple[float, StageCost]] = {}
        self._blocks: dict[tuple, tuple] = {}
        self._last: dict[tuple[str, str, int, float], float] = {}
        self.last_msg: list[float] = []  # per stage: its final message's duration
        self.unsent = [0.0] * self.ndims  # bytes of queued and running stages, per dim
        self.running: list[set[int]] = [set() for _ in range(self.ndims)]

    # -- events ------------------------------------------------------------------
    def at(self, t: float, fn: Callable[[], None], tie: int = 1 << 30) -> None:
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

    # -- stages --------------------------------------------------------------------
    def stage_cost(self, kind: str, phase: str, dim: int, m: float) -> tuple[float, StageCost]:
        """``(input, cost)`` of one stage (all-to-all: an all-gather of m / P, output m)."""
        key = (kind, phase, dim, m)
        hit = self._cost.get(key)
        if hit is not None:
            return hit
        tm = self.timings[kind]
        if phase == A2A:
            p = self.network.dims[dim].npus
            part = m // p if self.astra else m / p
            c = tm.stage("AG", dim, part)
            c = StageCost(c.duration_ns, c.fixed_ns, c.sent_bytes, m)
            last = last_message_ns(tm, "AG", dim, part)
        else:
            c = tm.stage(phase, dim, m)
            last = last_message_ns(tm, phase, dim, m)
        hit = self._cost[key] = (m, c)
        self._last[(kind, phase, dim, m)] = last
        return hit

    def issue(self, kind: str, sizes: Sequence[int], plans: Sequence[Plan], priority: int,
              on_done: Callable[[int, float], None]) -> int:
        """Create the chunks of a collective one at a time, queue and serve each."""
        cid = len(self.pending)
        self.pending.append(len(sizes))
        self.done_cb.append(on_done)
        self.coll_end.append(-1.0)
        table = self.table
        blocks = self._blocks
        firsts = []
        for k, (size, plan) in enumerate(zip(sizes, plans, strict=True)):
            bkey = (kind, plan, size)
            hit = blocks.get(bkey)
            if hit is None:
                costs = []
                lasts = []
                m: float = size
                for phase, d in plan:
                    mc = self.stage_cost(kind, phase, d, m)
                    costs.append(mc)
                    lasts.append(self._last[(kind, phase, d, m)])
                    m = mc[1].output_bytes
                hit = blocks[bkey] = (StageTable.block(plan, costs), lasts)
            block, lasts = hit
            firsts.append(table.add_block(cid, k, block))
            self.last_msg.extend(lasts)
            unsent = self.unsent
            for d, b in zip(block[0], block[3], strict=True):
                unsent[d] += b
            n = len(plan)
            self.prio.extend([priority] * n)
            self.start.extend([-1.0] * n)
            self.end.extend([-1.0] * n)
            self.coll.extend([cid] * n)
            self.chunk.extend([k] * n)
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
        cid = self.coll[sid]
        self.pending[cid] -= 1
        if self.pending[cid] == 0:
            self.coll_end[cid] = t
            self.done_cb[cid](cid, t)
        self._serve(d, t)

    # -- what Themis-running needs -------------------------------------------------
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
