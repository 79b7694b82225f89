"""Communicator groups smaller than the system under ``--timing astra-sim-2``: ASTRA-sim
2.x flattens them to one ring over the members (``CommunicatorGroup::get_collective_plan``;
:mod:`themis.astra2_group`). End times derived by hand from the source."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from themis.astra2_group import group_ends_ns
from themis.astra2_run import astra2_timing
from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.trace import Trace, write_et
from topologies.network import Dimension, Network
from topologies.system import SystemConfig

#: Ring 4 @ 50 GB/s, 100 ns x Switch 2 @ 25 GB/s, 500 ns.
NET = Network((Dimension("Ring", 4, 50.0, 100.0), Dimension("Switch", 2, 25.0, 500.0)))
NET_YAML = ("topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\n"
            "latency: [ 100.0, 500.0 ]\n")
#: endpoint-delay 30: a flattened group's ring moves its bundles "Fast" (10 ns a hop).
SYSTEM = {"preferred-dataset-splits": 1, "active-chunks-per-dimension": 1,
          "endpoint-delay": 30, "all-reduce-implementation": ["ring", "ring"],
          "all-gather-implementation": ["ring", "ring"],
          "reduce-scatter-implementation": ["ring", "ring"],
          "collective-optimization": "localBWAware", "local-mem-bw": 1600}
CFG = SystemConfig(chunks=1, active_chunks=1, endpoint_delay_ns=30,
                   all_reduce_algorithms=("ring", "ring"), all_gather_algorithms=("ring", "ring"),
                   reduce_scatter_algorithms=("ring", "ring"),
                   collective_optimization="localBWAware", local_mem_bw_GBps=1600)

# Group [0, 1, 4] (file order = ring order 0 -> 1 -> 4 -> 0). One message of m = 1 MiB:
#   4 -> 0: coordinates (0,1) -> (0,0) differ first on dim 1 (Switch, h = 2):
#           floor(2 x 500 + 2^20 / (25 x 2^30 / 1e9)) = floor(1000 + 39062.5) = 40062
#   0 -> 1: dim 0, distance 1:               floor(100 + 19531.25) = 19631
#   1 -> 4: (1,0) -> (0,1) differ first on dim 0, distance 3, Ring h = min(3, 1) = 1: 19631
# P(1 MiB) = 3 x floor(2^20 / 1600) = 1965; every hop 10 ns (Fast), not the file's 30.


def test_all_reduce_on_a_group_by_hand() -> None:
    """All-reduce of 3 MiB (one chunk; messages of 3 MiB / 3 = 1 MiB), 2(n - 1) = 4 steps,
    the first n - 1 = 2 reduced. s = each member's sends (0, 1, 4), r = receives
    max(s_prev + link, s_own):
      s0 = 10, 10, 10
      r0 = 40072, 19641, 19641 -> s1 = r0 + 10 + 1965 = 42047, 21616, 21616
      r1 = 21616+40062, 42047+19631, 21616+19631 = 61678, 61678, 41247
                               -> s2 = 63653, 63653, 43222
      r2 = 43222+40062, 63653+19631, 63653+19631 = 83284 (all) -> s3 = 83294
      r3 = 83294 + (40062, 19631, 19631) -> end = r3 + 10 = 123366, 102935, 102935."""
    assert group_ends_ns(NET, CFG, "all-reduce", 3 << 20, [0, 1, 4]) == {
        0: 123366, 1: 102935, 4: 102935}
    # the ring follows the file's order: 4 -> 1 -> 0 -> 4 puts the slow link into 4
    assert group_ends_ns(NET, CFG, "all-reduce", 3 << 20, [4, 1, 0]) == {
        4: 123366, 1: 102935, 0: 102935}


def test_all_gather_and_reduce_scatter_on_a_group_by_hand() -> None:
    """All-gather of a 1 MiB shard (messages of 1 MiB, n - 1 = 2 steps, no reduce):
      s0 = 10; r0 = 40072, 19641, 19641 -> s1 = 40082, 19651, 19651
      r1 = 19651+40062, 40082+19631, 19651+19631 = 59713, 59713, 39282 -> end + 10.
    Reduce-scatter of 3 MiB (1 MiB messages, 2 steps, both reduced):
      r0 as the all-reduce -> s1 = 42047, 21616, 21616
      r1 = 61678, 61678, 41247 -> end = r1 + 10 + 1965 = 63653, 63653, 43222."""
    assert group_ends_ns(NET, CFG, "all-gather", 1 << 20, [0, 1, 4]) == {
        0: 59723, 1: 59723, 4: 39292}
    assert group_ends_ns(NET, CFG, "reduce-scatter", 3 << 20, [0, 1, 4]) == {
        0: 63653, 1: 63653, 4: 43222}


@pytest.mark.parametrize("kind", ["all-reduce", "reduce-scatter", "all-gather"])
@pytest.mark.parametrize(("members", "dim"), [([0, 1, 2, 3], 0), ([5, 6, 7, 4], 0),
                                              ([2, 6], 1)])
def test_a_group_along_one_dimension_is_that_dimensions_ring(kind, members, dim) -> None:
    """A group that is one dimension's NPUs in ring order: every member ends at the ring
    stage formula of timing.md §4 on that dimension with 10 ns hops (an independent
    method: AstraSim2Timing.stage); 2 chunks, one active, run back to back."""
    timing = astra2_timing(NET, CFG, kind, 10.0)
    size = 3 << 20
    phase = {"all-reduce": "AR", "reduce-scatter": "RS", "all-gather": "AG"}[kind]
    stage = timing.stage(phase, dim, size)  # an all-gather chunk is the 3 MiB shard
    ends = group_ends_ns(NET, CFG, kind, size, members)
    assert set(ends.values()) == {int(stage.duration_ns)}
    two = group_ends_ns(NET, CFG, kind, 2 * size, members, splits=2)
    assert set(two.values()) == {2 * int(stage.duration_ns)}


def _coll(i: int, size: int, group: str) -> Node:
    return Node(i, f"ar{i}", 7, attrs=[
        Attribute("comm_type", "int64", 0), Attribute("comm_size", "int64", size),
        Attribute("pg_name", "string", group)])


def test_train_shows_per_rank_ends_of_a_flattened_group(tmp_path, capsys) -> None:
    """Ranks 0, 1, 4 all-reduce 3 MiB on group 1 = [0, 1, 4], then compute 1 us; the other
    ranks compute 1 us. Rank 0 ends at 123,366 + 1,000, ranks 1 and 4 at 102,935 + 1,000
    (by hand above), the rest at 1,000: three rank classes, the iteration at the latest."""
    (tmp_path / "net.yml").write_text(NET_YAML)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    (tmp_path / "g.json").write_text(json.dumps({"1": [0, 1, 4]}))
    for rank in range(8):
        nodes = ([_coll(0, 3 << 20, "1"), Node(1, "c", 4, data_deps=[0], duration_micros=1)]
                 if rank in (0, 1, 4) else [Node(0, "c", 4, duration_micros=1)])
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    assert main(["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--comm-group", str(tmp_path / "g.json"),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    ends = {tuple(c["ranks"]): c["end_ns"] for c in data["rank_classes"]}
    assert ends == {(0,): 124366, (1, 4): 103935, (2, 3, 5, 6, 7): 1000}
    assert data["end_ns"] == 124366 and data["compute_ns"] == 1000


def test_a_group_of_one_npu_is_one_line(tmp_path, capsys) -> None:
    (tmp_path / "net.yml").write_text(NET_YAML)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    (tmp_path / "g.json").write_text(json.dumps({"1": [0], "2": list(range(8))}))
    for rank in range(8):
        write_et(Trace(GlobalMetadata(), [_coll(0, 1 << 20, "1" if rank == 0 else "2")]),
                 tmp_path / f"t.{rank}.et")
    assert main(["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--comm-group", str(tmp_path / "g.json")]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "one NPU" in err and "pg_name" in err


def test_a_group_of_every_npu_ignores_involved_dim(tmp_path, capsys) -> None:
    """A group of all 8 NPUs keeps the full-system plan, whose dimensions are all involved
    (2.x reads no involved_dim for a group collective): a 1 MiB all-reduce masked to
    dimension 0 takes, on the group, what it takes unmasked without a group; the mask alone
    (no pg_name) is faster, skipping dimension 1."""
    (tmp_path / "net.yml").write_text(NET_YAML)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    (tmp_path / "g.json").write_text(json.dumps({"2": list(range(8))}))
    mask = Attribute("involved_dim", "bool_list", [True, False])
    ends = {}
    for name, attrs in (("grouped", [mask, Attribute("pg_name", "string", "2")]),
                        ("masked", [mask]), ("plain", [])):
        node = _coll(0, 1 << 20, "")
        node = Node(0, "ar", 7, attrs=[a for a in node.attrs if a.name != "pg_name"] + attrs)
        write_et(Trace(GlobalMetadata(), [node]), tmp_path / f"{name}.0.et")
        argv = ["train", str(tmp_path / f"{name}.0.et"), str(tmp_path / "net.yml"),
                "--system", str(tmp_path / "sys.json"), "--json"]
        assert main(argv + (["--comm-group", str(tmp_path / "g.json")]
                            if name == "grouped" else [])) == 0
        ends[name] = json.loads(capsys.readouterr()[0])["end_ns"]
    assert ends["grouped"] == ends["plain"] > ends["masked"] > 0


def test_a_one_dimensional_network_keeps_its_one_algorithm() -> None:
    """On a 1-D network the implementation list has one entry, which the flattened group
    keeps: ring over [0, 2, 4, 6] on Ring 8 (every neighbour 2 hops: N(1 MiB) =
    floor(2 x 100 + 19531.25) = 19731, no local-mem-bw so P = 0): a 4 MiB all-reduce takes
    7 x 10 + 6 x 19731 = 118,456; direct over a group is not modelled: one line."""
    from topologies.errors import InputError

    net = Network((Dimension("Ring", 8, 50.0, 100.0),))
    ring = SystemConfig(chunks=1, active_chunks=1, all_reduce_algorithms=("ring",),
                        collective_optimization="localBWAware")
    assert set(group_ends_ns(net, ring, "all-reduce", 4 << 20, [0, 2, 4, 6]).values()) == {
        118456}
    direct = SystemConfig(chunks=1, active_chunks=1, all_reduce_algorithms=("direct",),
                          collective_optimization="localBWAware")
    with pytest.raises(InputError, match="direct"):
        group_ends_ns(net, direct, "all-reduce", 4 << 20, [0, 2, 4, 6])
