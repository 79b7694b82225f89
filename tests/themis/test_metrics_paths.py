"""The plain-Python metrics (small runs, no numpy import) equal the numpy ones bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from themis.collective import Collective
from themis.metrics import compute_metrics, pairwise_sum
from themis.simulator import simulate
from topologies.presets import resolve_network


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), max_size=700))
def test_pairwise_sum_is_numpys_sum(values: list[float]) -> None:
    assert pairwise_sum(values) == float(np.sum(np.asarray(values, dtype=float)))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["small-2d", "small-3d", "small-4d"]), st.integers(1, 40),
       st.sampled_from(["themis", "baseline", "round-robin"]), st.integers(1, 3),
       st.sampled_from(["alpha-beta", "astra-sim-1.0"]))
def test_python_and_numpy_metrics_agree(net: str, chunks: int, policy: str, k: int,
                                        timing: str) -> None:
    res = simulate(resolve_network(net), Collective("all-reduce", 3 * 2**20 + 7 * chunks,
                                                    chunks),
                   policy=policy, active_chunks=k, timing=timing, endpoint_delay_ns=10.0)
    py = compute_metrics(res.schedule, numpy_stages=10**9)
    nump = compute_metrics(res.schedule, numpy_stages=0)
    assert py == nump
