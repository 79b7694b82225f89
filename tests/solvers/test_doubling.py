"""Doubling: split schedules, the chain's hints, the doubling bound, proofs under seeds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import bounds, solve
from solvers.doubling import (
    doubling_bound,
    linear_in_size,
    split_schedule,
    splits,
    with_chunks,
)
from themis.checker import check
from themis.instance import Instance
from topologies.network import Network

from .solver_cases import GiB, MiB, binary_network

LATENCY_FREE = Network.build(["Ring", "Switch", "Ring"], [2, 4, 2], [4, 2, 1], [0, 0, 0])


@settings(max_examples=15, deadline=None)
@given(policy=st.sampled_from(["baseline", "themis", "round-robin"]),
       intra=st.sampled_from(["fifo", "scf"]), chunks=st.sampled_from([1, 2, 3]),
       factor=st.sampled_from([2, 4]))
def test_split_keeps_the_makespan_at_latency_zero(policy: str, intra: str, chunks: int,
                                                  factor: int) -> None:
    # Each piece of a stage takes 1/factor of its time: back to back they would take
    # the same makespan, and the replay starts every stage as early as it can.
    inst = Instance(LATENCY_FREE, 48 * MiB, chunks)
    sched = inst.simulate(policy, intra).schedule
    split = split_schedule(sched, with_chunks(inst, factor * chunks), factor)
    assert split is not None and not check(split)
    assert split.makespan_ns <= sched.makespan_ns * (1 + 1e-12)
    assert len(split.chunks) == factor * chunks


def test_split_with_latency_is_valid_and_pays_at_most_one_latency_per_stage() -> None:
    net = Network.build(["Ring", "Ring"], [2, 2], [2, 1], [500, 500])
    inst = Instance(net, GiB, 2)
    assert not linear_in_size(inst)
    sched = inst.simulate("baseline", "fifo").schedule
    split = split_schedule(sched, with_chunks(inst, 4))
    assert split is not None and not check(split)
    # 2 chunks x 2 dimensions x (RS, AG) = 8 stages, one step of 500 ns each.
    assert split.makespan_ns <= sched.makespan_ns + 8 * 500 + 1e-6


def test_split_refuses_chunks_that_do_not_divide() -> None:
    inst = Instance(binary_network(), 3 * MiB + 1, 2)  # a remainder chunk
    assert not splits(inst, 2)
    sched = inst.simulate("baseline", "fifo").schedule
    assert split_schedule(sched, with_chunks(inst, 4)) is None


def test_doubling_bound_is_below_the_optimum() -> None:
    # LB3(2C) bounds OPT(C) at latency 0 (OPT(2C) <= OPT(C)): cross-check with CP-SAT.
    inst = Instance(LATENCY_FREE, 64 * MiB, 4)
    assert linear_in_size(inst)
    value, k = doubling_bound(inst, factors=(2, 4))
    assert k in (2, 4) and value > 0
    res = solve(inst, "cpsat", time_limit_s=60, deterministic_time_s=5)
    assert res.status == "optimal"
    assert value <= res.makespan_ns * (1 + 1e-9)
    assert bounds(with_chunks(inst, k * inst.chunks)).lb_ns == value


def test_chain_hint_is_used_and_counted() -> None:
    inst = Instance(LATENCY_FREE, 64 * MiB, 8)
    res = solve(inst, "cpsat", time_limit_s=120, deterministic_time_s=5)
    chain = res.meta["doubling"]
    assert chain["from_chunks"] == 4 and chain["status"] == "optimal"
    assert chain["levels"] == 2  # C = 4 from C = 2
    # At latency 0 the split C/2 optimum is a C schedule no longer: OPT(8) <= OPT(4).
    assert chain["makespan_ns"] <= chain["from_makespan_ns"] * (1 + 1e-12)
    assert res.status == "optimal" and res.makespan_ns <= chain["makespan_ns"] * (1 + 1e-12)
    assert res.meta["deterministic_time_total_s"] >= chain["deterministic_time_s"]
    assert res.meta["deterministic_time_total_s"] <= 5 * (1 + 1e-6) + 1e-3


@pytest.mark.parametrize("chunks", [3, 4])
def test_proofs_do_not_depend_on_the_seed(chunks: int) -> None:
    # Held-out style (another size, a delay): proven optimal under seeds 0, 1 and 2 alike.
    net = Network.build(["Ring", "Switch", "Ring"], [2, 4, 2], [4, 2, 1], [20, 50, 500])
    inst = Instance(net, 24 * MiB, chunks, endpoint_delay_ns=25)
    runs = [solve(inst, "cpsat", time_limit_s=120, deterministic_time_s=1, seed=s)
            for s in (0, 1, 2)]
    assert all(r.status == "optimal" and r.valid for r in runs), [r.status for r in runs]
    spans = [r.makespan_ns for r in runs]
    assert max(spans) == pytest.approx(min(spans), rel=1e-12)
