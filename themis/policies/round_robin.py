"""Round-robin: chunk k starts at dimension k mod D and wraps around."""

from __future__ import annotations

from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import Route, register_policy
from topologies.network import Network


@register_policy("round-robin")
@dataclass(frozen=True)
class RoundRobin:
    """Rotate the starting dimension chunk by chunk."""

    name: str = "round-robin"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Chunk k: ``active[k % D:] + active[:k % D]``."""
        dims = network.active_dims
        n = len(dims)
        return [dims[k % n:] + dims[:k % n] for k in range(len(collective.chunk_sizes()))]
