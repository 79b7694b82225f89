"""``themis report``: README with tables and summary, results.csv, plots."""

from __future__ import annotations

import csv
import io
import textwrap
from pathlib import Path

import pytest

from reports.cli import main
from reports.report import PLOT_FILES, build_report
from reports.sweep import run_sweep

PNG = b"\x89PNG\r\n\x1a\n"


def sweep(tmp: Path, spec_text: str) -> Path:
    spec = tmp / "spec.toml"
    spec.write_text(textwrap.dedent(spec_text))
    db = tmp / "r.sqlite"
    out = run_sweep(str(spec), str(db), workers=1, stream=io.StringIO())
    assert out.failed == 0
    return db


@pytest.fixture(scope="module")
def solved_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sweep(tmp_path_factory.mktemp("solved"), """
        title = "Tiny optimality gap"
        description = "Two small instances."
        time_limit_s = 20
        threads = 1
        ag_order = ["reverse", "free"]

        [[grid]]
        networks = ["small-2d"]
        sizes = ["16MiB"]
        chunks = [2, 3]
        endpoint_delay_ns = [10]
        solvers = ["cpsat"]
    """)


def test_report_from_a_solved_sweep(solved_db: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    assert main(["report", str(solved_db), "--out", str(out)]) == 0
    assert "wrote 5 files" in capsys.readouterr().out
    readme = (out / "README.md").read_text()
    assert readme.startswith("# Tiny optimality gap\n")
    assert f"themis report {solved_db} --out {out}" in readme
    assert "themis sweep " in readme and "wall time" in readme
    assert 'ag_order = ["reverse", "free"]' in readme  # the spec itself
    assert "## Optimality gap of the policies" in readme
    assert "The optimum (reverse AG variant) is proven for 2 of 2 instances" in readme
    assert "| themis/scf |" in readme and "| cpsat (free) |" in readme
    assert "**small-2d 16MiB C=2, delay 10 ns**" in readme
    assert "| method | makespan (µs) | status | gap | gap bound | utilization | runtime (s) |" \
        in readme
    assert "Mean / max gap (%) to the best known" in readme
    assert "slower than baseline" in readme and "mean utilization" in readme
    for name in PLOT_FILES:
        assert (out / name).read_bytes()[:8] == PNG, name
    with open(out / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    # per instance: a bound per AG variant, 6 policies, 2 solvers (one per variant)
    assert len(table) == 2 * (2 + 6 + 2)
    bounds = {(r["instance_key"], r["ag_order"]): float(r["lower_bound_ns"]) for r in table
              if r["kind"] == "bound"}
    assert len(bounds) == 4
    for r in table:
        if r["kind"] == "bound":
            continue
        variant = "free" if r["kind"] == "solver" and r["ag_order"] == "free" else "reverse"
        # every row is scored against the bound of its own variant: never a negative gap
        assert float(r["best_lower_bound_ns"]) >= bounds[(r["instance_key"], variant)]
        assert float(r["gap_bound"]) >= -1e-9 and float(r["gap"]) >= -1e-9
    assert "schedule_json" not in table[0]
    assert {r["proven_optimal"] for r in table} == {"1"}
    best = [r for r in table if r["gap"] not in ("", None) and float(r["gap"]) == 0.0]
    assert any(r["method"] == "cpsat" for r in best)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_report_at_scale_without_solvers(tmp_path: Path) -> None:
    db = sweep(tmp_path, """
        [[grid]]
        networks = ["3d_switch", "small-4d"]
        sizes = ["64MiB"]
        chunks = [16, 32]
        policies = ["baseline", "themis"]
        intra = ["fifo"]
    """)
    written = build_report(db, tmp_path / "rep")
    assert {p.name for p in written} == {"README.md", "results.csv", *PLOT_FILES}
    readme = (tmp_path / "rep" / "README.md").read_text()
    assert "## Optimality gap of the policies" not in readme
    assert "| themis/fifo vs baseline/fifo | 4 |" in readme
    assert "mean gap to LB" in readme and "LB3 is the largest on" in readme
    assert "Per network: mean utilization per method" in readme


def test_report_needs_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "none.sqlite"), "--out", str(tmp_path)]) == 2
    assert "none.sqlite" in capsys.readouterr().err
