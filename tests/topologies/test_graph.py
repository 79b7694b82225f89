"""The physical NPU graph."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from topologies import (
    Dimension,
    InputError,
    Network,
    grid_positions,
    npu_coords,
    npu_graph,
    npu_id,
    preset_network,
    switch_node,
)


def _npus(graph: nx.Graph) -> list[int]:
    return [n for n, kind in graph.nodes(data="kind") if kind == "npu"]


def _switches(graph: nx.Graph) -> list[tuple[str, int, int]]:
    return [n for n, kind in graph.nodes(data="kind") if kind == "switch"]


def test_torus_degrees() -> None:
    graph = npu_graph(Network.build(["Ring", "Ring"], [4, 5], [1, 1]))
    assert graph.number_of_nodes() == 20
    assert all(deg == 4 for _, deg in graph.degree())
    assert graph.number_of_edges() == 40
    assert nx.is_connected(graph)


def test_ring_of_two_is_one_edge() -> None:
    graph = npu_graph(Network.build(["Ring", "Ring"], [2, 3], [1, 1]))
    assert all(deg == 3 for _, deg in graph.degree())  # 1 along dim 0, 2 along dim 1
    assert graph.number_of_edges() == 3 * 1 + 2 * 3


def test_numbering_dimension_zero_fastest() -> None:
    sizes = [3, 4, 2]
    graph = npu_graph(Network.build(["Ring", "FullyConnected", "Switch"], sizes, [1, 1, 1]))
    for coords in itertools.product(*(range(p) for p in sizes)):
        i = npu_id(coords, sizes)
        assert i == coords[0] + 3 * coords[1] + 12 * coords[2]
        assert graph.nodes[i]["coords"] == coords
        assert npu_coords(i, sizes) == coords
    assert sorted(_npus(graph)) == list(range(24))
    assert graph.has_edge(0, 1) and graph.edges[0, 1]["dim"] == 0
    assert graph.has_edge(0, 3) and graph.edges[0, 3]["dim"] == 1
    assert graph.has_edge(0, 9) and graph.edges[0, 9]["dim"] == 1  # fully connected
    assert not graph.has_edge(0, 12)  # dim 2 goes through a switch


def test_switch_nodes() -> None:
    graph = npu_graph(Network.build(["Ring", "Switch"], [4, 8], [1, 1]))
    switches = _switches(graph)
    assert graph.number_of_nodes() == 32 + 4
    assert sorted(switches) == [switch_node(1, g) for g in range(4)]
    for g in range(4):
        hub = switch_node(1, g)
        assert graph.nodes[hub]["dim"] == 1 and graph.nodes[hub]["group"] == g
        assert sorted(graph.neighbors(hub)) == [g + 4 * j for j in range(8)]
        assert all(graph.edges[hub, m]["dim"] == 1 for m in graph.neighbors(hub))
    assert all(graph.degree(n) == 2 + 1 for n in _npus(graph))


def test_switch_groups_numbered_by_smallest_member() -> None:
    graph = npu_graph(Network.build(["Ring", "Switch", "Ring"], [3, 4, 5], [1, 1, 1]))
    members = {
        graph.nodes[s]["group"]: min(graph.neighbors(s)) for s in _switches(graph)
    }
    assert sorted(members) == list(range(15))
    assert [members[g] for g in range(15)] == sorted(members.values())


def test_presets_node_counts() -> None:
    graph = npu_graph(preset_network("3d_switch"))
    assert len(_npus(graph)) == 512
    assert len(_switches(graph)) == 3 * 64
    assert all(graph.degree(n) == 3 for n in _npus(graph))
    assert all(graph.degree(s) == 8 for s in _switches(graph))


def test_dimension_of_size_one_adds_nothing() -> None:
    network = Network((Dimension("Switch", 1, 1.0), Dimension("Ring", 4, 1.0)))
    graph = npu_graph(network)
    assert graph.number_of_nodes() == 4 and graph.number_of_edges() == 4
    assert graph.nodes[1]["coords"] == (0, 1)


def test_too_large() -> None:
    with pytest.raises(InputError, match="npus = 16777216: .*too large"):
        npu_graph(preset_network("4d-large"))
    with pytest.raises(InputError, match="too large"):
        npu_graph(Network.build(["FullyConnected", "Ring"], [5000, 10], [1, 1]))


def test_grid_positions_cover_all_nodes() -> None:
    graph = npu_graph(preset_network("small-4d"))
    pos = grid_positions(graph)
    assert set(pos) == set(graph.nodes)
    npu_positions = [pos[n] for n in _npus(graph)]
    assert len(set(npu_positions)) == len(npu_positions)
