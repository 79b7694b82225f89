"""The fluid closed form of network design (LIBRA's model of a baseline all-reduce)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FluidDesign:
    """A per-dimension bandwidth design and its fluid all-reduce time."""

    bandwidths_GBps: tuple[float, ...]
    traffic_bytes: tuple[float, ...]
    time_ns: float
    cost: float


def all_reduce_traffic_bytes(size_bytes: float, npus: tuple[int, ...]) -> tuple[float, ...]:
    """Bytes each NPU sends on each dimension for an all-reduce in ascending order.

    Reduce-scatter on dimension ``d`` moves ``S (n_d - 1) / n_d / prod_{j<d} n_j`` bytes per NPU;
    the all-gather mirrors it, so the all-reduce moves twice that.
    """
    if size_bytes <= 0:
        raise ValueError(f"size_bytes must be positive, got {size_bytes}")
    if not npus or any(n < 1 for n in npus):
        raise ValueError(f"npus per dimension must be >= 1, got {npus}")
    traffic = []
    before = 1
    for n in npus:
        traffic.append(2.0 * size_bytes * (n - 1) / n / before)
        before *= n
    return tuple(traffic)


def fluid_design(traffic_bytes: tuple[float, ...], budget: float,
                 cost_per_GBps: tuple[float, ...] | None = None) -> FluidDesign:
    """The design minimising ``max_d T_d / B_d`` subject to ``sum_d c_d B_d = budget``.

    ``cost_per_GBps`` defaults to 1 per dimension (a total-bandwidth budget in GB/s). Bandwidths
    are in GB/s (= bytes/ns), so the time is in ns. Dimensions with no traffic get no bandwidth.
    """
    costs = cost_per_GBps if cost_per_GBps is not None else tuple(1.0 for _ in traffic_bytes)
    if len(costs) != len(traffic_bytes):
        raise ValueError(f"{len(costs)} costs for {len(traffic_bytes)} dimensions")
    if not budget > 0 or not math.isfinite(budget):
        raise ValueError(f"budget must be positive and finite, got {budget}")
    if any(c <= 0 for c in costs) or any(t < 0 for t in traffic_bytes):
        raise ValueError("costs must be positive and traffic non-negative")
    weighted = sum(c * t for c, t in zip(costs, traffic_bytes, strict=True))
    if weighted <= 0:
        raise ValueError("no traffic on any dimension")
    bandwidths = tuple(budget * t / weighted for t in traffic_bytes)
    return FluidDesign(
        bandwidths_GBps=bandwidths,
        traffic_bytes=tuple(traffic_bytes),
        time_ns=weighted / budget,
        cost=sum(c * b for c, b in zip(costs, bandwidths, strict=True)),
    )


def fluid_time_ns(traffic_bytes: tuple[float, ...], bandwidths_GBps: tuple[float, ...]) -> float:
    """Fluid time of a design: the slowest dimension, ``max_d T_d / B_d`` (inf if starved)."""
    worst = 0.0
    for t, b in zip(traffic_bytes, bandwidths_GBps, strict=True):
        if t > 0:
            worst = max(worst, math.inf if b <= 0 else t / b)
    return worst
