"""The physical NPU graph of a network, for drawing and sanity checks.

NPUs are numbered the way ASTRA-sim numbers them, dimension 0 fastest:
``id = sum_d coord_d * prod_{e<d} P_e``. Each dimension d connects the P_d
NPUs of every group (the NPUs whose coordinates differ only in d):

* ``Ring``: a cycle (P = 2: a single edge);
* ``FullyConnected``: a complete graph;
* ``Switch``: a star around one switch node per group, named
  ``("switch", d, group)``. ``group`` numbers the groups of dimension d in
  the order of their smallest NPU id (0, 1, ..., N / P_d - 1), which is the
  mixed-radix index of the other coordinates, dimension 0 fastest.

Dimensions of size 1 add nothing. The whole graph is the cartesian-product
structure of the per-dimension graphs. Node attributes: ``kind`` (``"npu"``
or ``"switch"``); NPUs have ``coords`` (tuple, dimension 0 first), switches
``dim`` and ``group``. Every edge has ``dim``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import networkx as nx

from topologies.errors import InputError
from topologies.network import Network, npu_coords, npu_id

__all__ = [
    "MAX_GRAPH_EDGES",
    "MAX_GRAPH_NPUS",
    "grid_positions",
    "npu_coords",
    "npu_graph",
    "npu_id",
    "switch_node",
]

#: Largest network (in NPUs) that :func:`npu_graph` builds.
MAX_GRAPH_NPUS = 100_000
#: Largest number of edges :func:`npu_graph` builds (guards big FullyConnected dims).
MAX_GRAPH_EDGES = 5_000_000


def switch_node(dim: int, group: int) -> tuple[str, int, int]:
    """The name of the switch of group ``group`` along dimension ``dim``."""
    return ("switch", dim, group)


def _factor_edges(kind: str, p: int) -> nx.Graph:
    """The graph of one group: nodes 0..p-1 (plus hub ``"hub"`` for a Switch)."""
    if kind == "Ring":
        return nx.cycle_graph(p) if p >= 3 else nx.path_graph(p)
    if kind == "FullyConnected":
        return nx.complete_graph(p)
    star = nx.star_graph(p)  # centre 0, leaves 1..p
    return nx.relabel_nodes(star, {i: (i - 1 if i else "hub") for i in star.nodes})


def _edge_count(network: Network) -> int:
    n = network.npus
    total = 0
    for d in network.dims:
        p = d.npus
        if p == 1:
            continue
        per_group = {"Ring": p if p >= 3 else 1, "FullyConnected": p * (p - 1) // 2}.get(
            d.kind, p
        )
        total += (n // p) * per_group
    return total


def npu_graph(network: Network) -> nx.Graph:
    """The physical NPU graph of ``network`` (see the module docstring).

    Raises :class:`InputError` if the network has more than
    :data:`MAX_GRAPH_NPUS` NPUs or the graph more than :data:`MAX_GRAPH_EDGES`
    edges.
    """
    n = network.npus
    where = f"network {network.name}" if network.name else "network"
    if n > MAX_GRAPH_NPUS:
        raise InputError(
            f"the NPU graph of this {where} would be too large "
            f"(more than {MAX_GRAPH_NPUS} NPUs)",
            "npus",
            n,
        )
    edges = _edge_count(network)
    if edges > MAX_GRAPH_EDGES:
        raise InputError(
            f"the NPU graph of this {where} would be too large "
            f"({edges} edges, more than {MAX_GRAPH_EDGES})",
            "npus",
            n,
        )
    sizes = [d.npus for d in network.dims]
    graph: nx.Graph = nx.Graph(name=network.name, sizes=tuple(sizes))
    for i in range(n):
        graph.add_node(i, kind="npu", coords=npu_coords(i, sizes))
    stride = 1
    for d, dim in enumerate(network.dims):
        p = dim.npus
        if p > 1:
            factor = _factor_edges(dim.kind, p)
            bases = (i for i in range(n) if (i // stride) % p == 0)
            for group, base in enumerate(bases):
                mapping: dict[Hashable, Hashable] = {
                    j: base + j * stride for j in range(p)
                }
                if dim.kind == "Switch":
                    hub = switch_node(d, group)
                    graph.add_node(hub, kind="switch", dim=d, group=group)
                    mapping["hub"] = hub
                graph.add_edges_from(
                    ((mapping[u], mapping[v]) for u, v in factor.edges()), dim=d
                )
        stride *= p
    return graph


def grid_positions(graph: nx.Graph) -> dict[Hashable, tuple[float, float]]:
    """2-D positions for drawing an :func:`npu_graph` (``nx.draw(g, pos=...)``).

    Even dimensions spread along x, odd ones along y, each nested inside the
    next with a gap; a switch sits beside the centre of its group.
    """
    sizes = graph.graph.get("sizes")
    if sizes is None:
        raise ValueError("not a graph made by npu_graph (no 'sizes' attribute)")
    scale = [1.0] * len(sizes)
    span = [1.0, 1.0]
    for d, p in enumerate(sizes):
        axis = d % 2
        scale[d] = span[axis]
        span[axis] *= p + 1 if p > 1 else 1
    pos: dict[Hashable, tuple[float, float]] = {}
    for node, data in graph.nodes(data=True):
        if data.get("kind") == "npu":
            xy = [0.0, 0.0]
            for d, c in enumerate(data["coords"]):
                xy[d % 2] += c * scale[d]
            pos[node] = (xy[0], xy[1])
    for node, data in graph.nodes(data=True):
        if data.get("kind") == "switch":
            members = [pos[m] for m in graph.neighbors(node)]
            x = math.fsum(m[0] for m in members) / len(members)
            y = math.fsum(m[1] for m in members) / len(members)
            offset = 0.4 * scale[data["dim"]]
            pos[node] = (x + offset, y + offset)
    return pos
