"""All-to-all under the ``astra-sim-2`` timing (``AllToAll.cc`` direct, ``Ring.cc`` ring with
``Normal`` injection; halvingDoubling has none), derived by hand from 2.x's source, and on
Chakra traces (the R5 DLRM run's all-to-all nodes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main
from themis.astra2_group import group_ends_ns
from themis.collective import Collective
from themis.system_run import run_system
from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.trace import Trace, write_et
from topologies.network import Dimension, Network
from topologies.system import SystemConfig

SHARED = Path(__file__).resolve().parents[3] / "shared"
NET = Network((Dimension("Ring", 4, 50.0, 100.0), Dimension("Switch", 2, 25.0, 500.0)))
NET_YAML = ("topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\n"
            "latency: [ 100.0, 500.0 ]\n")


def _system(algos: tuple[str, str]) -> SystemConfig:
    return SystemConfig(chunks=1, active_chunks=1, endpoint_delay_ns=10,
                        all_to_all_algorithms=algos, all_reduce_algorithms=("ring", "ring"),
                        collective_optimization="localBWAware", local_mem_bw_GBps=1600,
                        source="sys.json")


@pytest.mark.parametrize(("algos", "want"), [
    # dim 0 ring (n = 4, 1 MiB messages, N = floor(100 + 19531.25) = 19631):
    #   d + n(n-1)/2 (N + d) = 10 + 6 x 19641 = 117856;
    # dim 1 (n = 2, 2 MiB, Switch: N = floor(2 x 500 + 78125) = 79125): 10 + 79135 = 79145
    (("ring", "ring"), 117856 + 79145),
    # dim 0 direct: 2d + N*(1 MiB), the farthest partner 2 hops: floor(200 + 19531.25) + 20
    #   = 19751; dim 1 direct on 2 NPUs is the ring's 2d + N = 79145
    (("direct", "direct"), 19751 + 79145),
    (("direct", "ring"), 19751 + 79145),
])
def test_all_to_all_stages_by_hand(algos, want) -> None:
    """A 4 MiB all-to-all in one chunk: a phase per dimension, ascending, the chunk keeping
    its size; every message is D // n, nothing is reduced."""
    res = run_system(NET, _system(algos), Collective("all-to-all", 4 << 20, 1), "astra-sim-2",
                     "baseline")
    assert res.makespan_ns == want


def test_halving_doubling_has_no_all_to_all() -> None:
    from topologies.errors import InputError

    with pytest.raises(InputError) as err:
        run_system(NET, _system(("halvingDoubling", "ring")),
                   Collective("all-to-all", 4 << 20, 1), "astra-sim-2", "baseline")
    assert "all-to-all-implementation[0]" in str(err.value) and "sys.json" in str(err.value)


def test_all_to_all_on_a_flattened_group_by_hand() -> None:
    """Group [0, 1, 4] (links into 0, 1, 4: 40062, 19631, 19631 for 1 MiB, see
    test_et_groups), a 3 MiB all-to-all: n(n-1)/2 = 3 ring steps of 1 MiB, no reduce:
      s0 = 10; r0 = 40072, 19641, 19641 -> s1 = 40082, 19651, 19651
      r1 = 59713, 59713, 39282 -> s2 = 59723, 59723, 39292
      r2 = 39292+40062, 59723+19631, 59723+19631 = 79354 (all) -> end 79364."""
    cfg = SystemConfig(chunks=1, active_chunks=1, endpoint_delay_ns=10,
                       all_to_all_algorithms=("direct", "direct"),
                       collective_optimization="localBWAware", local_mem_bw_GBps=1600)
    assert group_ends_ns(NET, cfg, "all-to-all", 3 << 20, [0, 1, 4]) == {
        0: 79364, 1: 79364, 4: 79364}


def test_all_to_all_on_traces_by_hand(tmp_path, capsys) -> None:
    """An ET all-to-all (comm_type 6) after 2 us of compute ends 2,000 + 117,856 + 79,145."""
    (tmp_path / "net.yml").write_text(NET_YAML)
    (tmp_path / "sys.json").write_text(json.dumps({
        "preferred-dataset-splits": 1, "active-chunks-per-dimension": 1,
        "endpoint-delay": 10, "all-to-all-implementation": ["ring", "ring"],
        "all-reduce-implementation": ["ring", "ring"],
        "collective-optimization": "localBWAware", "local-mem-bw": 1600}))
    nodes = [Node(0, "c", 4, duration_micros=2),
             Node(1, "a2a", 7, data_deps=[0], attrs=[Attribute("comm_type", "int64", 6),
                                                     Attribute("comm_size", "int64", 4 << 20)])]
    write_et(Trace(GlobalMetadata(), nodes), tmp_path / "t.0.et")
    assert main(["train", str(tmp_path / "t.0.et"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert data["end_ns"] == 2000 + 117856 + 79145


def test_the_r5_dlrm_all_to_all_by_hand(capsys) -> None:
    """N2b (FullyConnected 8 @ 300 GB/s, 50 ns x Ring 4 @ 100 GB/s, 1000 ns), direct / ring,
    16 splits: a 98,304-byte all-to-all is 16 chunks of 6,144. Dim 0 direct: 768-byte
    messages, 2 x 10 + floor(50 + 768 / 322.12) = 72; dim 1 ring: 1,536-byte messages,
    10 + 6 x (floor(1000 + 1536 / 107.37) + 10) = 6154, the bottleneck: the chunks leave
    dim 0 every 72 ns and wait for dim 1, so the collective takes 72 + 16 x 6154 = 98,536
    (hidden behind compute in the real run, which ends at 51,378,000 with none exposed)."""
    run = "reference/chakra/runs/N2b_DLRM_HybridParallel_s16"
    assert main(["train", str(SHARED / run / "DLRM_HybridParallel"),
                 str(SHARED / run / "network.yml"), "--system",
                 str(SHARED / run / "system.json"), "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    a2a = [n for n in data["rank_classes"][0]["nodes"] if n.get("collective") == "all-to-all"]
    assert a2a and all(n["size_bytes"] == 98304 for n in a2a)
    assert {n["end_ns"] - n["issue_ns"] for n in a2a} == {98536}
    assert (data["end_ns"], data["exposed_comm_ns"]) == (51378000, 0)
