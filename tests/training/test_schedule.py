"""Every training run's stages are one :class:`~themis.schedule.Schedule` the
independent checker accepts (a property), and it agrees with the run's records."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.training.test_bound import POLICIES, cases
from themis.checker import check
from themis.schedule import Schedule
from themis.training import TrainingConfig, simulate_training
from topologies.presets import resolve_network
from topologies.workload import load_workload


def _agrees(res) -> None:
    sched = res.schedule
    assert isinstance(sched, Schedule)
    assert check(sched) == []
    assert len(sched.collectives) == len(res.collectives)
    ends: dict[int, float] = {}
    for s in sched.stages:
        ends[s.collective] = max(ends.get(s.collective, 0.0), s.end_ns)
    for rec in res.collectives:
        assert ends[rec.id] == rec.end_ns
        assert sched.issue_ns[rec.id] == rec.issue_ns
        assert sched.span(rec.id) == rec.dims


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(cases())
def test_every_training_schedule_passes_the_checker(case) -> None:
    wl, net, chunks, k, passes, lbw = case
    for timing in ("astra-sim-1.0", "alpha-beta"):
        for policy in POLICIES:
            for intra in ("fifo", "scf", "feed"):
                cfg = TrainingConfig(timing=timing, chunks=chunks, active_chunks=k,
                                     passes=passes, policy=policy, intra=intra,
                                     local_bw_aware=lbw)
                _agrees(simulate_training(wl, net, cfg, bound=False))


def test_dlrm_all_to_all_schedule_round_trips() -> None:
    # DLRM issues all-to-all collectives (A2A stages); the schedule survives JSON.
    cfg = TrainingConfig(policy="themis", intra="scf", chunks=16)
    res = simulate_training(load_workload("dlrm"), resolve_network("tpu"), cfg, bound=False)
    _agrees(res)
    assert any(s.phase == "A2A" for s in res.schedule.stages)
    again = Schedule.from_dict(res.schedule.to_dict())
    assert check(again) == []
    assert again.makespan_ns == res.schedule.makespan_ns
