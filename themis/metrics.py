"""Metrics of a schedule (model.md §8)."""

from __future__ import annotations

import math
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
    if len(starts) == 0:
        return 0.0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    running_end = np.maximum.accumulate(e)
    # A new busy block starts where a start lies after every earlier end.
    new_block = np.empty(len(s), dtype=bool)
    new_block[0] = True
    new_block[1:] = s[1:] > running_end[:-1]
    block_id = np.cumsum(new_block) - 1
    block_start = s[new_block]
    block_end = np.zeros(block_id[-1] + 1)
    np.maximum.at(block_end, block_id, e)
    return float(np.sum(block_end - block_start))


def compute_metrics(schedule: Schedule) -> Metrics:
    """Metrics of any schedule (simulated or solved)."""
    net = schedule.network
    makespan = schedule.makespan_ns - min(schedule.issue_ns, default=0.0)
    ideal = ideal_ns(net, schedule.collectives)
    by_dim: dict[int, list] = {d: [] for d in net.active_dims}
    for s in schedule.stages:
        by_dim.setdefault(s.dim, []).append((s.start_ns, s.end_ns, s.sent_bytes))
    dims = []
    for d, rows in sorted(by_dim.items()):
        arr = np.array(rows, dtype=float).reshape(-1, 3)
        busy = _union_length(arr[:, 0], arr[:, 1])
        dims.append(DimMetrics(d, busy, float(arr[:, 2].sum()),
                               busy / makespan if makespan > 0 else 0.0))
    return Metrics(
        makespan_ns=makespan,
        ideal_ns=ideal,
        bw_utilization=ideal / makespan if makespan > 0 else 0.0,
        dims=dims,
        routes=schedule.route_histogram(),
        stages=len(schedule.stages),
        chunks=len(schedule.chunks),
    )
