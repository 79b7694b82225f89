"""The exact time grid of the CP-SAT model (hand-computed ticks, fallbacks, honest labels)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from solvers import solve
from solvers.common import ProblemData
from solvers.cpsat.scaling import Grid, exact_grid, grid, simplest_fraction
from themis.instance import Instance
from topologies.network import Network

from .solver_cases import GiB, binary_network


def test_simplest_fraction_recovers_exact_rationals() -> None:
    assert simplest_fraction(366210.9375) == Fraction(5859375, 16)
    assert simplest_fraction(1e9 / 3) == Fraction(10**9, 3)
    assert simplest_fraction(0.1) == Fraction(1, 10)
    assert simplest_fraction(7.0) == 7


def test_exact_grid_by_hand_without_latency() -> None:
    # Ring 2 @ 2 GB/s x Ring 2 @ 1 GB/s, 1 GiB in 2 chunks of 2^29 bytes: a stage on d
    # sends half its input, 2^28 or 2^27 bytes, at B_d * 2^30 / 1e9 bytes per ns:
    # 62.5 ms, 125 ms or 250 ms. The GCD is 62.5 ms; the longest stage is 4 ticks.
    data = ProblemData(Instance(binary_network(), GiB, 2))
    g = exact_grid(data)
    assert g is not None and g.grid == Grid.EXACT
    assert g.tick_ns == 62_500_000.0
    assert g.resolution == 4 and g.rounded_stages == 0 and g.rounding_ns == 0.0
    for k, part in enumerate(g.p_rs):
        for r, row in enumerate(part):
            for d, ticks in row.items():
                assert ticks * g.tick_ns == pytest.approx(data.rs[k][r][d], rel=1e-12)


def test_exact_grid_by_hand_with_latency() -> None:
    # The same with 500 ns per hop (one step per ring stage at P = 2): durations
    # 62,500,500 / 125,000,500 / 250,000,500 ns, whose GCD is 500 ns.
    net = Network.build(["Ring", "Ring"], [2, 2], [2, 1], [500, 500])
    g = exact_grid(ProblemData(Instance(net, GiB, 2)))
    assert g is not None and g.grid == Grid.EXACT
    assert g.tick_ns == 500.0 and g.resolution == 500_001


def test_no_exact_grid_falls_back_to_the_rounded_one_and_says_so() -> None:
    # A 0.001 ns latency: the GCD of 62,500,000.001 ns and 125,000,000.001 ns is 0.001 ns,
    # and the longest stage would be 2.5e11 ticks: no grid fits under the cap.
    net = Network.build(["Ring", "Ring"], [2, 2], [2, 1], [0.001, 0.001])
    inst = Instance(net, GiB, 2)
    data = ProblemData(inst)
    assert exact_grid(data) is None
    g = grid(data, 1000)
    assert g.grid == Grid.ROUNDED and g.rounded_stages == data.nstages
    res = solve(inst, "cpsat", time_limit_s=20, deterministic_time_s=2, doubling=False)
    assert res.meta["grid"] == "rounded"
    assert res.scaling_error_ns > 0


def test_remainder_is_rounded_on_the_main_class_grid() -> None:
    # 1 GiB + 1 byte in 2 chunks: two chunks of 2^29 bytes (the grid above, 62.5 ms)
    # and a 1-byte remainder, whose stages are rounded up to one tick each.
    inst = Instance(binary_network(), GiB + 1, 2)
    data = ProblemData(inst)
    g = exact_grid(data)
    assert g is not None and g.grid == Grid.EXACT_MAIN
    assert g.tick_ns == 62_500_000.0
    assert g.rounded_stages == 2 * len(data.dims)  # the remainder chunk's stages
    rest = data.class_of[-1]
    assert all(t == 1 for row in g.p_rs[rest] for t in row.values())
    res = solve(inst, "cpsat", time_limit_s=30, deterministic_time_s=1)
    assert res.meta["grid"] == "exact-main" and res.valid
    assert res.scaling_error_ns == 2 * g.rounding_ns


@pytest.mark.parametrize("ag_order", ["reverse", "free"])
def test_exact_grid_proof_is_exact(ag_order: str) -> None:
    # On an exact grid: no scaling error, the bound is not lowered by any rounding.
    inst = Instance(binary_network(), GiB, 4)
    res = solve(inst, "cpsat", time_limit_s=30, deterministic_time_s=1, ag_order=ag_order)
    assert res.status == "optimal" and res.valid
    assert res.meta["grid"] == "exact"
    assert res.scaling_error_ns == 0.0
    assert res.lower_bound_ns == pytest.approx(res.makespan_ns, rel=1e-12)


def test_coarse_phase_is_a_hint_only() -> None:
    # The rounded grid runs the coarse phase first: its search status is no status.
    net = Network.build(["Ring", "Ring"], [2, 2], [2, 1], [0.001, 0.001])
    inst = Instance(net, GiB, 3)
    res = solve(inst, "cpsat", time_limit_s=20, deterministic_time_s=2, doubling=False)
    coarse = res.meta["phases"]["coarse"]
    assert coarse["role"].startswith("hint only")
    assert "cpsat_status" not in coarse
    assert res.status in ("optimal", "feasible")
    if res.status == "optimal":
        assert res.meta["proof"] in ("cpsat", "lower bound", "solver bound")


def test_highs_milp_on_the_exact_grid_agrees_with_cpsat() -> None:
    inst = Instance(binary_network(), GiB, 2)
    highs = solve(inst, "highs", time_limit_s=30, node_limit=500, doubling=False)
    cbc = solve(inst, "cbc", time_limit_s=30, node_limit=500, doubling=False)
    cpsat = solve(inst, "cpsat", time_limit_s=30, deterministic_time_s=1)
    assert highs.meta["grid"] == "exact" and cbc.meta["grid"] == "default"
    assert highs.status == cbc.status == cpsat.status == "optimal"
    assert highs.makespan_ns == pytest.approx(cpsat.makespan_ns, rel=1e-9)
    assert cbc.makespan_ns == pytest.approx(cpsat.makespan_ns, rel=1e-9)
