"""Property tests: invariants of timing, policies and the simulator."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from themis.checker import check
from themis.collective import Collective
from themis.metrics import ideal_ns
from themis.schedule import stage_plan
from themis.simulator import replay, simulate
from themis.stages import chain
from themis.timing import make_timing
from topologies import Dimension, Network

KINDS = ["Ring", "Switch", "FullyConnected"]


@st.composite
def networks(draw, max_dims: int = 4) -> Network:
    n = draw(st.integers(1, max_dims))
    dims = []
    for _ in range(n):
        kind = draw(st.sampled_from(KINDS))
        p = draw(st.sampled_from([2, 4, 8]) if kind == "Switch" else st.integers(2, 9))
        dims.append(Dimension(kind, p, draw(st.sampled_from([0.5, 1.0, 2.0, 4.0, 50.0])),
                              draw(st.sampled_from([0.0, 10.0, 500.0]))))
    return Network(tuple(dims))


@given(networks(), st.integers(1, 1 << 30))
@settings(max_examples=60, deadline=None)
def test_bytes_per_chunk_do_not_depend_on_route(net: Network, chunk: int) -> None:
    tm = make_timing("alpha-beta", net, endpoint_delay_ns=3.0)
    n = net.npus
    for kind, factor in (("all-reduce", 2), ("reduce-scatter", 1), ("all-gather", 1)):
        for route in itertools.permutations(net.active_dims):
            costs = chain(tm, kind, chunk, stage_plan(kind, route))
            sent = sum(c.sent_bytes for _, c in costs)
            m = costs[-1][1].output_bytes
            assert sent == pytest.approx(factor * chunk * (1 - 1 / n), rel=1e-9)
            assert m == pytest.approx(chunk if kind != "reduce-scatter" else chunk / n)


@given(networks(), st.integers(1, 24), st.sampled_from(["baseline", "round-robin", "themis"]),
       st.sampled_from(["fifo", "scf", "feed"]), st.integers(1, 3),
       st.sampled_from(["all-reduce", "reduce-scatter", "all-gather"]))
@settings(max_examples=60, deadline=None)
def test_every_simulated_schedule_is_valid(net, chunks, policy, intra, k, kind) -> None:
    size = chunks * 4096 + 123  # a remainder chunk too
    r = simulate(net, Collective(kind, size, chunks), policy=policy, intra=intra,
                 endpoint_delay_ns=7.0, active_chunks=k)
    assert check(r.schedule) == []
    assert len(r.schedule.chunks) == chunks + (1 if size % chunks else 0)
    # No schedule beats the ideal bandwidth bound.
    assert r.makespan_ns >= ideal_ns(net, [r.schedule.collectives[0]]) * (1 - 1e-9)
    if k == 1:
        assert replay(r.schedule).makespan_ns == pytest.approx(r.makespan_ns, rel=1e-12)


@given(networks(max_dims=3), st.integers(1, 16))
@settings(max_examples=40, deadline=None)
def test_deterministic(net: Network, chunks: int) -> None:
    a = simulate(net, Collective("all-reduce", chunks << 20, chunks), intra="scf")
    b = simulate(net, Collective("all-reduce", chunks << 20, chunks), intra="scf")
    assert a.schedule.stages == b.schedule.stages


def test_stage_time_by_hand() -> None:
    # Ring 4 at 2 GB/s, a = 100 ns, e = 10 ns, ring algorithm: 3 steps.
    # RS of 1 MiB: 3 * (1*100 + 10) + 3/4 * 2^20 / (2 * 2^30 / 1e9) ns.
    net = Network((Dimension("Ring", 4, 2.0, 100.0), Dimension("Switch", 8, 1.0, 500.0)))
    tm = make_timing("alpha-beta", net, endpoint_delay_ns=10.0)
    bw = 2 * 2**30 / 1e9
    assert tm.stage("RS", 0, 2**20).duration_ns == pytest.approx(330 + 0.75 * 2**20 / bw)
    # AG on the Switch (halvingDoubling, 3 steps, 2 hops): input 1 MiB, output 8 MiB.
    bw1 = 2**30 / 1e9
    cost = tm.stage("AG", 1, 2**20)
    assert cost.output_bytes == 8 * 2**20
    assert cost.duration_ns == pytest.approx(3 * (2 * 500 + 10) + 7 / 8 * 8 * 2**20 / bw1)
    # direct on a FullyConnected dimension: one step.
    fc = Network((Dimension("FullyConnected", 5, 4.0, 30.0), Dimension("Ring", 2, 1.0)))
    tfc = make_timing("alpha-beta", fc)
    assert tfc.stage("RS", 0, 5000).duration_ns == pytest.approx(30 + 4000 / (4 * 2**30 / 1e9))
    assert math.isclose(tfc.stage("RS", 0, 5000).output_bytes, 1000)


def test_default_algorithms_are_valid_for_any_switch_size() -> None:
    # halvingDoubling needs a power of two: a Switch of 6 defaults to direct (one step),
    # and the defaults pass the same validation as user-given algorithms.
    from themis.timing import resolve_algorithms

    net = Network((Dimension("Switch", 8, 1.0), Dimension("Switch", 6, 1.0, 100.0)))
    algos = resolve_algorithms(net, None)
    assert algos == ("halvingDoubling", "direct")
    assert resolve_algorithms(net, algos) == algos
    tm = make_timing("alpha-beta", net)
    assert tm.stage("RS", 1, 6000).fixed_ns == pytest.approx(2 * 100.0)


@given(networks(), st.integers(1, 48), st.integers(0, 4),
       st.sampled_from(["all-reduce", "reduce-scatter"]))
@settings(max_examples=80, deadline=None)
def test_astra_variants_route_all_reduce_as_the_generic_policies(
        net: Network, chunks: int, shift: int, kind: str) -> None:
    # ASTRA-sim 1.0's variants (astra=True) differ from the generic policies only in
    # all-gathers, integer flooring, size-1 dimensions and whole-link bandwidths. With
    # default links (full bandwidth usable), no size-1 dimension and sizes that divide
    # exactly, an all-reduce or reduce-scatter gets the same routes from both.
    from themis.policies import Baseline, RoundRobin, Themis

    coll = Collective(kind, chunks * net.npus << shift, chunks)
    for generic, astra in ((Themis(), Themis(astra=True)), (Baseline(), Baseline(astra=True)),
                           (RoundRobin(), RoundRobin(astra=True))):
        assert generic.routes(coll, net) == astra.routes(coll, net)
