"""What ``themis train`` shows of a Chakra-trace run: every node's issue and end per class of
identical ranks (``--json``), each class's end, and ``--timeline`` (both slots of each
class over time), on a trace whose ranks differ, derived by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main
from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.trace import Trace, write_et

NET = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware"}


def _trace(compute_us: int) -> Trace:
    ar = Node(1, "ar", 7, data_deps=[0], attrs=[Attribute("comm_type", "int64", 0),
                                                Attribute("comm_size", "int64", 1 << 20)])
    return Trace(GlobalMetadata(), [Node(0, "fwd", 4, duration_micros=compute_us), ar])


def _inputs(tmp_path: Path) -> tuple[str, str, str]:
    """Rank 0 computes 5 us, ranks 1-3 2 us, each then one 1 MiB all-reduce."""
    for rank in range(4):
        write_et(_trace(5 if rank == 0 else 2), tmp_path / f"t.{rank}.et")
    (tmp_path / "net.yml").write_text(NET)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    return str(tmp_path / "t"), str(tmp_path / "net.yml"), str(tmp_path / "sys.json")


def test_ranks_that_differ_each_have_their_nodes_and_end(tmp_path, capsys) -> None:
    """With T the all-reduce alone (``simulate --timing astra-sim-2``): rank 0's all-reduce
    issues at 5,000 ns and ends at 5,000 + T, ranks 1-3's at 2,000 and 2,000 + T; the run
    ends at the larger; the timeline is drawn."""
    prefix, net, system = _inputs(tmp_path)
    assert main(["simulate", net, "--system", system, "--timing", "astra-sim-2", "--size",
                 "1MiB", "--chunks", "1", "--json"]) == 0
    t = json.loads(capsys.readouterr()[0])["makespan_ns"]
    assert t == int(t) and t > 0
    png = tmp_path / "tl.png"
    assert main(["train", prefix, net, "--system", system, "--json", "--timeline",
                 str(png)]) == 0
    data = json.loads(capsys.readouterr()[0])
    classes = {tuple(c["ranks"]): c for c in data["rank_classes"]}
    assert set(classes) == {(0,), (1, 2, 3)}
    for ranks, compute in (((0,), 5000), ((1, 2, 3), 2000)):
        nodes = {n["name"]: n for n in classes[ranks]["nodes"]}
        assert (nodes["fwd"]["issue_ns"], nodes["fwd"]["end_ns"]) == (0, compute)
        assert (nodes["ar"]["issue_ns"], nodes["ar"]["end_ns"]) == (compute, compute + t)
        assert nodes["ar"]["kind"] == "collective" and nodes["ar"]["size_bytes"] == 1 << 20
        assert classes[ranks]["end_ns"] == compute + t
    assert data["end_ns"] == 5000 + t and data["exposed_comm_ns"] == t
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["train", prefix, net, "--system", system]) == 0
    out = capsys.readouterr()[0]
    assert "ranks 1-3" in out and f"{2000 + int(t):,}" in out


@pytest.mark.parametrize("bad", ["tl.txt", "missing/tl.png"])
def test_a_bad_timeline_path_is_one_line_before_anything_runs(tmp_path, capsys, bad) -> None:
    prefix, net, system = _inputs(tmp_path)
    assert main(["train", prefix, net, "--system", system, "--timeline",
                 str(tmp_path / bad)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--timeline" in err


def test_compare_runs_2x_own_baseline_beside_the_policy(tmp_path, capsys) -> None:
    """--compare adds baseline / FIFO's end on the same traces and timing (what
    ``--policy baseline --intra fifo`` gives) and the speed-up over it."""
    prefix, net, system = _inputs(tmp_path)
    assert main(["train", prefix, net, "--system", system, "--policy", "themis", "--intra",
                 "scf", "--timing", "alpha-beta", "--compare", "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert main(["train", prefix, net, "--system", system, "--policy", "baseline", "--intra",
                 "fifo", "--timing", "alpha-beta", "--json"]) == 0
    base = json.loads(capsys.readouterr()[0])["end_ns"]
    assert data["baseline_end_ns"] == base
    assert data["speedup_over_baseline"] == pytest.approx(base / data["end_ns"])


def test_timeline_draws_the_slowest_classes_with_one_colour_per_collective_position() -> None:
    """Of 10 rank classes the 8 slowest are drawn (2 rows each); the k-th collective of
    every class has one colour though chakra offsets each rank's ids."""
    from reports.report.training_plots import MAX_ET_CLASSES, plot_et_timeline
    from themis.training.et_run import ETResult, NodeRun

    classes = [([r], [NodeRun(100 * r, "c", "compute", 0, 1000),
                      NodeRun(100 * r + 1, "ar", "collective", 1000, 2000 + r, "all-reduce",
                              8)]) for r in range(10)]
    ax = plot_et_timeline(ETResult(2009, 1000, 1009, 10, classes))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 2 * MAX_ET_CLASSES == 16
    assert "rank 0: comm" not in labels and "rank 1: comm" not in labels  # the 2 fastest
    assert "rank 9: comm" in labels and "8 slowest of 10" in ax.get_xlabel()
    colours = {tuple(c.get_facecolor()[0]) for c in ax.collections
               if len(c.get_facecolor()) and c.get_facecolor()[0][0] != c.get_facecolor()[0][1]}
    assert len(colours) <= 2  # the exposed shading and the one collective position
