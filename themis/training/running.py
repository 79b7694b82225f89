"""``themis-running``: Themis whose tracker counts the load still in flight.

ASTRA-sim's Themis resets its per-dimension loads whenever a collective is
issued at a new tick, so every collective is balanced as if the network were
idle (ASTRA-sim names an ``OnlineGreedy`` that would do better but never
built it). This variant starts each collective's greedy from the bytes that
queued and running stages of earlier collectives still have to send on every
dimension, in Themis' own unit (MiB at dimension 0's bandwidth), and then
runs the greedy of model.md §6 over the collective's involved dimensions:
stable-sort by load (descending for an all-gather), fall back to the
ascending route when the load gap is worth fewer than chunk/16 bytes on the
first dimension, otherwise take the sorted order, and add each stage's load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from themis.plans import Plan, PlanShape
from themis.timing.astra10 import themis_bandwidth
from themis.training.routing import register_router
from topologies.network import Network
from topologies.units import MiB

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.engine import Engine
    from themis.runkind import RunKind

THRESHOLD_DIVISOR = 16


def running_themis_routes(network: Network, mask: tuple[bool, ...], kind: str, chunk: int,
                          n: int, inflight_bytes: list[float]) -> list[tuple[int, ...]]:
    """Routes of ``n`` chunks of ``chunk`` bytes, starting from the in-flight loads."""
    dims = network.dims
    inv = [i for i, (d, m) in enumerate(zip(dims, mask, strict=True)) if m and d.npus > 1]
    bw = [themis_bandwidth(d) for d in dims]
    ratio = [b / bw[0] for b in bw]
    size = [d.npus for d in dims]
    gather = kind == "all-gather"
    loads = {d: inflight_bytes[d] / MiB / ratio[d] for d in inv}
    order = list(inv)
    threshold = chunk // THRESHOLD_DIVISOR
    routes: list[tuple[int, ...]] = []
    for _ in range(n):
        order.sort(key=loads.__getitem__)
        if gather:
            order.reverse()
        first, last = order[0], order[-1]
        gap = abs(loads[last] - loads[first])
        p = size[first]
        per = (p - 1) if gather else (p - 1) / p
        route = tuple(order) if gap * ratio[first] / per * MiB >= threshold else tuple(inv)
        routes.append(route)
        cs = float(chunk)
        for d in route:
            p = size[d]
            loads[d] += (cs / MiB) * ((p - 1) if gather else (p - 1) / p) / ratio[d]
            cs = cs * p if gather else cs / p
    return routes


@register_router("themis-running")
class RunningThemis:
    """The router: :func:`running_themis_routes` from the engine's in-flight bytes; the
    run's plan shape."""

    def __init__(self, network: Network, engine: Engine, kind: RunKind,
                 shape: PlanShape) -> None:
        self.network, self.engine = network, engine

    def choose(self, kind: str, mask: tuple[bool, ...], sizes: Sequence[int],
               now: float) -> tuple[list[tuple[int, ...]], list[Plan] | None]:
        """Routes of the collective's chunks (sized as its first), plans of the run's shape."""
        loads = self.engine.inflight_sent(now)
        return running_themis_routes(self.network, mask, kind, sizes[0], len(sizes),
                                     loads), None
