"""The sweep's ``improve`` method and the report's "Beyond Themis" section."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from reports.cli import main
from reports.sweep import load_spec

SPEC = """\
title = "beyond"
time_limit_s = 20
threads = 1

[improve]
evaluations = 30

[[grid]]
networks = ["small-3d"]
sizes = ["240KiB"]
chunks = [3]
endpoint_delay_ns = [10]
policies = ["baseline", "themis", "portfolio"]
intra = ["fifo", "scf"]
solvers = ["improve"]
"""


def test_improve_in_a_sweep_and_the_beyond_section(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    tasks = load_spec(spec).tasks
    improve = [t for t in tasks if t.method.name == "improve"]
    assert len(improve) == 1 and str(improve[0].method.ag_order) == "reverse"
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "1"]) == 0
    assert main(["report", str(db), "--out", str(out)]) == 0
    text = (out / "README.md").read_text()
    assert "## Beyond Themis" in text and "share of Themis' gap certified" in text
    rows = list(csv.DictReader((out / "results.csv").open()))
    by = {r["method"]: r for r in rows}
    portfolio = min(float(by[f"portfolio/{q}"]["makespan_ns"]) for q in ("fifo", "scf"))
    baseline = min(float(by[f"baseline/{q}"]["makespan_ns"]) for q in ("fifo", "scf"))
    themis = min(float(by[f"themis/{q}"]["makespan_ns"]) for q in ("fifo", "scf"))
    assert portfolio <= min(baseline, themis) * (1 + 1e-12)
    assert float(by["improve"]["makespan_ns"]) <= portfolio * (1 + 1e-12)
    assert by["improve"]["valid"] == "1" and by["improve"]["choice"]
    assert by["portfolio/fifo"]["choice"].endswith("fifo") or "+search" in \
        by["portfolio/fifo"]["choice"]


@pytest.mark.parametrize("table, key", [("evaluations = -1", "improve.evaluations"),
                                        ("budget = 3", "improve.budget"),
                                        ("cpsat_dtime_s = 'x'", "improve.cpsat_dtime_s")])
def test_bad_improve_budgets_name_their_key(tmp_path: Path, capsys, table: str,
                                            key: str) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("evaluations = 30", table))
    assert main(["sweep", str(spec), "--db", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert key in err and "spec.toml" in err
