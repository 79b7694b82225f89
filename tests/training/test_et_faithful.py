"""``themis convert --faithful``: ETs that mean what ASTRA-sim 1.0 runs (compute in
microseconds, ``involved_dim`` / ``pg_name`` from the parallelism, a comm-group file),
read back through the reader and run by ``themis train``; the end derived by hand from
the 1.0 run of the same file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reports.cli import main
from themis.training.config import Phase
from themis.training.dims import dimension_mask as dims_mask
from topologies.chakra.faithful import convert_faithful, dimension_mask, group_members
from topologies.chakra.ranks import read_comm_groups, read_ets
from topologies.workload import parse_workload

NET = ("topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\n"
       "latency: [ 500.0, 700.0 ]\n")
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 16, "all-reduce-implementation": ["ring", "ring"],
          "all-gather-implementation": ["ring", "ring"],
          "reduce-scatter-implementation": ["ring", "ring"],
          "all-to-all-implementation": ["ring", "ring"],
          "collective-optimization": "localBWAware"}
#: Three data-parallel layers whose backward input-gradient compute (100 us) outlasts every
#: weight-gradient all-reduce: in 1.0 each all-reduce runs alone, as in the ET's one slot.
DATA3 = ("DATA\n3\n"
         "l0 -1 5000 NONE 0 100000 NONE 0 2000 ALLREDUCE 8192 1\n"
         "l1 -1 4000 NONE 0 100000 NONE 0 1000 ALLREDUCE 16384 1\n"
         "l2 -1 3000 NONE 0 100000 NONE 0 3000 ALLREDUCE 4096 1\n")
HYBRID = ("HYBRID_DATA_MODEL\n2\n"
          "l0 -1 5000 ALLGATHER 4096 4000 ALLREDUCE 8192 3000 ALLREDUCE 16384 1\n"
          "l1 -1 6000 NONE 0 2000 REDUCESCATTER 8192 1000 ALLREDUCE 32768 1\n")


def _files(tmp_path: Path, workload: str) -> tuple[str, str, str]:
    (tmp_path / "w.txt").write_text(workload)
    (tmp_path / "net.yml").write_text(NET)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    return str(tmp_path / "w.txt"), str(tmp_path / "net.yml"), str(tmp_path / "sys.json")


def _json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr()[0])


@pytest.mark.parametrize("timing", ["astra-sim-1.0", "alpha-beta"])
def test_faithful_data_parallel_ends_where_the_1_0_run_ends_less_its_state_changes(
        tmp_path, capsys, timing) -> None:
    """1.0's DATA loop spends one cycle after every compute step but the last
    weight-gradient's input gradient (n forward, n - 1 weight-gradient and n - 1
    input-gradient steps: 3n - 2 = 7 ns for n = 3) before it issues layer 0's all-reduce,
    and one more when it ends; the ET has none of these. Each all-reduce runs alone in
    both, so (T = layer 0's all-reduce in 1.0, which the ET rounds up to a whole ns):
    1.0 end = compute + 7 + T + 1 and ET end = compute + ceil(T)."""
    wl, net, system = _files(tmp_path, DATA3)
    assert main(["convert", wl, "--npus", "8", "--out", str(tmp_path / "f"), "--faithful",
                 "--network", net]) == 0
    said = capsys.readouterr()
    assert "wrote 8 faithful ETs" in said[0] and said[1] == ""  # whole us: nothing rounded
    one = _json(capsys, "train", wl, net, "--system", system, "--timing", timing,
                "--policy", "baseline", "--json")
    et = _json(capsys, "train", str(tmp_path / "f"), net, "--system", system, "--timing",
               timing, "--comm-group", str(tmp_path / "f.comm_groups.json"), "--json")
    compute = 5000 + 4000 + 3000 + 2000 + 1000 + 3000 + 2 * 100000
    assert one["compute_ns"] == et["compute_ns"] == compute
    (last,) = [c for c in one["collectives"] if c["layer"] == 0]
    assert last["issue_ns"] == compute + 7
    t = last["end_ns"] - last["issue_ns"]
    assert one["end_ns"] == pytest.approx(compute + 7 + t + 1, abs=1e-6)
    assert et["end_ns"] == compute + math.ceil(t - 1e-9)
    # every all-reduce ran alone in 1.0 (the premise): each ended before the next issued
    ends = sorted((c["issue_ns"], c["end_ns"]) for c in one["collectives"])
    assert all(a[1] < b[0] for a, b in zip(ends, ends[1:], strict=False))


def test_the_clock_scales_compute_and_rounding_is_said(tmp_path, capsys) -> None:
    """At 2 GHz 5,000 cycles are 2.5 us: written as 3 (half up), one warning line says how
    many were rounded and by how much (500 ns)."""
    wl, net, _ = _files(tmp_path, DATA3)
    assert main(["convert", wl, "--npus", "8", "--out", str(tmp_path / "f"), "--faithful",
                 "--network", net, "--clock-GHz", "2"]) == 0
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "rounded" in err and "500 ns" in err
    trace = read_ets(tmp_path / "f", 8)[0]
    got = {n.name: n.duration_micros for n in trace.nodes if n.type == 4}
    # cycles / 2000 us, half up: 5000 -> 2.5 -> 3, 4000 -> 2, 3000 -> 1.5 -> 2, 2000 -> 1,
    # 1000 -> 0.5 -> 1, 100000 -> 50
    assert got == {"COMP_NODE_l0_FWD": 3, "COMP_NODE_l1_FWD": 2, "COMP_NODE_l2_FWD": 2,
                   "COMP_NODE_l2_BWD_WG": 2, "COMP_NODE_l2_BWD_IG": 50,
                   "COMP_NODE_l1_BWD_WG": 1, "COMP_NODE_l1_BWD_IG": 50,
                   "COMP_NODE_l0_BWD_WG": 1}


@pytest.mark.parametrize("kind", ["DATA", "MICRO", "MODEL", "HYBRID_DATA_MODEL",
                                  "HYBRID_MODEL_DATA", "HYBRID_DLRM"])
@pytest.mark.parametrize("ndims", [1, 2, 3])
def test_masks_are_the_training_simulator_s(kind, ndims) -> None:
    """The converter's table (topologies) equals themis.training.dims' (two codes)."""
    text = f"{kind}{' 0' if kind == 'HYBRID_DLRM' else ''}\n2\n" + \
        "a -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n" * 2
    wl = parse_workload(text, "w.txt")
    for layer in range(2):
        for phase in ("fwd", "ig", "wg"):
            assert dimension_mask(kind, layer, phase, ndims) == dims_mask(
                wl, layer, Phase(phase), ndims, -1), (kind, layer, phase)


@pytest.mark.parametrize(("rank", "mask", "sizes", "want"), [
    (5, (True, False), (4, 2), [4, 5, 6, 7]),     # dim 0 varies fastest
    (5, (False, True), (4, 2), [1, 5]),
    (5, (True, True), (4, 2), list(range(8))),
    (7, (False, True, False), (2, 3, 2), [7, 9, 11]),  # 7 = (1, 0, 1): 1 + 2c + 6
])
def test_group_members_by_hand(rank, mask, sizes, want) -> None:
    assert group_members(rank, mask, sizes) == want


def test_hybrid_groups_and_masks_read_back_and_run(tmp_path, capsys) -> None:
    """HYBRID_DATA_MODEL on 4 x 2: forward and input-gradient collectives span dimension 0
    (groups {0..3} and {4..7}), weight gradients dimension 1 (groups {r, r + 4}); the NONE
    forward collective of l1 is left out and its dependent takes its dependencies. Every
    rank's pg_name names a group holding it; the file reads back through the reader.
    Under alpha-beta the groups run hierarchically over the dimensions they span, exactly
    as involved_dim alone does (--no-comm-groups); under astra-sim-2 each group is
    flattened to one ring over its members (2.x), here the same as involved_dim alone."""
    wl, net, system = _files(tmp_path, HYBRID)
    ets = convert_faithful(HYBRID, (4, 2))
    assert ets.dropped == 1 and ets.rounded == 0
    assert sorted(map(sorted, ets.groups.values())) == [
        [0, 1, 2, 3], [0, 4], [1, 5], [2, 6], [3, 7], [4, 5, 6, 7]]
    ids = {n.id for n in ets.traces[0].nodes}
    for rank, trace in ets.traces.items():
        for n in trace.nodes:
            assert all(d in {i + rank * (max(ids) + 1) for i in range(max(ids) + 1)}
                       for d in n.data_deps)
            pg = n.attr("pg_name")
            mask = n.attr("involved_dim")
            if pg is not None:
                assert rank in ets.groups[pg.value]
                assert group_members(rank, tuple(mask.value), (4, 2)) == ets.groups[pg.value]
    prefix = str(tmp_path / "h")
    assert main(["convert", wl, "--npus", "8", "--out", prefix, "--faithful",
                 "--network", net]) == 0
    capsys.readouterr()
    groups = read_comm_groups(f"{prefix}.comm_groups.json", 8)
    assert {str(k): v for k, v in groups.items()} == ets.groups
    back = read_ets(prefix, 8)
    assert [n.attrs for n in back[5].nodes] == [n.attrs for n in ets.traces[5].nodes]
    with_groups = _json(capsys, "train", prefix, net, "--system", system, "--timing",
                        "alpha-beta", "--comm-group", f"{prefix}.comm_groups.json", "--json")
    assert main(["convert", wl, "--npus", "8", "--out", str(tmp_path / "m"), "--faithful",
                 "--network", net, "--no-comm-groups"]) == 0
    capsys.readouterr()
    assert not (tmp_path / "m.comm_groups.json").exists()
    masks_only = _json(capsys, "train", str(tmp_path / "m"), net, "--system", system,
                       "--timing", "alpha-beta", "--json")
    assert with_groups["end_ns"] == masks_only["end_ns"] > with_groups["compute_ns"]
    assert len(with_groups["rank_classes"]) == 8  # pg_name differs per rank
    # Under astra-sim-2 each group is flattened to one ring over its members: here every
    # group lies along one dimension in ascending order, so that ring is the dimension's
    # own (ring algorithm, 10 ns hops as the system file's endpoint delay), and the run
    # equals involved_dim alone (an independent path: the 2.x system-file runner).
    masks_2 = _json(capsys, "train", str(tmp_path / "m"), net, "--system", system, "--json")
    groups_2 = _json(capsys, "train", prefix, net, "--system", system, "--comm-group",
                     f"{prefix}.comm_groups.json", "--json")
    assert groups_2["end_ns"] == masks_2["end_ns"] > groups_2["compute_ns"]
    assert groups_2["rank_classes"][0]["nodes"] == masks_2["rank_classes"][0]["nodes"]
    # the groups written beside the traces, not given: the message says where they are
    assert main(["train", prefix, net, "--timing", "alpha-beta"]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "no comm-group file is given" in err
    assert "PREFIX.comm_groups.json" in err


@pytest.mark.parametrize(("argv", "says"), [
    (["--faithful"], "--faithful = True: needs --network"),
    (["--network", "NET"], "--network"),
    (["--faithful", "--network", "NET", "--clock-GHz", "0"], "--clock-GHz"),
    (["--faithful", "--network", "small-2d"], "--npus = 8: the network has 16 NPUs"),
])
def test_faithful_refusals_are_one_line(tmp_path, capsys, argv, says) -> None:
    wl, net, _ = _files(tmp_path, DATA3)
    argv = [net if a == "NET" else a for a in argv]
    code = main(["convert", wl, "--npus", "8", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr()[1]
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not list(tmp_path.glob("x.*"))
