"""Baseline: every chunk crosses dimensions 0, 1, ..., D-1."""

from __future__ import annotations

from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import Route, register_policy
from topologies.network import Network


@register_policy("baseline")
@dataclass(frozen=True)
class Baseline:
    """The hierarchical default: route 0..D-1 for every chunk.

    ``astra``: ASTRA-sim 1.0's ``baseline``, which walks its dimension list
    reversed for an all-gather (route D-1..0).
    """

    astra: bool = False
    name: str = "baseline"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The same route for every chunk."""
        route = network.active_dims
        if self.astra and collective.kind == "all-gather":
            route = tuple(reversed(route))
        return [route] * len(collective.chunk_sizes())
