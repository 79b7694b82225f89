"""The exact iteration model on Chakra traces (``themis train ET --solve``): by hand, the
iteration bound <= the optimum <= every policy's end under 2.x's slots, the re-timed answer
equal to the model's, the 1.0 file and its faithful ETs cross-checked, refusals in one line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports.cli import main
from reports.cli.common import load_system
from solvers.iteration.et import solve_et
from solvers.iteration.model import solve_program
from solvers.iteration.workload import iteration_problem
from solvers.result import Status
from tests.training.test_et_bound import MASKS, NET2, _coll, _system, random_traces
from themis.collective import Collective
from themis.program import NodeKind, Program
from themis.system_run import run_system
from themis.training import TrainingConfig
from themis.training.et_run import simulate_et
from topologies.astra.network_yaml import parse_network_yaml
from topologies.chakra.et import GlobalMetadata, Node
from topologies.chakra.ranks import read_et_source
from topologies.chakra.trace import Trace, write_et
from topologies.workload import parse_workload

POLICIES = ("baseline", "themis", "round-robin", "guarded", "lb-mix", "portfolio")
RING4 = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 100.0 ]\n"
SYSTEM1 = {"scheduling-policy": "LIFO", "preferred-dataset-splits": 1,
           "active-chunks-per-dimension": 1, "endpoint-delay": 10,
           "collective-optimization": "localBWAware", "local-mem-bw": 1600,
           **{f"{k}-implementation": ["ring"]
              for k in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")}}


def _policy_ends(traces, network, system, timing="astra-sim-2") -> dict[str, int]:
    return {f"{p}/{i}": simulate_et(traces, network, system, None, None, p, i, timing).end_ns
            for p in POLICIES for i in ("fifo", "scf")}


def _check(res, ends: dict[str, int], bound: int) -> None:
    """bound <= optimum <= every policy; the re-timed answer is the model's."""
    assert res.status == Status.OPTIMAL, res.reason
    assert res.makespan_ns == res.solver_makespan_ns
    assert bound <= res.iteration_bound_ns <= res.lower_bound_ns <= res.makespan_ns
    assert all(res.makespan_ns <= end for end in ends.values()), (res.makespan_ns, ends)


