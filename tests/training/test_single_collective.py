"""The training engine against the single-collective references R1 and R2.

A MICRO workload of one all-reduce is what ASTRA-sim's single-collective runs
used (README of the reference: "Their printed end is the collective's end + 1",
the update time). Running those files through the training simulator must
print ASTRA-sim's end + 1, for baseline and Themis, FIFO and SCF, both
boost modes (tie orders), 64 chunks.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from themis.training import TrainingConfig, simulate_training
from topologies.astra import read_network, read_system
from topologies.workload import load_workload

REF = Path(__file__).resolve().parents[1] / "data" / "astra-sim-1.0"


@pytest.mark.parametrize(("intra", "inter", "boost", "want"), [
    ("FIFO", "baseline", True, 35008128), ("FIFO", "themis", True, 16984251),
    ("SCF", "themis", True, 13635870), ("SCF", "themis", False, 13909353)])
def test_r1_as_a_micro_workload(intra: str, inter: str, boost: bool, want: int) -> None:
    net = read_network(REF / "tutorial/3d_switch.json")
    system = replace(read_system(REF / "tutorial/3d_switch_themis.txt"), intra=intra,
                     inter=inter, boost_mode=boost)
    cfg = TrainingConfig.from_system(system, comm_scale=1024)  # 1 MiB x 1024
    res = simulate_training(load_workload(str(REF / "tutorial/all_reduce.txt")), net, cfg)
    assert res.end_ns == want + 1
    assert res.lower_bound_ns <= res.end_ns


@pytest.mark.parametrize(("wl", "name", "want"), [
    ("64MiB", "baseline_FIFO", 1925120), ("64MiB", "themis_FIFO", 1481600),
    ("64MiB", "themis_SCF", 1497820), ("1GiB", "baseline_FIFO", 16106240),
    ("1GiB", "themis_FIFO", 9015680), ("1GiB", "themis_SCF", 9015680)])
def test_r2_as_a_micro_workload(wl: str, name: str, want: int) -> None:
    net = read_network(REF / "tutorial/tpu.json")
    system = read_system(REF / f"runs/sys_tpu_s64_{name}.txt")
    # The R2 files ask for a ring all-to-all; no all-to-all runs here.
    cfg = TrainingConfig.from_system(system)
    res = simulate_training(load_workload(str(REF / f"runs/wl_{wl}.txt")), net, cfg)
    assert res.end_ns == want + 1


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("policy", ["baseline", "themis", "round-robin"])
def test_alpha_beta_shares_bandwidth_like_the_collective_simulator(k: int, policy: str) -> None:
    # One all-reduce through the training engine (alpha-beta, k stages share a dimension's
    # bandwidth) and through themis.simulator.simulate: the same makespan.
    from themis.collective import Collective
    from themis.simulator import simulate
    from topologies.network import Dimension, Network
    from topologies.workload import parse_workload

    net = Network((Dimension("Ring", 4, 100.0, 10.0), Dimension("Switch", 8, 25.0, 100.0)))
    wl = parse_workload("MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 67108864 1\n", "m.txt")
    cfg = TrainingConfig(timing="alpha-beta", policy=policy, active_chunks=k, chunks=16)
    res = simulate_training(wl, net, cfg)
    ref = simulate(net, Collective("all-reduce", 64 << 20, 16), policy=policy, intra="fifo",
                   timing="alpha-beta", endpoint_delay_ns=10, active_chunks=k)
    assert res.end_ns - 1 == pytest.approx(ref.makespan_ns, rel=1e-12)
    assert res.lower_bound_ns <= res.end_ns
