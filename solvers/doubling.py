"""Doubling: a C-chunk schedule split into a (k x C)-chunk one, hints up the chain, a bound.

Split every chunk of a C-chunk schedule into k back-to-back pieces of 1/k of
its size (same route, same slot in every dimension's order, the pieces in
turn): the result is a schedule of the (k x C)-chunk instance. When every
stage's duration is linear in its size (latency 0, no endpoint delay:
``linear_in_size``), the k pieces of a stage take exactly its time, so the
split schedule is no longer (the simulator's replay starts each piece as
early as it can, often earlier): OPT(kC) <= OPT(C). Two uses:

- **hints up the chain** (:func:`solvers.solve.chain_hint`, next to the
  :func:`~solvers.solve.solve` it calls at C/2): a proven C/2 optimum, split
  in two, is a strong hint for C (with latency it costs one more latency per
  stage; it is re-timed exactly by the simulator, still a valid hint);
- **the doubling bound** (:func:`doubling_bound`): at latency 0,
  OPT(C) >= OPT(kC) >= LB3(kC) for every k >= 1 (the best k is used).

Only instances whose chunks split exactly qualify (C x k divides the size: no
remainder chunk at either count).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from solvers.bounds import bounds
from themis.instance import Instance
from themis.schedule import Schedule
from themis.simulator import simulate

#: Relative tolerance of the linearity test (floating-point noise of the durations).
LINEAR_TOL = 1e-12


def with_chunks(instance: Instance, chunks: int) -> Instance:
    """``instance`` with another chunk count."""
    return dataclasses.replace(instance, chunks=chunks)


def splits(instance: Instance, factor: int) -> bool:
    """Whether ``instance``'s chunks split into ``factor`` equal whole-byte pieces each.

    That needs equal chunks (no remainder) of a size divisible by ``factor``,
    so that the ``factor x C``-chunk instance has exactly those pieces.
    """
    if factor < 1:
        return False
    sizes = instance.collective.chunk_sizes()
    return len(sizes) == instance.chunks and sizes[0] % factor == 0


def linear_in_size(instance: Instance) -> bool:
    """Whether every stage of the instance lasts a time proportional to its size.

    Checked on the instance's own timing: for each dimension and phase, half
    the size takes exactly half the time (no per-step latency or delay).
    """
    tm = instance.timing
    size = float(instance.collective.chunk_sizes()[0])
    for d in instance.dims:
        for phase in ("RS", "AG"):
            full = tm.stage(phase, d, size).duration_ns
            half = tm.stage(phase, d, size / 2).duration_ns
            if abs(2 * half - full) > LINEAR_TOL * max(full, 1.0):
                return False
    return True


def split_schedule(schedule: Schedule, instance: Instance, factor: int = 2) -> Schedule | None:
    """``schedule`` (one all-reduce) with every chunk split into ``factor`` pieces.

    ``instance`` is the target (``factor`` x the chunks of the schedule's
    collective). The pieces keep their chunk's plan and its place in every
    dimension's order, back to back; the simulator re-times the result exactly.
    ``None`` when the chunk sizes do not split exactly.
    """
    if len(schedule.collectives) != 1:
        return None
    src = schedule.collectives[0].chunk_sizes()
    dst = instance.collective.chunk_sizes()
    if len(dst) != factor * len(src) or any(s % factor for s in src) or \
            dst != [s // factor for s in src for _ in range(factor)]:
        return None
    phases = {c.chunk: c.phases for c in schedule.chunks}
    plans = [phases[c] for c in range(len(src)) for _ in range(factor)]
    orders: dict[int, Sequence[tuple[int, int, int]]] = {
        d: [(0, factor * c + i, step) for _, c, step in keys for i in range(factor)]
        for d, keys in schedule.dimension_orders().items()}
    res = simulate(instance.network, instance.collective, timing=instance.timing,
                   plans=[plans], dim_orders=orders, ag_order=schedule.ag_order)
    out = res.schedule
    out.meta.update({"policy": f"split x{factor}", "split_from_chunks": len(src)})
    return out


def doubling_bound(instance: Instance, ag_order: str = "reverse",
                   factors: tuple[int, ...] = (2,), **bound_kw) -> tuple[float, int]:
    """The best LB3(k x C) over ``factors`` (valid for C at latency 0), and its k.

    ``(0.0, 0)`` when the instance's durations are not linear in size or its
    chunks do not split. ``bound_kw`` go to :func:`solvers.bounds.bounds`.
    """
    if not linear_in_size(instance):
        return 0.0, 0
    best, best_k = 0.0, 0
    for k in factors:
        if not splits(instance, k):
            continue
        lb = bounds(with_chunks(instance, k * instance.chunks), ag_order, **bound_kw).lb_ns
        if lb > best:
            best, best_k = lb, k
    return best, best_k
