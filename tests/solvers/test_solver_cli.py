"""``themis solve`` and ``themis bound`` through :func:`reports.cli.main`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports.cli import main
from tests.solvers.test_bounds import ONE_CHUNK_NS
from themis.schedule import Schedule

NETWORK_YML = """\
topology: [Ring, Switch]
npus_count: [4, 4]
bandwidth: [4, 1]
latency: [10, 50]
"""


@pytest.fixture
def network(tmp_path: Path) -> str:
    path = tmp_path / "net.yml"
    path.write_text(NETWORK_YML)
    return str(path)


def run_json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def test_solve_json(capsys, network: str, tmp_path: Path) -> None:
    sched = tmp_path / "s.json"
    out = run_json(capsys, ["solve", network, "--chunks", "4", "--time-limit", "10",
                            "--threads", "2", "--json", "--schedule-out", str(sched)])
    for key in ("status", "reason", "makespan_ns", "lower_bound_ns", "bound_source",
                "lb3_method", "runtime_s", "solver", "ag_order", "valid", "chunks", "routes",
                "scaling_error_ns"):
        assert key in out
    assert out["status"] == "optimal"
    assert out["solver"] == "cpsat" and out["ag_order"] == "reverse"
    assert out["valid"] is True
    assert out["chunks"] == 4 and sum(out["routes"].values()) == 4
    assert out["lower_bound_ns"] <= out["makespan_ns"] * (1 + 1e-9)
    saved = Schedule.load(sched)
    assert saved.makespan_ns == pytest.approx(out["makespan_ns"])


def test_solve_one_chunk_matches_hand_computation(capsys, network: str) -> None:
    out = run_json(capsys, ["solve", network, "--chunks", "1", "--solver", "highs",
                            "--json"])
    assert out["status"] == "optimal"
    assert out["makespan_ns"] == pytest.approx(ONE_CHUNK_NS, rel=1e-9)


def test_solve_human_output_free_ag(capsys, network: str) -> None:
    assert main(["solve", network, "--chunks", "2", "--ag-order", "free",
                 "--time-limit", "5"]) == 0
    out = capsys.readouterr().out
    assert "status" in out and "makespan" in out and "AG order free" in out


def test_bound_json(capsys, network: str) -> None:
    out = run_json(capsys, ["bound", network, "--chunks", "4", "--json"])
    for key in ("lb0_ns", "lb1_ns", "lb2_ns", "lb3_ns", "lower_bound_ns"):
        assert out[key] > 0
    assert out["lower_bound_ns"] == max(out["lb0_ns"], out["lb1_ns"], out["lb2_ns"], out["lb3_ns"])
    assert out["lb3_method"] in ("optimal", "node-limit", "lp") and out["ag_order"] == "reverse"
    one = run_json(capsys, ["bound", network, "--chunks", "1", "--ag-order", "free",
                            "--json"])
    assert one["lb1_ns"] == pytest.approx(ONE_CHUNK_NS, rel=1e-12)


def test_bound_human_output(capsys, network: str) -> None:
    assert main(["bound", network]) == 0
    out = capsys.readouterr().out
    assert "LB3" in out


@pytest.mark.parametrize("argv,needle", [
    (["solve", "{net}", "--time-limit", "0"], "--time-limit"),
    (["solve", "{net}", "--time-limit", "-3"], "--time-limit"),
    (["solve", "{net}", "--threads", "0"], "--threads"),
    (["solve", "{net}", "--solver", "gurobi"], "--solver"),
    (["solve", "{net}", "--ag-order", "sideways"], "--ag-order"),
    (["bound", "{net}", "--ag-order", "sideways"], "--ag-order"),
    (["solve", "{net}", "--chunks", "0"], "--chunks"),
    (["solve", "{net}", "--solver", "cbc", "--deterministic-time", "1"], "--deterministic-time"),
    (["solve", "{net}", "--node-limit", "10"], "--node-limit"),
    (["solve", "{net}", "--chunks", "40000"], "too large"),
    (["bound", "{net}", "--size", "12 parsecs"], "size"),
])
def test_bad_values_exit_2_with_one_line(capsys, network: str, argv: list[str],
                                         needle: str) -> None:
    argv = [a.replace("{net}", network) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # a flag's type check (argparse): the same one line
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert needle in err and "Traceback" not in err


def test_stdout_is_pure_json_in_a_fresh_process(network: str) -> None:
    """HiGHS prints a banner on file descriptor 1 when first used: it must not leak."""
    proc = subprocess.run([sys.executable, "-m", "reports.cli", "solve", network, "--chunks",
                           "2", "--solver", "highs", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "optimal"


def test_solve_gantt(capsys, network: str, tmp_path: Path) -> None:
    png = tmp_path / "g.png"
    assert main(["solve", network, "--chunks", "2", "--gantt", str(png), "--json"]) == 0
    capsys.readouterr()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_solve_deterministic_json(capsys, network: str) -> None:
    argv = ["solve", network, "--chunks", "6", "--deterministic-time", "0.05", "--json"]
    first, second = run_json(capsys, argv), run_json(capsys, argv)
    assert first["makespan_ns"] == second["makespan_ns"]
    assert first["meta"]["params"]["deterministic_time_s"] == 0.05
    assert first["meta"]["stopped_by"] in ("deterministic", "")
