"""Deterministic budgets, solver failures, size limits (issue 8 items 2 and 3)."""

from __future__ import annotations

import pytest

from solvers import Lb3Method, SolverParams, bounds, solve
from solvers.milp import cbc
from tests.solvers.solver_cases import MiB, large, small
from themis.instance import Instance
from topologies.errors import InputError
from topologies.network import Network


def test_lb3_is_deterministic_and_says_how_it_was_obtained() -> None:
    inst = large()
    a, b = bounds(inst, node_limit=300), bounds(inst, node_limit=300)
    assert a == b and a.lb3_method == b.lb3_method and a.lb3_nodes == b.lb3_nodes
    assert a.lb3_method in (Lb3Method.OPTIMAL, Lb3Method.NODE_LIMIT)
    # A smaller node limit can only give a weaker (or equal) dual bound, still >= LB2.
    one = bounds(inst, node_limit=1)
    assert one.lb2_ns <= one.lb3_ns <= a.lb3_ns * (1 + 1e-12)
    # The wall-clock safety net falls back to LB2, deterministically, and says so.
    fallback = bounds(large(), safety_s=1e-9)
    assert fallback.lb3_method == Lb3Method.LP and fallback.lb3_ns == fallback.lb2_ns


def test_cpsat_on_a_deterministic_budget_repeats_exactly() -> None:
    params = SolverParams(time_limit_s=60, deterministic_time_s=0.2)
    runs = [solve(small(3, 8), "cpsat", params) for _ in range(2)]
    assert runs[0].makespan_ns == runs[1].makespan_ns
    assert runs[0].routes == runs[1].routes
    assert runs[0].lower_bound_ns == runs[1].lower_bound_ns
    assert runs[0].meta["stopped_by"] == "deterministic"
    assert runs[0].meta["params"]["deterministic_time_s"] == 0.2


def test_highs_on_a_node_limit_repeats_exactly() -> None:
    # One node: HiGHS stops with "solution limit", a status PuLP does not map.
    params = SolverParams(time_limit_s=60, node_limit=1)
    inst = small(2, 4)
    runs = [solve(inst, "highs", params) for _ in range(2)]
    assert runs[0].makespan_ns == runs[1].makespan_ns
    assert runs[0].lower_bound_ns == runs[1].lower_bound_ns
    assert runs[0].meta["stopped_by"] == "nodes" and runs[0].reason == ""
    assert runs[0].meta["schedule_source"] == "solver"


def test_cbc_crash_is_retried_without_the_warm_start(monkeypatch) -> None:
    calls = []
    real = cbc._run_once

    def flaky(problem, built, limit_s, warm):
        calls.append(warm)
        if warm:
            return "CBC exited abnormally (exit status -11)", "partial log"
        return real(problem, built, limit_s, warm)

    monkeypatch.setattr(cbc, "_run_once", flaky)
    res = solve(small(2, 2), "cbc", time_limit_s=20)
    assert calls == [True, False]
    assert "(exit status -11) with the warm start; retried without it" in res.reason
    assert res.status == "optimal" and res.valid is True
    assert res.meta["cbc_first_error"].endswith("-11)")


def test_cbc_failing_twice_answers_with_the_hint_and_keeps_the_log(monkeypatch) -> None:
    monkeypatch.setattr(cbc, "_run_once",
                        lambda p, b, t, w: ("CBC exited abnormally (exit status -11)",
                                            f"log warm={w}"))
    res = solve(small(2, 2), "cbc", time_limit_s=20)
    assert res.meta["schedule_source"] == "hint" and res.valid is True
    assert "again" in res.reason and "answered with the hint" in res.reason
    assert "log warm=True" in res.solver_log and "log warm=False" in res.solver_log


def test_cbc_repro_instance_gives_a_result() -> None:
    # Issue 8's repro: Ring [4,2,4,2] at [8,4,2,1] GB/s, no latency, 16 GiB, 16 chunks.
    net = Network.build(["Ring"] * 4, [4, 2, 4, 2], [8, 4, 2, 1], [0, 0, 0, 0])
    res = solve(Instance(net, 16 << 30, 16), "cbc", time_limit_s=2)
    assert res.status in ("feasible", "optimal") and res.valid is True
    assert res.lower_bound_ns <= res.makespan_ns  # its time: benchmarks/bench_limits.py


@pytest.mark.parametrize("name", ["cpsat", "highs"])
def test_models_too_large_to_build_are_refused(name: str) -> None:
    inst = Instance(small(3, 2).network, 64 * MiB, 20000)
    with pytest.raises(InputError, match="too large") as info:
        solve(inst, name, time_limit_s=2)
    assert info.value.field == "chunks"


def test_time_limit_covers_the_whole_solve() -> None:
    # A limit too short for bounds, hints and search still gives a checked schedule
    # (how closely the limit is kept: benchmarks/bench_limits.py).
    res = solve(Instance(large().network, 64 * MiB, 256), "cpsat", time_limit_s=1.0)
    assert res.schedule is not None and res.valid is True
    assert res.lower_bound_ns <= res.makespan_ns


def _highs_pool(threads: int) -> None:
    """Set HiGHS's process-wide thread pool (what an earlier HiGHS run leaves behind)."""
    import highspy

    from solvers.highs_model import new_highs

    highspy.Highs.resetGlobalScheduler(True)
    h = new_highs()
    h.setOptionValue("threads", threads)
    h.addVars(1, [0.0], [1.0])
    h.run()


def test_lb3_does_not_depend_on_what_ran_before() -> None:
    # HiGHS's MIP path depends on the thread count of its process-wide pool, fixed by
    # the process's first run; LB3's MIP resets it to one thread. (Without the reset
    # this instance's LB3 MIP takes a different path: the node counts differ.)
    from topologies.presets import resolve_network

    inst = Instance(resolve_network("3d_switch"), 64 * MiB, 256, endpoint_delay_ns=10)
    _highs_pool(2)
    a = bounds(inst, node_limit=300)
    _highs_pool(1)
    assert bounds(inst, node_limit=300) == a
