"""Small instances shared by the solver tests."""

from __future__ import annotations

from themis.instance import Instance
from topologies.network import Network

GiB = 2**30
MiB = 2**20


def two_dim_network() -> Network:
    """Ring 4 @ 4 GB/s (10 ns) x Switch 4 @ 1 GB/s (50 ns): the CLI test network."""
    return Network.build(["Ring", "Switch"], [4, 4], [4, 1], [10, 50])


def binary_network() -> Network:
    """Ring 2 @ 2 GB/s x Ring 2 @ 1 GB/s, no latency: stage times are simple fractions."""
    return Network.build(["Ring", "Ring"], [2, 2], [2, 1], [0, 0])


def small(dims: int, chunks: int, size: int = 64 * MiB) -> Instance:
    """Small instances with unequal bandwidths and latencies, D = 2 or 3."""
    if dims == 2:
        net = Network.build(["Ring", "Switch"], [4, 2], [4, 1], [20, 500])
    elif dims == 3:
        net = Network.build(["Ring", "Switch", "Switch"], [2, 4, 2], [4, 2, 1], [20, 50, 500])
    else:
        raise ValueError(dims)
    return Instance(net, size, chunks)


def large() -> Instance:
    """4 dimensions, 16 chunks: far beyond a 0.1 s proof."""
    net = Network.build(["Ring", "Ring", "Switch", "Switch"], [4, 2, 4, 2], [8, 4, 2, 1],
                        [20, 50, 500, 500])
    return Instance(net, 64 * MiB, 16)
