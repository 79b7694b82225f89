"""``themis train`` on Chakra execution traces under ASTRA-sim 2.x's semantics: the R5 runs
of the real 2.x binary to the nanosecond, a trace whose end is derived by hand, and
refusals in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reports.cli import main
from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.trace import Trace, write_et

SHARED = Path(__file__).resolve().parents[3] / "shared"
R5 = SHARED / "reference" / "astra-sim-2.x" / "training" / "runs-R5.json"
pytestmark = pytest.mark.skipif(not R5.is_file(), reason="../shared/reference is missing")


def _runs() -> list[dict]:
    return json.loads(R5.read_text()) if R5.is_file() else []


def _train(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["train", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("run", _runs(), ids=lambda r: r["name"])
def test_r5_runs_to_the_nanosecond(capsys, run: dict) -> None:
    """The six R5 runs: end and exposed communication exactly as every NPU printed them
    (DLRM's all-to-alls included; they are hidden behind compute in that run, so its end
    checks them only loosely: test_all_to_all_on_traces_by_hand times them)."""
    code, out, err = _train(capsys, str(SHARED / run["prefix"]), str(SHARED / run["network"]),
                            "--system", str(SHARED / run["system"]), "--timing",
                            "astra-sim-2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["end_ns"], data["exposed_comm_ns"]) == (run["end_ns"], run["exposed_comm_ns"])
    assert data["ranks"] == run["npus"] and len(data["rank_classes"]) == 1


NET_YAML = "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware"}


def _coll(i: int, deps: list[int], size: int) -> Node:
    return Node(i, f"ar{i}", 7, data_deps=deps,
                attrs=[Attribute("comm_type", "int64", 0), Attribute("comm_size", "int64", size)])


def test_slots_and_ascending_ids_by_hand(tmp_path, capsys) -> None:
    """Compute a (id 0, 5 us) then, both ready at 5,000 ns, collective c (id 1) and compute
    b (id 2, 3 us): each has its own slot, so both issue at 5,000; collective d (id 3, no
    dependency) is ready at 0 and holds the comm slot from 0, so c waits for it. With T the
    time of one 1 MiB all-reduce alone on 4 NPUs (``simulate --timing astra-sim-2``):
    d ends at T, c issues at max(5000, T) and ends T later; b ends at 8,000."""
    net = tmp_path / "net.yml"
    net.write_text(NET_YAML)
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM))
    nodes = [Node(0, "a", 4, duration_micros=5), _coll(1, [0], 1 << 20),
             Node(2, "b", 4, data_deps=[0], duration_micros=3), _coll(3, [], 1 << 20)]
    for rank in range(4):
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    assert main(["simulate", str(net), "--system", str(system), "--timing", "astra-sim-2",
                 "--size", "1MiB", "--chunks", "1", "--json"]) == 0
    t = json.loads(capsys.readouterr()[0])["makespan_ns"]
    code, out, err = _train(capsys, str(tmp_path / "t"), str(net), "--system", str(system),
                            "--json")
    assert code == 0, err
    data = json.loads(out)
    runs = {n["id"]: (n["issue_ns"], n["end_ns"]) for n in data["rank_classes"][0]["nodes"]}
    assert runs[0] == (0, 5000) and runs[2] == (5000, 8000)
    assert runs[3] == (0, t)
    assert runs[1] == (max(5000, t), max(5000, t) + t)
    assert data["end_ns"] == max(8000, max(5000, t) + t)


def test_a_compute_node_of_zero_microseconds_takes_one_ns(tmp_path, capsys) -> None:
    """``Workload::issue_replay`` starts a COMP_NODE's runtime at 1 ns and replaces it only
    when ``duration_micros`` is not 0 (faithful conversion rounds short compute to 0 us).
    Switch 4 @ 50 GB/s, 500 ns; compute a (id 0, 0 us), collective c (id 1, after a, 1 MiB
    all-reduce), compute b (id 2, after c, 0 us), compute e (id 3, 2 us, no dependency).
    a holds the compute slot 0..1, so e issues at 1 and ends at 2,001; c issues at 1 and
    takes T = 7 d + 6 N(262,144) with N = floor(2 x 500 + 262,144 / 53.6870912) =
    floor(1000 + 4882.8125) = 5,882 (ring, one split, no local-mem-bw): T = 35,362, so c
    ends at 35,363 and b at 35,364; compute 1 + 2,000 + 1 = 2,002 ns, exposed 33,362. The
    real 2.x binary printed exactly 35,364 and 33,362 on these traces."""
    net = tmp_path / "net.yml"
    net.write_text(NET_YAML)
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM))
    nodes = [Node(0, "a", 4, duration_micros=0), _coll(1, [0], 1 << 20),
             Node(2, "b", 4, data_deps=[1], duration_micros=0), Node(3, "e", 4, duration_micros=2)]
    for rank in range(4):
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    code, out, err = _train(capsys, str(tmp_path / "t"), str(net), "--system", str(system),
                            "--json")
    assert code == 0, err
    data = json.loads(out)
    runs = {n["id"]: (n["issue_ns"], n["end_ns"]) for n in data["rank_classes"][0]["nodes"]}
    assert runs == {0: (0, 1), 3: (1, 2001), 1: (1, 35_363), 2: (35_363, 35_364)}
    assert (data["end_ns"], data["compute_ns"], data["exposed_comm_ns"]) == (35_364, 2002, 33_362)


@pytest.mark.parametrize(("flag", "value"), [("--timing", "no-such-timing"), ("--passes", "2")])
def test_what_is_not_modelled_yet_is_refused_in_one_line(tmp_path, capsys, flag, value) -> None:
    run = _runs()[0]
    code, out, err = _train(capsys, str(SHARED / run["prefix"]), str(SHARED / run["network"]),
                            "--system", str(SHARED / run["system"]), flag, value)
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err


@pytest.mark.parametrize("run", [r for r in _runs() if "DLRM" not in r["name"]][:3],
                         ids=lambda r: r["name"])
def test_every_policy_on_traces_and_the_portfolio_never_slower(capsys, run: dict) -> None:
    """Beyond 2.x, which runs baseline / FIFO only: Themis and the portfolio schedule each
    collective's chunks; the slots are 2.x's, so each collective still holds the comm slot
    for its time alone under that policy. The portfolio scores 2.x's baseline among its
    candidates, so no collective, and no iteration, ends later than under baseline."""
    ends = {}
    for policy in ("baseline", "themis", "portfolio"):
        code, out, err = _train(capsys, str(SHARED / run["prefix"]),
                                str(SHARED / run["network"]), "--system",
                                str(SHARED / run["system"]), "--policy", policy, "--json")
        assert code == 0, err
        data = json.loads(out)
        assert data["policy"] == policy
        ends[policy] = data["end_ns"]
    assert ends["baseline"] == run["end_ns"]
    assert ends["portfolio"] <= ends["baseline"]


def _masked(size: int, mask: list[bool]) -> Node:
    return Node(0, "ar", 7, attrs=[Attribute("comm_type", "int64", 0),
                                   Attribute("comm_size", "int64", size),
                                   Attribute("involved_dim", "bool_list", mask)])


@pytest.mark.parametrize(("yaml", "splits", "size", "mask", "want"), [
    # Switch 4 @ 100 GB/s, 500 ns x Ring 4 @ 50 GB/s, 100 ns; 1 MiB on dim 1 only: one AR
    # phase on the Ring (the last involved dimension), ring algorithm, d = 10, no reduce
    # cost: (2n-1) d + 2(n-1) N(D/4), N = floor(100 + 262144 / 53.6870912) = 4982:
    # 70 + 6 x 4982 = 29,962 ns.
    ("topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100.0, 50.0 ]\n"
     "latency: [ 500.0, 100.0 ]\n", 1, 1 << 20, [False, True], 29_962),
    # A converted NONE (0 bytes) on dim 0 only, 4 splits: the chunk is raised to the NPUs of
    # the whole system (16, not the 4 of dim 0), so 4 chunks of 16 bytes queue on dim 0
    # (Switch 4 @ 0.001 GB/s, 0 ns): each 70 + 6 x floor(4 / 0.001073741824) = 22,420 ns.
    ("topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 0.001, 50.0 ]\n"
     "latency: [ 0.0, 100.0 ]\n", 4, 0, [True, False], 4 * 22_420),
])
def test_involved_dim_by_hand(tmp_path, capsys, yaml, splits, size, mask, want) -> None:
    """``involved_dim`` (a full-system collective on part of the dimensions): 2.x skips the
    phases of the other dimensions and still cuts chunks against every NPU."""
    net = tmp_path / "net.yml"
    net.write_text(yaml)
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM | {"preferred-dataset-splits": splits,
                                           "all-reduce-implementation": ["ring", "ring"],
                                           "all-gather-implementation": ["ring", "ring"],
                                           "reduce-scatter-implementation": ["ring", "ring"],
                                           "all-to-all-implementation": ["ring", "ring"]}))
    write_et(Trace(GlobalMetadata(), [_masked(size, mask)]), tmp_path / "t.0.et")
    code, out, err = _train(capsys, str(tmp_path / "t.0.et"), str(net), "--system",
                            str(system), "--json")
    assert code == 0, err
    assert json.loads(out)["end_ns"] == want


@pytest.mark.parametrize(("mask", "says"), [([False, False], "no dimension"),
                                            ([True], "2 dimensions")])
def test_bad_involved_dim_is_one_line(tmp_path, capsys, mask, says) -> None:
    net = tmp_path / "net.yml"
    net.write_text("topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\n"
                   "bandwidth: [ 100.0, 50.0 ]\nlatency: [ 500.0, 100.0 ]\n")
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM | {k: ["ring", "ring"] for k in SYSTEM
                                           if k.endswith("implementation")}))
    write_et(Trace(GlobalMetadata(), [_masked(1 << 20, mask)]), tmp_path / "t.0.et")
    code, out, err = _train(capsys, str(tmp_path / "t.0.et"), str(net), "--system",
                            str(system))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "involved_dim" in err and says in err


@pytest.mark.parametrize("timing", ["alpha-beta", "astra-sim-1.0"])
def test_other_timings_keep_the_slots_and_time_collectives_their_way(tmp_path, capsys,
                                                                      timing) -> None:
    """Under another timing the slots stay 2.x's and each collective takes what ``simulate
    --timing T --system FILE`` gives it alone, in whole ns (rounded up): compute a (5 us),
    then a 1 MiB all-reduce after it: the end is 5,000 + ceil(T)."""
    net = tmp_path / "net.yml"
    net.write_text(NET_YAML)
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM))
    nodes = [Node(0, "a", 4, duration_micros=5), _coll(1, [0], 1 << 20)]
    write_et(Trace(GlobalMetadata(), nodes), tmp_path / "t.0.et")
    assert main(["simulate", str(net), "--system", str(system), "--timing", timing,
                 "--size", "1MiB", "--chunks", "1", "--policy", "baseline", "--json"]) == 0
    t = json.loads(capsys.readouterr()[0])["makespan_ns"]
    code, out, err = _train(capsys, str(tmp_path / "t.0.et"), str(net), "--system",
                            str(system), "--timing", timing, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["timing"] == timing and data["end_ns"] == 5000 + math.ceil(t)


def test_slot_bound_by_hand(tmp_path, capsys) -> None:
    """Collectives c1 (id 0) and c2 (id 1), both 1 MiB all-reduces ready at 0 (time T each),
    and a 10 us compute (id 2) after c2. 2.x issues in ascending id: c1, then c2, then the
    compute: end 2T + 10,000. No order does better than the communication slot's total
    (2T) or the chain c2 -> compute (T + 10,000): the bound is their maximum."""
    net = tmp_path / "net.yml"
    net.write_text(NET_YAML)
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM))
    nodes = [_coll(0, [], 1 << 20), _coll(1, [], 1 << 20),
             Node(2, "late", 4, data_deps=[1], duration_micros=10)]
    write_et(Trace(GlobalMetadata(), nodes), tmp_path / "t.0.et")
    assert main(["simulate", str(net), "--system", str(system), "--timing", "astra-sim-2",
                 "--size", "1MiB", "--chunks", "1", "--json"]) == 0
    t = json.loads(capsys.readouterr()[0])["makespan_ns"]
    code, out, err = _train(capsys, str(tmp_path / "t.0.et"), str(net), "--system",
                            str(system), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["end_ns"] == 2 * t + 10_000
    assert data["lower_bound_ns"] == max(2 * t, t + 10_000)


@pytest.mark.parametrize("run", [r for r in _runs() if "DLRM" not in r["name"]],
                         ids=lambda r: r["name"])
def test_slot_bound_never_above_the_end(capsys, run: dict) -> None:
    code, out, err = _train(capsys, str(SHARED / run["prefix"]), str(SHARED / run["network"]),
                            "--system", str(SHARED / run["system"]), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert 0 < data["lower_bound_ns"] <= data["end_ns"]
