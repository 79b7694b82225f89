"""Hand-computed schedules on tiny cases, Themis route sequences, replay."""

from __future__ import annotations

import pytest

from themis.checker import check
from themis.collective import Collective
from themis.policies import Themis, make_policy
from themis.simulator import replay, simulate
from topologies import Dimension, Network
from topologies.units import GBps_to_bytes_per_ns

C_BYTES = 1 << 24  # one chunk
B1 = GBps_to_bytes_per_ns(1.0)
U = C_BYTES / B1  # ns to send one chunk at 1 GB/s


def net2(b0: float, b1: float) -> Network:
    """Two Switch-2 dimensions, no latency: a stage on d with input m lasts m/2/B_d."""
    return Network((Dimension("Switch", 2, b0), Dimension("Switch", 2, b1)))


def starts(result) -> dict[tuple[int, int, str], float]:
    """(chunk, step, "start"/"end") -> ns."""
    out = {}
    for s in result.schedule.stages:
        out[(s.chunk, s.step, "start")] = s.start_ns
        out[(s.chunk, s.step, "end")] = s.end_ns
    return out


def times(spec: dict[tuple[int, int], tuple[float, float]]) -> dict:
    """Expand {(chunk, step): (start, end)} like :func:`starts`."""
    out = {}
    for (c, st), (a, b) in spec.items():
        out[(c, st, "start")] = a
        out[(c, st, "end")] = b
    return out


def test_one_dimension_fifo_vs_scf_order() -> None:
    # One Switch-2 dimension at 1 GB/s; RS(c) and AG(c/2 -> c) both last U/2.
    # FIFO serves chunk 1's RS before chunk 0's AG; SCF serves the smaller AG first.
    net = Network((Dimension("Switch", 2, 1.0), Dimension("Ring", 1, 1.0)))
    coll = Collective("all-reduce", 2 * C_BYTES, 2)
    fifo = starts(simulate(net, coll, policy="baseline", intra="fifo"))
    scf = starts(simulate(net, coll, policy="baseline", intra="scf"))
    h = U / 2
    assert fifo == pytest.approx(times({(0, 0): (0, h), (1, 0): (h, 2 * h), (0, 1): (2 * h, 3 * h),
                                  (1, 1): (3 * h, 4 * h)}))
    assert scf == pytest.approx(times({(0, 0): (0, h), (0, 1): (h, 2 * h), (1, 0): (2 * h, 3 * h),
                                 (1, 1): (3 * h, 4 * h)}))


@pytest.mark.parametrize("intra", ["fifo", "scf"])
def test_two_chunks_two_dims_baseline(intra: str) -> None:
    # d0 at 1 GB/s, d1 at 2 GB/s. Route (0,1): RS0 U/2, RS1 U/8, AG1 U/8, AG0 U/2.
    # Both chunks on (0,1): d0 carries 4 stages of U/2 back to back -> makespan 2U.
    # chunk0: RS0 [0,U/2] RS1 [U/2,5U/8] AG1 [5U/8,3U/4] AG0 waits for chunk1's RS0
    # [U/2,U], runs [U,3U/2]; chunk1: RS1 [U,9U/8] AG1 [9U/8,5U/4] AG0 [3U/2,2U].
    r = simulate(net2(1.0, 2.0), Collective("all-reduce", 2 * C_BYTES, 2),
                 policy="baseline", intra=intra)
    got = starts(r)
    want = {(0, 0): (0, U / 2), (0, 1): (U / 2, 5 * U / 8), (0, 2): (5 * U / 8, 3 * U / 4),
            (0, 3): (U, 3 * U / 2), (1, 0): (U / 2, U), (1, 1): (U, 9 * U / 8),
            (1, 2): (9 * U / 8, 5 * U / 4), (1, 3): (3 * U / 2, 2 * U)}
    assert got == pytest.approx(times(want))
    assert r.makespan_ns == pytest.approx(2 * U)
    assert check(r.schedule) == []


@pytest.mark.parametrize("policy", ["themis", "round-robin"])
@pytest.mark.parametrize("intra", ["fifo", "scf"])
def test_two_chunks_two_dims_balanced(policy: str, intra: str) -> None:
    # Themis: chunk 0 falls back to (0,1); loads (MiB at B0) d0 = c/2, d1 = c/8, so
    # chunk 1 takes (1,0) (gap worth 1.5c bytes >= c/16). Round-robin gives the same.
    # Route (1,0): RS1 U/4, RS0 U/4, AG0 U/4, AG1 U/4.
    # chunk0: RS0 [0,U/2] RS1 [U/2,5U/8] AG1 [5U/8,3U/4] AG0 [U,3U/2]
    # chunk1: RS1 [0,U/4] RS0 [U/2,3U/4] AG0 [3U/4,U] AG1 [U,5U/4]; makespan 3U/2,
    # which is optimal: d0's work is U/2 + U/2 + U/4 + U/4 = 3U/2.
    r = simulate(net2(1.0, 2.0), Collective("all-reduce", 2 * C_BYTES, 2),
                 policy=policy, intra=intra)
    assert r.routes == [[(0, 1), (1, 0)]]
    want = {(0, 0): (0, U / 2), (0, 1): (U / 2, 5 * U / 8), (0, 2): (5 * U / 8, 3 * U / 4),
            (0, 3): (U, 3 * U / 2), (1, 0): (0, U / 4), (1, 1): (U / 2, 3 * U / 4),
            (1, 2): (3 * U / 4, U), (1, 3): (U, 5 * U / 4)}
    assert starts(r) == pytest.approx(times(want))
    assert r.makespan_ns == pytest.approx(1.5 * U)


