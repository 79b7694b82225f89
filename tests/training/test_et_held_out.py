"""Held-out runs of the real ASTRA-sim 2.x binary (``tests/data/astra-sim-2.x/
held-out-training.json``, our measurements): ETs that ``themis convert`` writes from 1.0
workload files (raw as chakra's converter, ``--faithful`` with ``involved_dim`` and
communicator groups, or ``--program``), on 1-D to 4-D networks and system files the R5 runs never
exercised, regenerated here and trained under ``--timing astra-sim-2``: the end and the
exposed communication the binary printed, to the ns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "astra-sim-2.x" / "held-out-training.json"
RUNS = json.loads(DATA.read_text())["runs"]


def _inputs(tmp_path: Path, run: dict) -> tuple[Path, Path, Path, Path]:
    """The run's network and system files and its ETs, regenerated into ``tmp_path``."""
    workload = ROOT / run["workload"]
    if not workload.is_file():
        pytest.skip(f"{run['workload']} is missing")
    net = tmp_path / "network.yml"
    net.write_text(run["network_yaml"])
    system = tmp_path / "system.json"
    system.write_text(json.dumps(run["system"]))
    (tmp_path / "et").mkdir()
    prefix = tmp_path / "et" / "w"
    flags = [{"NETWORK": str(net), "SYSTEM": str(system)}.get(a, a) for a in run["convert"]]
    assert main(["convert", str(workload), "--npus", str(run["npus"]), "--passes",
                 str(run["passes"]), "--out", str(prefix), *flags]) == 0
    return net, system, prefix, Path(f"{prefix}.comm_groups.json")


def _train(capsys, tmp_path: Path, run: dict) -> tuple[int, str, str]:
    net, system, prefix, groups = _inputs(tmp_path, run)
    capsys.readouterr()
    argv = ["train", str(prefix), str(net), "--system", str(system), "--timing", "astra-sim-2",
            "--json"]
    if groups.is_file():
        argv += ["--comm-group", str(groups)]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_runs_cover_what_r5_does_not() -> None:
    """1-D to 4-D networks of every topology kind, FIFO and LIFO, baseline and
    localBWAware, every algorithm, comm groups and involved_dim, several passes."""
    dims = {r["network_yaml"].count(",", 0, r["network_yaml"].index("\n")) + 1 for r in RUNS}
    kinds = {k for r in RUNS for k in ("Ring", "Switch", "FullyConnected")
             if k in r["network_yaml"]}
    systems = {(r["system"]["scheduling-policy"], r["system"]["collective-optimization"])
               for r in RUNS}
    algos = {a for r in RUNS for a in r["system"]["all-reduce-implementation"]}
    assert dims == {1, 2, 3, 4} and kinds == {"Ring", "Switch", "FullyConnected"}
    assert systems == {(p, o) for p in ("FIFO", "LIFO") for o in ("baseline", "localBWAware")}
    assert algos == {"ring", "direct", "halvingDoubling"}
    assert any("--no-comm-groups" in r["convert"] for r in RUNS)
    assert any("--faithful" in r["convert"] and "--no-comm-groups" not in r["convert"]
               for r in RUNS)
    assert any("--program" in r["convert"] for r in RUNS)
    assert any(r["passes"] > 1 for r in RUNS) and len(RUNS) >= 30


@pytest.mark.parametrize("run", [r for r in RUNS if r["themis"] == "exact"],
                         ids=lambda r: r["name"])
def test_held_out_runs_to_the_nanosecond(tmp_path, capsys, run: dict) -> None:
    code, out, err = _train(capsys, tmp_path, run)
    assert code == 0, err
    data = json.loads(out)
    assert (data["end_ns"], data["exposed_comm_ns"]) == (run["end_ns"], run["exposed_comm_ns"])


@pytest.mark.parametrize("run", [r for r in RUNS if r["themis"] == "refused"],
                         ids=lambda r: r["name"])
def test_held_out_runs_refused_by_design(tmp_path, capsys, run: dict) -> None:
    """What 2.x runs silently but the project refuses in one line (``why``)."""
    code, out, err = _train(capsys, tmp_path, run)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "implementation" in err
