"""The exact small-iteration model (solvers.iteration): bound <= optimum <= every policy.

Tiny random iterations (3 layers, 2 chunks, 2-D networks, several loop
keywords), seeded: CP-SAT proves the optimum, its routes and per-dimension
orders replayed in the training engine give the model's makespan (to the ns
under ``astra-sim-1.0``, whose durations are whole ns), the window bound is
below it and every registered policy and discipline is at or above it.
"""

from __future__ import annotations

import random

import pytest

from solvers.iteration import solve_iteration
from solvers.result import Status
from themis.disciplines import discipline_names
from themis.policies import policy_names
from themis.training import TrainingConfig, simulate_training
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.workload import parse_workload

POLICIES = [p for p in policy_names() if p not in ("fixed", "portfolio")] + ["themis-running"]


def _case(seed: int):
    rng = random.Random(seed)
    keyword = ["DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_TRANSFORMER"][seed % 4]
    n = 3
    lines = []
    for i in range(n):
        cols = [f"l{i}", "-1"]
        for ph in range(3):
            kind = "ALLREDUCE" if ph == 2 or keyword != "DATA" else "NONE"
            if keyword != "DATA" and rng.random() < 0.4:
                kind = rng.choice(["NONE", "ALLGATHER", "REDUCESCATTER"])
            size = rng.randint(20000, 400000) if kind != "NONE" else 0
            cols += [str(rng.randint(0, 3000)), kind, str(size)]
        cols.append(str(rng.randint(1, 20)))
        lines.append(" ".join(cols))
    header = keyword + (" model_parallel_NPU_group: 2" if keyword == "HYBRID_TRANSFORMER" else "")
    wl = parse_workload(f"{header}\n{n}\n" + "\n".join(lines) + "\n", f"case{seed}.txt")
    net = Network((Dimension("Ring", 4, float(rng.choice([25, 50, 100])), 100.0),
                   Dimension(rng.choice(["Switch", "FullyConnected"]), 2,
                             float(rng.choice([100, 200])), 500.0)))
    return wl, net, 2


@pytest.mark.parametrize("seed", range(8))
def test_bound_optimum_policies(seed: int) -> None:
    wl, net, chunks = _case(seed)
    cfg = TrainingConfig(timing="astra-sim-1.0", chunks=chunks, policy="baseline")
    res = solve_iteration(wl, net, cfg, deterministic_s=10)
    assert res.status == Status.OPTIMAL, res.reason
    assert res.scaling_error_ns == 0
    assert res.makespan_ns == res.solver_makespan_ns  # the replay is the model's schedule
    assert res.iteration_bound_ns <= res.makespan_ns * (1 + 1e-12)
    for policy in POLICIES:
        for intra in discipline_names():
            end = simulate_training(wl, net, cfg.with_(policy=policy, intra=intra),
                                    bound=False).end_ns
            assert res.makespan_ns <= end, (policy, intra)
    # The training-level policies and feed (issue 18 §3), auto included.
    for policy, intra in [("portfolio", "feed"), ("online-mix", "feed"), ("global-mix", "feed"),
                          ("global-online", "scf"), ("auto", "scf")]:
        end = simulate_training(wl, net, cfg.with_(policy=policy, intra=intra),
                                bound=False).end_ns
        assert res.makespan_ns <= end, (policy, intra)


def test_rounded_ticks_stay_feasible() -> None:
    """alpha-beta durations are not whole ns: rounded up, the replay is at most the
    model's makespan and the proven optimum is within the scaling error of it."""
    wl, net, chunks = _case(0)
    cfg = TrainingConfig(timing="alpha-beta", chunks=chunks, policy="baseline")
    res = solve_iteration(wl, net, cfg, deterministic_s=10)
    assert res.status == Status.OPTIMAL and res.scaling_error_ns > 0
    assert res.makespan_ns <= res.solver_makespan_ns * (1 + 1e-12)
    assert res.iteration_bound_ns <= res.makespan_ns * (1 + 1e-12)
    assert res.lower_bound_ns <= res.makespan_ns
    best = min(simulate_training(wl, net, cfg.with_(policy=p), bound=False).end_ns
               for p in ("baseline", "themis", "themis-running"))
    assert res.makespan_ns - res.scaling_error_ns <= best


def test_one_dimension_by_hand() -> None:
    """MICRO, one all-reduce of 2 chunks on one ring: the chunks run back to back on
    the one dimension from t = 0, each as RS then AG or as one AR stage (ASTRA's
    per-dimension all-reduce), whichever is shorter; then the update time."""
    net = Network((Dimension("Ring", 4, 50.0, 100.0),))
    wl = parse_workload("MICRO\n1\nl0 -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 400000 9\n", "m.txt")
    cfg = TrainingConfig(timing="astra-sim-1.0", chunks=2, policy="baseline",
                         local_bw_aware=False)
    res = solve_iteration(wl, net, cfg, deterministic_s=10)
    from themis.timing import make_timing

    tm = make_timing("astra-sim-1.0", net, None, cfg.endpoint_delay_ns)
    m = 200000.0
    rs = tm.stage("RS", 0, m)
    ag = tm.stage("AG", 0, rs.output_bytes)
    ar = tm.stage("AR", 0, m)
    assert res.status == Status.OPTIMAL
    assert res.makespan_ns == 2 * min(rs.duration_ns + ag.duration_ns, ar.duration_ns) + 9


def test_large_iteration_refused() -> None:
    from solvers.iteration import MAX_INTERVALS

    wl, net, _ = _case(1)
    cfg = TrainingConfig(timing="astra-sim-1.0", chunks=64)
    with pytest.raises(InputError, match="too large for the exact iteration model"):
        solve_iteration(wl, net, cfg, max_intervals=MAX_INTERVALS // 10)
