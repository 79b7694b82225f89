"""The one event engine (themis/engine/): its rules by hand, and cross-checks.

The hand cases run :class:`~themis.engine.EventLoop` on tables of known stage
times and record the order in which each dimension's discipline is asked for
a stage; the property replays every simulated schedule (random policies,
disciplines, timings, k, tie orders, several collectives with issue times)
through the engine driven by fixed dimension orders instead of disciplines.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from themis.checker import check
from themis.collective import Collective
from themis.disciplines import discipline_names
from themis.engine import EventLoop, Rules, ServeOrder
from themis.policies import policy_names
from themis.simulator import SimConfig, makespan_ns, replay, simulate
from themis.stages import StageTable
from themis.timing.base import StageCost
from themis.training import TrainingConfig, simulate_training
from topologies import Dimension, Network
from topologies.errors import InputError
from topologies.presets import resolve_network
from topologies.workload import load_workload


class Recording:
    """FIFO that logs (dimension, stage) to a shared list on every pop."""

    def __init__(self, dim: int, log: list[tuple[int, int]]) -> None:
        self.dim, self.log, self.q = dim, log, []

    def push(self, sid: int) -> None:
        self.q.append(sid)

    def pop(self) -> int | None:
        sid = self.q.pop(0)
        self.log.append((self.dim, sid))
        return sid

    def __len__(self) -> int:
        return len(self.q)


def table_of(chunks: list[list[tuple[int, float]]]) -> tuple[StageTable, list[int]]:
    """Chunks of (dimension, time) stages; a stage sends as many bytes as its time
    (so at 1 B/ns it takes that time under bandwidth sharing too), no fixed time."""
    table = StageTable()
    firsts = [table.add_chunk(0, k, tuple(("RS", d) for d, _ in stages),
                              [(1.0, StageCost(ns, 0.0, ns, 1.0)) for _, ns in stages])
              for k, stages in enumerate(chunks)]
    return table, firsts


def run(table: StageTable, firsts: list[int], rules: Rules, ndims: int, shared: bool = False,
        last_msg: dict[int, float] | None = None) -> tuple[EventLoop, list[tuple[int, int]]]:
    log: list[tuple[int, int]] = []
    loop = EventLoop(table, ndims, 1, rules, "shared" if shared else "exclusive", [1.0] * ndims)
    if rules.final_message_ties:  # the loop keeps them only under that rule
        for sid, ns in (last_msg or {}).items():
            loop.last_msg[sid] = ns
    loop.queues = [Recording(d, log) for d in range(ndims)]
    loop.issue_at(0.0, firsts)
    loop.run()
    return loop, log


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("serve, low, high", [
    # a0 (dim 0, 1 ns) ends at 1: its successor a1 waits for dim 1, b0 for dim 0.
    (ServeOrder.NEXT_FIRST, [(0, 0), (1, 1), (0, 2)], [(1, 0), (0, 1), (1, 2)]),
    (ServeOrder.OWN_FIRST, [(0, 0), (0, 2), (1, 1)], [(1, 0), (1, 2), (0, 1)]),
    (ServeOrder.ASCENDING, [(0, 0), (0, 2), (1, 1)], [(1, 0), (0, 1), (1, 2)]),
])
def test_serve_order_after_a_stage_end(serve, low, high, shared) -> None:
    # low: a0 on dim 0, a1 on dim 1, b0 on dim 0; high: the dimensions swapped.
    for (d0, d1), want in (((0, 1), low), ((1, 0), high)):
        table, firsts = table_of([[(d0, 1.0), (d1, 1.0)], [(d0, 5.0)]])
        loop, log = run(table, firsts, Rules(serve=serve), 2, shared)
        assert log == want
        assert loop.start == [0.0, 1.0, 1.0] and loop.end == [1.0, 2.0, 6.0]


@pytest.mark.parametrize("rules, a1_start, b1_start", [
    (Rules(), 2.0, 3.0),                              # start order: a0 first
    (Rules(final_message_ties=True), 3.0, 2.0),       # b0's final message was earlier
    (Rules(tie_dim=True, final_message_ties=True), 3.0, 2.0),
])
def test_same_time_stage_ends(rules, a1_start, b1_start) -> None:
    # a0 (dim 0) and b0 (dim 1) both end at 2, then both want dim 2 for 1 ns. a0's
    # final message takes 0.5 ns (scheduled at 1.5), b0's 1.5 ns (scheduled at 0.5).
    table, firsts = table_of([[(0, 2.0), (2, 1.0)], [(1, 2.0), (2, 1.0)]])
    loop, _ = run(table, firsts, rules, 3, last_msg={0: 0.5, 2: 1.5})
    assert (loop.start[1], loop.start[3]) == (a1_start, b1_start)


def test_tie_by_dimension() -> None:
    # b0 (dim 1) starts first, a0 (dim 0) second; both end at 2: by start order b's
    # successor gets dim 2 first, by dimension a's.
    table, firsts = table_of([[(0, 2.0), (2, 1.0)], [(1, 2.0), (2, 1.0)]])
    firsts.reverse()
    for tie_dim, a1_start in ((False, 3.0), (True, 2.0)):
        loop, _ = run(table, firsts, Rules(tie_dim=tie_dim), 3)
        assert loop.start[1] == a1_start and loop.start[3] == 5.0 - a1_start


def test_issues_come_before_stage_ends_of_their_time() -> None:
    # a0 ends at 1 on dim 0, when b (issued at 1) queues b0 there too: b0 is queued
    # first, so its stage starts before a's next stage on dim 0 (FIFO).
    table, (a, b) = table_of([[(0, 1.0), (0, 1.0)], [(0, 1.0)]])
    log: list[tuple[int, int]] = []
    loop = EventLoop(table, 1, 1, Rules())
    loop.queues = [Recording(0, log)]
    loop.issue_at(1.0, [b])
    loop.issue_at(0.0, [a])
    loop.run()
    assert log == [(0, 0), (0, 2), (0, 1)] and loop.end == [1.0, 3.0, 2.0]


def test_shared_stage_late_in_a_long_run_ends() -> None:
    # Issued at 10 s, the stage's last bytes would take less time than 1e10 ns can
    # resolve: it used to be re-planned at the same time for ever. One chunk never
    # shares its dimension, so k = 2 gives the times of k = 1 (stages alone).
    net = Network((Dimension("Ring", 8, 100.0, 20.0),))
    one = [simulate(net, Collective("all-reduce", 200, 1), issue_ns=[1e10], active_chunks=k)
           for k in (1, 2)]
    assert one[1].schedule.stages == one[0].schedule.stages
    assert one[0].makespan_ns == pytest.approx(283.2596283, rel=1e-9)


def test_training_with_shared_bandwidth_late_in_the_run_ends() -> None:
    cfg = TrainingConfig(timing="alpha-beta", policy="round-robin", intra="fifo", chunks=4,
                         active_chunks=3, scheduling_policy="FIFO")
    res = simulate_training(load_workload("transformer-fwd-in-bckwd"),
                            resolve_network("4d-large"), cfg)
    assert check(res.schedule) == []
    assert res.lower_bound_ns <= res.end_ns


@st.composite
def cases(draw):
    dims = []
    sym = draw(st.booleans())  # symmetric networks: many same-time events
    for _ in range(draw(st.integers(1, 4))):
        if sym and dims:
            dims.append(dims[0])
            continue
        kind = draw(st.sampled_from(["Ring", "Switch", "FullyConnected"]))
        p = draw(st.sampled_from([2, 4, 8]) if kind == "Switch" else st.integers(2, 8))
        dims.append(Dimension(kind, p, draw(st.sampled_from([1.0, 4.0, 50.0])),
                              draw(st.sampled_from([0.0, 10.0, 500.0]))))
    net = Network(tuple(dims))
    colls = [Collective(draw(st.sampled_from(["all-reduce", "reduce-scatter", "all-gather"])),
                        chunks * draw(st.sampled_from([1024, 65536])) + draw(st.sampled_from(
                            [0, 123])), chunks)
             for chunks in draw(st.lists(st.sampled_from([1, 2, 3, 8, 16]), min_size=1,
                                         max_size=3))]
    issue = draw(st.lists(st.sampled_from([0.0, 0.0, 1000.0, 2345.5]), min_size=len(colls),
                          max_size=len(colls)))
    policy = draw(st.sampled_from([p for p in policy_names() if p != "fixed"]))
    config = SimConfig(policy=policy, intra=draw(st.sampled_from(discipline_names())),
                       timing=draw(st.sampled_from(["alpha-beta", "astra-sim-1.0",
                                                    "astra-sim-2"])),
                       endpoint_delay_ns=draw(st.sampled_from([0.0, 10.0])),
                       active_chunks=draw(st.integers(1, 3)),
                       tie_order=draw(st.sampled_from(["start", "dim"])),
                       local_bw_aware=draw(st.booleans()))
    return net, colls, issue, config


@settings(max_examples=80, deadline=None)
@given(cases())
def test_replay_reproduces_every_stage(case) -> None:
    # The engine driven by the schedule's dimension orders (the replay discipline)
    # starts every stage exactly when the engine driven by disciplines did; the
    # makespan-only path reports the same makespan.
    net, colls, issue, config = case
    try:
        res = simulate(net, colls, config, issue_ns=issue)
    except InputError:
        assume(False)
    again = replay(res.schedule).schedule.stages
    # Same stages in the same order; times equal up to float rounding: under
    # shared bandwidth (alpha-beta) the fluid progress of stages running together
    # is summed in event order, and same-tick events may be taken in another
    # order (last-ulp differences, e.g. 953.6743164062498 vs ...499).
    assert [s._replace(start_ns=0.0, end_ns=0.0) for s in again] == [
        s._replace(start_ns=0.0, end_ns=0.0) for s in res.schedule.stages]
    for a, b in zip(again, res.schedule.stages, strict=True):
        assert a.start_ns == pytest.approx(b.start_ns, rel=1e-12, abs=1e-9)
        assert a.end_ns == pytest.approx(b.end_ns, rel=1e-12, abs=1e-9)
    assert makespan_ns(net, colls, config, issue_ns=issue) == pytest.approx(
        res.makespan_ns, rel=1e-12)


def test_astra_rules_use_final_events_without_boost_mode() -> None:
    """Boost mode 0 (``tie_dim`` off): every NPU runs every stage, so the stage ends of a
    tick are ordered by their last registered event; boost mode 1 keeps the final
    message and the dimension order."""
    assert Rules.astra(False).final_event_ties and Rules.astra(False).final_message_ties
    assert not Rules.astra(True).final_event_ties and Rules.astra(True).tie_dim
