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


def _d4(chunks: int) -> Instance:
    """D4 = Ring 4x2x4x2 @ 8/4/2/1 GB/s, 64 MiB, latency 0 (docs/solvers.md's frontier)."""
    from topologies.network import Dimension, Network

    dims = tuple(Dimension("Ring", n, bw, 0.0) for n, bw in ((4, 8), (2, 4), (4, 2), (2, 1)))
    return Instance(Network(dims), 64 * MiB, chunks)


#: D4 C = 32's optimum (proven by the audit of issue 26; 0.5 ns of float noise allowed).
D4_C32_OPT_NS = 8_216_857.91


def test_lb3_node_limit_is_monotone_and_proves_with_more_nodes() -> None:
    """The LB3 MIP's node limit: a dual bound that never falls with more nodes, labelled
    ``node-limit`` until it is proven (D4 C = 32: 1,210 nodes), and never above the
    optimum. With the proven LB3 the D4 C = 32 optimum meets its bound."""
    inst = _d4(32)
    found = [bounds(inst, node_limit=n) for n in (1, 50, 400, 20_000)]
    values = [b.lb3_ns for b in found]
    assert values == sorted(values)
    assert all(v <= D4_C32_OPT_NS + 0.5 for v in values)
    assert [str(b.lb3_method) for b in found][:2] == ["node-limit", "node-limit"]
    assert str(found[-1].lb3_method) == "optimal"
    assert found[-1].lb3_ns == pytest.approx(D4_C32_OPT_NS, abs=0.5)
    assert found[0].lb3_ns < found[-1].lb3_ns - 1_000  # the limit mattered here


def test_lb3_nodes_reach_solve_and_improve() -> None:
    """``SolverParams.lb3_nodes`` and ``improve(lb3_nodes=...)`` set the LB3 MIP's limit."""
    from solvers import SolverParams, solve
    from solvers.improve import improve

    inst = _d4(32)
    res = solve(inst, "cpsat", SolverParams(deterministic_time_s=0.01, lb3_nodes=1,
                                            doubling=False))
    assert res.meta["bounds"]["lb3_method"] == "node-limit"
    assert res.meta["params"]["lb3_nodes"] == 1
    imp = improve(inst, evaluations=0, lb3_nodes=1, doubling=False)
    assert imp.lb3_method == "node-limit"
    with pytest.raises(InputError, match="lb3_nodes"):
        SolverParams(lb3_nodes=0)


def test_cli_lb3_nodes_default_is_the_solvers() -> None:
    from reports.cli.common import LB3_NODES_DEFAULT
    from solvers.params import LB3_NODE_LIMIT

    assert LB3_NODES_DEFAULT == LB3_NODE_LIMIT
