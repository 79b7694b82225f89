"""The training queues pop exactly what ASTRA-sim's ``Sys::insert_stream`` list pops.

The oracle is the list itself (workloads.md §4), scanned from the front; the
queues under test keep heaps while one path waits. Random pushes and pops mix
both paths, equal priorities and equal sizes.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from themis.disciplines.priority import FIFO_PATH_PHASES, AstraPriorityScf, PriorityFifo
from themis.stages import StageTable


class AstraList:
    """ASTRA-sim 1.0's list: FIFO path by priority (behind >=), size path by size (before >=)."""

    def __init__(self, table: StageTable, prio: list[int], scf: bool) -> None:
        self.table, self.prio, self.scf, self.q = table, prio, scf, []

    def push(self, sid: int) -> None:
        q, i = self.q, 0
        if not self.scf or self.table.phase[sid] in FIFO_PATH_PHASES:
            while i < len(q) and self.prio[q[i]] >= self.prio[sid]:
                i += 1
        else:
            size = self.table.input_bytes
            while i < len(q) and size[q[i]] < size[sid]:
                i += 1
        q.insert(i, sid)

    def pop(self) -> int | None:
        return self.q.pop(0) if self.q else None


stage = st.tuples(st.sampled_from(["RS", "AG", "AR", "A2A"]), st.integers(0, 3),
                  st.sampled_from([1.0, 2.0, 4.0, 8.0]))
ops = st.lists(st.one_of(stage, st.just("pop")), max_size=80)


def run(queue, oracle, table: StageTable, prio: list[int], steps) -> list:
    popped = []
    for step in steps:
        if step == "pop":
            got, want = queue.pop(), oracle.pop()
            assert got == want
            popped.append(got)
        else:
            phase, p, size = step
            sid = len(table.phase)
            table.phase.append(phase)
            table.input_bytes.append(size)
            prio.append(p)
            queue.push(sid)
            oracle.push(sid)
        assert len(queue) == len(oracle.q)
    while len(oracle.q):
        assert queue.pop() == oracle.pop()
    assert queue.pop() is None and len(queue) == 0
    return popped


@settings(max_examples=150, deadline=None)
@given(ops)
def test_astra_scf_queue_pops_as_astra_list(steps) -> None:
    table = StageTable()
    prio = table.priority
    run(AstraPriorityScf(table), AstraList(table, prio, scf=True), table, prio, steps)


@settings(max_examples=100, deadline=None)
@given(ops)
def test_priority_fifo_pops_as_astra_list(steps) -> None:
    table = StageTable()
    prio = table.priority
    run(PriorityFifo(table), AstraList(table, prio, scf=False), table, prio, steps)


def test_mixed_paths_by_hand() -> None:
    """A size-path list [4, 8], then an AR stage of priority 1 above both (priority 0): it
    goes first; then a size-2 RS stage passes nothing smaller and goes to the front."""
    table = StageTable()
    prio = table.priority
    q = AstraPriorityScf(table)
    for phase, p, size in [("RS", 0, 8.0), ("RS", 0, 4.0), ("AR", 1, 16.0), ("RS", 0, 2.0)]:
        table.phase.append(phase)
        table.input_bytes.append(size)
        prio.append(p)
        q.push(len(prio) - 1)
    assert [q.pop() for _ in range(5)] == [3, 2, 1, 0, None]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0.0, 100.0, allow_nan=False), min_size=1, max_size=4),
                min_size=1, max_size=12), st.integers(1, 4))
def test_lrw_keys_grown_by_chunks_equal_keys_read_again(chunks, every) -> None:
    """The training engine adds whole chunks as collectives are issued: LRW's keys,
    extended chunk by chunk, are the keys read from the whole table."""
    from themis.disciplines.lrw import Lrw

    table = StageTable()
    keys = Lrw.keys(table)
    for i, durations in enumerate(chunks):
        n = len(durations)
        table.dim.extend([0] * n)
        table.duration_ns.extend(durations)
        table.last.extend([False] * (n - 1) + [True])
        if i % every == 0:
            keys = Lrw.grown_keys(table, keys)
            assert keys == Lrw.keys(table)
