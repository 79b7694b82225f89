"""The time-indexed LP bound (solvers.bounds_ti): valid, and above LB3 where the proof says."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import bounds, solve
from solvers.bounds_ti import time_indexed_bound
from themis.instance import Instance
from themis.policies import policy_names
from topologies.errors import InputError
from topologies.network import Network

from .solver_cases import MiB

# D3 = Ring 4x4x4 @ 4/2/1 GB/s and D4 = Ring 4x2x4x2 @ 8/4/2/1 GB/s, latency 0 (issue 26).
D3 = Network.build(["Ring"] * 3, [4, 4, 4], [4, 2, 1], [0, 0, 0])
D4 = Network.build(["Ring"] * 4, [4, 2, 4, 2], [8, 4, 2, 1], [0, 0, 0, 0])
# The proven optima of D4 at 64 MiB (docs/solvers.md, issue 26): both equal LB3.
D4_OPTIMUM = {16: 8_239_746.09, 32: 8_216_857.91}


def test_two_chunks_on_d3_reach_the_optimum_lb3_misses() -> None:
    # 64 MiB in 2 chunks: CP-SAT's optimum is 29,296,875 ns, LB3 only 23,437,500
    # (its heads and tails are per dimension); the LP on the exact grid meets the optimum.
    inst = Instance(D3, 64 * MiB, 2)
    ti = time_indexed_bound(inst, slots=100)
    assert ti.grid == "exact" and ti.status == "raised"
    assert ti.value_ns == pytest.approx(29_296_875.0, rel=1e-8)
    assert ti.value_ns <= 29_296_875.0
    assert bounds(inst).lb3_ns < 0.81 * ti.value_ns


def test_four_chunks_on_d3_raise_lb3_below_the_optimum() -> None:
    inst = Instance(D3, 64 * MiB, 4)
    ti = time_indexed_bound(inst, slots=100)
    assert ti.status == "raised" and ti.value_ns > bounds(inst).lb3_ns * 1.03
    assert ti.value_ns <= 20_507_812.5  # CP-SAT's optimum (docs/solvers.md)


@pytest.mark.parametrize("chunks", [16, 32])
def test_d4_stays_below_the_known_optima(chunks: int) -> None:
    inst = Instance(D4, 64 * MiB, chunks)
    ti = time_indexed_bound(inst, slots=40)
    assert ti.grid == "exact"
    assert ti.value_ns <= D4_OPTIMUM[chunks]


def test_many_chunks_do_not_raise_it() -> None:
    # At C = 8 the fluid LP reaches the load bound: the value is the reference,
    # rounded down to whole slots, and says so.
    inst = Instance(D3, 64 * MiB, 8)
    ti = time_indexed_bound(inst, slots=60)
    assert ti.status == "not-raised" and ti.value_ns <= ti.reference_ns
    assert ti.lps == 1


def test_too_large_a_model_is_refused_up_front() -> None:
    inst = Instance(D3, 64 * MiB, 4)
    with pytest.raises(InputError, match="columns"):
        time_indexed_bound(inst, slots=100, max_columns=50)
    with pytest.raises(InputError, match="slots"):
        time_indexed_bound(inst, slots=0)


def test_the_value_is_deterministic() -> None:
    inst = Instance(D3, 64 * MiB, 4)
    assert time_indexed_bound(inst, slots=50) == time_indexed_bound(inst, slots=50)


NETWORKS = st.builds(
    lambda kinds, sizes, bws, lat: Network.build(kinds, sizes, bws, lat),
    st.lists(st.sampled_from(["Ring", "Switch", "FullyConnected"]), min_size=2, max_size=2),
    st.lists(st.sampled_from([2, 4]), min_size=2, max_size=2),
    st.lists(st.sampled_from([1, 2, 4]), min_size=2, max_size=2),
    st.lists(st.sampled_from([0, 0, 30, 500]), min_size=2, max_size=2),
)


@settings(max_examples=12, deadline=None)
@given(net=NETWORKS, chunks=st.integers(1, 4), size=st.sampled_from([3 * MiB, 8 * MiB + 4]),
       slots=st.sampled_from([20, 50]))
def test_below_every_policy_and_the_optimum(net: Network, chunks: int, size: int,
                                            slots: int) -> None:
    inst = Instance(net, size, chunks, endpoint_delay_ns=10)
    ti = time_indexed_bound(inst, slots=slots)
    for policy in policy_names():
        if policy == "fixed":
            continue
        for intra in ("fifo", "scf", "lrw"):
            made = inst.simulate(policy, intra).makespan_ns
            assert ti.value_ns <= made * (1 + 1e-9), (policy, intra)
    res = solve(inst, "cpsat", time_limit_s=60, deterministic_time_s=5, threads=1)
    assert ti.value_ns <= res.makespan_ns * (1 + 1e-9)


D3_YML = "topology: [Ring, Ring, Ring]\nnpus_count: [4, 4, 4]\nbandwidth: [4, 2, 1]\n" \
         "latency: [0, 0, 0]\n"


def test_cli_bound_time_indexed(capsys, tmp_path) -> None:
    import json

    from reports.cli import main

    path = tmp_path / "d3.yml"
    path.write_text(D3_YML)
    argv = ["bound", str(path), "--size", "64MiB", "--chunks", "2"]
    assert main([*argv, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "time_indexed" not in plain
    assert main([*argv, "--time-indexed=100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lower_bound_ns"] == plain["lower_bound_ns"]  # the default bounds stay
    ti = out["time_indexed"]
    assert ti["status"] == "raised" and ti["value_ns"] == pytest.approx(29_296_875.0, rel=1e-8)
    assert main([*argv, "--time-indexed"]) == 0
    assert "time-indexed LP" in capsys.readouterr().out
    assert main([*argv, "--time-indexed", "--ag-order", "free"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "reverse" in err
