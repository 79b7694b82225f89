"""The exact solvers: hand-solved optima, cross-solver agreement, honesty, validity.

Tests taking a ``solver`` argument run once per solver selected with
``--solvers`` (default ``cpsat,cbc,highs``).
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers import Result, SolverParams, backend_names, solve
from solvers.grading import PROOF_TOL
from tests.solvers.solver_cases import GiB, MiB, binary_network, large, small, two_dim_network
from tests.solvers.test_bounds import ONE_CHUNK_NS
from themis.checker import check
from themis.instance import Instance
from topologies.errors import InputError
from topologies.network import Network

REL = 1e-6


def assert_valid(res: Result) -> None:
    """Every returned schedule must pass the independent checker."""
    assert res.schedule is not None
    assert res.valid is True, res.violations
    assert check(res.schedule) == []
    assert res.makespan_ns == pytest.approx(res.schedule.makespan_ns)
    assert res.lower_bound_ns <= res.makespan_ns * (1 + 1e-9)


def test_one_chunk_takes_its_best_route(solver: str) -> None:
    # Hand computation in test_bounds.py: route (0, 1) with chain 46_875_460 ns.
    res = solve(Instance(two_dim_network(), 64 * MiB, 1), solver, time_limit_s=10)
    assert_valid(res)
    assert res.status == "optimal"
    assert res.makespan_ns == pytest.approx(ONE_CHUNK_NS, rel=1e-9)
    assert res.routes == {"0,1": 1}


@pytest.mark.parametrize("ag_order", ["reverse", "free"])
def test_hand_solved_two_chunks(solver: str, ag_order: str) -> None:
    # Ring 2 @ 2 GB/s x Ring 2 @ 1 GB/s, 2 chunks of c = 1 GiB, u = c / (1 GB/s) = 1e9 ns.
    # Route A = (0, 1): RS0 u/4, RS1 u/4, AG1 u/4, AG0 u/4 (chain u);
    # route B = (1, 0): RS1 u/2, RS0 u/8, AG0 u/8, AG1 u/2 (chain 1.25u).
    # AA: dimension 1 carries u of work and cannot start before the first RS0 ends
    #     (u/4) nor end after the last AG0 starts (u/4 left): >= 1.5u, and
    #     RS0 [0, .25] [.25, .5]; dim 1: RS1 [.25, .5], RS1 [.5, .75], AG1 [.75, 1],
    #     AG1 [1, 1.25]; AG0 [1, 1.25], [1.25, 1.5] reaches 1.5u.
    # AB: dimension 1 carries 1.5u of work: >= 1.5u, reached by dim 1:
    #     RS1(B) [0, .5], RS1(A) [.5, .75], AG1(A) [.75, 1], AG1(B) [1, 1.5].
    # BB: dimension 1 carries 2u. So the optimum is 1.5u with reverse AG orders.
    # Free AG orders: a chunk's RS order costs dimension 1 u/4 (A) or u/2 (B), its AG
    # order u/4 (AG1 first) or u/2 (AG0 first). With two A-RS and two AG1-first the
    # load is u, but dimension 1 idles u/4 first (RS0) and u/4 after (AG0): 1.5u;
    # one B-RS: load >= 1.25u and the tail is u/4 unless an AG0-first adds u/4: 1.5u;
    # one AG0-first with two A-RS: load 1.25u plus the head u/4: 1.5u. Optimum 1.5u.
    inst = Instance(binary_network(), 2 * GiB, 2)
    res = solve(inst, solver, time_limit_s=20, ag_order=ag_order)
    assert_valid(res)
    assert res.status == "optimal"
    assert res.makespan_ns == pytest.approx(1.5e9, rel=REL)


# (2, 3, reverse) and (3, 2, free) have optima above every bound of ours: the solvers
# must prove them by search. (3, 3, reverse) is out of CBC's reach in 30 s.
AGREE_CASES = [(2, 2, "reverse"), (2, 3, "reverse"), (3, 2, "reverse"), (2, 2, "free"),
               (3, 2, "free")]


@pytest.mark.parametrize("dims,chunks,ag_order", AGREE_CASES)
def test_solvers_agree_on_small_optima(request, dims: int, chunks: int, ag_order: str) -> None:
    names = [s for s in request.config.getoption("--solvers").split(",") if s]
    if len(names) < 2:
        pytest.skip("needs at least two solvers")
    inst = small(dims, chunks)
    optima, lower = {}, {}
    for name in names:
        res = solve(inst, name, time_limit_s=30, ag_order=ag_order)
        assert_valid(res)
        assert res.meta["replays"] <= 2  # each distinct answer re-timed once
        lower[name] = res.lower_bound_ns
        if res.status == "optimal":
            optima[name] = res.makespan_ns
    assert len(optima) >= 2, optima
    lo, hi = min(optima.values()), max(optima.values())
    assert hi <= lo * (1 + REL), optima
    # No solver's bound (CBC's is read from its log) exceeds another's proven optimum.
    assert max(lower.values()) <= lo, (lower, optima)


def test_time_limit_on_a_large_instance_claims_nothing(solver: str) -> None:
    res = solve(large(), solver, time_limit_s=0.1)
    assert res.status in ("feasible", "unknown")
    assert res.lower_bound_ns < res.makespan_ns
    assert_valid(res)


def test_free_ag_is_no_worse_than_reverse() -> None:
    inst = small(3, 3)
    rev = solve(inst, "cpsat", time_limit_s=20)
    free = solve(inst, "cpsat", time_limit_s=20, ag_order="free")
    assert_valid(rev)
    assert_valid(free)
    assert rev.status == free.status == "optimal"
    assert free.makespan_ns <= rev.makespan_ns + rev.scaling_error_ns + free.scaling_error_ns


def test_result_to_dict_is_json_ready() -> None:
    import json

    res = solve(small(2, 2), "cpsat", time_limit_s=5)
    d = res.to_dict()
    json.dumps(d)
    assert "schedule" not in d
    for key in ("status", "makespan_ns", "lower_bound_ns", "runtime_s", "solver", "ag_order",
                "valid", "violations", "scaling_error_ns", "solver_makespan_ns"):
        assert key in d
    assert d["scaling_error_ns"] < 1e-3 * d["makespan_ns"]


@pytest.mark.parametrize("kwargs,field", [
    ({"solver": "gurobi"}, "solver"),
    ({"time_limit_s": 0}, "time_limit_s"),
    ({"time_limit_s": -1.0}, "time_limit_s"),
    ({"time_limit_s": float("inf")}, "time_limit_s"),
    ({"threads": 0}, "threads"),
    ({"ag_order": "sideways"}, "ag_order"),
    ({"time_limt_s": 5}, "time_limt_s"),
    ({"deterministic_time_s": -1}, "deterministic_time_s"),
    ({"node_limit": 10}, "node_limit"),  # a MILP limit given to CP-SAT
    ({"solver": "cbc", "deterministic_time_s": 1.0}, "deterministic_time_s"),
    ({"cpsat_parameters": {"no_such_field": 1}}, "cpsat_parameters"),
    ({"coarse_fraction": 1.0}, "coarse_fraction"),
    ({"params": "fast"}, "params"),
])
def test_bad_arguments_raise_input_error(kwargs: dict, field: str) -> None:
    with pytest.raises(InputError) as info:
        solve(small(2, 2), **kwargs)
    assert info.value.field == field


def test_invalid_instances_raise_input_error() -> None:
    net = Network.build(["Ring", "Switch"], [4, 4], [4, 1])
    with pytest.raises(InputError):
        Instance(net, 4, 8)  # more chunks than bytes
    with pytest.raises(InputError):
        solve("not an instance")  # type: ignore[arg-type]


def test_the_bundled_backends_register_in_their_order() -> None:
    """The registry is the one list of solver names: cpsat, then the MILPs (cbc, highs)."""
    assert backend_names()[:3] == ["cpsat", "cbc", "highs"]


_net = st.builds(
    lambda kinds, npus, bws, lats: Network.build(kinds, npus, bws, lats),
    st.shared(st.integers(2, 3), key="d").flatmap(
        lambda d: st.lists(st.sampled_from(["Ring", "Switch", "FullyConnected"]),
                           min_size=d, max_size=d)),
    st.shared(st.integers(2, 3), key="d").flatmap(
        lambda d: st.lists(st.sampled_from([2, 4]), min_size=d, max_size=d)),
    st.shared(st.integers(2, 3), key="d").flatmap(
        lambda d: st.lists(st.sampled_from([1.0, 2.0, 4.0]), min_size=d, max_size=d)),
    st.shared(st.integers(2, 3), key="d").flatmap(
        lambda d: st.lists(st.sampled_from([0.0, 10.0, 500.0]), min_size=d, max_size=d)),
)


@settings(deadline=None, max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(net=_net, chunks=st.integers(1, 3), size_mib=st.sampled_from([1, 16, 64]))
def test_property_bounds_optimum_themis(net: Network, chunks: int, size_mib: int) -> None:
    """LB <= optimum <= Themis' simulated makespan; free <= reverse; all schedules valid."""
    inst = Instance(net, size_mib * MiB, chunks)
    themis = min(inst.simulate("themis", intra).makespan_ns for intra in ("scf", "fifo"))
    with warnings.catch_warnings():
        # A checker failure, a bound above a makespan or a re-timing mismatch is a bug.
        warnings.simplefilter("error", RuntimeWarning)
        rev = solve(inst, "cpsat", time_limit_s=5)
        free = solve(inst, "cpsat", time_limit_s=5, ag_order="free")
    for res in (rev, free):
        assert_valid(res)
        assert res.makespan_ns <= themis * (1 + 1e-9)
        assert res.lower_bound_ns <= res.makespan_ns * (1 + 1e-9)
    if rev.status == "optimal" and free.status == "optimal":
        assert free.makespan_ns <= rev.makespan_ns + rev.scaling_error_ns \
            + free.scaling_error_ns + 1e-6
    if rev.status == "optimal":  # proven: within the scaling error or PROOF_TOL of a bound
        assert rev.makespan_ns <= rev.lower_bound_ns * (1 + PROOF_TOL) \
            + rev.scaling_error_ns + 1e-6


def test_threads_with_deterministic_time_interleave_reproducibly() -> None:
    """Two workers and a deterministic time: CP-SAT's interleaved search, labelled, and
    the same answer twice (reproducible for a given number of workers)."""
    inst = Instance(two_dim_network(), 64 * MiB, 4)
    params = SolverParams(deterministic_time_s=0.2, threads=2, doubling=False)
    first, second = (solve(inst, "cpsat", params) for _ in range(2))
    assert first.meta["search"] == "interleaved, 2 workers"
    assert first.makespan_ns == second.makespan_ns
    assert first.lower_bound_ns == second.lower_bound_ns
    assert str(first.status) == str(second.status)
    assert first.valid
    assert SolverParams(deterministic_time_s=1.0).search == "one worker"
    assert SolverParams(threads=4).search == "4 workers"
