"""The ``astra-sim-2`` timing: ASTRA-sim 2.x's reference runs R4 to the nanosecond,
the worked example of timing.md §7 by hand, 2.x's chunking, its refusals, policies
on it, and the checker accepting every 2.x-timed schedule.

Reference: ``shared/reference/astra-sim-2.x`` (timing.md; ``runs/runs-R4.json``,
copied to ``tests/data/astra-sim-2.x``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.cli import main
from themis.astra2_run import simulate_astra2
from themis.checker import check
from themis.collective import Collective
from themis.schedule import Schedule
from themis.simulator import replay
from themis.timing import make_timing, timing_names
from topologies.astra import parse_network_yaml, parse_system
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.system import SystemConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "astra-sim-2.x"
RUNS = json.loads((DATA / "runs-R4.json").read_text())["runs"]
FINISHED = [r for r in RUNS if r["rc"] == 0]

N2A_YAML = "topology: [ Ring, Switch ]\nnpus_count: [ 4, 8 ]\nbandwidth: [ 200.0, 50.0 ]\n" \
           "latency: [ 100.0, 500.0 ]\n"
N2A_SYSTEM = {
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"],
    "reduce-scatter-implementation": ["ring", "ring"],
    "collective-optimization": "localBWAware", "local-mem-bw": 1600,
}


def _files(tmp_path: Path, name: str, yaml_text: str, system: dict) -> tuple[str, str]:
    net, sys_ = tmp_path / f"{name}.yml", tmp_path / f"{name}.json"
    net.write_text(yaml_text)
    sys_.write_text(json.dumps(system))
    return str(net), str(sys_)


def _argv(net: str, sys_: str, collective: str, size: int, chunks: int) -> list[str]:
    return ["simulate", net, "--system", sys_, "--collective", collective, "--size", str(size),
            "--chunks", str(chunks), "--policy", "baseline", "--timing", "astra-sim-2", "--json"]


def test_registered() -> None:
    assert "astra-sim-2" in timing_names()


# -- R4: every finished run to the nanosecond, through the command line ------------------
@pytest.mark.parametrize("r", FINISHED, ids=[r["name"] for r in FINISHED])
def test_r4_run_to_the_nanosecond(r: dict, tmp_path: Path, capsys) -> None:
    net, sys_ = _files(tmp_path, r["name"], r["network_yaml"], r["system_json"])
    assert main(_argv(net, sys_, r["collective"], r["size_bytes_project"], r["chunks"])) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["makespan_ns"] == r["astra2_ns"]
    assert data["timing"] == "astra-sim-2" and data["policy"] == "baseline"


def test_r4_aborting_run_is_refused(tmp_path: Path, capsys) -> None:
    (r,) = [r for r in RUNS if r["rc"] != 0]
    net, sys_ = _files(tmp_path, r["name"], r["network_yaml"], r["system_json"])
    assert main(_argv(net, sys_, r["collective"], r["size_bytes_project"], r["chunks"])) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"{sys_}: endpoint-delay = 0: ASTRA-sim 2.x aborts" in err


# -- timing.md §7 by hand ------------------------------------------------------------------
def test_worked_example_by_hand() -> None:
    """N2a all-reduce 64 MiB, 1 split, ring/ring, localBWAware, d = 10, local-mem-bw 1600."""
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    tm = make_timing("astra-sim-2", net, ("ring", "ring"), 10.0, local_mem_bw_GBps=1600)
    MiB = 1 << 20
    beta0, beta1 = 200 * 2**30 / 1e9, 50 * 2**30 / 1e9  # 214.748 and 53.687 bytes/ns
    # RS on dim 0 (n = 4): messages of 16 MiB, one hop of 100 ns.
    n_rs = math.floor(100 + 16 * MiB / beta0)
    p_rs = 3 * math.floor(16 * MiB / 1600)
    assert (n_rs, p_rs) == (78225, 31455)
    assert tm.stage("RS", 0, 64 * MiB).duration_ns == 4 * 10 + 3 * (n_rs + p_rs) == 329080
    # AR on dim 1 (n = 8, Switch: 2 hops of 500 ns): messages of 2 MiB.
    n_ar = math.floor(2 * 500 + 2 * MiB / beta1)
    p_ar = 3 * math.floor(2 * MiB / 1600)
    assert (n_ar, p_ar) == (40062, 3930)
    assert tm.stage("AR", 1, 16 * MiB).duration_ns == 15 * 10 + 14 * n_ar + 7 * p_ar == 588528
    # AG on dim 0: messages of 16 MiB, no reduction.
    assert tm.stage("AG", 0, 16 * MiB).duration_ns == 4 * 10 + 3 * n_rs == 234715
    system = parse_system(json.dumps(N2A_SYSTEM), "n2a.json")
    res = simulate_astra2(net, system, Collective("all-reduce", 64 * MiB, 1))
    assert res.makespan_ns == 329080 + 588528 + 234715 == 1152323
    assert [(s.phase, s.dim) for s in res.schedule.stages] == [("RS", 0), ("AR", 1), ("AG", 0)]
    assert check(res.schedule) == []


def test_message_and_reduce_costs_by_hand() -> None:
    # FullyConnected 4 and Switch 4 at 100 GB/s, 30 ns; a Ring 8 at 100 GB/s, 10 ns.
    net = Network((Dimension("FullyConnected", 4, 100.0, 30.0), Dimension("Switch", 4, 100.0,
                   30.0), Dimension("Ring", 8, 100.0, 10.0)))
    tm = make_timing("astra-sim-2", net, ("direct", "direct", "halvingDoubling"), 5.0)
    beta = 100 * 2**30 / 1e9
    m = 1000000
    # Every kind gets the whole YAML bandwidth; hops FC 1, Switch 2, Ring min(d, n - d).
    assert tm.message_ns(0, m, 3) == math.floor(30 + m / beta)
    assert tm.message_ns(1, m, 1) == math.floor(60 + m / beta)
    assert [tm.message_ns(2, m, s) for s in (1, 3, 4, 5, 7)] == \
        [math.floor(h * 10 + m / beta) for h in (1, 3, 4, 3, 1)]
    assert tm.reduce_ns(m) == 0  # no local-mem-bw: no reduce cost
    # direct RS on the FC: 2d + N*(D/n), no P; halvingDoubling AG on the Ring (k = 3).
    assert tm.stage("RS", 0, 4 * m).duration_ns == 2 * 5 + math.floor(30 + m / beta)
    ag = 4 * 5 + sum(math.floor(min(p, 8 - p) * 10 + (m << j) / beta)
                     for j, p in enumerate((4, 2, 1)))
    assert tm.stage("AG", 2, m).duration_ns == ag


# -- chunking ------------------------------------------------------------------------------
def test_chunking_all_chunks_of_floor_size() -> None:
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    tm = make_timing("astra-sim-2", net, None, 10.0)
    # S = 10^8 in 3 splits: 4 chunks of 33,333,333 bytes (the last one not shortened).
    run = tm.chunked(Collective("all-reduce", 10**8, 3))
    assert run.chunk_sizes() == [33333333] * 4
    # Tiny sizes: c = 100 // 16 = 6 < 32 NPUs, so Sys::determine_chunk_size raises the
    # chunk to 32 and rewrites S (taken by reference) to 16 x 32 = 512: exactly 16 chunks
    # of 32 bytes (issue 22, deviation 4; the project used to run ceil(100 / 32) = 4).
    tiny = tm.chunked(Collective("all-reduce", 100, 16))
    assert tiny.chunk_sizes() == [32] * 16 and tiny.size_bytes == 512
    assert tm.chunked(tiny) == tiny
    # ... but not for an all-gather: 64 KiB output, 2 KiB shard in 64 splits of 32 bytes.
    ag = tm.chunked(Collective("all-gather", 65536, 64))
    assert ag.chunk_sizes() == [32 * 32] * 64
    assert tm.chunked(run) == run  # already 2.x's chunks


# -- refusals: one line, exit 2, naming the file, the key and the value ------------------
def _system(**changes: object) -> dict:
    system = dict(N2A_SYSTEM)
    for key, value in changes.items():
        key = key.replace("_", "-")
        if value is None:
            system.pop(key)
        else:
            system[key] = value
    return system


REFUSALS = [
    ("endpoint-delay-0", N2A_YAML, _system(endpoint_delay=0), "sys", "endpoint-delay = 0",
     "aborts"),
    ("five-dims", "topology: [Ring, Ring, Ring, Ring, Switch]\nnpus_count: [2, 2, 2, 2, 2]\n"
     "bandwidth: [50, 50, 50, 50, 50]\nlatency: [1, 1, 1, 1, 1]\n",
     _system(all_reduce_implementation=["ring"] * 5), "net", "topology = ['Ring'",
     "at most 4 dimensions"),
    ("short-list", N2A_YAML, _system(all_reduce_implementation=["ring"]), "sys",
     "all-reduce-implementation = 'ring'", "only the first 1"),
    ("hd-non-power-of-two", N2A_YAML.replace("[ 4, 8 ]", "[ 4, 6 ]"),
     _system(all_reduce_implementation=["ring", "halvingDoubling"]), "sys",
     "all-reduce-implementation[1] = 'halvingDoubling'", "deadlocks"),
    ("no-collective-optimization", N2A_YAML, _system(collective_optimization=None), "sys",
     "collective-optimization: missing", "never finishes"),
    ("no-splits", N2A_YAML, _system(preferred_dataset_splits=None), "sys",
     "preferred-dataset-splits: missing", "divides by zero"),
    ("double-binary-tree", N2A_YAML,
     _system(all_reduce_implementation=["ring", "doubleBinaryTree"]), "sys",
     "all-reduce-implementation[1] = 'doubleBinaryTree'", "not modelled yet"),
    ("custom", N2A_YAML, _system(all_reduce_implementation_custom=["ar.et"]), "sys",
     "all-reduce-implementation-custom = ['ar.et']", "not modelled yet"),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refusal(case: tuple, tmp_path: Path, capsys) -> None:
    name, yaml_text, system, where, what, why = case
    net, sys_ = _files(tmp_path, name, yaml_text, system)
    argv = ["simulate", net, "--system", sys_, "--size", "1MiB", "--timing", "astra-sim-2"]
    if "preferred-dataset-splits" in system:
        argv += ["--chunks", "4"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"{net if where == 'net' else sys_}: {what}" in err and why in err


def test_endpoint_delay_flag_0_refused(capsys) -> None:
    assert main(["simulate", "small-2d", "--timing", "astra-sim-2", "--endpoint-delay",
                 "0"]) == 2
    err = capsys.readouterr().err
    assert "--endpoint-delay = 0" in err and "aborts" in err


def test_library_refusals() -> None:
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    with pytest.raises(InputError, match="endpoint-delay"):
        make_timing("astra-sim-2", net, None, 0.0)
    with pytest.raises(InputError, match="doubleBinaryTree is not modelled yet"):
        make_timing("astra-sim-2", net, ("ring", "doubleBinaryTree"), 10.0)
    with pytest.raises(InputError, match="local-mem-bw"):
        make_timing("astra-sim-2", net, None, 10.0, local_mem_bw_GBps=-1.0)
    with pytest.raises(InputError, match="timing options"):
        make_timing("alpha-beta", net, None, 0.0, local_mem_bw_GBps=1.0)


def test_train_refuses_astra2(capsys) -> None:
    assert main(["train", "vgg16", "small-2d", "--timing", "astra-sim-2"]) == 2
    err = capsys.readouterr().err
    assert "--timing = 'astra-sim-2'" in err and "not modelled" in err and err.count("\n") == 1


# -- policies on the 2.x timing -------------------------------------------------------------
def test_themis_and_scf_keys_note(tmp_path: Path, capsys) -> None:
    net, sys_ = _files(tmp_path, "n2a", N2A_YAML, _system(
        inter_dimension_scheduling="themis", intra_dimension_scheduling="SCF",
        preferred_dataset_splits=8))
    assert main(["simulate", net, "--system", sys_, "--timing", "astra-sim-2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "ASTRA-sim 2.x ignores inter-dimension-scheduling" in err
    assert "this tool honours them" in err
    data = json.loads(out)
    assert (data["policy"], data["intra"]) == ("themis", "scf")
    # baseline / FIFO is what 2.x runs; Themis / SCF is a different schedule.
    assert main(["simulate", net, "--system", sys_, "--timing", "astra-sim-2", "--json",
                 "--policy", "baseline"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["intra"] == "fifo" and "--policy replaces them" in err


def test_baseline_all_gather_runs_dimensions_descending() -> None:
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    system = parse_system(json.dumps(N2A_SYSTEM), "n2a.json")
    res = simulate_astra2(net, system, Collective("all-gather", 1 << 20, 1))
    assert [(s.phase, s.dim) for s in res.schedule.stages] == [("AG", 1), ("AG", 0)]


def test_collective_optimization_baseline_is_an_all_reduce_per_dimension() -> None:
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    system = parse_system(json.dumps(_system(collective_optimization="baseline")), "n2a.json")
    res = simulate_astra2(net, system, Collective("all-reduce", 1 << 20, 1))
    assert [(s.phase, s.dim) for s in res.schedule.stages] == [("AR", 0), ("AR", 1)]
    assert not res.schedule.local_bw_aware and check(res.schedule) == []


KINDS = ("Ring", "Switch", "FullyConnected")


@st.composite
def astra2_cases(draw):
    ndims = draw(st.integers(1, 4))
    dims, algos = [], []
    for _ in range(ndims):
        kind = draw(st.sampled_from(KINDS))
        npus = draw(st.sampled_from((2, 3, 4, 8)))
        algo = draw(st.sampled_from(("ring", "direct") + (("halvingDoubling",)
                                                          if npus & (npus - 1) == 0 else ())))
        dims.append(Dimension(kind, npus, float(draw(st.sampled_from((25, 50, 200)))),
                              float(draw(st.sampled_from((1, 100, 700))))))
        algos.append(algo)
    if all(d.npus == 1 for d in dims) or math.prod(d.npus for d in dims) < 2:
        dims.append(Dimension("Ring", 2, 50.0, 1.0))
        algos.append("ring")
    system = SystemConfig(
        chunks=draw(st.integers(1, 12)),
        active_chunks=draw(st.integers(1, 3)),
        endpoint_delay_ns=float(draw(st.sampled_from((1, 10)))),
        all_reduce_algorithms=tuple(algos), reduce_scatter_algorithms=tuple(algos),
        all_gather_algorithms=tuple(algos),
        collective_optimization=draw(st.sampled_from(("baseline", "localBWAware"))),
        local_mem_bw_GBps=draw(st.sampled_from((None, 100.0, 1600.0))), source="sys.json")
    kind = draw(st.sampled_from(("all-reduce", "reduce-scatter", "all-gather")))
    size = draw(st.integers(1, 1 << 22)) * (math.prod(d.npus for d in dims)
                                            if kind == "all-gather" else 1)
    policy = draw(st.sampled_from(("baseline", "themis", "round-robin", "guarded", "lb-mix",
                                   "0")))
    intra = draw(st.sampled_from(("fifo", "scf", "lrw")))
    return Network(tuple(dims)), system, kind, size, policy, intra


@settings(max_examples=40, deadline=None)
@given(astra2_cases())
def test_checker_accepts_every_astra2_schedule(case) -> None:
    net, system, kind, size, policy, intra = case
    if policy == "0":  # a fixed route: the active dimensions reversed
        policy = ",".join(map(str, reversed(net.active_dims)))
    splits = min(system.chunks or 1, size // math.prod(d.npus for d in net.dims)
                 if kind == "all-gather" else size)
    res = simulate_astra2(net, system, Collective(kind, size, max(splits, 1)), policy=policy,
                          intra=intra)
    assert check(res.schedule) == []
    again = Schedule.from_dict(json.loads(res.schedule.to_json()))
    assert again.timing_options == res.schedule.timing_options
    assert check(again) == []
    # A replay of its own dimension orders is never later (and valid too).
    rep = replay(again)
    assert rep.makespan_ns <= res.makespan_ns * (1 + 1e-12) and check(rep.schedule) == []


def test_portfolio_cache_tells_timing_options_apart() -> None:
    from themis.planning.portfolio import _cache_key
    from themis.policies.base import PLAIN_RUN

    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    coll = Collective("all-reduce", 1 << 20, 4)
    keys = {_cache_key(coll, net, make_timing("astra-sim-2", net, None, 10.0,
                                              local_mem_bw_GBps=x), ("fifo",), 1,
                       PLAIN_RUN)
            for x in (100.0, 1600.0)}
    assert len(keys) == 2


@pytest.mark.parametrize("optimization", ["baseline", "localBWAware"])
def test_portfolio_on_astra2_is_checked(optimization: str) -> None:
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    system = parse_system(json.dumps(_system(collective_optimization=optimization,
                                             preferred_dataset_splits=6)), "n2a.json")
    res = simulate_astra2(net, system, Collective("all-reduce", 6 << 20, 6),
                          policy="portfolio", intra=None)
    assert res.schedule.meta["intra"] in ("fifo", "scf", "lrw")
    assert check(res.schedule) == []


@settings(max_examples=8, deadline=None)
@given(astra2_cases())
def test_portfolio_on_astra2_never_slower_than_baseline_or_themis(case) -> None:
    net, system, kind, size, _, intra = case
    splits = min(system.chunks or 1, 6, size // math.prod(d.npus for d in net.dims)
                 if kind == "all-gather" else size)
    coll = Collective(kind, size, max(splits, 1))
    best = simulate_astra2(net, system, coll, policy="portfolio", intra=intra)
    assert check(best.schedule) == []
    for ref in ("baseline", "themis"):
        other = simulate_astra2(net, system, coll, policy=ref, intra=intra)
        assert best.makespan_ns <= other.makespan_ns * (1 + 1e-12)


def test_halving_doubling_all_reduce_doubles_from_an_even_size() -> None:
    """2.x keeps 1.0's HalvingDoubling.cc integer message sizes: after the last halving
    message m_k the doubling half sends 2 floor(m_k / 2) x 1, 2, 4 ... (issue 23). By
    hand on N2a's Switch 8 (50 GB/s, 2 hops of 500 ns), D = 93,752: halving 46876,
    23438, 11719; doubling 11718, 23436, 46872."""
    net = parse_network_yaml(N2A_YAML, "n2a.yml")
    tm = make_timing("astra-sim-2", net, ("halvingDoubling", "halvingDoubling"), 10.0,
                     local_mem_bw_GBps=1600)
    beta1 = 50 * 2**30 / 1e9

    def n(m: int) -> int:
        return math.floor(2 * 500 + m / beta1)

    red = 3 * (23462 // 1600) + 3 * (11731 // 1600)
    want = 7 * 10 + sum(n(m) for m in (46924, 23462, 11731, 11730, 23460, 46920)) + red
    assert tm.stage("AR", 1, 93848).duration_ns == want
    mirror = 7 * 10 + 2 * sum(n(m) for m in (46924, 23462, 11731)) + red
    assert want < mirror
