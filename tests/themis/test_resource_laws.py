"""Resource laws (:mod:`themis.engine.resources`): the timing names one, the engine runs it,
the checker replays through it and the bounds keep the terms it names. Known answers by
hand, and a law registered by a user running in the simulator, the checker and the
training bound."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from themis.checker import check
from themis.collective import Collective
from themis.engine import (
    Exclusive,
    ResourceLawName,
    Shared,
    law_at,
    register_resource_law,
    resource_law,
    resource_law_names,
)
from themis.engine import resources as laws
from themis.engine.resources import Costs, HeapEntry, StageCosts
from themis.simulator import simulate
from themis.timing import base as tbase
from themis.timing import make_timing, register_timing
from themis.timing.alpha_beta import AlphaBetaTiming
from themis.training.bound import WindowBound
from topologies.network import Dimension, Network

MiB = 1 << 20


def _net(scale: float = 1.0) -> Network:
    return Network((Dimension("Ring", 4, 50.0 * scale, 500.0),
                    Dimension("Ring", 4, 25.0 * scale, 500.0)))


def test_the_bundled_laws_and_what_k_makes_of_them() -> None:
    assert resource_law_names()[:2] == ["exclusive", "shared"]
    assert resource_law("exclusive") is Exclusive and resource_law("shared") is Shared
    # One slot per dimension: a stage has the whole bandwidth, so sharing is exclusive.
    assert law_at("shared", 1) == "exclusive" and law_at("shared", 2) == "shared"
    assert law_at("exclusive", 4) == "exclusive"
    assert Exclusive.exact_durations and not Shared.exact_durations
    assert Shared.bound_fields == ("load", "byte") and Exclusive.bound_fields == ("load",)
    with pytest.raises(ValueError, match="unknown resource law 'fluid'"):
        resource_law("fluid")
    # The timings name theirs.
    assert make_timing("alpha-beta", _net()).resource_law == ResourceLawName.SHARED
    assert make_timing("astra-sim-1.0", _net()).resource_law == ResourceLawName.EXCLUSIVE


def test_shared_ends_by_hand() -> None:
    # Two stages at 1 B/ns, both from 0: 4 and 2 bytes, no fixed time. Each sends at
    # 0.5 B/ns; the 2-byte one ends at 4, the other has 2 bytes left, alone: ends at 6.
    costs = StageCosts([0.0, 0.0], [4.0, 2.0], [4.0, 2.0])
    assert Shared.ends_ns([0.0, 0.0], costs, 1.0) == [6.0, 4.0]
    # A: fixed 1 ns then 2 bytes; B: 2 bytes. B sends alone over [0, 1] (1 byte), then
    # both at 0.5 B/ns: B ends at 3; A has sent 1 by then, 1 left alone: ends at 4.
    costs = StageCosts([1.0, 0.0], [2.0, 2.0], [3.0, 2.0])
    assert Shared.ends_ns([0.0, 0.0], costs, 1.0) == [4.0, 3.0]
    # A later start joins the sharing: B (2 bytes) from 1 with A (4 bytes) from 0: A alone
    # sends 1 by 1, then 0.5 each: B ends at 5, A has 1 left: ends at 6.
    costs = StageCosts([0.0, 0.0], [4.0, 2.0], [4.0, 2.0])
    assert Shared.ends_ns([0.0, 1.0], costs, 1.0) == [6.0, 5.0]
    assert Exclusive.ends_ns([0.0, 1.0], costs, 1.0) == [4.0, 3.0]


def test_the_checker_replays_through_the_engines_law() -> None:
    res = simulate(_net(), Collective("all-reduce", 16 * MiB, 8), active_chunks=2)
    sched = res.schedule
    assert check(sched) == []
    # Move one stage's end: the replay under the shared law catches it, named.
    stages = list(sched.stages)
    i = next(j for j, s in enumerate(stages) if s.end_ns - s.start_ns > 100)
    stages[i] = stages[i]._replace(end_ns=stages[i].end_ns + 50.0)
    bad = check(replace(sched, stages=stages))
    assert any(v.kind == "duration" and "resource law 'shared'" in v.message for v in bad)


# -- a law registered by a user -------------------------------------------------------

class HalfRate(Shared):
    """Bandwidth shared as under ``shared``, but a dimension sends at half its rate (a
    link that needs two transfers per byte): a stage lasts longer than its time alone,
    so only the busy-time term of the bounds stays valid, and even one slot is slowed."""

    bound_fields = ("load",)

    def __init__(self, costs: Costs, ndims: int, heap: list[HeapEntry], tie_dim: bool,
                 bandwidth_bytes_per_ns: Sequence[float] | None = None,
                 time_tol_ns: float = 0.0, busy: list[float] | None = None,
                 sent: list[float] | None = None) -> None:
        assert bandwidth_bytes_per_ns is not None
        super().__init__(costs, ndims, heap, tie_dim, [b / 2 for b in bandwidth_bytes_per_ns],
                         time_tol_ns, busy, sent)

    @classmethod
    def at_slots(cls, active_chunks: int) -> str:
        return cls.name


@pytest.fixture
def half_rate() -> Iterator[str]:
    register_resource_law("test-half-rate")(HalfRate)

    def factory(network, algorithms=None, endpoint_delay_ns=0.0, **options):
        tm = make_timing("alpha-beta", network, algorithms, endpoint_delay_ns, **options)
        assert isinstance(tm, AlphaBetaTiming)
        return replace(tm, name="test-half-rate-timing", resource_law="test-half-rate")

    register_timing("test-half-rate-timing")(factory)
    yield "test-half-rate-timing"
    del tbase._REGISTRY["test-half-rate-timing"]
    del tbase._MEANINGS["test-half-rate-timing"]
    tbase._MADE.clear()
    del laws._LAWS["test-half-rate"]


@pytest.mark.parametrize("k", [1, 2])
def test_a_registered_law_runs_in_the_simulator_and_the_checker(half_rate: str, k: int
                                                               ) -> None:
    coll = Collective("all-reduce", 16 * MiB, 8)
    res = simulate(_net(), coll, active_chunks=k, timing=half_rate)
    assert check(res.schedule) == []
    # Independent: with no fixed time, half the rate is alpha-beta at half the bandwidth
    # (at k = 1 the plain run is exclusive, at k = 2 shared: the same law both ways).
    net0 = Network(tuple(replace(d, latency_ns=0.0) for d in _net().dims))
    half0 = Network(tuple(replace(d, latency_ns=0.0) for d in _net(0.5).dims))
    mine = simulate(net0, coll, active_chunks=k, timing=half_rate)
    plain = simulate(half0, coll, active_chunks=k)
    assert mine.makespan_ns == pytest.approx(plain.makespan_ns, rel=1e-12)
    # The checker holds the run to the registered law, not to alpha-beta's.
    stages = list(res.schedule.stages)
    stages[0] = stages[0]._replace(end_ns=stages[0].end_ns - 1.0)
    assert any(v.kind == "duration" for v in check(replace(res.schedule, stages=stages)))


def test_the_bound_keeps_the_terms_the_law_names(half_rate: str) -> None:
    from themis.engine import Engine
    from themis.runkind import RunKind
    from themis.training.bound import Alternatives

    kind = RunKind.of("alpha-beta")
    net = _net()
    engine = Engine(net, {"all-reduce": make_timing("alpha-beta", net)}, "fifo", 2,
                    kind.rules("shared"), "shared")
    alts = Alternatives(engine, kind)
    assert WindowBound(alts, 2, "shared").fields == ("load", "byte")
    assert WindowBound(alts, 2, "test-half-rate").fields == ("load",)
    assert WindowBound(alts, 2).fields == ("load",)
