"""The ``astra-sim-1.0`` timing model against ASTRA-sim 1.0's own numbers.

Reference: shared/reference/astra-sim-1.0 (README.md: runs R1 and R2;
timing.md: formulas, phase lists, queue and tie rules). Every time here is
asserted to the nanosecond.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from themis.astra_run import simulate_astra
from themis.checker import check
from themis.collective import Collective
from themis.disciplines import canonical_intra
from themis.disciplines.astra_scf import AstraScf
from themis.plans import PlanShape, stage_plan
from themis.policies import Baseline, RoundRobin, Themis
from themis.simulator import simulate
from themis.stages import StageTable
from themis.timing import make_timing, timing_names
from themis.timing.astra10 import AstraSim10Timing
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.system import SystemConfig

REF = Path(__file__).parents[1] / "data" / "astra-sim-1.0"
MiB = 1 << 20
GiB = 1 << 30
HD3 = ("halvingDoubling",) * 3


def switch3() -> Network:
    """R1: tutorial/3d_switch.json, 3 x Switch 8 at 50 GB/s, 1 ns."""
    return Network((Dimension("Switch", 8, 50.0, 1.0, links=1),) * 3, name="3d_switch")


def tpu() -> Network:
    """R2: tutorial/tpu.json, 2 x Ring 16, links 2 x 62 GB/s, 500 ns."""
    return Network((Dimension("Ring", 16, 124.0, 500.0, links=2),) * 2, name="tpu")


def r1_system(inter: str, intra: str, boost: bool = True) -> SystemConfig:
    """tutorial/3d_switch_{baseline,themis}.txt (64 chunks, hd, localBWAware, d = 10)."""
    return SystemConfig(chunks=64, active_chunks=1, endpoint_delay_ns=10.0,
                        all_reduce_algorithms=HD3, reduce_scatter_algorithms=HD3,
                        all_gather_algorithms=HD3, collective_optimization="localBWAware",
                        boost_mode=boost, inter=inter, intra=intra)


def r2_system(inter: str, intra: str) -> SystemConfig:
    """runs/sys_tpu_s64_*.txt (64 chunks, ring_ring, localBWAware, boost-mode 0)."""
    ring = ("ring", "ring")
    return SystemConfig(chunks=64, active_chunks=1, endpoint_delay_ns=10.0,
                        all_reduce_algorithms=ring, reduce_scatter_algorithms=ring,
                        all_gather_algorithms=ring, collective_optimization="localBWAware",
                        boost_mode=False, inter=inter, intra=intra)


def _read():
    """The reader module; the reference files are committed (tests/data), so they must be there."""
    from topologies import astra

    assert REF.is_dir(), f"committed reference files missing: {REF}"
    return astra


# -- one stage ------------------------------------------------------------------------
@pytest.mark.parametrize(("phase", "size", "want"), [
    ("RS", 16 * MiB, 273519),
    ("RS", 2 * MiB, 34227),
    ("RS", 256 * 1024, 4317),
    ("AG", 32 * 1024, 4317),
    ("AG", 256 * 1024, 34224),
    ("AG", 2 * MiB, 273483),
    ("AR", 256 * 1024, 8624),
])
def test_worked_stage_values(phase: str, size: int, want: int) -> None:
    tm = make_timing("astra-sim-1.0", switch3(), HD3, 10)
    cost = tm.stage(phase, 0, size)
    assert cost.duration_ns == want
    assert cost.output_bytes == {"RS": size // 8, "AG": size * 8, "AR": size}[phase]


def test_registered_and_not_sharing() -> None:
    assert "astra-sim-1.0" in timing_names()
    tm = make_timing("astra-sim-1.0", switch3(), HD3, 10)
    assert isinstance(tm, AstraSim10Timing)
    assert tm.resource_law == "exclusive"


def test_ring_formulas_by_hand() -> None:
    # Ring 16, 2 links of 62 GB/s: scalar 2, BW = 124 * 2^30 / 1e9 bytes/ns.
    tm = make_timing("astra-sim-1.0", tpu(), ("ring", "ring"), 10)
    bw = 124 * 2**30 / 1e9
    D = 16 * MiB
    n = 16
    msg = 500 + int(D // n / bw)
    red = 3 * ((D // n) // 500000)
    assert tm.stage("RS", 0, D).duration_ns == n * 10 + (n - 1) * (msg + red)
    assert tm.stage("AR", 0, D).duration_ns == (2 * n - 1) * 10 + 2 * (n - 1) * msg + (n - 1) * red
    assert tm.stage("AG", 0, D // n).duration_ns == n * 10 + (n - 1) * msg
    assert tm.stage("RS", 0, D).output_bytes == D // n


def test_direct_on_a_ring_takes_the_farthest_partner_and_odd_links_lose_one() -> None:
    # 3 links on a Ring: scalar 2 (links - 1). Direct: the slowest partner is n/2 hops.
    net = Network((Dimension("Ring", 8, 150.0, 7.0, links=3),), nic_latency_ns=5.0,
                  router_latency_ns=100.0)
    tm = make_timing("astra-sim-1.0", net, ["direct"], 10)
    D = 1 << 20
    ser = (D * 10**9) // (2 * 50 * 2**30)
    assert tm.stage("AG", 0, D).duration_ns == 2 * 10 + (7 * 4 + ser + 2 * 5)
    # The router latency counts on a Switch only.
    sw = Network((Dimension("Switch", 8, 50.0, 7.0, links=1),), nic_latency_ns=5.0,
                 router_latency_ns=100.0)
    tsw = make_timing("astra-sim-1.0", sw, ["direct"], 10)
    ser = (D * 10**9) // (50 * 2**30)
    assert tsw.stage("AG", 0, D).duration_ns == 2 * 10 + (7 * 2 + ser + 2 * 5 + 100)


def test_per_dimension_nic_and_router_latency(tmp_path) -> None:
    # A 1.0 file with "nic-latency": [3, 0, 0] and "router-latency": [50, 20, 40]:
    # HierarchicalTopology::send charges a message 2 * nic + router (Switch only) of
    # the dimension it crosses. Ring 4 (2 links of 25), Switch 8 (1 link of 50),
    # Switch 2 (1 link of 10), link latency 7, 5 and 1 ns, endpoint delay 10, ring.
    from topologies.astra import network_to_json, read_network

    path = tmp_path / "net.json"
    path.write_text(json.dumps({
        "topologies-per-dim": ["Ring", "Switch", "Switch"], "units-count": [4, 8, 2],
        "links-count": [2, 1, 1], "link-bandwidth": [25, 50, 10],
        "link-latency": [7, 5, 1], "nic-latency": [3, 0, 0],
        "router-latency": [50, 20, 40]}))
    net = read_network(str(path))
    assert [net.nic_latency(i) for i in range(3)] == [3.0, 0.0, 0.0]
    assert [net.router_latency(i) for i in range(3)] == [50.0, 20.0, 40.0]
    tm = make_timing("astra-sim-1.0", net, ["ring"] * 3, 10)
    D = 1 << 20
    # dimension 0: RS on a ring of 4, messages of D/4 at 2 * 25 GB/s, 1 hop:
    # N = 7 + floor(D/4 / BW) + 2 * 3; a Ring's router entry (50) does not count.
    ser0 = ((D // 4) * 10**9) // (2 * 25 * 2**30)
    assert tm.stage("RS", 0, D).duration_ns == 4 * 10 + 3 * (7 + ser0 + 6)
    # dimension 1: AG on a Switch of 8, messages of D at 50 GB/s, 2 hops, router 20.
    ser1 = (D * 10**9) // (50 * 2**30)
    assert tm.stage("AG", 1, D).duration_ns == 8 * 10 + 7 * (2 * 5 + ser1 + 20)
    # dimension 2: RS on a Switch of 2, one message of D/2 at 10 GB/s, router 40.
    ser2 = ((D // 2) * 10**9) // (10 * 2**30)
    assert tm.stage("RS", 2, D).duration_ns == 2 * 10 + (2 * 1 + ser2 + 40) + 3 * (
        (D // 2) // 500000)
    # alpha-beta counts them the same way per message step (model.md §4):
    # RS on dimension 0 is 3 steps of (1 hop * 7 + 2 * 3 + 10) plus 3/4 D / B.
    ab = make_timing("alpha-beta", net, ["ring"] * 3, 10)
    bw0 = 50 * 2**30 / 1e9
    assert ab.stage("RS", 0, D).duration_ns == pytest.approx(3 * (7 + 6 + 10) + 0.75 * D / bw0)
    assert ab.stage("AG", 1, D).fixed_ns == pytest.approx(7 * (2 * 5 + 20 + 10))
    # The network JSON round-trips the per-dimension lists.
    again = json.loads(network_to_json(net))
    assert again["nic-latency"] == [3, 0, 0] and again["router-latency"] == [50, 20, 40]


def test_nic_latency_truncates_after_each_addition() -> None:
    # send() accumulates an int: floor(floor(L*h + ser + 2 nic) + router).
    net = Network((Dimension("Switch", 2, 50.0, 0.0, links=1, nic_latency_ns=0.3,
                             router_latency_ns=0.5),))
    tm = make_timing("astra-sim-1.0", net, ["direct"], 0)
    # An AG of 1 byte: ser = 0, so the message costs floor(floor(0.6) + 0.5) = 0, not 1.
    assert tm.stage("AG", 0, 1).duration_ns == 0


def test_fully_connected_scalar() -> None:
    # FullyConnected 4 with 7 links: floor(7 / 3) = 2 links per message.
    net = Network((Dimension("FullyConnected", 4, 7 * 10.0, 3.0, links=7),))
    tm = make_timing("astra-sim-1.0", net, ["direct"], 0)
    D = 3 * MiB
    ser = ((D // 4) * 10**9) // (2 * 10 * 2**30)
    assert tm.stage("RS", 0, D).duration_ns == (3 + ser) + 3 * ((D // 4) // 500000)


def test_all_gather_input_is_the_shard() -> None:
    tm = make_timing("astra-sim-1.0", switch3(), HD3, 10)
    assert tm.all_gather_input(512 * 1000 + 7) == 1000


def test_non_power_of_two_halving_doubling_is_rejected() -> None:
    net = Network((Dimension("Switch", 6, 50.0, 1.0, links=1), Dimension("Switch", 8, 50.0)))
    with pytest.raises(InputError) as err:
        AstraSim10Timing(net, ("halvingDoubling", "halvingDoubling"), 10)
    assert "algorithms[0]" in str(err.value) and "halvingDoubling" in str(err.value)
    with pytest.raises(InputError):
        make_timing("astra-sim-1.0", net, ["halvingDoubling"] * 2, 10)


@pytest.mark.parametrize("dim", [
    Dimension("Ring", 8, 50.0, 1.0, links=1),            # 1 link on a ring: scalar 0
    Dimension("FullyConnected", 8, 30.0, 1.0, links=3),  # 3 links for 7 partners
])
def test_zero_bandwidth_scalar_is_rejected(dim: Dimension) -> None:
    with pytest.raises(InputError) as err:
        make_timing("astra-sim-1.0", Network((dim,)), None, 10)
    assert "links-count[0]" in str(err.value)


# -- R1 ---------------------------------------------------------------------------
R1 = [
    ("baseline", "fifo", True, 35008128),
    ("themis", "fifo", True, 16984251),
    ("themis", "scf", True, 13635870),
    ("themis", "scf", False, 13909353),
]


@pytest.mark.parametrize(("inter", "intra", "boost", "want"), R1)
def test_r1(inter: str, intra: str, boost: bool, want: int) -> None:
    res = simulate_astra(switch3(), r1_system(inter, intra, boost),
                         Collective("all-reduce", GiB, 64))
    assert res.makespan_ns == want
    assert check(res.schedule) == []


def test_r1_from_the_tutorial_files() -> None:
    astra = _read()
    net = astra.read_network(REF / "tutorial/3d_switch.json")
    base = astra.read_system(REF / "tutorial/3d_switch_baseline.txt")
    them = astra.read_system(REF / "tutorial/3d_switch_themis.txt")
    for system, want in [(base, 35008128), (replace(them, intra="fifo"), 16984251),
                         (them, 13635870), (replace(them, boost_mode=False), 13909353)]:
        coll = Collective("all-reduce", GiB, system.chunks)
        assert simulate_astra(net, system, coll).makespan_ns == want


def test_r1_baseline_bytes_per_dimension() -> None:
    res = simulate_astra(switch3(), r1_system("baseline", "fifo"),
                         Collective("all-reduce", GiB, 64))
    assert [d.bytes / MiB for d in res.metrics.dims] == [1792, 224, 28]
    them = simulate_astra(switch3(), r1_system("themis", "scf"),
                          Collective("all-reduce", GiB, 64))
    # "Themis moves them to about 696 / 674 / 674 MB" (MiB here).
    assert [round(d.bytes / MiB) for d in them.metrics.dims] == [696, 674, 674]


def test_r1_through_plain_simulate() -> None:
    # The generic simulator with the generic Themis reproduces R1 as well.
    res = simulate(switch3(), Collective("all-reduce", GiB, 64), policy="themis", intra="scf",
                   timing="astra-sim-1.0", algorithms=HD3, endpoint_delay_ns=10,
                   tie_order="dim")
    assert res.makespan_ns == 13635870


# -- R2 ---------------------------------------------------------------------------
R2 = [
    (64 * MiB, "baseline", "fifo", 1925120),
    (64 * MiB, "themis", "fifo", 1481600),
    (64 * MiB, "themis", "scf", 1497820),
    (GiB, "baseline", "fifo", 16106240),
    (GiB, "themis", "fifo", 9015680),
    (GiB, "themis", "scf", 9015680),
]


@pytest.mark.parametrize(("size", "inter", "intra", "want"), R2)
def test_r2(size: int, inter: str, intra: str, want: int) -> None:
    res = simulate_astra(tpu(), r2_system(inter, intra), Collective("all-reduce", size, 64))
    assert res.makespan_ns == want
    assert check(res.schedule) == []


def test_r2_from_the_run_files() -> None:
    astra = _read()
    net = astra.read_network(REF / "tutorial/tpu.json")
    for size, inter, intra, want in R2:
        name = f"{inter}_{intra.upper()}"
        system = astra.read_system(REF / f"runs/sys_tpu_s64_{name}.txt")
        coll = Collective("all-reduce", size, system.chunks)
        assert simulate_astra(net, system, coll).makespan_ns == want


# -- phase lists ---------------------------------------------------------------------
def _phases(res) -> set[tuple]:
    return {cp.phases for cp in res.schedule.chunks}


@pytest.mark.parametrize("kind", ["reduce-scatter", "all-gather"])
@pytest.mark.parametrize("inter", ["baseline", "themis"])
def test_rs_and_ag_collectives_run(kind: str, inter: str) -> None:
    system = r1_system(inter, "scf")
    res = simulate_astra(switch3(), system, Collective(kind, GiB, 64))
    assert res.makespan_ns > 0
    assert check(res.schedule) == []
    phase = "RS" if kind == "reduce-scatter" else "AG"
    for cp in res.schedule.chunks:
        assert cp.phases == tuple((phase, d) for d in cp.route)
    if inter == "baseline":
        want = (0, 1, 2) if kind == "reduce-scatter" else (2, 1, 0)
        assert {cp.route for cp in res.schedule.chunks} == {want}
    else:
        # The first chunk always falls back to 0..D-1 (ascending, also for all-gather).
        assert res.schedule.chunks[0].route == (0, 1, 2)
        assert len({cp.route for cp in res.schedule.chunks}) > 1


def test_all_reduce_phase_lists() -> None:
    base = simulate_astra(switch3(), r1_system("baseline", "fifo"),
                          Collective("all-reduce", 64 * MiB, 8))
    assert _phases(base) == {(("RS", 0), ("RS", 1), ("AR", 2), ("AG", 1), ("AG", 0))}
    them = simulate_astra(switch3(), r1_system("themis", "fifo"),
                          Collective("all-reduce", 64 * MiB, 8))
    for cp in them.schedule.chunks:
        r = cp.route
        assert cp.phases == tuple(("RS", d) for d in r) + tuple(("AG", d) for d in r[::-1])
    # Without localBWAware ASTRA-sim runs a whole all-reduce on every dimension.
    plain = simulate_astra(switch3(), replace(r1_system("baseline", "fifo"),
                                              collective_optimization="baseline"),
                           Collective("all-reduce", 64 * MiB, 8))
    assert _phases(plain) == {(("AR", 0), ("AR", 1), ("AR", 2))}


def test_astra_plan_shapes() -> None:
    assert stage_plan("all-reduce", (1, 0), shape=PlanShape.LOCAL_BW_AWARE) == (
        ("RS", 1), ("AR", 0), ("AG", 1))
    assert stage_plan("all-reduce", (1, 0), shape=PlanShape.AR_PER_DIM) == (
        ("AR", 1), ("AR", 0))
    assert stage_plan("all-reduce", (1, 0)) == (("RS", 1), ("RS", 0), ("AG", 0), ("AG", 1))
    assert stage_plan("all-gather", (1, 0), shape=PlanShape.AR_PER_DIM) == (
        ("AG", 1), ("AG", 0))


def test_size_one_dimensions_get_no_stage() -> None:
    net = Network((Dimension("Switch", 8, 50.0, 1.0, links=1),
                   Dimension("Switch", 1, 50.0, 1.0, links=1),
                   Dimension("Switch", 8, 50.0, 1.0, links=1)))
    for inter in ("baseline", "themis"):
        res = simulate_astra(net, r1_system(inter, "fifo"), Collective("all-reduce", GiB, 16))
        assert all(1 not in cp.route for cp in res.schedule.chunks)


# -- policies ------------------------------------------------------------------------
def test_baseline_and_round_robin_routes() -> None:
    net = switch3()
    ag = Collective("all-gather", 512 * 64, 4)
    assert Baseline(astra=True).routes(ag, net) == [(2, 1, 0)] * 4
    assert RoundRobin(astra=True).routes(ag, net) == [(2, 1, 0), (1, 0, 2), (0, 2, 1), (2, 1, 0)]
    ar = Collective("all-reduce", 64, 4)
    assert RoundRobin(astra=True).routes(ar, net)[:3] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


def test_themis_matches_the_generic_greedy_on_all_reduce() -> None:
    for net, size in [(switch3(), GiB), (tpu(), 64 * MiB)]:
        coll = Collective("all-reduce", size, 64)
        assert Themis(astra=True).routes(coll, net) == Themis().routes(coll, net)


def test_themis_all_gather_index_quirk() -> None:
    # Dimension 0: Switch 8 at 50; dimension 1: Switch 4 at 100 (B1/B0 = 2).
    net = Network((Dimension("Switch", 8, 50.0, 1.0, links=1),
                   Dimension("Switch", 4, 100.0, 1.0, links=1)))
    shard_chunk = 1 << 20
    coll = Collective("all-gather", shard_chunk * 32, 1)
    routes, loads = Themis(astra=True).routes_with_loads(coll, net)
    assert routes == [(0, 1)]
    # Fallback: the list is reversed, so dimension 0's term (c * 7 / 1) lands on
    # dimension 1's entry and dimension 1's term (8c * 3 / 2) on dimension 0's.
    assert loads == {1: 7.0, 0: 12.0}


# -- queues and ties ----------------------------------------------------------------
def test_astra_scf_queue() -> None:
    assert canonical_intra("astra-scf") == "astra-scf"
    # stage ids 1..5 with these input sizes; stage 2 is an all-reduce stage
    table = StageTable(input_bytes=[0.0, 100.0, 50.0, 100.0, 80.0, 60.0],
                       phase=["RS", "RS", "AR", "RS", "RS", "RS"])
    q = AstraScf(table)
    q.push(1)
    q.push(2)   # all-reduce stage: appended although smaller
    q.push(3)   # equal size: before the older one
    q.push(4)
    q.push(5)   # before the first waiting stage >= 60
    assert [q.pop() for _ in range(len(q))] == [5, 4, 3, 1, 2]
    assert q.pop() is None


def test_baseline_scf_with_all_reduce_stages() -> None:
    # SCF with the localBWAware baseline: AR stages go down the FIFO path.
    coll = Collective("all-reduce", 64 * MiB, 64)
    res = simulate_astra(tpu(), r2_system("baseline", "scf"), coll)
    assert check(res.schedule) == []
    assert res.schedule.meta["intra"] == "astra-scf"


def test_boost_mode_picks_the_tie_order() -> None:
    coll = Collective("all-reduce", GiB, 64)
    on = simulate_astra(switch3(), r1_system("themis", "scf", True), coll)
    off = simulate_astra(switch3(), r1_system("themis", "scf", False), coll)
    assert on.schedule.meta["tie_order"] == "dim"
    assert off.schedule.meta["tie_order"] == "start"
    assert on.schedule.meta["policy"] == "themis"


def test_defaults_and_bad_policies() -> None:
    res = simulate_astra(switch3(), SystemConfig(), Collective("all-reduce", 64 * MiB, 4))
    assert res.schedule.endpoint_delay_ns == 10.0
    assert res.schedule.algorithms == HD3  # the Switch default
    with pytest.raises(InputError):
        simulate_astra(switch3(), SystemConfig(inter="fixed"), Collective("all-reduce", 64, 1))


def test_an_explicit_policy_overrides_the_system() -> None:
    from themis.policies import FixedRoute

    coll = Collective("all-reduce", 64 * MiB, 8)
    res = simulate_astra(switch3(), r1_system("themis", "fifo"), coll,
                         policy=FixedRoute((2, 0, 1)))
    assert _phases(res) == {(("RS", 2), ("RS", 0), ("AR", 1), ("AG", 0), ("AG", 2))}
    assert res.schedule.meta["policy"] == "fixed"
    assert check(res.schedule) == []
    with pytest.raises(InputError):
        simulate_astra(switch3(), r1_system("themis", "fifo"), coll,
                       policy=FixedRoute((0, 1)))


def test_halving_doubling_all_reduce_doubles_from_an_even_size() -> None:
    """HalvingDoubling.cc halves its integer message size once more after the last
    halving step and doubles it at the turn: an odd last halving message m_k makes
    the doubling half start from 2 floor(m_k / 2). By hand on the tutorial DGX-2's
    second dimension (Switch 16, 6.25 GB/s, 500 ns, d = 10) with D = 93,750: halving
    46875, 23437, 11718, 5859 -> 7984 + 4492 + 2746 + 1873 ns; doubling 5858, 11716,
    23432, 46864 -> 1872 + 2745 + 4491 + 7983 ns (not the mirror: 4 ns less); the
    reduce costs R are 0; 9 endpoint delays. ASTRA-sim 1.0 prints per-message
    averages 4273.25 ns for this phase (= 34186 / 8)."""
    net = Network((Dimension("Switch", 16, 150.0, 500.0, links=6),
                   Dimension("Switch", 16, 6.25, 500.0, links=1)), name="dgx2")
    tm = AstraSim10Timing(net, ("halvingDoubling", "halvingDoubling"), 10)
    assert tm.stage("AR", 1, 93750).duration_ns == 9 * 10 + 17095 + 17091
    assert tm.last_message_ns("AR", 1, 93750) == 7983
    # an even m_k (D = 93,760: 5860) doubles back through the same sizes
    half = tm.stage("RS", 1, 93760).duration_ns - 5 * 10
    assert tm.stage("AR", 1, 93760).duration_ns == 9 * 10 + 2 * half


def test_vgg16_on_the_tutorial_dgx2_files_ends_where_astra_sim_ends(capsys) -> None:
    """ASTRA-sim 1.0 (tag tutorial-asplos2023) prints 'all passes finished at time:
    6252757' for tutorial/vgg16.txt on dgx2.json with dgx2.txt; it was 73 ns later
    here before the doubling half's sizes were right (issue 23)."""
    from reports.cli import main

    tut = REF / "tutorial"
    assert main(["train", str(tut / "vgg16.txt"), str(tut / "dgx2.json"), "--system",
                 str(tut / "dgx2.txt"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["end_ns"] == 6252757


def test_last_event_before_a_stage_end() -> None:
    """Without boost mode ASTRA-sim 1.0 releases the stage ends of one tick from one
    NPU's event list, in the order their last events were registered
    (``Sys::register_event``). A ring step ends with the memory-bus hop
    (``MemBus::send_from_NPU_to_MA``, the endpoint delay d) and a reduce-scatter step
    then with its reduce, R(m) = 3 floor(m / 500000) ns, when that is not 0. By hand
    on the 4 x 4 ring network of the held-out runs (d = 10): a reduce-scatter of
    3,211,392 bytes reduces 802,848-byte pieces, R = 3, so its last event is 3 ns
    before its end; one of 128,031 bytes (32,007-byte pieces, R = 0), an all-gather of
    131,104 bytes and a halvingDoubling stage end 10 ns after their last event.
    (The binary's trace: the all-gather and the 3,211,392-byte reduce-scatter ending at
    1,279,555 ns had their event lists created at 1,279,545 and 1,279,552.)"""
    net = Network((Dimension("Ring", 4, 100.0, 1.0, links=2),
                   Dimension("Switch", 4, 50.0, 1.0, links=1)), name="t")
    tm = AstraSim10Timing(net, ("ring", "halvingDoubling"), 10)
    assert tm.last_event_ns("RS", 0, 3211392) == 3
    assert tm.last_event_ns("RS", 0, 4 * 1_500_000) == 9
    assert tm.last_event_ns("RS", 0, 128031) == 10
    assert tm.last_event_ns("AG", 0, 131104) == 10
    assert tm.last_event_ns("RS", 1, 3211392) == 10
    assert tm.last_event_ns("AG", 1, 3211392) == 10
    # the final-message rule ordered these the other way: the reduce-scatter's final
    # message (802,848 bytes) was scheduled long before the all-gather's
    assert tm.last_message_ns("RS", 0, 3211392) > tm.last_message_ns("AG", 0, 131104)
