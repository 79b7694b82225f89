"""The training engine's interface (themis.training.execute): programs of any shape, by hand
and against the critical path; the exact model's trace of a program (solvers.iteration.trace)."""

from __future__ import annotations

import heapq
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.iteration.trace import program_trace
from tests.training.handcalc import ar, layer, workload
from themis.program import Node, NodeKind, Program, earliest_ends
from themis.training.config import CollectiveRecord
from themis.training.execute import Execution
from topologies.errors import InputError

C, D, K = NodeKind.COMPUTE, NodeKind.DELAY, NodeKind.COLLECTIVE


class Clock:
    """The part of the engine an execution uses: a clock with events, in time then
    scheduling order."""

    def __init__(self) -> None:
        self.now = 0.0
        self.heap: list = []
        self.seq = itertools.count()

    def at(self, t: float, fn) -> None:
        heapq.heappush(self.heap, (t, next(self.seq), fn))

    def run(self) -> None:
        while self.heap:
            self.now, _, fn = heapq.heappop(self.heap)
            fn()


def _run(program: Program, own_ns: dict[int, int]) -> Execution:
    """Each collective node takes ``own_ns[id]`` alone (unlimited resources)."""
    clock = Clock()

    def issue(ex: Execution, node: Node) -> CollectiveRecord:
        rec = CollectiveRecord(node.id, node.layer, node.phase, str(node.collective),
                               node.size_bytes, (0,), clock.now)
        clock.at(clock.now + own_ns[node.id],
                 lambda: ex.collective_done(rec, node, clock.now))
        return rec

    ex = Execution(program, clock, issue)
    ex.run()
    return ex


def _coll(i: int, deps: tuple[int, ...], *, blocking: bool = False, layer: int = 0,
          phase: str = "wg", update: int = 0) -> Node:
    return Node(i, K, deps=deps, collective="all-reduce", size_bytes=64, mask=(True,),
                blocking=blocking, layer=layer, phase=phase, finish_delay_ns=update)


def test_non_blocking_wait_by_hand() -> None:
    # compute 10 (layer 0 fwd); all-reduce (layer 0 wg, 50 ns, update 3) issued at 10;
    # compute 5 to 15; the delay waits for the all-reduce from 15 until 10 + 50 + 3 = 63,
    # ends 64. Exposed = 63 - 15 = 48, comm = 53.
    p = Program((Node(0, C, duration_ns=10, layer=0, phase="fwd"), _coll(1, (0,), update=3),
                 Node(2, C, deps=(0,), duration_ns=5, layer=0, phase="ig"),
                 Node(3, D, deps=(1, 2), duration_ns=1, pass_end=True)))
    ex = _run(p, {1: 50})
    assert ex.end_ns == 64
    assert ex.pass_end_ns == [63]
    [rec] = ex.records
    assert (rec.issue_ns, rec.end_ns, rec.finished_ns, rec.pass_index) == (10, 60, 63, 0)
    [stats] = ex.layer_stats(["l0"])
    assert (stats.fwd_compute_ns, stats.ig_compute_ns) == (10, 5)
    assert (stats.wg_comm_ns, stats.wg_exposed_ns) == (53, 48)
    assert ex.compute == [(0, 10, 0, "fwd"), (10, 15, 0, "ig")]


def test_waits_on_two_keys_one_after_the_other() -> None:
    # Two non-blocking collectives at 0 (layer 0 wg, 30 ns; layer 1 wg, 50 ns); compute
    # 10; a delay waits for both. As a loop waits on one slot, then the next: layer 0's
    # wait from 10 to 30 (20 exposed), layer 1's from 30 to 50 (20), end 51.
    p = Program((_coll(0, ()), _coll(1, (), layer=1), Node(2, C, duration_ns=10),
                 Node(3, D, deps=(0, 1, 2), duration_ns=1)))
    ex = _run(p, {0: 30, 1: 50})
    s0, s1 = ex.layer_stats(["l0", "l1"])
    assert (s0.wg_comm_ns, s0.wg_exposed_ns, s1.wg_comm_ns, s1.wg_exposed_ns) == (30, 20, 50, 20)
    assert ex.end_ns == 51


def test_blocking_collective_is_exposed_from_its_issue() -> None:
    # compute 7, blocking all-reduce (layer 1 fwd, 20 ns) waited on by the next delay:
    # exposed 20 from its issue at 7, end 7 + 20 + 1 = 28.
    p = Program((Node(0, C, duration_ns=7, layer=1, phase="fwd"),
                 _coll(1, (0,), blocking=True, layer=1, phase="fwd"),
                 Node(2, D, deps=(0, 1), duration_ns=1)))
    ex = _run(p, {1: 20})
    stats = ex.layer_stats(["l0", "l1"])
    assert (stats[1].fwd_comm_ns, stats[1].fwd_exposed_ns,
            stats[1].collectives_issued) == (20, 20, 1)
    assert ex.end_ns == 28


