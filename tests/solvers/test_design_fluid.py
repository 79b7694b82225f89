"""Known answers and properties of the fluid bandwidth design (issue 25, first piece)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solvers.design import all_reduce_traffic_bytes, fluid_design, fluid_time_ns


def test_two_d_ring_known_answer() -> None:
    # Ring 4 x Ring 4, S = 1024 B: dim 0 moves 2*1024*3/4 = 1536, dim 1 moves 2*1024*3/4/4 = 384.
    traffic = all_reduce_traffic_bytes(1024.0, (4, 4))
    assert traffic == (1536.0, 384.0)
    # Budget 100 GB/s: B = 100 * (1536, 384) / 1920 = (80, 20); time = 1920 / 100 = 19.2 ns.
    design = fluid_design(traffic, 100.0)
    assert design.bandwidths_GBps == pytest.approx((80.0, 20.0))
    assert design.time_ns == pytest.approx(19.2)
    # The even split is slower: max(1536, 384) / 50 = 30.72 ns.
    assert fluid_time_ns(traffic, (50.0, 50.0)) == pytest.approx(30.72)


def test_cost_budget_known_answer() -> None:
    # Costs (2, 4) $ per GB/s, budget 400 $: weighted = 2*1536 + 4*384 = 4608; time = 11.52 ns.
    design = fluid_design((1536.0, 384.0), 400.0, (2.0, 4.0))
    assert design.time_ns == pytest.approx(4608 / 400)
    assert design.cost == pytest.approx(400.0)


def test_bad_budget() -> None:
    with pytest.raises(ValueError, match="budget"):
        fluid_design((1.0, 1.0), 0.0)


@given(
    npus=st.lists(st.integers(2, 8), min_size=1, max_size=4),
    costs=st.lists(st.floats(0.5, 60.0), min_size=4, max_size=4),
    budget=st.floats(1.0, 1e4),
    shares=st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4),
)
def test_design_beats_any_design_on_budget(npus: list[int], costs: list[float], budget: float,
                                           shares: list[float]) -> None:
    dims = len(npus)
    traffic = all_reduce_traffic_bytes(2.0**20, tuple(npus))
    c = tuple(costs[:dims])
    design = fluid_design(traffic, budget, c)
    assert design.cost == pytest.approx(budget)
    assert fluid_time_ns(traffic, design.bandwidths_GBps) == pytest.approx(design.time_ns)
    # Any other design spending the same budget is no faster.
    s = shares[:dims]
    scale = budget / sum(ci * si for ci, si in zip(c, s, strict=True))
    other = tuple(si * scale for si in s)
    assert fluid_time_ns(traffic, other) >= design.time_ns * (1 - 1e-9)
    assert math.isfinite(design.time_ns)
