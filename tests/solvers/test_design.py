"""themis design (issue 25): the search, its start points, the bound's design and the regret
table, checked against hand answers and the simulator."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.design import (
    BOUND,
    LIBRA,
    DesignEvaluator,
    DesignItem,
    DesignProblem,
    design,
    design_study,
    even_split,
    libra_design,
)
from themis.collective import Collective
from themis.simulator import SimConfig, makespan_ns
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.units import GBps_to_bytes_per_ns

#: LIBRA's 4-D costs ($ per GB/s per NPU), rounded.
COSTS_4D = (2.0, 4.0, 4.0, 57.4)


def _net(*shape: tuple[str, int]) -> Network:
    return Network(tuple(Dimension(k, n, 1.0) for k, n in shape))


def _all_reduce(net: Network, size: int = 1 << 24, chunks: int = 16) -> tuple[DesignItem, ...]:
    return (DesignItem("all-reduce", size, chunks, tuple(d.npus for d in net.dims)),)


def test_libra_design_is_the_closed_form() -> None:
    # Ring 4 x Ring 4, one all-reduce of S bytes: dim 0 moves 2S*3/4, dim 1 2S*3/16, so
    # on 100 GB/s LIBRA gives (80, 20) GB/s and the fluid time 2S*15/16 / 100 GB/s.
    net = _net(("Ring", 4), ("Ring", 4))
    size = 1 << 20
    problem = DesignProblem(net, _all_reduce(net, size), 100.0)
    assert libra_design(problem) == pytest.approx((80.0, 20.0))
    found = design(problem, LIBRA)
    assert found.bandwidths_GBps == pytest.approx((80.0, 20.0))
    assert found.time_ns == pytest.approx(2 * size * 15 / 16 / GBps_to_bytes_per_ns(100.0))


def test_bound_design_is_the_fluid_optimum_under_a_cost_model() -> None:
    # At latency 0 with many chunks the route-LP bound is the fluid time of the best route
    # mix; under prices c the best design costs min over routes of sum_d c_d T_d(route) /
    # budget (every dimension finishes together). The search reaches it within 0.5%.
    net = _net(("Ring", 4), ("FullyConnected", 8), ("Ring", 4), ("Switch", 32))
    size = 1 << 30
    problem = DesignProblem(net, _all_reduce(net, size, 64), 10_000.0, COSTS_4D)
    npus = [d.npus for d in net.dims]
    best = math.inf
    for route in itertools.permutations(range(4)):
        before, weighted = 1, 0.0
        for d in route:
            weighted += COSTS_4D[d] * 2 * size * (npus[d] - 1) / npus[d] / before
            before *= npus[d]
        best = min(best, weighted / GBps_to_bytes_per_ns(10_000.0))
    found = design(problem, BOUND)
    assert best <= found.time_ns <= best * 1.005
    # ... and no other design tried has a lower bound: even, LIBRA's, random ones.
    ev = DesignEvaluator(problem)
    rng = [(0.7, 0.2, 0.05, 0.05), (0.25, 0.25, 0.25, 0.25), (0.5, 0.1, 0.1, 0.3)]
    others = [even_split(problem), libra_design(problem)] + [
        problem.project([s * 10_000.0 / c for s, c in zip(shares, COSTS_4D, strict=True)])
        for shares in rng]
    for bw in others:
        assert ev(BOUND, bw) >= found.time_ns * (1 - 1e-9)


def test_a_cost_design_spends_its_budget_within_its_bounds() -> None:
    net = _net(("Ring", 4), ("Switch", 8), ("Ring", 2))
    problem = DesignProblem(net, _all_reduce(net), 1000.0, (2.0, 5.0, 1.0),
                            min_GBps=(10.0, 20.0, 0.0), max_GBps=(300.0, math.inf, 50.0))
    found = design(problem, "themis", evaluations=60)
    assert problem.cost(found.bandwidths_GBps) == pytest.approx(1000.0)
    for b, lo, hi in zip(found.bandwidths_GBps, problem.min_GBps, problem.max_GBps,
                         strict=True):
        assert lo - 1e-9 <= b <= hi + 1e-9


def test_the_design_time_is_what_simulate_gives_on_that_network() -> None:
    # Cross-check: the design's reported time is the simulator's makespan of the network
    # built from the design's bandwidths.
    net = _net(("Ring", 4), ("FullyConnected", 4), ("Switch", 4))
    problem = DesignProblem(net, _all_reduce(net), 300.0, intra="scf")
    found = design(problem, "themis", evaluations=50)
    again = makespan_ns(problem.network_with(found.bandwidths_GBps),
                        [Collective("all-reduce", 1 << 24, 16)],
                        SimConfig(policy="themis", intra="scf"))
    assert found.time_ns == again


@settings(max_examples=12, deadline=None)
@given(kinds=st.lists(st.sampled_from(["Ring", "FullyConnected", "Switch"]), min_size=2,
                      max_size=3),
       policy=st.sampled_from(["baseline", "themis", "guarded"]),
       priced=st.booleans(), latency=st.sampled_from([0.0, 500.0]))
def test_never_worse_than_its_starts_and_never_below_the_bound(kinds, policy, priced,
                                                               latency) -> None:
    net = Network(tuple(Dimension(k, 4, 1.0, latency) for k in kinds))
    costs = tuple(float(i + 1) for i in range(len(kinds))) if priced else ()
    problem = DesignProblem(net, _all_reduce(net, 1 << 22, 8), 200.0, costs)
    ev = DesignEvaluator(problem)
    found = design(problem, policy, evaluations=40, evaluator=ev)
    for name, value in found.starts_ns.items():
        assert found.time_ns <= value, name
    assert found.time_ns <= ev(policy, even_split(problem))
    assert found.time_ns <= ev(policy, libra_design(problem))
    assert ev(BOUND, found.bandwidths_GBps) <= found.time_ns * (1 + 1e-9)
    assert problem.cost(found.bandwidths_GBps) == pytest.approx(problem.budget)


def test_regret_table_diagonal_is_each_policys_best() -> None:
    # Each policy's design is searched from every other design too, so under its own
    # policy it is no worse than any design in the table: regret >= 0, and 0 on the diagonal.
    net = _net(("Ring", 4), ("FullyConnected", 8), ("Ring", 4))
    items = (DesignItem("all-reduce", 1 << 24, 16, (4, 8, 4), 2.0, "dp"),
             DesignItem("all-reduce", 1 << 22, 16, (4, 2, -1), 5.0, "tp"))
    study = design_study(DesignProblem(net, items, 400.0, (2.0, 4.0, 4.0)),
                         ["baseline", "themis", BOUND], evaluations=40)
    for p in study.table.policies:
        assert study.table.regret(p, p) == 0.0
        for name in study.table.designs:
            regret = study.table.regret(name, p)
            assert regret is not None and regret >= -1e-12
            assert study.table.bound_ns[name] <= study.table.time_ns[name][p] * (1 + 1e-9)


def test_a_sub_dimension_group_runs_on_its_npus() -> None:
    # A group of 2 NPUs of an FC-8 dimension all-reduces as an FC-2 dimension.
    net = _net(("FullyConnected", 8), ("Ring", 4))
    item = DesignItem("all-reduce", 1 << 20, 4, (2, -1))
    ev = DesignEvaluator(DesignProblem(net, (item,), 100.0))
    alone = makespan_ns(Network((Dimension("FullyConnected", 2, 50.0),)),
                        [Collective("all-reduce", 1 << 20, 4)], SimConfig(policy="themis"))
    assert ev("themis", (50.0, 50.0)) == alone


@pytest.mark.parametrize(("kwargs", "key"), [
    ({"budget": 0.0}, "budget"),
    ({"budget": 100.0, "min_GBps": (80.0, 80.0)}, "budget"),
    ({"budget": 100.0, "max_GBps": (10.0, 10.0)}, "budget"),
    ({"budget": 100.0, "costs": (1.0,)}, "costs"),
    ({"budget": 100.0, "costs": (1.0, -2.0)}, "cost[1]"),
])
def test_bad_problems_are_refused(kwargs, key) -> None:
    net = _net(("Ring", 4), ("Ring", 4))
    with pytest.raises(InputError, match=key.replace("[", r"\[")):
        DesignProblem(net, _all_reduce(net), **kwargs)


def test_steps_keep_every_bandwidth_on_the_grid_within_the_budget() -> None:
    # 25 GB/s links, 390 $ at prices (1, 2, 1): whole steps only, never above the budget,
    # and no worse than the even split and LIBRA's design snapped to the grid.
    net = _net(("Ring", 4), ("FullyConnected", 4), ("Switch", 4))
    problem = DesignProblem(net, _all_reduce(net), 390.0, (1.0, 2.0, 1.0), step_GBps=25.0)
    ev = DesignEvaluator(problem)
    found = design(problem, "themis", evaluations=80, evaluator=ev)
    for b in found.bandwidths_GBps:
        assert b / 25.0 == pytest.approx(round(b / 25.0)) and b >= 25.0
    assert found.cost <= 390.0 + 1e-9
    assert found.cost > 390.0 - 25.0  # no whole step left unspent on the cheapest dimension
    assert found.time_ns <= ev("themis", problem.snap(even_split(problem)))
    assert found.time_ns <= ev("themis", problem.snap(libra_design(problem)))


def test_a_step_outside_a_dimensions_range_is_refused() -> None:
    net = _net(("Ring", 4), ("Ring", 4))
    with pytest.raises(InputError, match="no multiple"):
        DesignProblem(net, _all_reduce(net), 100.0, min_GBps=(10.0, 0.0),
                      max_GBps=(20.0, 100.0), step_GBps=25.0)


def test_a_training_design_is_trains_end_on_that_network() -> None:
    # A training iteration as the objective: the design's time is train's end on the
    # designed network, no worse than the even split's; the bound is the iteration bound.
    from solvers.design import TrainingSpec
    from themis.training import TrainingConfig, simulate_training
    from topologies.workload import load_workload

    net = _net(("Ring", 4), ("Switch", 4))
    cfg = TrainingConfig(timing="alpha-beta", intra="scf", chunks=8, endpoint_delay_ns=0.0)
    spec = TrainingSpec(load_workload("resnet50"), cfg)
    problem = DesignProblem(net, (), 200.0, training=spec)
    ev = DesignEvaluator(problem)
    found = design(problem, "themis", evaluations=30, evaluator=ev)
    end = simulate_training(spec.workload, problem.network_with(found.bandwidths_GBps),
                            TrainingConfig(timing="alpha-beta", policy="themis", intra="scf",
                                           chunks=8, endpoint_delay_ns=0.0), bound=False)
    assert found.time_ns == end.end_ns
    assert found.time_ns <= ev("themis", even_split(problem))
    assert ev(BOUND, found.bandwidths_GBps) <= found.time_ns
    with pytest.raises(InputError, match="libra"):
        design(problem, LIBRA, evaluations=5)