def test_waiting_beats_2x_order_by_hand(tmp_path, capsys) -> None:
    """Collective X (id 0, ready at 0, nothing waits for it), compute A (1 us), collective
    Y after A, compute B (10 us) after Y; every collective a 1 MiB all-reduce of time T
    (the faster of its two plans alone on Ring 4: one all-reduce, or reduce-scatter then
    all-gather). 2.x issues X at 0 (ascending ids), so Y starts at T and B ends at
    2T + 10,000. Holding the slot for Y instead: Y 1,000..1,000 + T, then X and B side by
    side: 1,000 + 2T (T > 10,000). The iteration bound is Jackson's 2T (X preempted by Y
    at 1,000): the optimum is 1,000 above it, and proven."""
    network = parse_network_yaml(RING4)
    (tmp_path / "net.yml").write_text(RING4)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM1))
    system = _system(1, 1, True, ("ring",))
    system = type(system)(**{**system.__dict__, "local_mem_bw_GBps": 1600.0})
    t = int(min(run_system(network, system, Collective("all-reduce", 1 << 20, 1), "astra-sim-2",
                           p).makespan_ns for p in ("baseline", "themis")))
    assert t > 10_000
    nodes = [_coll(0, [], 1 << 20), Node(1, "A", 4, duration_micros=1),
             _coll(2, [1], 1 << 20), Node(3, "B", 4, data_deps=[2], duration_micros=10)]
    for rank in range(4):
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    assert main(["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--solve", "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert data["end_ns"] == 2 * t + 10_000
    assert data["iteration_bound_ns"] == 2 * t
    solve = data["solve"]
    assert solve["status"] == "optimal"
    assert solve["makespan_ns"] == solve["solver_makespan_ns"] == 1000 + 2 * t
    assert solve["lower_bound_ns"] == 1000 + 2 * t
    assert main(["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--solve"]) == 0
    out = capsys.readouterr()[0]
    assert "exact model end (ns)" in out and f"{1000 + 2 * t:,}" in out


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(nodes=random_traces(6, (300_000, 1 << 20), MASKS[:3]), splits=st.sampled_from([1, 2]),
       lbw=st.booleans(),
       timing=st.sampled_from(["astra-sim-2", "astra-sim-1.0"]))
def test_optimum_between_bound_and_every_policy(nodes, splits, lbw, timing) -> None:
    """Random small traces (every collective kind, 0-byte all-reduces, involved_dim) on a
    4 x 2 network under 2.x's slots: proven optimal, re-timed to the model's end, at or
    above the iteration bound and at or below every policy / discipline's end."""
    network = parse_network_yaml(NET2)
    system = _system(splits, 1, lbw, ("ring", "ring"), ("ring", "direct"))
    traces = {r: Trace(GlobalMetadata(), nodes) for r in range(network.npus)}
    result = simulate_et(traces, network, system, None, None, "baseline", "fifo", timing,
                         bound=True)
    res = solve_et(traces, network, result, timing, deterministic_s=10)
    assert result.iteration_bound_ns is not None
    _check(res, _policy_ends(traces, network, system, timing), result.iteration_bound_ns)


SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "chakra" / "runs"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["N2a_tinyDATA_none_s16_trace", "N3a_microAllReduce_s16",
                                  "N2b_MLP_ModelParallel_s16"])
def test_shared_traces_at_two_splits(name) -> None:
    """Shared 2.x runs' traces at 2 splits: the same order of bound, optimum and policies."""
    import dataclasses

    from reports.cli.common import load_network, load_system

    folder = SHARED / name
    if not folder.is_dir():
        pytest.skip("../shared/reference is missing")
    network = load_network(str(folder / "network.yml"))
    system = dataclasses.replace(load_system(str(folder / "system.json")), chunks=2)
    prefix = str(sorted(folder.glob("*.0.et"))[0])[:-5]
    traces, names = read_et_source(prefix, network.npus)
    result = simulate_et(traces, network, system, names, None, "baseline", "fifo",
                         bound=True)
    res = solve_et(traces, network, result, "astra-sim-2", names, deterministic_s=20)
    assert result.iteration_bound_ns is not None
    _check(res, _policy_ends(traces, network, system), result.iteration_bound_ns)


#: A MODEL workload (every collective blocking, so one at a time under 1.0 too) with
#: compute in whole microseconds: its faithful ETs mean the same iteration as the file
#: less what an ET cannot hold.
MODEL = ("MODEL\n3\n"
         "l0 -1 3000 ALLGATHER 262144 2000 ALLREDUCE 131072 1000 NONE 0 5\n"
         "l1 -1 4000 ALLGATHER 524288 3000 ALLREDUCE 262144 2000 NONE 0 7\n"
         "l2 -1 2000 ALLGATHER 131072 1000 ALLREDUCE 65536 4000 NONE 0 3\n")
NET_2D = ("topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\n"
          "latency: [ 100.0, 500.0 ]\n")


def test_1_0_file_and_its_faithful_ets_agree(tmp_path, capsys) -> None:
    """``--solve`` on a MODEL workload and on its faithful ETs (``involved_dim`` only),
    both under ``astra-sim-1.0`` with 2 chunks. The graphs are the same (each forward
    all-gather blocks; each input-gradient all-reduce runs beside the weight-gradient
    compute, and the next layer waits for both), and 1.0 never has two collectives in
    flight, so 2.x's slots change nothing; what an ET cannot hold differs: the 1.0
    program's one-cycle state changes (1 ns each) and update times (the layer's, after a
    collective's last stage). So the ETs' optimum is the 1.0 program's exact model with
    those set to 0, to the ns; and by hand, the 1.0 optimum is 32 ns above it: the 7
    state changes on the critical path (the two between an input-gradient compute and
    its weight-gradient compute run beside a longer all-reduce) and 25 ns of updates
    (5 + 7 + 3 + 3 + 7: every collective is on it)."""
    (tmp_path / "w.txt").write_text(MODEL)
    (tmp_path / "net.yml").write_text(NET_2D)
    (tmp_path / "sys.json").write_text(json.dumps({**SYSTEM1, "preferred-dataset-splits": 2,
                                                   **{f"{k}-implementation": ["ring", "ring"]
                                                      for k in ("all-reduce", "all-gather",
                                                                "reduce-scatter",
                                                                "all-to-all")}}))
    assert main(["convert", str(tmp_path / "w.txt"), "--npus", "8", "--faithful",
                 "--network", str(tmp_path / "net.yml"), "--no-comm-groups", "--out",
                 str(tmp_path / "f")]) == 0
    capsys.readouterr()
    assert main(["train", str(tmp_path / "f"), str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--timing", "astra-sim-1.0", "--solve",
                 "--json"]) == 0
    et = json.loads(capsys.readouterr()[0])["solve"]
    cfg = TrainingConfig.from_system(load_system(str(tmp_path / "sys.json")),
                                     timing="astra-sim-1.0", policy="baseline")
    problem = iteration_problem(parse_workload(MODEL, "w.txt"), parse_network_yaml(NET_2D),
                                cfg)
    ten = solve_program(problem, 20)
    bare = replace(problem, program=Program(tuple(
        replace(n, duration_ns=0) if n.kind is NodeKind.DELAY else n
        for n in problem.program.nodes)), updates=[0.0] * len(problem.updates),
        bound_ns=0.0, hint_end_ns=None, replay=lambda *_: None)
    zeroed = solve_program(bare, 20)
    assert et["status"] == ten.status == zeroed.status == Status.OPTIMAL
    assert et["makespan_ns"] == zeroed.solver_makespan_ns == 129_833
    assert ten.makespan_ns == et["makespan_ns"] + 7 + 25


def test_refusals_are_one_line(tmp_path, capsys) -> None:
    """--solve on traces under alpha-beta (fractional stage times) and a model above the
    size cap are refused up front in one line naming the flag."""
    (tmp_path / "net.yml").write_text(NET2)
    nodes = [_coll(0, [], 1 << 20)]
    for rank in range(8):
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    argv = ["train", str(tmp_path / "t"), str(tmp_path / "net.yml"), "--solve"]
    assert main([*argv, "--timing", "alpha-beta"]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "--timing" in err and "whole-ns" in err
    assert main([*argv, "--chunks", "512"]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "too large" in err and "--solve" in err
    assert main([*argv[:-1], "--solve-budget", "3"]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "--solve-budget" in err


TUTORIAL = SHARED.parent / "external" / "tutorials" / "micro2024" / "astra-sim-demo" / "demo2"


@pytest.mark.skipif(not TUTORIAL.is_dir(), reason="../shared/reference is missing")
def test_tutorial_optimum_and_an_honest_budget(capsys) -> None:
    """The MICRO 2024 tutorial's MLP_ModelParallel (32 ranks) on TPUv4-32: proven optimal at
    195,324,173 ns, between the iteration bound (195,318,203) and baseline (195,394,300);
    with a deterministic budget too small to finish, ``feasible``: an incumbent at most
    baseline's end, the bound below it, and the budget named."""
    argv = ["train", str(TUTORIAL / "workload" / "MLP_ModelParallel"),
            str(TUTORIAL / "inputs" / "TPUv4-32.yml"), "--system",
            str(TUTORIAL / "inputs" / "TPUv4.json"), "--solve", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr()[0])
    assert (data["iteration_bound_ns"], data["end_ns"]) == (195_318_203, 195_394_300)
    solve = data["solve"]
    assert (solve["status"], solve["makespan_ns"], solve["lower_bound_ns"]) == (
        "optimal", 195_324_173, 195_324_173)
    assert main([*argv, "--solve-budget", "1e-6"]) == 0
    solve = json.loads(capsys.readouterr()[0])["solve"]
    assert solve["status"] == "feasible" and solve["stopped_by"] == "deterministic"
    assert 195_318_203 <= solve["lower_bound_ns"] < solve["makespan_ns"] <= 195_394_300
    assert "budget (1e-06 s)" in solve["reason"]
