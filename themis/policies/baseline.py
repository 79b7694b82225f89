"""Baseline: every chunk crosses dimensions 0, 1, ..., D-1."""

from __future__ import annotations

from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import Route, register_policy
from topologies.network import Network


@register_policy("baseline")
@dataclass(frozen=True)
class Baseline:
    """The hierarchical default: route 0..D-1 for every chunk."""

    name: str = "baseline"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The same ascending route for every chunk."""
        return [network.active_dims] * len(collective.chunk_sizes())
