"""Hints across latencies: the latency-0 instance, and its schedules replayed on the real one.

With per-hop latency (or NIC, router or endpoint delays) the exact grid is fine
(about 1e6-4e6 ticks on D3/D4 at 500 ns) and CP-SAT struggles, while the
same instance at latency 0 has a coarse exact grid (64-256 ticks) and its
optimum is often proven quickly. A schedule is its chunks' routes (plans)
and each dimension's stage order; both make sense on any latency, so the
latency-0 optimum **replayed** on the real network (same plans, same
per-dimension orders, each stage as early as those allow: a semi-active
schedule, timed exactly by the simulator and checked by the one checker) is
a valid schedule of the real instance. Measured (issue 26): on D3 and D4 at
500 ns per hop, C = 16, it meets the lower bound.

:func:`solvers.solve.solve` uses it as a hint **and** a candidate answer
(``latency0``, default on, CP-SAT): the latency-0 instance is solved with a
share of the budget (itself with its doubling chain, so the split C/2
optimum comes too), and both schedules, replayed, join the hint candidates;
the shortest is the warm start and the fallback answer, graded as every
hint is (``optimal`` only when a bound proves it).
"""

from __future__ import annotations

import dataclasses

from themis.checker import check
from themis.instance import Instance
from themis.schedule import Schedule
from themis.simulator import simulate


def zero_latency(instance: Instance) -> Instance | None:
    """``instance`` with every fixed per-step time removed: per-hop, NIC and router
    latencies and the endpoint delay set to 0 (bandwidths and algorithms kept).

    ``None`` when the instance has none of them (it is its own latency-0 instance).
    """
    net = instance.network
    fixed = instance.endpoint_delay_ns > 0 or net.nic_latency_ns > 0 or \
        net.router_latency_ns > 0 or any(
            d.latency_ns > 0 or (d.nic_latency_ns or 0) > 0 or (d.router_latency_ns or 0) > 0
            for d in net.dims)
    if not fixed:
        return None
    dims = tuple(dataclasses.replace(d, latency_ns=0.0,
                                     nic_latency_ns=None if d.nic_latency_ns is None else 0.0,
                                     router_latency_ns=None if d.router_latency_ns is None
                                     else 0.0)
                 for d in net.dims)
    net0 = dataclasses.replace(net, dims=dims, nic_latency_ns=0.0, router_latency_ns=0.0)
    return dataclasses.replace(instance, network=net0, endpoint_delay_ns=0.0)


def replay_on(schedule: Schedule, instance: Instance, label: str) -> Schedule | None:
    """``schedule``'s plans and per-dimension stage orders replayed on ``instance``.

    ``schedule`` must be a one-all-reduce schedule with ``instance``'s chunk sizes
    (e.g. of its latency-0 instance). The simulator times each stage as early as
    the chunk's previous stage and its dimension's order allow; the result is
    checked by :func:`themis.checker.check`. ``None`` when the chunks differ,
    the orders cannot be replayed or the replay fails the checker.
    """
    if len(schedule.collectives) != 1 or \
            schedule.collectives[0].chunk_sizes() != instance.collective.chunk_sizes():
        return None
    phases = {c.chunk: c.phases for c in schedule.chunks}
    plans = [phases[c] for c in range(len(phases))]
    try:
        res = simulate(instance.network, instance.collective, timing=instance.timing,
                       plans=[plans], dim_orders=schedule.dimension_orders(),
                       ag_order=schedule.ag_order)
    except RuntimeError:  # orders that contradict a chunk's own order
        return None
    out = res.schedule
    if check(out):
        return None
    out.meta.update({"policy": label, "replayed_from_ns": schedule.makespan_ns})
    return out
