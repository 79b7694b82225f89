"""``themis-running``: Themis whose loads start from the bytes still in flight."""

from __future__ import annotations

from dataclasses import replace

from tests.training.handcalc import CFG, layer, workload
from themis.training import simulate_training
from themis.training.running import MiB, running_themis_routes
from topologies.network import Dimension, Network

TWO = Network((Dimension("Switch", 4, 100.0, 1.0), Dimension("Switch", 4, 100.0, 1.0)))
ALL = (True, True)


def test_idle_network_falls_back_to_ascending_first() -> None:
    # Nothing in flight: the first chunk sees a zero gap (< chunk/16) and takes 0, 1; its
    # RS loads 3/4 MiB on dim 0 and 3/16 MiB on dim 1, so the second chunk starts on dim 1.
    routes = running_themis_routes(TWO, ALL, "all-reduce", 1 << 20, 2, [0.0, 0.0])
    assert routes == [(0, 1), (1, 0)]


def test_bytes_in_flight_steer_the_first_chunk() -> None:
    # 8 MiB still to send on dim 0 (equal bandwidths: 8 load units): the gap is worth far
    # more than chunk/16 bytes, so the first chunk starts on the idle dimension 1.
    routes = running_themis_routes(TWO, ALL, "all-reduce", 1 << 20, 1, [8 * MiB, 0.0])
    assert routes == [(1, 0)]
    # A mask leaves one dimension: every chunk crosses only that one.
    assert running_themis_routes(TWO, (False, True), "all-reduce", 1 << 20, 3,
                                 [8 * MiB, 0.0]) == [(1,)] * 3


def test_all_gather_sorts_descending() -> None:
    # All-gather routes go from the most loaded dimension (its first stage is the smallest).
    routes = running_themis_routes(TWO, ALL, "all-gather", 1 << 16, 1, [8 * MiB, 0.0])
    assert routes == [(0, 1)]


def test_training_run_sees_the_earlier_collective() -> None:
    # Two Switch dimensions of equal bandwidth, dimension 1 with 2 us per hop: Themis'
    # loads count bytes only, so 2 us after the first wg all-reduce much more is left to
    # send on dimension 1. Themis resets its loads at the second issue; themis-running
    # starts from what the first still has to send, so the second's routes differ.
    slow = Network((Dimension("Switch", 4, 100.0, 1.0), Dimension("Switch", 4, 100.0, 2000.0)))
    wl = workload("DATA", layer("l0", 10, 0, 10, 1, wg="ALLREDUCE 1048576"),
                  layer("l1", 10, 2000, 10, 1, wg="ALLREDUCE 1048576"))
    cfg = replace(CFG, chunks=8, policy="themis")
    them = simulate_training(wl, slow, cfg)
    run = simulate_training(wl, slow, replace(cfg, policy="themis-running"))
    assert them.collectives[1].issue_ns < them.collectives[0].end_ns  # they overlap

    def dims_of(res, cid):
        return [s[0] for s in sorted(res.timeline.stages, key=lambda s: (s[2], s[3]))
                if s[1] == cid]

    assert dims_of(run, 0) == dims_of(them, 0)  # the first sees an idle network in both
    assert dims_of(run, 1) != dims_of(them, 1)
    assert run.lower_bound_ns == them.lower_bound_ns <= min(run.end_ns, them.end_ns)
