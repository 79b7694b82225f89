"""A lower bound of a Chakra-trace iteration valid for every policy and discipline.

A trace runs under ASTRA-sim 2.x's slots (:mod:`themis.training.et_run`): per rank, one
compute slot and one communication slot, a collective holding the communication slot for
its time alone under the run's timing, policy and discipline. The bound has two steps.

1. **Each collective's own bound** ``LB_c``, valid for every policy and discipline: the
   route-count model of its chunks alone (:meth:`themis.training.bound.WindowBound.own_ns`,
   the 1.0 iteration bound's step 1), over the alternatives (routes and plan shapes) the
   run kind can execute, with the stage costs, chunks, dimensions and active chunks of
   the collective the system-file runner really runs (read off its schedule:
   :func:`collective_bound_ns`). A collective that no policy changes (a 2.x communicator
   group flattened to one ring) takes its time; a collective of nothing, no time.
   Every ET collective's time is rounded up to a whole ns, so ``LB_c`` is too.
2. **The slot windows** (:func:`slot_bound_ns`): with ``p_i`` each node's time (compute
   its duration, a collective ``LB_c``, a control node 0), ``r_i`` the longest chain of
   dependencies before node i and ``q_i`` the longest after it, no order of the nodes on
   a slot ends before Jackson's preemptive schedule of that slot's nodes with heads
   ``r_i`` and tails ``q_i`` (the best of the window bounds ``min r + sum p + min q``
   over the slot's node sets), nor before the longest chain. Every real start is at
   least ``r_i`` and every node is followed by at least ``q_i``, whatever the order.

The bound of a run is the largest over its rank classes. It does not depend on the
policy or discipline, so every policy's end is at or above it
(``tests/training/test_et_bound.py``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from themis.runkind import RunKind

if TYPE_CHECKING:  # pragma: no cover
    from themis.engine import Engine
    from themis.simulator import SimResult
    from themis.training.bound import Alternatives
    from topologies.network import Network

__all__ = ["CollectiveModel", "SlotNode", "collective_bound_ns", "collective_model", "jackson_ns",
           "model_bound_ns", "slot_bound_ns"]

#: Slack under which a float bound still rounds up to the next whole ns.
EPS_NS = 1e-6


@dataclass(frozen=True)
class SlotNode:
    """One node for :func:`slot_bound_ns`: its id, slot (``"compute"``, ``"collective"``
    or ``""`` for none), time in ns and dependencies (ids listed earlier)."""

    id: int
    slot: str
    ns: int
    deps: tuple[int, ...] = ()


def jackson_ns(jobs: Sequence[tuple[int, int, int]]) -> int:
    """The end of Jackson's preemptive schedule of ``jobs`` (head, time, tail) on one
    machine: at every moment the released job of the longest tail runs; the end is the
    largest completion plus tail. It is the optimum with preemption, so no schedule
    without it ends earlier."""
    order = sorted(range(len(jobs)), key=lambda i: jobs[i][0])
    heap: list[tuple[int, int, int]] = []  # (-tail, index, time left)
    t = best = i = 0
    while i < len(order) or heap:
        if not heap:
            t = max(t, jobs[order[i]][0])
        while i < len(order) and jobs[order[i]][0] <= t:
            j = order[i]
            heapq.heappush(heap, (-jobs[j][2], j, jobs[j][1]))
            i += 1
        neg_q, j, left = heapq.heappop(heap)
        run = left if i == len(order) else min(left, jobs[order[i]][0] - t)
        t += run
        if left - run > 0:
            heapq.heappush(heap, (neg_q, j, left - run))
        else:
            best = max(best, t - neg_q)
    return int(best)


def slot_bound_ns(nodes: Sequence[SlotNode]) -> int:
    """Step 2 of the module docstring for one rank's ``nodes`` (dependencies first)."""
    ns = {n.id: n.ns for n in nodes}
    head: dict[int, int] = {}
    users: dict[int, list[int]] = {}
    for n in nodes:
        head[n.id] = max((head[d] + ns[d] for d in n.deps), default=0)
        for d in n.deps:
            users.setdefault(d, []).append(n.id)
    tail: dict[int, int] = {}
    for n in reversed(nodes):
        tail[n.id] = max((ns[u] + tail[u] for u in users.get(n.id, ())), default=0)
    best = max((head[n.id] + n.ns + tail[n.id] for n in nodes), default=0)
    for slot in ("compute", "collective"):
        jobs = [(head[n.id], n.ns, tail[n.id]) for n in nodes if n.slot == slot]
        if jobs:
            best = max(best, jackson_ns(jobs))
    return best


@dataclass(frozen=True)
class CollectiveModel:
    """What the system-file runner runs for one trace collective, read off one run of it:
    its kind, the network it runs on (dimensions outside ``involved_dim`` at size 1), the
    dimensions it crosses, each chunk's input bytes, the active chunks and bandwidth
    sharing, and its alternatives (:class:`themis.training.bound.Alternatives`: every route
    and plan shape the run kind executes, with the run's stage costs)."""

    kind: str
    network: Network
    dims: tuple[int, ...]
    sizes: tuple[float, ...]
    active_chunks: int
    law: str
    engine: Engine
    alts: Alternatives
    #: The run it was read off: each stage's (dimension, chunk, start ns), a schedule,
    #: and its end (ns).
    run_stages: tuple[tuple[int, int, float], ...] = ()
    run_ns: float = 0.0


def collective_model(res: SimResult, run_kind: RunKind) -> CollectiveModel | None:
    """The :class:`CollectiveModel` of the collective ``res`` ran (under any policy), for a
    run of kind ``run_kind``; ``None`` when it crosses no dimension."""
    from themis.engine import Engine, law_at
    from themis.timing import make_timing
    from themis.training.bound import Alternatives

    sched = res.schedule
    if not sched.chunks or not sched.chunks[0].route:
        return None
    kind = sched.collectives[0].kind
    tm = make_timing(sched.timing, sched.network, sched.algorithms, sched.endpoint_delay_ns,
                     **sched.timing_options)
    k = sched.active_chunks
    law = law_at(tm.resource_law, k)
    first = {s.chunk: s.input_bytes for s in sched.stages if s.step == 0}
    engine = Engine(sched.network, {kind: tm}, "fifo", k, run_kind.rules(law), law)
    return CollectiveModel(kind, sched.network, tuple(sorted(sched.chunks[0].route)),
                           tuple(first[c.chunk] for c in sched.chunks), k, law, engine,
                           Alternatives(engine, run_kind),
                           tuple((s.dim, s.chunk, s.start_ns) for s in sched.stages),
                           res.makespan_ns)


def collective_bound_ns(res: SimResult, run_kind: RunKind) -> int:
    """Step 1 of the module docstring: a lower bound of the time of the collective ``res``
    ran (one system-file run of it, under any policy) under every policy and discipline
    of a run of kind ``run_kind`` (its plan shapes), rounded up to a whole ns."""
    model = collective_model(res, run_kind)
    return 0 if model is None else model_bound_ns(model)


def model_bound_ns(model: CollectiveModel) -> int:
    """Step 1 of the module docstring for a :class:`CollectiveModel`."""
    from themis.training.bound import WindowBound

    sizes = list(model.sizes)
    classes = tuple((float(s), sizes.count(s)) for s in dict.fromkeys(sizes))
    bound = WindowBound(model.alts, model.active_chunks, model.law)
    return max(0, math.ceil(bound.own_ns((model.kind, model.dims, classes)) - EPS_NS))
