"""The iteration lower bound is below every policy's iteration (a property).

Random small workloads of several keywords on random small networks, under
both timings: the bound of :mod:`themis.training.bound` must not exceed the
end of any inter policy / intra discipline the project has.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from themis.disciplines import discipline_names
from themis.policies import policy_names
from themis.training import TrainingConfig, simulate_training
from topologies.network import Dimension, Network
from topologies.workload import parse_workload

KEYWORDS = ["DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_TRANSFORMER",
            "HYBRID_DLRM", "MICRO"]
TYPES = ["NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER"]
#: Every registered policy (``fixed`` needs a route: ``0,1,...`` stands for it) and the
#: training simulator's own themis-running.
POLICIES = [p for p in policy_names() if p != "fixed"] + ["themis-running"]


@st.composite
def cases(draw):
    dims = tuple(Dimension(draw(st.sampled_from(["Ring", "Switch", "FullyConnected"])),
                           draw(st.sampled_from([2, 4])),
                           float(draw(st.sampled_from([25, 50, 100, 200]))),
                           float(draw(st.sampled_from([1, 5, 100]))))
                 for _ in range(draw(st.integers(2, 3))))
    net = Network(dims)
    keyword = draw(st.sampled_from(KEYWORDS))
    n = draw(st.integers(2 if keyword == "HYBRID_DLRM" else 1, 3))
    header = keyword
    if keyword == "HYBRID_TRANSFORMER":
        header += f" model_parallel_NPU_group: {draw(st.sampled_from([1, 2, 4]))}"
    if keyword == "HYBRID_DLRM":
        header += f" {draw(st.integers(0, n - 2))}"
    lines = []
    for i in range(n):
        cols = [f"l{i}", "-1"]
        for ph in range(3):
            cols.append(str(draw(st.integers(0, 3000))))
            t = draw(st.sampled_from(TYPES + (["ALLTOALL"] if keyword == "HYBRID_DLRM"
                                              and i == 0 and ph < 2 else [])))
            cols += [t, str(draw(st.integers(4096, 400000)) if t != "NONE" else "0")]
        cols.append(str(draw(st.integers(1, 20))))
        lines.append(" ".join(cols))
    wl = parse_workload(f"{header}\n{n}\n" + "\n".join(lines) + "\n", "random.txt")
    chunks = draw(st.sampled_from([1, 2, 4, 16]))
    k = draw(st.sampled_from([1, 2]))
    passes = draw(st.integers(1, 2))
    lbw = draw(st.booleans())  # collective-optimization localBWAware, or baseline
    return wl, net, chunks, k, passes, lbw


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(cases())
def test_bound_below_every_policy(case) -> None:
    wl, net, chunks, k, passes, lbw = case
    for timing in ("astra-sim-1.0", "alpha-beta"):
        base = TrainingConfig(timing=timing, chunks=chunks, active_chunks=k, passes=passes,
                              local_bw_aware=lbw)
        lb = simulate_training(wl, net, base).lower_bound_ns
        assert lb is not None and lb >= 0
        # A fixed route (the dimensions in reverse), where the logical network is the
        # physical one (a transformer's model-parallel group may split a dimension).
        fixed = [] if "TRANSFORMER" in str(wl.parallelism) else [
            ",".join(map(str, reversed(range(net.ndims))))]
        for policy in [*POLICIES, *fixed]:
            for intra in discipline_names():
                cfg = base.with_(policy=policy, intra=intra)
                end = simulate_training(wl, net, cfg, bound=False).end_ns
                assert lb <= end + 1e-6 * end, (timing, policy, intra)


def test_bound_is_exact_on_one_dimension() -> None:
    """One all-reduce (MICRO) on a single ring: every stage runs on the one dimension
    back to back from t = 0, so the end is the sum of the stage times plus the update
    time, and so is the bound (head and tail 0, the window's load is every stage)."""
    from themis.plans import stage_plan
    from themis.timing import make_timing

    net = Network((Dimension("Ring", 4, 50.0, 100.0),))
    wl = parse_workload("MICRO\n1\nl0 -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 1048576 7\n", "m.txt")
    cfg = TrainingConfig(timing="alpha-beta", chunks=4, policy="baseline")
    res = simulate_training(wl, net, cfg)
    tm = make_timing("alpha-beta", net, None, cfg.endpoint_delay_ns)
    by_hand = 0.0
    m = 1048576 / 4
    for phase, d in stage_plan("all-reduce", (0,)):
        cost = tm.stage(phase, d, m)
        by_hand += cost.duration_ns
        m = cost.output_bytes
    by_hand = 4 * by_hand + 7
    assert res.end_ns == by_hand
    assert by_hand * (1 - 1e-8) <= res.lower_bound_ns <= by_hand


def test_bound_follows_collective_optimization_baseline() -> None:
    """Under astra-sim-1.0 with collective-optimization baseline every all-reduce runs
    whole on every dimension (AR per dimension, whatever the policy), so one chunk's
    iteration is its chain: the AR on dimension 0 at full size, then on dimension 1,
    then the update. The bound admits only that shape, and meets the end."""
    from themis.plans import PlanShape, stage_plan
    from themis.timing import make_timing

    net = Network((Dimension("Ring", 4, 50.0, 100.0), Dimension("Ring", 2, 25.0, 500.0)))
    wl = parse_workload("MICRO\n1\nl0 -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 1048576 7\n", "m.txt")
    cfg = TrainingConfig(timing="astra-sim-1.0", chunks=1, policy="baseline",
                         local_bw_aware=False)
    res = simulate_training(wl, net, cfg)
    tm = make_timing("astra-sim-1.0", net, None, cfg.endpoint_delay_ns)
    plan = stage_plan("all-reduce", (0, 1), shape=PlanShape.AR_PER_DIM)
    assert [ph for ph, _ in plan] == ["AR", "AR"]
    by_hand, m = 0.0, 1048576.0
    for phase, d in plan:
        cost = tm.stage(phase, d, m)
        by_hand += cost.duration_ns
        m = cost.output_bytes
    assert res.end_ns == by_hand + 7  # + the update
    assert res.end_ns * (1 - 1e-8) <= res.lower_bound_ns <= res.end_ns
