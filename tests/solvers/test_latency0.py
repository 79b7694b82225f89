"""Hints across latencies: the latency-0 instance, its schedules replayed on the real network."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import bounds, solve
from solvers.doubling import linear_in_size
from solvers.latency0 import replay_on, zero_latency
from themis.checker import check
from themis.instance import Instance
from topologies.network import Network

from .solver_cases import GiB, MiB

LAT = Network.build(["Ring", "Switch", "Ring"], [2, 4, 2], [4, 2, 1], [500, 200, 100])


def test_zero_latency_removes_every_fixed_time() -> None:
    net = dataclasses.replace(LAT, nic_latency_ns=30.0, router_latency_ns=40.0)
    inst = Instance(net, 48 * MiB, 4, endpoint_delay_ns=10.0)
    assert not linear_in_size(inst)
    inst0 = zero_latency(inst)
    assert inst0 is not None and linear_in_size(inst0)
    assert inst0.endpoint_delay_ns == 0 and inst0.chunks == 4
    assert [d.bandwidth_GBps for d in inst0.network.dims] == [4, 2, 1]
    assert all(d.latency_ns == 0 for d in inst0.network.dims)
    assert zero_latency(inst0) is None  # already latency-free


def test_replay_of_one_chunk_by_hand() -> None:
    # Ring 2 x Ring 2 at 1 GB/s (2^30 bytes per 1e9 ns), 100 ns per hop, 1 GiB, C = 1:
    # RS0 sends S/2, RS1 S/4, AG1 S/4, AG0 S/2, one step (one hop) each:
    # 4 x 100 ns + 1.5 x 1e9 ns. At latency 0: 1.5e9 ns.
    net = Network.build(["Ring", "Ring"], [2, 2], [1, 1], [100, 100])
    inst = Instance(net, GiB, 1)
    inst0 = zero_latency(inst)
    assert inst0 is not None
    s0 = inst0.simulate("baseline", "fifo").schedule
    assert s0.makespan_ns == pytest.approx(1.5e9)
    s = replay_on(s0, inst, "latency0-C1")
    assert s is not None and not check(s)
    assert s.makespan_ns == pytest.approx(1.5e9 + 400)
    assert s.meta["policy"] == "latency0-C1"


def test_replay_refuses_other_chunks() -> None:
    inst = Instance(LAT, 48 * MiB, 4)
    other = Instance(LAT, 48 * MiB, 2).simulate("themis", "scf").schedule
    assert replay_on(other, inst, "x") is None


@settings(max_examples=12, deadline=None)
@given(policy=st.sampled_from(["baseline", "themis", "round-robin"]),
       intra=st.sampled_from(["fifo", "scf"]), chunks=st.sampled_from([1, 2, 3, 4]),
       latency=st.sampled_from([0.0, 50.0, 500.0, 5000.0]))
def test_replayed_schedules_are_valid_and_no_shorter(policy: str, intra: str, chunks: int,
                                                     latency: float) -> None:
    net = Network.build(["Ring", "Switch", "Ring"], [2, 4, 2], [4, 2, 1], [latency, 200, 100])
    inst = Instance(net, 48 * MiB, chunks, endpoint_delay_ns=10.0)
    inst0 = zero_latency(inst)
    assert inst0 is not None
    s0 = inst0.simulate(policy, intra).schedule
    s = replay_on(s0, inst, "r")
    assert s is not None and not check(s)
    # Every stage lasts at least as long: the semi-active replay ends no earlier.
    assert s.makespan_ns >= s0.makespan_ns * (1 - 1e-12)
    # ... and it is a schedule of the real instance: its bounds hold.
    assert bounds(inst).lb_ns <= s.makespan_ns * (1 + 1e-9)
    # Replayed on its own instance, it ends no later (semi-active).
    back = replay_on(s0, inst0, "r0")
    assert back is not None and back.makespan_ns <= s0.makespan_ns * (1 + 1e-12)


def test_solve_uses_the_replayed_latency0_answer() -> None:
    inst = Instance(LAT, 64 * MiB, 4)
    res = solve(inst, "cpsat", time_limit_s=300, deterministic_time_s=2)
    info = res.meta["latency0"]
    cands = info["candidates"]
    assert "latency0-C4" in cands and "latency0-split-C2" in cands
    assert res.valid and res.makespan_ns is not None
    # The answer is never worse than a candidate, and the bound stays below it.
    assert res.makespan_ns <= min(cands.values()) * (1 + 1e-12)
    assert res.lower_bound_ns <= res.makespan_ns
    # The latency-0 optimum is a lower bound of nothing here, but the replay of a
    # latency-0 schedule is never shorter than it.
    assert min(cands.values()) >= info["makespan_ns"] * (1 - 1e-12)
    # The sub-solve's deterministic time is counted in the solve's (one budget).
    assert 0 < info["deterministic_time_s"] <= res.meta["deterministic_time_total_s"]
    # The same-latency chain runs too (after the latency-0 solve, without its own).
    assert res.meta["doubling"]["from_chunks"] == 2
    off = solve(inst, "cpsat", time_limit_s=300, deterministic_time_s=2, latency0=False)
    assert "latency0" not in off.meta


def test_latency_free_instance_has_no_latency0_step() -> None:
    inst0 = zero_latency(Instance(LAT, 64 * MiB, 2))
    assert inst0 is not None
    inst = Instance(inst0.network, 64 * MiB, 2)
    res = solve(inst, "cpsat", time_limit_s=120, deterministic_time_s=1)
    assert "latency0" not in res.meta


def test_improve_chain_splits_the_latency0_answers() -> None:
    from solvers.improve import improve

    inst = Instance(LAT, 64 * MiB, 8)
    res = improve(inst, evaluations=20, chain_dtime_s=2.0, chain_chunks=4)
    chain = res.meta["chain"]
    splits = chain["splits"]
    assert chain["from_chunks"] == 4
    assert "solve" in splits and "latency0-C4" in splits and "latency0-split-C2" in splits
    assert chain["makespan_ns"] == min(splits.values())
    assert res.valid and res.makespan_ns <= chain["makespan_ns"] * (1 + 1e-12)
    assert res.lower_bound_ns <= res.makespan_ns
