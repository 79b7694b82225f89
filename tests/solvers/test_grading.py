"""The grading's downgrade paths, driven by fake backends (solvers.backend registry).

The instance is the hand-solved one of test_solve.py: Ring 2 @ 2 GB/s x Ring 2 @
1 GB/s, two chunks of 1 GiB, optimum 1.5e9 ns (u = 1e9 ns). A backend that
runs the chunks one after the other on route (0, 1) takes 2u: each chunk's
chain is u (RS0 u/4, RS1 u/4, AG1 u/4, AG0 u/4) and nothing overlaps.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import pytest

from solvers import BoundSource, SolverParams, Status, solve
from solvers.backend import Problem, register_backend, unregister_backend
from solvers.common import Assignment, step_of
from solvers.result import RawSolution
from tests.solvers.solver_cases import GiB, binary_network
from themis.instance import Instance
from topologies.errors import InputError

U = 1e9
OPT = 1.5 * U


@pytest.fixture
def inst() -> Instance:
    return Instance(binary_network(), 2 * GiB, 2)


@pytest.fixture
def fake() -> Iterator[Callable[[Callable[[Problem], RawSolution]], str]]:
    names = []

    def register(fn: Callable[[Problem], RawSolution]) -> str:
        name = f"fake{len(names)}"
        register_backend(name)(fn)
        names.append(name)
        return name

    yield register
    for name in names:
        unregister_backend(name)


def sequential(problem: Problem) -> Assignment:
    """Both chunks on route (0, 1), chunk 0 entirely before chunk 1: makespan 2u."""
    data = problem.data
    r = data.perms.index((0, 1))
    orders = {d: [(c, step_of(data, r, r, ph, d)) for c in range(data.nchunks)
                  for ph in ("RS", "AG")] for d in data.dims}
    return Assignment([r] * data.nchunks, [r] * data.nchunks, orders)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def test_a_true_optimal_answer_is_retimed_once(inst, fake) -> None:
    # The hint is optimal here (LB3 = 1.5u is met by it): a backend answering with the
    # hint's own assignment and the true makespan keeps its claim.
    def backend(p: Problem) -> RawSolution:
        return RawSolution(Status.OPTIMAL, p.hint.assignment, OPT, OPT * (1 - 1e-9))

    res = solve(inst, fake(backend))
    assert res.status == "optimal" and res.reason == ""
    assert res.makespan_ns == pytest.approx(OPT, rel=1e-9)
    assert res.meta["schedule_source"] == "solver" and res.meta["replays"] == 1
    assert res.valid is True


def test_optimal_claim_with_a_worse_schedule_is_withdrawn(inst, fake) -> None:
    # Claims 2u optimal and proves a bound of 2u: the hint (1.5u) refutes both.
    name = fake(lambda p: RawSolution(Status.OPTIMAL, sequential(p), 2 * U, 2 * U))
    res = quiet(solve, inst, name, seed_lb3=False)
    assert res.meta["schedule_source"] == "hint"
    assert res.makespan_ns == pytest.approx(OPT, rel=1e-9)
    assert "claim withdrawn" in res.reason and "answered with the hint" in res.reason
    # 2u is above the hint's makespan: the solver's bound is discarded as wrong; what is
    # left is LB3 = 1.5u, which proves the hint optimal.
    assert "discarded" in res.reason
    assert res.bound_source == BoundSource.OURS
    assert res.lower_bound_ns <= res.makespan_ns
    assert res.status == "optimal" and res.meta["proof"] == "lower bound"


def test_crash_gives_the_hint_with_the_reason_and_the_log(inst, fake) -> None:
    def backend(p: Problem) -> RawSolution:
        raise RuntimeError("segfault in the solver")

    res = solve(inst, fake(backend))
    assert res.status in ("feasible", "optimal")  # the hint; LB3 may prove it
    assert res.schedule is not None and res.valid is True
    assert "failed: RuntimeError: segfault in the solver" in res.reason
    assert "Traceback" in res.solver_log and "segfault" in res.to_dict()["solver_log_tail"]


def test_crash_without_hint_is_unknown(inst, fake) -> None:
    def backend(p: Problem) -> RawSolution:
        raise MemoryError("out of memory")

    # An empty hint list: no schedule to fall back on.
    res = solve(inst, fake(backend), hint=[], seed_lb3=False)
    assert res.status == "unknown" and res.schedule is None and res.makespan_ns is None
    assert "MemoryError" in res.reason


def test_timeout_without_incumbent(inst, fake) -> None:
    name = fake(lambda p: RawSolution(Status.UNKNOWN, None, None, 0.0, stopped_by="wall",
                                      reason="no schedule found within the limit"))
    res = solve(inst, name)
    assert res.meta["schedule_source"] == "hint" and res.meta["stopped_by"] == "wall"
    assert res.reason.startswith("no schedule found within the limit; answered with the hint")
    assert res.status in ("feasible", "optimal")


def test_bound_slightly_above_the_makespan_is_clamped(inst, fake) -> None:
    # CBC's log bound was seen 3e-8..4e-8 relative above a proven optimum.
    name = fake(lambda p: RawSolution(Status.FEASIBLE, p.hint.assignment, OPT,
                                      OPT * (1 + 4e-8)))
    res = solve(inst, name)
    assert res.lower_bound_ns == res.makespan_ns
    assert res.meta["bound_clamped_ns"] == pytest.approx(4e-8 * OPT, rel=1e-3)
    assert "clamped" in res.reason


def test_bound_far_above_the_makespan_is_discarded(inst, fake) -> None:
    name = fake(lambda p: RawSolution(Status.OPTIMAL, p.hint.assignment, OPT, 1.1 * OPT))
    with pytest.warns(RuntimeWarning, match="a bound is wrong"):
        res = solve(inst, name)
    assert res.meta["bound_above_makespan"] is True
    assert res.lower_bound_ns <= res.makespan_ns
    assert res.bound_source == BoundSource.OURS and "discarded" in res.reason


def test_retimed_makespan_above_the_claim_withdraws_optimality(inst, fake) -> None:
    # The sequential schedule takes 2u, the backend says 1.2u (no hint to compare with).
    name = fake(lambda p: RawSolution(Status.OPTIMAL, sequential(p), 1.2 * U, 0.0))
    with pytest.warns(RuntimeWarning, match="exceeds the solver's"):
        res = solve(inst, name, hint=[], seed_lb3=False)
    assert res.status == "feasible" and res.makespan_ns == pytest.approx(2 * U, rel=1e-9)
    assert res.meta["retime_mismatch_ns"] == pytest.approx(0.8 * U, rel=1e-9)


def test_contradictory_orders_are_a_backend_bug(inst, fake) -> None:
    def backend(p: Problem) -> RawSolution:
        a = sequential(p)
        a.orders[0] = list(reversed(a.orders[0]))  # AG before RS on dimension 0
        return RawSolution(Status.OPTIMAL, a, 2 * U, 0.0)

    with pytest.warns(RuntimeWarning, match="cannot re-time"):
        res = solve(inst, fake(backend))
    assert res.meta["schedule_source"] == "hint" and "cannot be re-timed" in res.reason


def test_infeasible_claim_with_a_valid_hint_is_withdrawn(inst, fake) -> None:
    res = solve(inst, fake(lambda p: RawSolution(Status.INFEASIBLE, None, None, 0.0)))
    assert res.status != "infeasible" and "claim withdrawn" in res.reason


def test_a_hint_from_the_caller_is_used_and_checked(inst, fake) -> None:
    seen = {}

    def backend(p: Problem) -> RawSolution:
        seen["hint"] = p.hint.name
        return RawSolution(Status.UNKNOWN, None, None, 0.0)

    given = inst.simulate("baseline", "fifo").schedule
    res = solve(inst, fake(backend), hint=given, seed_lb3=False)
    assert seen["hint"] == "hint" and res.makespan_ns == given.makespan_ns
    other = Instance(binary_network(), 2 * GiB, 4).simulate("baseline", "fifo").schedule
    with pytest.raises(InputError) as info:
        solve(inst, "cpsat", hint=other)
    assert info.value.field == "hint"


def test_bounds_of_the_other_variant_are_refused(inst) -> None:
    from solvers import bounds

    with pytest.raises(InputError) as info:
        solve(inst, "cpsat", SolverParams(ag_order="free"), bounds=bounds(inst, "reverse"))
    assert info.value.field == "bounds"
