"""Metrics of a schedule (model.md §8)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from themis.collective import Collective
from topologies.network import Network

if TYPE_CHECKING:  # used in annotations only
    from themis.schedule import Schedule


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


def _union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    """Length of the union of the intervals [start, end] (each end >= its start)."""
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


def compute_metrics(
    schedule: Schedule,
    columns: tuple[Sequence[int], Sequence[float], Sequence[float], Sequence[float]]
    | None = None,
) -> Metrics:
    """Metrics of any schedule (simulated or solved).

    ``columns`` (dim, start_ns, end_ns, sent_bytes per stage, in the order of
    ``schedule.stages``) may be given by a caller that has them already.
    """
    net = schedule.network
    if columns is None:
        st = schedule.stages
        columns = ([s.dim for s in st], [s.start_ns for s in st], [s.end_ns for s in st],
                   [s.sent_bytes for s in st])
    dim = np.asarray(columns[0], dtype=np.int64)
    start = np.asarray(columns[1], dtype=float)
    end = np.asarray(columns[2], dtype=float)
    sent = np.asarray(columns[3], dtype=float)
    last_end = float(end.max()) if len(end) else 0.0
    makespan = last_end - min(schedule.issue_ns, default=0.0)
    ideal = ideal_ns(net, schedule.collectives)
    present = set(columns[0]) | set(net.active_dims)
    dims = []
    for d in sorted(present):
        mask = dim == d
        busy = _union_length(start[mask], end[mask])
        dims.append(DimMetrics(d, busy, float(sent[mask].sum()),
                               busy / makespan if makespan > 0 else 0.0))
    return Metrics(
        makespan_ns=makespan,
        ideal_ns=ideal,
        bw_utilization=ideal / makespan if makespan > 0 else 0.0,
        dims=dims,
        routes=schedule.route_histogram(),
        stages=len(dim),
        chunks=len(schedule.chunks),
    )
