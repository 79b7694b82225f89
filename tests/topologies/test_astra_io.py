"""Reading and writing ASTRA-sim network and system files."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies import (
    Dimension,
    InputError,
    Network,
    network_to_json,
    network_to_yaml,
    parse_network_json,
    parse_network_yaml,
    parse_system,
    read_network,
    read_system,
    write_network_json,
    write_network_yaml,
)
from topologies.presets import presets_dir

PRESETS = presets_dir()
REFERENCE = Path(__file__).parents[1] / "data" / "astra-sim-1.0"

# --------------------------------------------------------------------------- strategies

KINDS = ("Ring", "FullyConnected", "Switch")
bandwidths = st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False)
#: Per-link bandwidths whose total over up to 19 links stays within the accepted range.
link_bandwidths = st.floats(min_value=1e-6, max_value=5e7, allow_nan=False,
                            allow_infinity=False)
latencies = st.one_of(
    st.integers(min_value=0, max_value=10_000).map(float),
    st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
)


@st.composite
def networks(draw: st.DrawFn) -> Network:
    """Random valid networks with links=None (the 2.x shape)."""
    n = draw(st.integers(min_value=1, max_value=5))
    sizes = draw(st.lists(st.integers(min_value=1, max_value=12), min_size=n, max_size=n))
    if math.prod(sizes) < 2:
        sizes[0] = 2
    dims = tuple(
        Dimension(draw(st.sampled_from(KINDS)), p, draw(bandwidths), draw(latencies))
        for p in sizes
    )
    return Network(dims)


@st.composite
def json_documents(draw: st.DrawFn) -> dict:
    """Random valid ASTRA-sim 1.0 network JSON documents."""
    n = draw(st.integers(min_value=1, max_value=5))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=n, max_size=n))
    units = draw(st.lists(st.integers(min_value=1, max_value=12), min_size=n, max_size=n))
    if math.prod(units) < 2:
        units[0] = 2
    links = []
    for kind, p in zip(kinds, units, strict=True):
        low = {"Ring": 2, "FullyConnected": max(p - 1, 1), "Switch": 1}[kind]
        links.append(draw(st.integers(min_value=low, max_value=low + 8)))
    doc = {
        "topologies-per-dim": kinds,
        "units-count": units,
        "links-count": links,
        "link-bandwidth": draw(st.lists(link_bandwidths, min_size=n, max_size=n)),
        "link-latency": draw(st.lists(latencies, min_size=n, max_size=n)),
    }
    if draw(st.booleans()):
        doc["dimensions-count"] = n
    if draw(st.booleans()):
        doc["nic-latency"] = [draw(latencies)] * n
    if draw(st.booleans()):
        doc["router-latency"] = draw(latencies)
    return doc


# --------------------------------------------------------------------------- round trips


@settings(max_examples=150, deadline=None)
@given(networks())
def test_yaml_round_trip(network: Network) -> None:
    text = network_to_yaml(network)
    back = parse_network_yaml(text)
    assert back == network
    assert network_to_yaml(back) == text


@settings(max_examples=150, deadline=None)
@given(json_documents())
def test_json_round_trip_of_networks_read_from_json(doc: dict) -> None:
    network = parse_network_json(json.dumps(doc))
    back = parse_network_json(network_to_json(network))
    assert back == network
    for d, n in zip(back.dims, doc["links-count"], strict=True):
        assert d.links == n


@settings(max_examples=100, deadline=None)
@given(networks())
def test_json_round_trip_fills_in_links(network: Network) -> None:
    back = parse_network_json(network_to_json(network))
    expected = Network(
        tuple(replace(d, links=d.links_count) for d in network.dims),
        network.nic_latency_ns,
        network.router_latency_ns,
    )
    assert back == expected
    assert [d.bandwidth_GBps for d in back.dims] == [d.bandwidth_GBps for d in network.dims]


def test_write_and_read_files(tmp_path: Path) -> None:
    network = read_network(PRESETS / "small-3d.yml")
    write_network_yaml(network, tmp_path / "a.yml")
    write_network_json(network, tmp_path / "b.json")
    assert read_network(tmp_path / "a.yml") == network
    from_json = read_network(tmp_path / "b.json")
    assert [d.links for d in from_json.dims] == [2, 2, 1]
    assert from_json.name == "b"
    write_network_json(from_json, tmp_path / "b.json")  # overwrite in place
    assert read_network(tmp_path / "b.json") == from_json
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yml", "b.json"]  # no temp files


def test_write_into_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "dir.yml"
    with pytest.raises(InputError) as info:
        write_network_yaml(read_network(PRESETS / "small-2d.yml"), target)
    assert str(target) in str(info.value)
    assert not target.parent.exists()


def test_yaml_writer_warns_about_what_it_drops() -> None:
    dgx2 = read_network(PRESETS / "dgx2.json")
    with pytest.warns(UserWarning, match=r"links-count\[0\] = 6"):
        text = network_to_yaml(dgx2)
    assert parse_network_yaml(text).dims[0].bandwidth_GBps == 150.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        network_to_yaml(read_network(PRESETS / "3d_switch.json"))  # links = 2.x defaults


def test_nic_and_router_latency_round_trip() -> None:
    doc = {
        "topologies-per-dim": ["Ring", "Switch"],
        "units-count": [4, 8],
        "links-count": [2, 1],
        "link-bandwidth": [10, 5],
        "link-latency": [50, 500],
        "nic-latency": [7, 7],
        "router-latency": [0, 30],  # only the Switch entry matters
    }
    network = parse_network_json(json.dumps(doc))
    assert (network.nic_latency_ns, network.router_latency_ns) == (7.0, 30.0)
    assert parse_network_json(network_to_json(network)) == network


# --------------------------------------------------------------------------- tutorial files


def test_tutorial_3d_switch() -> None:
    net = read_network(PRESETS / "3d_switch.json")
    assert net.name == "3d_switch"
    assert net.npus == 512
    assert [(d.kind, d.npus, d.bandwidth_GBps, d.latency_ns, d.links) for d in net.dims] == [
        ("Switch", 8, 50.0, 1.0, 1)
    ] * 3


def test_tutorial_tpu() -> None:
    net = read_network(PRESETS / "tpu.json")
    assert [(d.kind, d.npus, d.links, d.link_bandwidth_GBps) for d in net.dims] == [
        ("Ring", 16, 2, 62.0)
    ] * 2
    assert [d.bandwidth_GBps for d in net.dims] == [124.0, 124.0]
    assert [d.latency_ns for d in net.dims] == [500.0, 500.0]


def test_tutorial_dgx2() -> None:
    net = read_network(PRESETS / "dgx2.json")
    assert [(d.kind, d.npus, d.links, d.bandwidth_GBps) for d in net.dims] == [
        ("Switch", 16, 6, 150.0),
        ("Switch", 16, 1, 6.25),
    ]


def test_tutorial_systems() -> None:
    themis = read_system(PRESETS / "3d_switch_themis.txt")
    assert themis.chunks == 64
    assert themis.active_chunks == 1
    assert themis.endpoint_delay_ns == 10.0
    assert themis.inter == "themis"
    assert themis.intra == "scf"
    assert themis.boost_mode is True
    assert themis.collective_optimization == "localBWAware"
    assert themis.local_bw_aware
    for kind in ("all-reduce", "reduce-scatter", "all-gather"):
        assert themis.algorithms_for(kind) == ("halvingDoubling",) * 3
    assert themis.source == str(PRESETS / "3d_switch_themis.txt")
    assert themis.unknown_keys == ()

    baseline = read_system(PRESETS / "3d_switch_baseline.txt")
    assert (baseline.inter, baseline.intra) == ("baseline", "fifo")

    tpu = read_system(PRESETS / "tpu.txt")
    assert tpu.chunks == 4
    assert tpu.all_reduce_algorithms == ("ring", "ring")
    assert tpu.inter is None and tpu.intra is None


@pytest.mark.parametrize(
    ("name", "inter", "intra", "boost"),
    [
        ("sys_tpu_s64_baseline_FIFO", "baseline", "fifo", False),
        ("sys_tpu_s64_themis_FIFO", "themis", "fifo", False),
        ("sys_tpu_s64_themis_SCF", "themis", "scf", False),
    ],
)
def test_reference_run_systems(name: str, inter: str, intra: str, boost: bool) -> None:
    system = read_system(REFERENCE / "runs" / f"{name}.txt")
    assert (system.chunks, system.inter, system.intra, system.boost_mode) == (
        64, inter, intra, boost
    )


def test_system_text_comments_prefixed_algorithms_and_aliases() -> None:
    text = """
    # a comment
    preferred-dataset-splits: 16   # inline comment
    all-reduce-implementation: oneHalvingDoubling_oneRing
    all-gather-implementation: doubleBinaryTree_direct
    inter-dimension-scheduling: offlineGreedy
    intra-dimension-scheduling: smallestFirst
    collective-optimization: baseline
    scheduling-policy: FIFO
    boost-mode: 0
    """
    system = parse_system(text, "s.txt")
    assert system.chunks == 16
    assert system.all_reduce_algorithms == ("halvingDoubling", "ring")
    assert system.all_gather_algorithms == ("doubleBinaryTree", "direct")
    assert system.reduce_scatter_algorithms is None
    assert (system.inter, system.intra) == ("themis", "scf")
    assert system.collective_optimization == "baseline"
    assert system.boost_mode is False
    assert system.endpoint_delay_ns is None


def test_system_2x_json() -> None:
    doc = {
        "scheduling-policy": "LIFO",
        "endpoint-delay": 10,
        "active-chunks-per-dimension": 2,
        "preferred-dataset-splits": 4,
        "all-reduce-implementation": ["ring", "halvingDoubling"],
        "reduce-scatter-implementation": ["ring", "halvingDoubling"],
        "all-gather-implementation": ["ring", "halvingDoubling"],
        "all-to-all-implementation": ["direct", "direct"],
        "collective-optimization": "localBWAware",
        "local-reduce-delay": 1,
        "roofline-enabled": 0,
        "peak-perf": 900,
        "local-mem-bw": 50,
        "trace-enabled": 0,
        "replay-only": 0,
        "boost-mode": 1,
        "inter-dimension-scheduling": "roundRobin",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        system = parse_system(json.dumps(doc), "sys.json")
    assert system.active_chunks == 2
    assert system.all_reduce_algorithms == ("ring", "halvingDoubling")
    assert system.inter == "round-robin"
    assert system.boost_mode is True
    assert system.source == "sys.json"


def test_read_system_json_file(tmp_path: Path) -> None:
    path = tmp_path / "sys.json"
    path.write_text(json.dumps({"preferred-dataset-splits": 8, "endpoint-delay": 2.5}))
    system = read_system(path)
    assert (system.chunks, system.endpoint_delay_ns, system.source) == (8, 2.5, str(path))


def test_units_count_one_is_accepted() -> None:
    yaml_net = parse_network_yaml(
        "topology: [Ring, Switch]\nnpus_count: [1, 8]\nbandwidth: [10, 5]\nlatency: [0, 0]\n"
    )
    assert yaml_net.active_dims == (1,)
    doc = {
        "topologies-per-dim": ["Ring", "Switch"],
        "units-count": [1, 8],
        "links-count": [1, 1],  # a Ring of 1 NPU needs no links
        "link-bandwidth": [10, 5],
        "link-latency": [1, 1],
    }
    assert parse_network_json(json.dumps(doc)).npus == 8


def test_known_json_keys_are_ignored_silently() -> None:
    doc = {
        "topology-name": "Hierarchical",
        "dimension-type": ["N", "P"],
        "dimensions-count": 2,
        "topologies-per-dim": ["Ring", "FullyConnected"],
        "units-count": [2, 8],
        "links-count": [2, 7],
        "link-latency": [500, 500],
        "link-bandwidth": [250, 25],
        "nic-latency": [0, 0],
        "router-latency": [0, 0],
        "hbm-latency": [500, 500],
        "hbm-bandwidth": [370, 370],
        "hbm-scale": [0, 0],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net = parse_network_json(json.dumps(doc), "h.json")
    assert [d.bandwidth_GBps for d in net.dims] == [500.0, 175.0]


def test_yaml_exponent_numbers() -> None:
    net = parse_network_yaml(
        "topology: [Ring, Switch]\nnpus_count: [4, 4]\n"
        "bandwidth: [1e3, 2.5E1]\nlatency: [5e-1, 0]\n"
    )
    assert [d.bandwidth_GBps for d in net.dims] == [1000.0, 25.0]
    assert net.dims[0].latency_ns == 0.5


def test_json_link_bandwidth_product_is_rounded_once() -> None:
    doc = {
        "topologies-per-dim": ["Switch"],
        "units-count": [8],
        "links-count": [3],
        "link-bandwidth": [0.1],
        "link-latency": [1],
    }
    net = parse_network_json(json.dumps(doc))
    assert net.dims[0].bandwidth_GBps == 0.3  # not 0.30000000000000004
    assert '"link-bandwidth": [0.1]' in network_to_json(net)