def test_themis_route_sequence_by_hand() -> None:
    # 3 x Switch 8, equal bandwidth. Loads in units of c/512 MiB:
    # chunk 0 falls back (0,1,2): d0 448, d1 56, d2 7.
    # chunk 1: sorted [2,1,0] -> (2,1,0): d0 455, d1 112, d2 455.
    # chunk 2: stable sort of [2,1,0] by load -> [1,2,0]: d0 462, d1 560, d2 511.
    # chunk 3: -> [0,2,1]; the gap 98 units is worth 0.22c >= c/16.
    net = Network((Dimension("Switch", 8, 50.0),) * 3)
    routes, loads = Themis().routes_with_loads(Collective("all-reduce", 4 << 20, 4), net)
    assert routes == [(0, 1, 2), (2, 1, 0), (1, 2, 0), (0, 2, 1)]
    unit = (1 << 20) / (1 << 20) / 512  # c = 1 MiB
    assert loads[0] == pytest.approx((462 + 448) * unit)  # chunk 3 adds 448 to d0
    assert loads[1] == pytest.approx((560 + 7) * unit)
    assert loads[2] == pytest.approx((511 + 56) * unit)


def test_themis_falls_back_when_gap_small() -> None:
    # Two equal dimensions of size 2: after chunk 0 (fallback) d0 has c/2, d1 c/4;
    # chunk 1 goes (1,0) and evens the loads (d0 = d1 = 3c/4), so chunk 2 falls back.
    net = Network((Dimension("Switch", 2, 10.0), Dimension("Switch", 2, 10.0)))
    routes = Themis().routes(Collective("all-reduce", 3 << 20, 3), net)
    assert routes == [(0, 1), (1, 0), (0, 1)]


def test_round_robin_rotates() -> None:
    net = Network((Dimension("Ring", 4, 1.0),) * 3)
    routes = make_policy("round-robin").routes(Collective("all-reduce", 4096, 4), net)
    assert routes == [(0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 1, 2)]


def test_fixed_route_and_size_one_dimension_skipped() -> None:
    net = Network((Dimension("Ring", 4, 1.0), Dimension("Ring", 1, 1.0),
                   Dimension("Switch", 4, 2.0)))
    r = simulate(net, Collective("all-reduce", 1 << 20, 2), policy=make_policy("fixed",
                 routes=(2, 0)))
    assert r.metrics.routes == {"2,0": 2}
    assert {s.dim for s in r.schedule.stages} == {0, 2}
    assert check(r.schedule) == []


@pytest.mark.parametrize("policy", ["baseline", "round-robin", "themis"])
@pytest.mark.parametrize("intra", ["fifo", "scf"])
@pytest.mark.parametrize("k", [1, 2])
def test_replay_gives_same_makespan(policy: str, intra: str, k: int) -> None:
    net = Network((Dimension("Ring", 4, 8.0, 20.0), Dimension("Switch", 8, 3.0, 100.0),
                   Dimension("FullyConnected", 4, 1.0, 50.0)))
    r = simulate(net, Collective("all-reduce", 96 << 20, 12), policy=policy, intra=intra,
                 endpoint_delay_ns=10.0, active_chunks=k)
    assert check(r.schedule) == []
    again = replay(r.schedule)
    assert again.makespan_ns == pytest.approx(r.makespan_ns, rel=1e-12)
    assert check(again.schedule) == []


def test_multiple_collectives_reset_loads_and_issue_times() -> None:
    net = net2(1.0, 2.0)
    colls = [Collective("all-reduce", 2 * C_BYTES, 2), Collective("all-reduce", 2 * C_BYTES, 2)]
    r = simulate(net, colls, policy="themis", issue_ns=[0.0, 10 * U])
    # The second collective starts after the first ended, so it repeats it shifted.
    assert r.routes[0] == r.routes[1] == [(0, 1), (1, 0)]
    assert r.makespan_ns == pytest.approx(10 * U + 1.5 * U)
    assert check(r.schedule) == []


def test_bandwidth_sharing_two_stages_together() -> None:
    # k = 2 on one dimension, two chunks start together and share the bandwidth:
    # each RS sends c/2 at B/2, so both end at c/B = U (not U/2).
    net = Network((Dimension("Switch", 2, 1.0), Dimension("Ring", 1, 1.0)))
    r = simulate(net, Collective("reduce-scatter", 2 * C_BYTES, 2), policy="baseline",
                 active_chunks=2)
    assert [s.end_ns for s in r.schedule.stages] == pytest.approx([U, U])
    assert check(r.schedule) == []
