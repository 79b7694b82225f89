"""The program graph (themis.program) and the ASTRA-sim 1.0 compile (training.compile10)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.training.handcalc import CFG, NET, layer, workload
from themis.program import Node, NodeKind, Program, earliest_ends
from themis.training import simulate_training
from themis.training.compile10 import compile_workload
from themis.training.simulate import prepare
from topologies.errors import InputError

C, D, K = NodeKind.COMPUTE, NodeKind.DELAY, NodeKind.COLLECTIVE


def _coll(i: int, deps: tuple[int, ...], size: int = 1024) -> Node:
    return Node(i, K, deps=deps, collective="all-reduce", size_bytes=size, mask=(True,))


def test_hand_built_program_ends() -> None:
    # 0: compute 10; 1: all-reduce after 0 (takes 50, update 3); 2: compute 5 after 0;
    # 3: delay 1 after 1 and 2: starts at max(10 + 53, 15) = 63, ends 64.
    p = Program((Node(0, C, duration_ns=10), Node(1, K, deps=(0,), collective="all-reduce",
                                                  size_bytes=8, mask=(True,), finish_delay_ns=3),
                 Node(2, C, deps=(0,), duration_ns=5), Node(3, D, deps=(1, 2), duration_ns=1)))
    assert earliest_ends(p, {1: 50}) == [10, 63, 15, 64]
    assert p.users(0) == (1, 2)
    assert [n.id for n in p.collectives] == [1]


def test_from_nodes_orders_and_refuses_cycles() -> None:
    p = Program.from_nodes([Node(5, C, deps=(7,), duration_ns=1), Node(7, C, duration_ns=2)])
    assert [(n.duration_ns, n.deps) for n in p.nodes] == [(2, ()), (1, (0,))]
    with pytest.raises(InputError, match="cycle"):
        Program.from_nodes([Node(0, C, deps=(1,)), Node(1, C, deps=(0,))])
    with pytest.raises(InputError, match="missing"):
        Program.from_nodes([Node(0, C, deps=(9,))])


@pytest.mark.parametrize("nodes, match", [
    ((Node(0, C, deps=(0,)),), "later node"),
    ((Node(0, C), Node(1, C, deps=(4,))), "missing"),
    ((Node(1, C),), "ids"),
])
def test_bad_programs_are_refused(nodes, match) -> None:
    with pytest.raises(InputError, match=match):
        Program(nodes)


def test_bad_nodes_are_refused() -> None:
    with pytest.raises(InputError, match="collective kind"):
        Node(0, K, collective="broadcast", size_bytes=1, mask=(True,))
    with pytest.raises(InputError, match="mask or an NPU group"):
        Node(0, K, collective="all-gather", size_bytes=1)
    with pytest.raises(InputError, match="positive size"):
        Node(0, K, collective="all-gather", size_bytes=0, group=(0, 1))
    assert Node(0, K, collective="all-to-all", size_bytes=4, group=(0, 3)).group == (0, 3)


def _compiled(wl):
    w, lnet, b, _, _ = prepare(wl, NET, CFG)
    return compile_workload(w, lnet, b, CFG)


def test_data_compile_by_hand() -> None:
    s0, s1, u = 4096, 8192, 7
    wl = workload("DATA", layer("l0", 100, 0, 400, u, wg=f"ALLREDUCE {s0}"),
                  layer("l1", 200, 300, 500, u, wg=f"ALLREDUCE {s1}"))
    p = _compiled(wl)
    # F0 100, +1, F1 200, +1, WG1 500, wg1, +1, IG1 300, +1, WG0 400, wg0, (pass end) +1
    want = [(C, 100), (D, 1), (C, 200), (D, 1), (C, 500), (K, 0), (D, 1), (C, 300), (D, 1),
            (C, 400), (K, 0), (D, 1)]
    assert [(n.kind, n.duration_ns) for n in p.nodes] == want
    assert [(n.size_bytes, n.layer, n.phase, n.finish_delay_ns, n.blocking, n.priority)
            for n in p.collectives] == [(s1, 1, "wg", u, False, 0), (s0, 0, "wg", u, False, 1)]
    assert [n.id for n in p.nodes if n.pass_end] == [11]
    # The thread's start times without waits: the sim's issue times 802 and 1504.
    ends = earliest_ends(p, {})
    starts = [ends[i] - (n.duration_ns if n.kind is not K else n.finish_delay_ns)
              for i, n in enumerate(p.nodes)]
    assert [starts[n.id] for n in p.collectives] == [802, 1504]
    assert starts[11] == 1504 == simulate_training(wl, NET, CFG).pass_end_ns[0]


def test_blocking_forward_waits_are_dependencies() -> None:
    wl = workload("MODEL", layer("l0", 10, 20, 30, 2, fwd="ALLREDUCE 4096"),
                  layer("l1", 10, 20, 30, 2, fwd="ALLREDUCE 4096"))
    p = _compiled(wl)
    colls = p.collectives
    assert [c.blocking for c in colls] == [True, True]
    # the +1 after each blocking forward collective waits for it
    assert all(c.id in p.nodes[c.id + 1].deps for c in colls)


def _ancestors(p: Program, i: int) -> set[int]:
    seen: set[int] = set()
    todo = list(p.nodes[i].deps)
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(p.nodes[d].deps)
    return seen


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["DATA", "MODEL", "HYBRID_DATA_MODEL"]),
       st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300),
                          st.integers(1, 9), st.sampled_from([0, 2048, 8192])),
                min_size=1, max_size=4),
       st.integers(1, 2))
def test_compiled_programs_are_acyclic_and_runs_respect_them(kw, rows, passes) -> None:
    def comm(s: int) -> str:
        return f"ALLREDUCE {s}" if s else "NONE 0"
    wl = workload(kw, *[layer(f"l{i}", f, g, w, u, fwd=comm(s), ig=comm(s), wg=comm(s))
                        for i, (f, g, w, u, s) in enumerate(rows)])
    cfg = CFG.with_(passes=passes)
    w, lnet, b, _, _ = prepare(wl, NET, cfg)
    p = compile_workload(w, lnet, b, cfg)  # Program() refuses cycles and dangling deps
    assert all(d < n.id for n in p.nodes for d in n.deps)
    r = simulate_training(wl, NET, cfg, bound=False)
    colls = p.collectives
    assert [(c.layer, c.phase, c.priority, c.size_bytes) for c in colls] == \
        [(x.layer, x.phase, x.priority, x.size_bytes) for x in r.collectives]
    index = {c.id: k for k, c in enumerate(colls)}
    for k, c in enumerate(colls):
        for a in _ancestors(p, c.id):
            if a in index:  # a collective it waits for finished before it was issued
                assert r.collectives[index[a]].finished_ns <= r.collectives[k].issue_ns
