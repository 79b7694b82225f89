"""The training-level policies of issue 18 §3: feed, online-mix, global-mix / global-online
and the training portfolio ``auto``.

Properties on random small workloads (the bound tests' strategy), both timings, k = 1
and 2: every schedule passes the checker, the iteration bound is never above any of
their ends, and ``auto`` is never slower than portfolio/scf (its first candidate) and
is its best candidate. Plus the registries and the given-plans path.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.training.test_bound import cases
from themis.checker import check
from themis.planning.training_auto import CANDIDATES
from themis.training import TrainingConfig, simulate_training
from themis.training.routing import (
    iteration_planner_names,
    router_names,
    training_policy_names,
)
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.workload import parse_workload

NEW = [("online-mix", "feed"), ("online-mix", "scf"), ("global-mix", "feed"),
       ("global-online", "fifo"), ("themis", "feed"), ("themis-running", "feed")]


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(cases())
def test_new_policies_checked_bounded_and_auto_never_slower(case) -> None:
    wl, net, chunks, k, passes, lbw = case
    for timing in ("astra-sim-1.0", "alpha-beta"):
        base = TrainingConfig(timing=timing, chunks=chunks, active_chunks=k, passes=passes,
                              local_bw_aware=lbw)
        ref = simulate_training(wl, net, base.with_(policy="portfolio", intra="scf"))
        lb = ref.lower_bound_ns
        assert lb is not None
        for policy, intra in NEW:
            res = simulate_training(wl, net, base.with_(policy=policy, intra=intra),
                                    bound=False)
            assert lb <= res.end_ns * (1 + 1e-6), (timing, policy, intra)
            assert res.schedule is not None and check(res.schedule) == [], (policy, intra)
        auto = simulate_training(wl, net, base.with_(policy="auto"))
        assert auto.end_ns <= ref.end_ns
        assert auto.end_ns == min(auto.candidates_ns.values())
        assert auto.candidates_ns["portfolio/scf"] == ref.end_ns
        assert list(auto.candidates_ns) == [f"{p}/{q}" for p, q in CANDIDATES]
        assert auto.lower_bound_ns == lb
        assert auto.config.policy == "auto" and auto.policy_choice in auto.candidates_ns
        assert auto.schedule is not None and check(auto.schedule) == []


def _micro(size: int = 1 << 20) -> tuple:
    wl = parse_workload(f"MICRO\n1\nl0 -1 0 NONE 0 0 NONE 0 0 ALLREDUCE {size} 5\n", "m.txt")
    net = Network((Dimension("Ring", 4, 50.0, 100.0), Dimension("Switch", 2, 25.0, 500.0)))
    return wl, net


def test_online_mix_on_an_idle_network_balances_one_collective() -> None:
    """One all-reduce and nothing in flight: the router mixes the two routes (it
    minimises the larger of the two dimensions' loads), so the run ends no later than
    the worse of the two single routes, and every chunk takes one of them."""
    wl, net = _micro()
    cfg = TrainingConfig(timing="alpha-beta", chunks=8)
    mix = simulate_training(wl, net, cfg.with_(policy="online-mix"), bound=False)
    singles = [simulate_training(wl, net, cfg.with_(policy=r), bound=False).end_ns
               for r in ("0,1", "1,0")]
    assert mix.end_ns <= max(singles)
    routes = {c.route for c in mix.schedule.chunks}
    assert routes <= {(0, 1), (1, 0)}


def test_given_plans_replay_a_run_and_bad_ones_are_refused() -> None:
    wl, net = _micro()
    cfg = TrainingConfig(timing="astra-sim-1.0", chunks=4, policy="themis", intra="scf")
    res = simulate_training(wl, net, cfg, bound=False)
    plans = [[c.phases for c in res.schedule.chunks]]
    again = simulate_training(wl, net, cfg, bound=False, plans=plans)
    assert again.end_ns == res.end_ns
    assert again.schedule.meta["policy"] == "given"
    with pytest.raises(InputError, match="chunks"):
        simulate_training(wl, net, cfg, bound=False, plans=[plans[0][:2]])
    with pytest.raises(InputError, match="crosses dimensions"):
        simulate_training(wl, net, cfg, bound=False, plans=[[(("RS", 0), ("AG", 0))] * 4])


def test_training_policy_names() -> None:
    assert router_names()[:2] == ["themis-running", "online-mix"]
    assert iteration_planner_names() == ["global-mix", "global-online", "auto"]
    assert training_policy_names() == router_names() + iteration_planner_names()
    with pytest.raises(InputError):
        simulate_training(*_micro(), TrainingConfig(policy="no-such-policy"), bound=False)
