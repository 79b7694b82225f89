"""Themis (ISCA 2022): greedy per-chunk routes that balance dimension loads.

This is model.md §6, the OfflineGreedy of ASTRA-sim: loads in "MiB at B_0",
a persistent stable-sorted dimension list, a fallback to 0..D-1 when the
load gap is worth fewer than chunk/16 bytes, loads reset per collective.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import Route, register_policy
from topologies.network import Network

MiB = float(1 << 20)


@register_policy("themis")
@dataclass(frozen=True)
class Themis:
    """The Themis greedy. ``threshold_divisor`` is the 16 of chunk/16."""

    threshold_divisor: int = 16
    name: str = "themis"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Routes for every chunk, chosen in chunk order at issue time."""
        return self.routes_with_loads(collective, network)[0]

    def routes_with_loads(
        self, collective: Collective, network: Network
    ) -> tuple[list[Route], dict[int, float]]:
        """Routes and the final per-dimension loads (MiB at B_0)."""
        dims = network.dims
        active = network.active_dims
        b0 = dims[0].bandwidth_GBps
        gather = collective.kind == "all-gather"
        n_total = math.prod(dims[d].npus for d in active)
        loads = {d: 0.0 for d in active}
        order = list(active)
        routes: list[Route] = []
        for idx, c in enumerate(collective.chunk_sizes()):
            order.sort(key=loads.__getitem__)  # stable: ties keep the previous order
            if gather:
                order.reverse()
            first, last = order[0], order[-1]
            p_first = dims[first].npus
            gap = abs(loads[last] - loads[first])
            gap_bytes = gap * (dims[first].bandwidth_GBps / b0) / ((p_first - 1) / p_first) * MiB
            if idx == 0 or gap_bytes < c // self.threshold_divisor:
                route = tuple(active)
                order = list(active)
            else:
                route = tuple(order)
            routes.append(route)
            if gather:
                m = c / n_total
                for d in route:
                    p = dims[d].npus
                    loads[d] += (m / MiB) * (p - 1) / (dims[d].bandwidth_GBps / b0)
                    m *= p
            else:
                m = float(c)
                for d in route:
                    p = dims[d].npus
                    loads[d] += (m / MiB) * ((p - 1) / p) / (dims[d].bandwidth_GBps / b0)
                    m /= p
        return routes, loads
