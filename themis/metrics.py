"""Metrics of a schedule (model.md §8)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from themis.collective import Collective
from topologies.network import Network

if TYPE_CHECKING:  # used in annotations only
    import numpy as np

    from themis.schedule import Schedule

#: Runs with more stages than this compute their metrics with numpy; smaller ones in
#: plain Python, so that a small ``themis simulate`` never imports numpy. Both give
#: the very same floats (:func:`pairwise_sum` is numpy's summation order).
NUMPY_STAGES = 2048


@dataclass(frozen=True)
class DimMetrics:
    """One dimension's busy time, bytes sent and utilization (busy / makespan)."""

    dim: int
    busy_ns: float
    bytes: float
    utilization: float


@dataclass(frozen=True)
class Metrics:
    """Makespan, ideal (LB0), bandwidth utilization, per-dimension figures, routes."""

    makespan_ns: float
    ideal_ns: float
    bw_utilization: float
    dims: list[DimMetrics]
    routes: dict[str, int]
    stages: int
    chunks: int

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return asdict(self)


def collective_bytes(collective: Collective, npus: int) -> float:
    """Bytes one NPU must send for a collective, whatever the routes.

    All-reduce 2S(1 - 1/N); reduce-scatter and all-gather S(1 - 1/N).
    """
    factor = 2.0 if collective.kind == "all-reduce" else 1.0
    return factor * collective.size_bytes * (1.0 - 1.0 / npus)


def ideal_ns(network: Network, collectives: list[Collective]) -> float:
    """LB0: the collectives' bytes over the sum of all active bandwidths."""
    n = math.prod(network.dims[d].npus for d in network.active_dims)
    total = sum(collective_bytes(c, n) for c in collectives)
    bw = sum(network.dims[d].bandwidth_bytes_per_ns for d in network.active_dims)
    return total / bw


def pairwise_sum(values: Sequence[float], lo: int = 0, n: int | None = None) -> float:
    """``sum(values[lo:lo + n])`` added in numpy's order for float64 (its pairwise
    summation: blocks of up to 128 with 8 accumulators, halves above), so the plain
    Python metrics equal the numpy ones bit for bit."""
    if n is None:
        n = len(values) - lo
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += values[i]
        return res
    if n <= 128:
        r = [values[lo + j] for j in range(8)]
        i = 8
        stop = n - n % 8
        while i < stop:
            for j in range(8):
                r[j] += values[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += values[lo + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_sum(values, lo, n2) + pairwise_sum(values, lo + n2, n - n2)


def _union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    """Length of the union of the intervals [start, end] (each end >= its start)."""
    import numpy as np

    n = len(starts)
    if n == 0:
        return 0.0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    running_end = np.maximum.accumulate(e)
    # A new busy block starts where a start lies after every earlier end; a block
    # ends where the next begins, at the running end (its own largest end).
    new_block = np.empty(n, dtype=bool)
    new_block[0] = True
    np.greater(s[1:], running_end[:-1], out=new_block[1:])
    first = np.flatnonzero(new_block)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = n - 1
    return float(np.sum(running_end[last] - s[first]))


def _union_length_py(starts: Sequence[float], ends: Sequence[float]) -> float:
    """:func:`_union_length` in plain Python (the same floats)."""
    if not starts:
        return 0.0
    order = sorted(range(len(starts)), key=starts.__getitem__)  # stable
    blocks: list[float] = []
    block_start = starts[order[0]]
    running = ends[order[0]]
    for i in order[1:]:
        s = starts[i]
        if s > running:
            blocks.append(running - block_start)
            block_start = s
        e = ends[i]
        if e > running:
            running = e
    blocks.append(running - block_start)
    return pairwise_sum(blocks)


def _dim_figures_numpy(columns, dims: list[int]) -> dict[int, tuple[float, float]]:
    import numpy as np

    dim = np.asarray(columns[0], dtype=np.int64)
    start = np.asarray(columns[1], dtype=float)
    end = np.asarray(columns[2], dtype=float)
    sent = np.asarray(columns[3], dtype=float)
    out = {}
    for d in dims:
        mask = dim == d
        out[d] = (_union_length(start[mask], end[mask]), float(sent[mask].sum()))
    return out


def _dim_figures_python(columns, dims: list[int]) -> dict[int, tuple[float, float]]:
    per: dict[int, tuple[list[float], list[float], list[float]]] = {d: ([], [], [])
                                                                     for d in dims}
    for d, s, e, b in zip(*columns, strict=True):
        lists = per[d]
        lists[0].append(float(s))
        lists[1].append(float(e))
        lists[2].append(float(b))
    return {d: (_union_length_py(s, e), pairwise_sum(b)) for d, (s, e, b) in per.items()}


def compute_metrics(
    schedule: Schedule,
    columns: tuple[Sequence[int], Sequence[float], Sequence[float], Sequence[float]]
    | None = None,
    numpy_stages: int = NUMPY_STAGES,
) -> Metrics:
    """Metrics of any schedule (simulated or solved).

    ``columns`` (dim, start_ns, end_ns, sent_bytes per stage, in the order of
    ``schedule.stages``) may be given by a caller that has them already. Runs of
    more than ``numpy_stages`` stages are measured with numpy (same results).
    """
    net = schedule.network
    if columns is None:
        st = schedule.stages
        columns = ([s.dim for s in st], [s.start_ns for s in st], [s.end_ns for s in st],
                   [s.sent_bytes for s in st])
    n = len(columns[0])
    last_end = float(max(columns[2])) if n else 0.0
    makespan = last_end - min(schedule.issue_ns, default=0.0)
    ideal = ideal_ns(net, schedule.collectives)
    present = sorted(set(columns[0]) | set(net.active_dims))
    figures = (_dim_figures_numpy if n > numpy_stages else _dim_figures_python)(columns,
                                                                                 present)
    dims = []
    for d in present:
        busy, sent = figures[d]
        dims.append(DimMetrics(d, busy, sent, busy / makespan if makespan > 0 else 0.0))
    return Metrics(
        makespan_ns=makespan,
        ideal_ns=ideal,
        bw_utilization=ideal / makespan if makespan > 0 else 0.0,
        dims=dims,
        routes=schedule.route_histogram(),
        stages=n,
        chunks=len(schedule.chunks),
    )
