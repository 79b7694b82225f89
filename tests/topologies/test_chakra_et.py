"""Chakra ET reader and writer: reference ETs round-trip byte-exact; bad traces give one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.ranks import et_files, read_comm_groups
from topologies.chakra.trace import Trace, et_bytes, parse_et, read_et
from topologies.chakra.types import NodeType
from topologies.chakra.wire import encode_varint, read_varint
from topologies.errors import InputError

CHAKRA = Path(__file__).resolve().parents[3] / "shared" / "reference" / "chakra"
ETS = sorted(CHAKRA.rglob("*.et"))


@pytest.mark.skipif(not ETS, reason="../shared/reference/chakra not present")
def test_every_reference_et_round_trips_byte_exact() -> None:
    assert len(ETS) >= 2000
    for path in ETS:
        assert et_bytes(read_et(path)) == path.read_bytes(), path


@pytest.mark.skipif(not ETS, reason="../shared/reference/chakra not present")
def test_microbenchmark_all_reduce_known_content() -> None:
    micro = CHAKRA / "external/astra-sim/examples/workload/microbenchmarks"
    path = micro / "all_reduce/8npus_1MB/all_reduce.3.et"
    trace = read_et(path)
    assert trace.metadata.version == "0.0.4"
    (node,) = trace.nodes
    assert node.id == 3 and node.type == NodeType.COMM_COLL_NODE
    assert node.attr("comm_type").value == 0  # type: ignore[union-attr]
    assert node.attr("comm_size").value == 1048576  # type: ignore[union-attr]
    assert node.attr("is_cpu_op").value is False  # type: ignore[union-attr]


@pytest.mark.skipif(not ETS, reason="../shared/reference/chakra not present")
def test_tutorial_mlp_counts() -> None:
    trace = read_et(
        CHAKRA / "external/tutorials/micro2024/astra-sim-demo/demo2/workload/MLP_ModelParallel.1.et"
    )
    assert len(trace.nodes) == 29
    assert [n.id for n in trace.nodes] == list(range(29, 58))
    assert sum(n.duration_micros for n in trace.nodes) == 195206
    assert sum(n.type == NodeType.COMP_NODE for n in trace.nodes) == 18


@given(st.integers(min_value=0, max_value=(1 << 64) - 1))
def test_varint_round_trip(value: int) -> None:
    data = encode_varint(value)
    assert read_varint(data, 0) == (value, len(data))


def _trace(nodes: list[Node]) -> Trace:
    return Trace(GlobalMetadata(version="0.0.4"), nodes)


@given(
    st.lists(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1), max_size=5),
    st.integers(min_value=0, max_value=1 << 40),
    st.text(max_size=5),
)
def test_written_trace_reads_back(ints: list[int], dur: int, name: str) -> None:
    nodes = [
        Node(id=1, name=name, type=4, duration_micros=dur),
        Node(
            id=2,
            type=7,
            data_deps=[1],
            attrs=[
                Attribute("comm_type", "int64", 2),
                Attribute("xs", "int64_list", ints),
                Attribute("dims", "bool_list", [True, False]),
                Attribute("f", "double", 0.5),
            ],
        ),
    ]
    data = et_bytes(_trace(nodes))
    back = parse_et(data, "x.et")
    assert back.nodes == nodes
    assert et_bytes(back) == data


@pytest.mark.parametrize(
    ("nodes", "needle"),
    [
        ([Node(id=1, type=9)], "node 1.type = 9: unknown node type"),
        (
            [Node(id=1, type=4, data_deps=[5])],
            "node 1.data_deps = 5: dependency on a node not in the file",
        ),
        (
            [Node(id=1, type=4, ctrl_deps=[2]), Node(id=2, type=4, data_deps=[1])],
            "dependency cycle",
        ),
        (
            [Node(id=1, type=7, attrs=[Attribute("comm_type", "int64", 42)])],
            "node 1.comm_type = 42",
        ),
        ([Node(id=1, type=4), Node(id=1, type=4)], "duplicate node id"),
    ],
)
def test_malformed_trace_is_one_line(nodes: list[Node], needle: str) -> None:
    with pytest.raises(InputError) as err:
        parse_et(et_bytes(_trace(nodes)), "bad.0.et")
    assert str(err.value).startswith("bad.0.et: ")
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_varint_and_legacy_refused() -> None:
    with pytest.raises(InputError, match="bad.et: .*truncated varint"):
        parse_et(b"\x02\x0a\x80", "bad.et")
    legacy = b"\x02\x08\x07"  # a Node (varint id in field 1) where GlobalMetadata belongs
    with pytest.raises(InputError, match="legacy Chakra v0.0.1"):
        parse_et(legacy, "old.et")


@pytest.mark.skipif(not ETS, reason="../shared/reference/chakra not present")
def test_rank_sets_prefix_and_folder() -> None:
    folder = CHAKRA / "external/tutorials/micro2024/astra-sim-demo/demo2/workload"
    by_prefix = et_files(folder / "MLP_ModelParallel")
    assert sorted(by_prefix) == list(range(32))
    assert et_files(folder) == by_prefix
    with pytest.raises(InputError, match=r"MLP_ModelParallel\.32\.et: rank = 32: missing rank"):
        et_files(folder / "MLP_ModelParallel", npus=33)
    with pytest.raises(InputError, match="rank beyond the 16 NPUs"):
        et_files(folder, npus=16)


def test_comm_groups(tmp_path: Path) -> None:
    good = tmp_path / "g.json"
    good.write_text('{"1": [0, 1], "2": [2, 3]}')
    assert read_comm_groups(good, 4) == {1: [0, 1], 2: [2, 3]}
    bad = tmp_path / "b.json"
    bad.write_text('{"1": [0, 7]}')
    with pytest.raises(InputError, match=r"b.json: 1 = 7: unknown NPU \(the system has 4\)"):
        read_comm_groups(bad, 4)
    zero = tmp_path / "z.json"
    zero.write_text('{"0": [0]}')
    with pytest.raises(InputError, match="group id must be an integer > 0"):
        read_comm_groups(zero, 4)
