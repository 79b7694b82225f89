"""The iteration bound of Chakra-trace runs (:mod:`themis.training.et_bound`): by hand, and
below every policy's and discipline's end under every timing (random traces, the shared
2.x runs' traces and the MICRO 2024 tutorial's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports.cli import main
from themis.collective import Collective
from themis.system_run import run_system
from themis.training.et_bound import SlotNode, jackson_ns, slot_bound_ns
from themis.training.et_run import simulate_et
from topologies.astra.network_yaml import parse_network_yaml
from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.ranks import read_et_source
from topologies.chakra.trace import Trace, write_et
from topologies.errors import InputError
from topologies.system import SystemConfig

SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "chakra"
TUTORIAL = SHARED / "external" / "tutorials" / "micro2024" / "astra-sim-demo" / "demo2"
POLICIES = ("baseline", "themis", "round-robin", "guarded", "lb-mix", "portfolio", "1,0")
DISCIPLINES = ("fifo", "scf", "lrw")
TIMINGS = ("astra-sim-2", "astra-sim-1.0", "alpha-beta")


def test_jackson_by_hand() -> None:
    """Job 0 (head 0, 4 ns, tail 0) runs from 0; job 1 (head 1, 2 ns, tail 10) preempts
    it at 1 and ends at 3, 13 with its tail; job 0 ends at 6. Two jobs released at 0 and
    2 of 3 ns each: 6. One job after an idle gap: its head plus time plus tail."""
    assert jackson_ns([(0, 4, 0), (1, 2, 10)]) == 13
    assert jackson_ns([(0, 3, 0), (2, 3, 0)]) == 6
    assert jackson_ns([(7, 3, 5)]) == 15
    assert jackson_ns([]) == 0


def test_slot_windows_by_hand() -> None:
    """Compute a (0..5 us) feeds collective c (T) and compute b (3 us); collective d (T)
    needs nothing. The communication slot holds d and c one after the other, c not before
    5,000: max(2T, 5000 + T); the chain a, b: 8,000; a, c: 5000 + T."""
    for t in (1000, 4000, 7000):
        nodes = [SlotNode(0, "compute", 5000), SlotNode(1, "collective", t, (0,)),
                 SlotNode(2, "compute", 3000, (0,)), SlotNode(3, "collective", t)]
        assert slot_bound_ns(nodes) == max(2 * t, 5000 + t, 8000)
    # A control node (no slot, no time) passes its dependencies on. The windows of the
    # communication slot: from 0 every collective, 2,000 + 2 x 3,000 = 8,000; from 5,000
    # the two released then, 5,000 + 6,000 = 11,000 (the sum alone, 15,000 with d at
    # 9,000, is the larger window from 0).
    for d_ns, expected in ((2000, 11_000), (9000, 15_000)):
        nodes = [SlotNode(0, "compute", 5000), SlotNode(1, "", 0, (0,)),
                 SlotNode(2, "collective", 3000, (1,)),
                 SlotNode(3, "collective", 3000, (1,)), SlotNode(4, "collective", d_ns)]
        assert slot_bound_ns(nodes) == expected


NET_YAML = "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware"}


def _system(splits: int, k: int, lbw: bool, algos: tuple[str, ...],
            a2a: tuple[str, ...] | None = None) -> SystemConfig:
    return SystemConfig(chunks=splits, endpoint_delay_ns=10.0, active_chunks=k,
                        collective_optimization="localBWAware" if lbw else "baseline",
                        all_reduce_algorithms=algos, all_gather_algorithms=algos,
                        reduce_scatter_algorithms=algos, all_to_all_algorithms=a2a or algos,
                        scheduling_policy="LIFO", source="system.json")


def _coll(i: int, deps: list[int], size: int, kind: int = 0,
          dims: list[bool] | None = None) -> Node:
    attrs = [Attribute("comm_type", "int64", kind), Attribute("comm_size", "int64", size)]
    if dims is not None:
        attrs.append(Attribute("involved_dim", "bool_list", dims))
    return Node(i, f"c{i}", 7, data_deps=deps, attrs=attrs)


def test_train_reports_the_bound_by_hand(tmp_path, capsys) -> None:
    """The trace of ``test_slot_windows_by_hand`` on 4 NPUs of one Switch dimension, one
    chunk: a 1 MiB all-reduce has two plans (2.x's one all-reduce, or reduce-scatter then
    all-gather) on its one route, so its bound T is the shorter of baseline's and Themis'
    times alone; baseline's is the shorter here, so baseline's run ends at the bound:
    max(2T, 5000 + T, 8000)."""
    (tmp_path / "net.yml").write_text(NET_YAML)
    (tmp_path / "system.json").write_text(json.dumps(SYSTEM))
    nodes = [Node(0, "a", 4, duration_micros=5), _coll(1, [0], 1 << 20),
             Node(2, "b", 4, data_deps=[0], duration_micros=3), _coll(3, [], 1 << 20)]
    for rank in range(4):
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    network = parse_network_yaml(NET_YAML)
    system = _system(1, 1, True, ("ring",))
    alone = {p: run_system(network, system, Collective("all-reduce", 1 << 20, 1),
                           "astra-sim-2", p).makespan_ns for p in ("baseline", "themis")}
    t = int(min(alone.values()))
    assert t == alone["baseline"] < alone["themis"]
    expected = max(2 * t, 5000 + t, 8000)
    assert main(["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "system.json"), "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert data["iteration_bound_ns"] == expected == data["end_ns"]
    assert main(["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "system.json"), "--policy", "themis"]) == 0
    row = next(line for line in capsys.readouterr()[0].splitlines()
               if line.startswith("iteration bound, every policy (ns)"))
    assert row.split()[-1] == f"{expected:,}"


def _ends(traces, network, system, groups=None, timings=TIMINGS, policies=POLICIES,
          disciplines=DISCIPLINES) -> list[tuple[str, int, int]]:
    """(label, end, bound) of every timing x policy x discipline the run takes."""
    out = []
    for timing in timings:
        for policy in policies:
            for intra in disciplines:
                try:
                    res = simulate_et(traces, network, system, None, groups, policy, intra,
                                      timing, bound=True)
                except InputError:  # e.g. LRW under astra-sim-1.0
                    continue
                assert res.iteration_bound_ns is not None
                out.append((f"{timing} {policy}/{intra}", res.end_ns, res.iteration_bound_ns))
    return out


def _check(rows: list[tuple[str, int, int]]) -> None:
    assert rows
    per_timing: dict[str, set[int]] = {}
    for label, end, bound in rows:
        assert bound <= end, (label, end, bound)
        per_timing.setdefault(label.split()[0], set()).add(bound)
    # one bound per timing, whatever the policy and discipline
    assert all(len(b) == 1 for b in per_timing.values()), per_timing


NET2 = ("topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\n"
        "latency: [ 500.0, 700.0 ]\n")


#: involved_dim masks of the random traces on NET2 (None: every dimension).
MASKS = (None, [True, False], [False, True], [True, True])


@st.composite
def random_traces(draw, max_nodes: int = 7, sizes: tuple[int, ...] = (4096, 300_000, 1 << 20),
                  masks: tuple = MASKS) -> list[Node]:
    """Small random traces on NET2: compute nodes and collectives of every kind (0-byte
    all-reduces included), up to two dependencies each; also the exact model's property
    (tests/solvers/test_iteration_et.py) draws them, smaller."""
    n = draw(st.integers(2, max_nodes))
    nodes = []
    for i in range(n):
        deps = sorted(draw(st.sets(st.integers(0, i - 1), max_size=2))) if i else []
        if draw(st.booleans()):
            nodes.append(Node(i, f"n{i}", 4, data_deps=deps,
                              duration_micros=draw(st.integers(0, 40))))
        else:
            kind = draw(st.sampled_from([0, 2, 6, 7]))  # AR, AG, A2A, RS
            size = draw(st.sampled_from([0, *sizes])) if kind == 0 else \
                draw(st.sampled_from(sizes))
            dims = draw(st.sampled_from(masks))
            nodes.append(_coll(i, deps, size, kind, dims))
    return nodes


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(nodes=random_traces(), splits=st.sampled_from([1, 2, 4]), k=st.sampled_from([1, 2]),
       lbw=st.booleans())
def test_bound_below_every_policy_on_random_traces(nodes, splits, k, lbw) -> None:
    """Random traces of every collective kind (0-byte all-reduces and involved_dim
    included) on a 4 x 2 network: the bound is one number per timing and at most the end
    of every policy and discipline under it."""
    network = parse_network_yaml(NET2)
    system = _system(splits, k, lbw, ("ring", "ring"), ("ring", "direct"))
    traces = {r: Trace(GlobalMetadata(), nodes) for r in range(network.npus)}
    _check(_ends(traces, network, system, disciplines=("fifo", "scf")))


def _shared_runs() -> list[Path]:
    runs = SHARED / "runs"
    if not runs.is_dir():
        return []
    names = ("N2a_microAllReduce_s16", "N3b_microAllReduce_s16", "N2a_tinyDATA_none_s16_trace",
             "N3a_microA2A_98304_s16_a2aDirect", "N3b_MLP_ModelParallel_s16",
             "N2a_MLP_HybridParallel_Data_Model_s16", "N2a_DLRM_HybridParallel_s16_a2aDirect")
    return [runs / n for n in names if (runs / n).is_dir()]


def _load(folder: Path, network: str, system: str):
    from reports.cli.common import load_network, load_system

    net = load_network(str(folder / network) if "/" not in network else network)
    sysc = load_system(str(folder / system) if "/" not in system else system)
    prefix = str(sorted(folder.glob("*.0.et"))[0])[:-5]
    traces, _ = read_et_source(prefix, net.npus)
    return traces, net, sysc


@pytest.mark.slow
@pytest.mark.parametrize("folder", _shared_runs(), ids=lambda p: p.name)
def test_bound_below_every_policy_on_shared_runs(folder: Path) -> None:
    """The traces of shared 2.x runs (2-D and 3-D networks, all-to-alls, NONE collectives,
    model and hybrid parallelism): every policy and discipline under every timing ends at
    or after the bound."""
    traces, net, system = _load(folder, "network.yml", "system.json")
    _check(_ends(traces, net, system))


@pytest.mark.skipif(not TUTORIAL.is_dir(), reason="../shared/reference is missing")
@pytest.mark.parametrize("inputs", [("DGX_H100-32.yml", "DGX_H100.json"),
                                    ("TPUv4-32.yml", "TPUv4.json")], ids=["dgx", "tpu"])
def test_bound_below_every_policy_on_the_tutorial(inputs) -> None:
    """The MICRO 2024 tutorial's MLP_ModelParallel ETs on its two networks: the bound is
    below every policy under astra-sim-2, within 0.01% of the best (compute dominates)."""
    folder = TUTORIAL / "workload"
    traces, net, system = _load(folder, str(TUTORIAL / "inputs" / inputs[0]),
                                str(TUTORIAL / "inputs" / inputs[1]))
    rows = _ends(traces, net, system, timings=("astra-sim-2",), disciplines=("fifo", "scf"))
    _check(rows)
    best = min(end for _, end, _ in rows)
    assert best <= rows[0][2] * 1.0001
