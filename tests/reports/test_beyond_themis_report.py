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


@pytest.mark.parametrize("report", ["optimality-gap", "at-scale"])
def test_committed_certified_headline_matches_its_csv(report: str) -> None:
    """The headline's "best schedule vs the optimum" counts, recomputed from the
    committed CSV alone: per instance (reverse AG variant), the best valid makespan
    over every method against the strongest lower bound, 0 where proven optimal."""
    import re

    folder = Path(__file__).parents[2] / "reports" / report
    best: dict[str, float] = {}
    lb: dict[str, float] = {}
    proven: dict[str, bool] = {}
    with open(folder / "results.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            if r["ag_order"] not in ("reverse", ""):
                continue
            key = r["instance_key"]
            if r["makespan_ns"] and r["valid"] not in ("0", "False") and r["kind"] != "bound":
                best[key] = min(best.get(key, float("inf")), float(r["makespan_ns"]))
            if r["best_lower_bound_ns"]:
                lb[key] = float(r["best_lower_bound_ns"])
            proven[key] = proven.get(key, False) or r["proven_optimal"] in ("1", "True")
    gaps = [0.0 if proven[k] else best[k] / lb[k] - 1 for k in best if proven[k] or k in lb]
    text = (folder / "README.md").read_text()
    m = re.search(r"best schedule vs the optimum\*\* \(certified by the lower bound\): within "
                  r"0\.1% on (\d+) of (\d+) instances, within 0\.5% on (\d+), within 1\.0% on "
                  r"(\d+) \((\d+) proven optimal\); at most ([\d.]+)% above it", text)
    assert m, "the headline line is missing"
    tol = 1e-9
    assert int(m[2]) == len(gaps)
    assert int(m[1]) == sum(g <= 0.001 + tol for g in gaps)
    assert int(m[3]) == sum(g <= 0.005 + tol for g in gaps)
    assert int(m[4]) == sum(g <= 0.01 + tol for g in gaps)
    assert int(m[5]) == sum(proven.values())
    assert float(m[6]) == pytest.approx(100 * max(gaps), abs=0.006)
