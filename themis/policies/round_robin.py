"""Round-robin: chunk k starts at dimension k mod D and wraps around."""

from __future__ import annotations

from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import Route, register_policy
from topologies.network import Network


@register_policy("round-robin")
@dataclass(frozen=True)
class RoundRobin:
    """Rotate the starting dimension chunk by chunk.

    Chunk k takes ``active[k % D:] + active[:k % D]`` over the D active
    dimensions. ``astra``: ASTRA-sim 1.0's ``roundRobin``, which rotates the
    list of all dimensions (size-1 ones included, then skipped) and reverses
    that list for an all-gather.
    """

    astra: bool = False
    name: str = "round-robin"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Rotated routes, in chunk order."""
        n_chunks = len(collective.chunk_sizes())
        if not self.astra:
            dims = network.active_dims
            n = len(dims)
            return [dims[k % n:] + dims[:k % n] for k in range(n_chunks)]
        ndims = network.ndims
        base = list(range(ndims))
        if collective.kind == "all-gather":
            base.reverse()
        active = set(network.active_dims)
        return [tuple(d for d in base[k % ndims:] + base[:k % ndims] if d in active)
                for k in range(n_chunks)]
