"""Lower bounds LB0-LB3 (model.md §7)."""

from __future__ import annotations

import pytest

from solvers import Bounds, bounds
from tests.solvers.solver_cases import GiB, MiB, binary_network, large, small, two_dim_network
from themis.instance import Instance
from topologies.errors import InputError

# One chunk of 64 MiB = 2^26 bytes on Ring 4 @ 4 GB/s (a = 10 ns) x Switch 4 @ 1 GB/s
# (a = 50 ns), 1 GB = 2^30 bytes, no endpoint delay. A stage on d with large size M
# takes steps * hops * a + 3/4 * M / B (ring: 3 steps of 1 hop; switch with
# halving-doubling: log2 4 = 2 steps of 2 hops).
#   route (0, 1): RS0 (M = 2^26 on 4 GB/s): 30 + 0.75 * 2^26 / (4 * 2^30 / 1e9)
#                                          = 30 + 11_718_750 = 11_718_780
#                 RS1 (M = 2^24 on 1 GB/s): 200 + 0.75 * 2^24 / (2^30 / 1e9)
#                                          = 200 + 11_718_750 = 11_718_950
#                 AG1 = RS1, AG0 = RS0 (same sizes): chain = 46_875_460 ns
#   route (1, 0): RS1 (M = 2^26 on 1 GB/s) = 200 + 46_875_000, RS0 (M = 2^24 on 4 GB/s)
#                 = 30 + 2_929_687.5: chain = 2 * 49_804_917.5 = 99_609_835 ns
ONE_CHUNK_NS = 46_875_460.0


def test_one_chunk_lb1_is_its_best_route() -> None:
    inst = Instance(two_dim_network(), 64 * MiB, 1)
    b = bounds(inst)
    assert b.lb1_ns == pytest.approx(ONE_CHUNK_NS, rel=1e-12)
    assert b.lb_ns == pytest.approx(ONE_CHUNK_NS, rel=1e-12)
    assert b.lb3_ns <= ONE_CHUNK_NS
    # The free variant cannot do better with one chunk: the reversed AG order is best.
    assert bounds(inst, "free").lb1_ns == pytest.approx(ONE_CHUNK_NS, rel=1e-12)


def test_hand_computed_bounds_two_chunks() -> None:
    # Ring 2 @ 2 GB/s x Ring 2 @ 1 GB/s, chunks of c = 1 GiB, u = c / (1 GB/s) = 1e9 ns.
    # Route A = (0, 1): RS0 = AG0 = u/4, RS1 = AG1 = u/4 -> loads (u/2, u/2), chain u.
    # Route B = (1, 0): RS1 = AG1 = u/2, RS0 = AG0 = u/8 -> loads (u/4, u), chain 1.25u.
    # LB0: 3 * 2^30 bytes over 3 GB/s = u. LB1 = u (route A). LB2: two A's give loads
    # (u, u) -> u. LB3: AA -> dimension 1 waits u/4 (RS0), runs u, then AG0 u/4: 1.5u;
    # AB -> dimension 1 runs 1.5u; BB -> dimension 1 runs 2u. So LB3 = 1.5u.
    inst = Instance(binary_network(), 2 * GiB, 2)
    b = bounds(inst)
    u = 1e9
    assert b.lb0_ns == pytest.approx(u, rel=1e-12)
    assert b.lb1_ns == pytest.approx(u, rel=1e-12)
    assert b.lb2_ns == pytest.approx(u, rel=1e-6)
    assert b.lb3_ns == pytest.approx(1.5 * u, rel=1e-6)
    assert b.lb3_ns <= 1.5 * u
    assert b.lb_ns == b.lb3_ns


@pytest.mark.parametrize("dims,chunks", [(2, 1), (2, 4), (3, 3), (3, 8)])
def test_bounds_are_ordered_and_consistent(dims: int, chunks: int) -> None:
    inst = small(dims, chunks)
    for ag in ("reverse", "free"):
        b = bounds(inst, ag)
        assert isinstance(b, Bounds) and b.ag_order == ag
        assert b.lb0_ns <= b.lb2_ns * (1 + 1e-6)  # the LP sees all bytes, plus latency
        assert b.lb2_ns <= b.lb3_ns
        assert b.lb3_method in ("optimal", "node-limit")
        assert set(b.to_dict()) >= {"lb0_ns", "lb1_ns", "lb2_ns", "lb3_ns", "lower_bound_ns",
                                    "lb3_method"}
    # Free AG orders are a superset of the reverse ones: their bounds cannot be higher.
    assert bounds(inst, "free").lb_ns <= bounds(inst, "reverse").lb_ns * (1 + 1e-9)


def test_bounds_on_large_instances_stop_at_the_node_limit() -> None:
    # The LB3 MIP stops at its deterministic node limit (its speed: benchmarks/bench_limits.py).
    big = Instance(large().network, large().size_bytes, 64)
    b = bounds(big)
    assert b.lb3_method in ("optimal", "node-limit")
    assert b.lb2_ns <= b.lb3_ns <= b.lb_ns and b.lb_ns == max(b.lb0_ns, b.lb1_ns, b.lb3_ns)


def test_bound_rejects_unknown_ag_order() -> None:
    with pytest.raises(InputError, match="AG order"):
        bounds(small(2, 2), "sideways")