def test_end_waits_for_every_collective_on_layer_zero_wg() -> None:
    # Two collectives at time 0 and no thread (ASTRA-sim's MICRO loop): the end waits
    # for both; the wait is noted once on layer 0's wg at 0 and taken by the first to
    # finish (check_for_sim_end is not entered again), so 30 ns are exposed, not 40.
    p = Program((_coll(0, ()), _coll(1, ())))
    ex = _run(p, {0: 30, 1: 40})
    assert ex.end_ns == 40
    [stats] = ex.layer_stats(["l0"])
    assert (stats.wg_comm_ns, stats.wg_exposed_ns) == (70, 30)


@st.composite
def programs(draw) -> tuple[Program, dict[int, int]]:
    n = draw(st.integers(1, 12))
    nodes, own = [], {}
    for i in range(n):
        deps = tuple(sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)))) if i else ()
        kind = draw(st.sampled_from([C, D, K]))
        if kind is K:
            nodes.append(_coll(i, deps, blocking=draw(st.booleans()),
                               layer=draw(st.integers(0, 2)),
                               update=draw(st.integers(0, 5))))
            own[i] = draw(st.integers(1, 50))
        else:
            nodes.append(Node(i, kind, deps=deps, duration_ns=draw(st.integers(0, 30))))
    return Program(tuple(nodes)), own


@settings(max_examples=60, deadline=None)
@given(programs())
def test_any_program_runs_at_its_critical_path(case) -> None:
    # With unlimited resources every node starts when its last dependency ends: the
    # execution's times equal earliest_ends, an independent walk of the DAG.
    program, own = case
    ends = earliest_ends(program, own)
    ex = _run(program, own)
    assert ex.end_ns == max(ends)
    assert {r.id: r.finished_ns for r in ex.records} == \
        {n.id: ends[n.id] for n in program.collectives}
    starts = sorted(ends[n.id] - n.duration_ns for n in program.nodes
                    if n.kind is C and n.duration_ns > 0)
    assert sorted(s for s, *_ in ex.compute) == starts


def test_program_trace_by_hand_and_one_thread_only() -> None:
    p = Program((Node(0, C, duration_ns=10), _coll(1, (0,)), Node(2, D, deps=(0,), duration_ns=1),
                 Node(3, C, deps=(1, 2), duration_ns=4)))
    tr = program_trace(p)
    assert [(op, v if op != "issue" else v.index) for op, v in tr.ops] == \
        [("delay", 10), ("issue", 0), ("delay", 1), ("wait", [0]), ("delay", 4)]
    two = Program((Node(0, C, duration_ns=1), Node(1, C, duration_ns=2)))
    with pytest.raises(InputError, match="one thread"):
        program_trace(two)


def _engine_run(program: Program):
    from tests.training.handcalc import CFG, NET
    from themis.training.simulate import prepare, run_program

    wl = workload("DATA", layer("l0", 1, 1, 1, 1))
    _, lnet, _, timings, law = prepare(wl, NET, CFG)
    return run_program(program, lnet, CFG, timings, law, layer_names=["l0"], bound=False)


def test_two_threads_on_the_engine_by_hand() -> None:
    # Two independent threads (no 1.0 loop writes this): compute 100 then an all-reduce
    # on dimension 0 only; compute 200 then one on dimension 1 only. Different
    # dimensions, no contention: each ends at its issue plus its direct AR stage alone.
    s = 4096
    p = Program((Node(0, C, duration_ns=100), Node(1, C, duration_ns=200),
                 Node(2, K, deps=(0,), collective="all-reduce", size_bytes=s,
                      mask=(True, False)),
                 Node(3, K, deps=(1,), collective="all-reduce", size_bytes=s,
                      mask=(False, True), finish_delay_ns=5)))
    r = _engine_run(p)
    a, b = r.collectives
    assert (a.issue_ns, a.end_ns) == (100, 100 + ar(0, s))
    assert (b.issue_ns, b.end_ns, b.finished_ns) == (200, 200 + ar(1, s), 205 + ar(1, s))
    assert r.end_ns == max(100 + ar(0, s), 205 + ar(1, s))
    assert r.compute_ns == 300


def test_engine_refuses_npu_groups_and_wrong_masks() -> None:
    grouped = Program((Node(0, K, collective="all-gather", size_bytes=64, group=(0, 1)),))
    with pytest.raises(InputError, match="NPU group"):
        _engine_run(grouped)
    short = Program((Node(0, K, collective="all-gather", size_bytes=64, mask=(True,)),))
    with pytest.raises(InputError, match="the mask has 1 dimensions"):
        _engine_run(short)
