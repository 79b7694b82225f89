"""The policy and discipline registries: one list of names, one way to add one."""

from __future__ import annotations

from collections import deque

import pytest

from themis import disciplines
from themis.collective import Collective
from themis.disciplines import base as dbase
from themis.disciplines import canonical_intra, discipline_names, register_discipline
from themis.policies import canonical_policy, make_policy, policy_names
from themis.simulator import simulate
from themis.stages import StageTable
from topologies.errors import InputError
from topologies.network import Dimension, Network


def test_discipline_names_and_spellings() -> None:
    assert {"fifo", "scf"} <= set(discipline_names())
    assert "astra-scf" not in discipline_names()
    assert {"astra-scf", "replay"} <= set(discipline_names(internal=True))
    assert canonical_intra("FIFO") == "fifo"
    assert canonical_intra("smallestFirst") == "scf"
    with pytest.raises(InputError, match="fifo.*scf"):
        canonical_intra("nope")


@pytest.fixture
def lifo_registered():
    """A user discipline (newest first), removed again afterwards."""

    @register_discipline("test-lifo")
    class Lifo:
        def __init__(self, table: StageTable) -> None:
            self._q: deque[int] = deque()

        def push(self, sid: int) -> None:
            self._q.append(sid)

        def pop(self) -> int | None:
            return self._q.pop() if self._q else None

        def __len__(self) -> int:
            return len(self._q)

    yield "test-lifo"
    del dbase._REGISTRY["test-lifo"]
    dbase._PUBLIC.remove("test-lifo")


def test_a_registered_discipline_runs_in_the_simulator(lifo_registered: str) -> None:
    # One dimension (Ring 2), 3 equal chunks, baseline: each chunk runs RS then AG on
    # dimension 0. RS0 starts at issue (the dimension is free when it is queued);
    # RS1, RS2 wait. When RS0 ends, AG0 is queued last, so LIFO starts it; then RS2
    # (newer than RS1), then AG2 (queued after RS1), then RS1 and AG1.
    assert lifo_registered in disciplines.discipline_names()
    net = Network((Dimension("Ring", 2, 1.0, 0.0),))
    coll = Collective("all-reduce", 3000, 3)
    order = simulate(net, coll, policy="baseline", intra=lifo_registered).schedule
    seq = [(s.chunk, s.phase) for s in sorted(order.stages, key=lambda s: s.start_ns)]
    assert seq == [(0, "RS"), (0, "AG"), (2, "RS"), (2, "AG"), (1, "RS"), (1, "AG")]


def test_policy_names_and_routes() -> None:
    assert {"baseline", "round-robin", "themis", "fixed"} <= set(policy_names())
    assert canonical_policy("offlineGreedy") == "themis"
    assert canonical_policy(" 2, 0,1 ") == "2,0,1"
    net = Network((Dimension("Ring", 2, 1.0, 0.0),) * 3)
    routes = make_policy("2,0,1").routes(Collective("all-reduce", 4096, 2), net)
    assert routes == [(2, 0, 1), (2, 0, 1)]
    cycled = make_policy("0,1,2;2,1,0").routes(Collective("all-reduce", 4095, 3), net)
    assert cycled == [(0, 1, 2), (2, 1, 0), (0, 1, 2)]
    with pytest.raises(InputError, match="baseline"):
        make_policy("nope")


class _Wrapped:
    """A discipline that only delegates to another one's push/pop (so the simulator
    cannot run it inline)."""

    inner_name = "scf"

    def __init__(self, table: StageTable) -> None:
        self._q = disciplines.make_discipline(self.inner_name, table)

    def push(self, sid: int) -> None:
        self._q.push(sid)

    def pop(self) -> int | None:
        return self._q.pop()

    def __len__(self) -> int:
        return len(self._q)


@pytest.mark.parametrize("inner", ["scf", "fifo"])
@pytest.mark.parametrize("k", [1, 2])
def test_inline_priority_queues_match_their_push_and_pop(inner: str, k: int) -> None:
    # The simulator runs fifo and scf inline on int heaps; through push/pop (a
    # wrapper it cannot inline) every stage must start and end at the same time.
    wrapped = type(f"Wrapped_{inner}", (_Wrapped,), {"inner_name": inner})
    register_discipline(f"test-wrapped-{inner}", public=False)(wrapped)
    try:
        net = Network((Dimension("Ring", 4, 50.0, 20.0), Dimension("Switch", 8, 25.0, 300.0),
                       Dimension("Ring", 2, 10.0, 5.0)))
        coll = Collective("all-reduce", 48 * 1000 + 7, 48)  # a remainder chunk too
        a = simulate(net, coll, policy="round-robin", intra=inner, active_chunks=k)
        b = simulate(net, coll, policy="round-robin", intra=f"test-wrapped-{inner}",
                     active_chunks=k)
        assert [(s.start_ns, s.end_ns) for s in a.schedule.stages] == \
            [(s.start_ns, s.end_ns) for s in b.schedule.stages]
    finally:
        del dbase._REGISTRY[f"test-wrapped-{inner}"]


def test_a_simulated_schedule_pickles_and_copies() -> None:
    # Its Stage records are built on first access; pickling and copying build them.
    import copy
    import pickle

    net = Network((Dimension("Ring", 4, 50.0, 20.0), Dimension("Switch", 8, 25.0, 300.0)))
    res = simulate(net, Collective("all-reduce", 8 << 20, 8), policy="themis", intra="scf")
    again = pickle.loads(pickle.dumps(res.schedule))
    assert again.stages == res.schedule.stages and len(again.stages) == 8 * 4
    fresh = simulate(net, Collective("all-reduce", 8 << 20, 8), policy="themis", intra="scf")
    assert copy.deepcopy(fresh.schedule).stages == res.schedule.stages
