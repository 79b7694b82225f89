"""Collectives issued while the engine runs, with priorities (a training iteration).

:class:`Engine` is the :class:`~themis.engine.loop.EventLoop` under ASTRA-sim
1.0's event order (:meth:`Rules.astra <themis.engine.rules.Rules.astra>`) on a
table that grows: :meth:`Engine.issue` costs a collective's chunks with the
timing model of its kind, adds them to the table with its priority and issues
them at the current time; its ``on_done`` is called when the last chunk's
last stage ends. The workload's compute, waits and updates are the loop's
events (:meth:`~themis.engine.loop.EventLoop.at`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from themis.disciplines import make_discipline
from themis.engine.loop import EventLoop
from themis.engine.npu_lists import NpuLists, Steps
from themis.engine.resources import Exclusive
from themis.engine.rules import Rules, tie_readers
from themis.plans import Plan
from themis.stages import Block, StageTable
from themis.timing.base import Timing
from topologies.network import Network


class Engine(EventLoop):
    """The event loop of collectives issued while it runs (one NPU's view, model.md §2).

    ``timings`` gives the timing model of each collective kind; ``queue`` is the
    discipline every dimension runs (with collective priorities:
    :meth:`themis.runkind.RunKind.priority_queue`); ``rules`` the event orders
    (:meth:`themis.runkind.RunKind.rules`); ``law`` the resource law
    (:func:`~themis.engine.resources.law_at` of the timings' law and k). Per stage it records the
    collective (``coll``) and chunk (``chunk``); per collective its issue time,
    end and chunks still running.
    """

    def __init__(self, network: Network, timings: Mapping[str, Timing], queue: str,
                 active_chunks: int, rules: Rules, law: str = "exclusive") -> None:
        table = StageTable()
        bandwidth = [d.bandwidth_bytes_per_ns for d in network.dims]
        super().__init__(table, network.ndims, active_chunks, rules, law, bandwidth,
                         growing=True)
        self.network = network
        self.timings = timings
        self.prio = table.priority
        self.intra = queue
        self.queues = [make_discipline(self.intra, table) for _ in range(self.ndims)]
        self.coll: list[int] = []
        self.chunk: list[int] = []
        self.pending: list[int] = []  # chunks still running, per collective
        self.done_cb: list[Callable[[int, float], None]] = []
        self.coll_end: list[float] = []
        self.issue_ns: list[float] = []
        self._blocks: dict[tuple[str, Plan, int], tuple[Block, list[float], list[Steps]]] = {}
        self.on_chunk_end = self._chunk_done
        #: Per stage, its message steps (with :attr:`Rules.npu_lists`).
        self.npu_steps: list[Steps] = []
        if rules.npu_lists and isinstance(self.resource, Exclusive):
            self.npu_lists = NpuLists([d.npus for d in network.dims], table.dim, table.last,
                                      self.npu_steps)

    def _block(self, kind: str, plan: Plan, size: int
               ) -> tuple[Block, list[float], list[Steps]]:
        """The stage columns of a chunk, the final-message time (final-event time
        under :attr:`Rules.final_event_ties`) of each stage and, with
        :attr:`Rules.npu_lists`, each stage's message steps."""
        key = (kind, plan, size)
        hit = self._blocks.get(key)
        if hit is None:
            tm = self.timings[kind]
            last_of, steps_of = tie_readers(tm, self.rules)
            if self.npu_lists is None:
                steps_of = None
            costs = []
            lasts = []
            steps: list[Steps] = []
            m: float = size
            for phase, d in plan:
                c = tm.stage(phase, d, m)
                costs.append((m, c))
                lasts.append(float(last_of(phase, d, m)) if last_of is not None else 0.0)
                if steps_of is not None:
                    steps.append(steps_of(phase, d, m))
                m = c.output_bytes
            hit = self._blocks[key] = (StageTable.block(plan, costs), lasts, steps)
        return hit

    def issue(self, kind: str, sizes: Sequence[int], plans: Sequence[Plan], priority: int,
              on_done: Callable[[int, float], None]) -> int:
        """Issue a collective now: chunk ``k`` of ``sizes[k]`` bytes (an all-gather's
        per-NPU input) follows ``plans[k]``; returns the collective's id. Its chunks
        are queued one at a time when the calling event returns
        (:meth:`~themis.engine.loop.EventLoop.issue_at`)."""
        cid = len(self.pending)
        self.pending.append(len(sizes))
        self.done_cb.append(on_done)
        self.coll_end.append(-1.0)
        self.issue_ns.append(self.now)
        table = self.table
        firsts = []
        unsent = self.unsent
        blocks = self._blocks
        last_msg, prio = self.last_msg, self.prio
        coll, chunk = self.coll, self.chunk
        added = 0
        npl = self.npu_lists
        if npl is not None and npl.delta < 0:
            npl.delta = int(self.timings[kind].endpoint_delay_ns)
        npu_steps = self.npu_steps
        for k, (size, plan) in enumerate(zip(sizes, plans, strict=True)):
            block, lasts, steps = blocks.get((kind, plan, size)) or self._block(kind, plan, size)
            firsts.append(table.add_block(cid, k, block))
            last_msg.extend(lasts)
            if npl is not None:
                npu_steps.extend(steps)
            for d, b in zip(block[0], block[3], strict=True):
                unsent[d] += b
            n = len(plan)
            added += n
            prio.extend([priority] * n)
            coll.extend([cid] * n)
            chunk.extend([k] * n)
        self.grow(added)
        self.issue_at(self.now, firsts)
        return cid

    def _chunk_done(self, sid: int, t: float) -> None:
        cid = self.coll[sid]
        self.pending[cid] -= 1
        if self.pending[cid] == 0:
            self.coll_end[cid] = t
            self.done_cb[cid](cid, t)
