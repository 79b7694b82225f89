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


@pytest.mark.parametrize("content", [b"", b"just some text, not SQLite\n" * 10])
def test_report_opens_its_database_read_only(tmp_path: Path, content: bytes,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An empty file stays empty (it must not become a database); not a database: one line."""
    path = tmp_path / "r.sqlite"
    path.write_bytes(content)
    out = tmp_path / "rep"
    assert main(["report", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]


def test_report_leaves_a_sweep_database_unchanged(solved_db: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in solved_db.parent.iterdir()}
    build_report(solved_db, tmp_path / "rep")
    after = {p.name: p.read_bytes() for p in solved_db.parent.iterdir()}
    assert after == before


def test_rerunning_a_report_command_reproduces_results_csv(tmp_path: Path) -> None:
    """The same spec swept twice (fresh databases) gives the same results.csv, runtimes,
    host and timestamps aside; a changed result is found by the check."""
    from reports.report import RUN_COLUMNS, csv_differences

    spec = """
        time_limit_s = 60
        threads = 1
        ag_order = ["reverse", "free"]
        [solver_params]
        deterministic_time_s = 5
        [[grid]]
        networks = ["small-2d"]
        sizes = ["16MiB"]
        chunks = [2, 5]
        policies = ["themis", "baseline", "1,0"]
        intra = ["fifo", "scf"]
        solvers = ["cpsat"]
    """
    csvs = []
    for k in range(2):
        folder = tmp_path / f"run{k}"
        folder.mkdir()
        db = sweep(folder, spec)
        build_report(db, folder / "rep")
        csvs.append(folder / "rep" / "results.csv")
    assert csv_differences(*csvs) == []
    with open(csvs[0], newline="") as f:
        solved = [r for r in csv.DictReader(f) if r["kind"] == "solver"]
    assert len(solved) == 4 and all(r["solver_params"] == '{"deterministic_time_s":5}'
                                    and r["stopped_by"] != "wall" for r in solved)
    from reports.report.csvfile import main as check_main

    assert check_main([str(c) for c in csvs]) == 0
    with open(csvs[1], newline="") as f:
        table = list(csv.DictReader(f))
    assert {"runtime_s", "host", "finished_at"} <= set(RUN_COLUMNS)
    table[3]["makespan_ns"] = repr(float(table[3]["makespan_ns"]) + 1.0)
    table[0]["host"] = "elsewhere"  # ignored
    with open(csvs[1], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    diffs = csv_differences(*csvs)
    assert len(diffs) == 1 and "makespan_ns" in diffs[0] and table[3]["task_key"] in diffs[0]
    assert check_main([str(c) for c in csvs]) == 1


def test_a_new_policy_flows_into_the_report_tables(tmp_path: Path) -> None:
    db = sweep(tmp_path, """
        [[grid]]
        networks = ["small-3d"]
        sizes = ["1MiB"]
        chunks = [2, 4]
        policies = ["themis", "baseline", "2,1,0"]
        intra = ["fifo"]
    """)
    build_report(db, tmp_path / "rep")
    readme = (tmp_path / "rep" / "README.md").read_text()
    assert "| 2,1,0/fifo |" in readme  # the per-method utilization table
    assert readme.count("| 2,1,0/fifo |") >= 3  # and each per-instance table


def test_report_of_a_running_or_stopped_sweep_says_it_is_partial(tmp_path: Path) -> None:
    """Not "sweep 0s (?)": a report made while a sweep holds the database says it is
    still running, with the tasks done of the total; one of a sweep that stopped says
    it is partial."""
    import fcntl
    import sqlite3

    db = sweep(tmp_path, """
        [[grid]]
        networks = ["small-2d"]
        sizes = ["1MiB"]
        chunks = [2]
        policies = ["baseline", "themis"]
        intra = ["fifo"]
        solvers = []
    """)
    with sqlite3.connect(db) as conn:
        total = int(conn.execute("SELECT value FROM meta WHERE key = 'tasks_total'")
                    .fetchone()[0])
    build_report(db, tmp_path / "done")
    head = (tmp_path / "done" / "README.md").read_text().split("```")[0]
    assert "sweep " in head and "(?)" not in head and "partial" not in head
    with open(db, "rb") as handle:  # what a running sweep holds
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        build_report(db, tmp_path / "running")
    head = (tmp_path / "running" / "README.md").read_text().split("```")[0]
    assert f"the sweep is still running, {total} of {total} tasks done: a partial report" \
        in head and "(?)" not in head
    with sqlite3.connect(db) as conn:  # a sweep stopped after all but one task
        conn.execute("DELETE FROM results WHERE rowid = (SELECT MAX(rowid) FROM results)")
        conn.execute("DELETE FROM meta WHERE key = 'sweep_wall_s'")
    build_report(db, tmp_path / "stopped")
    head = (tmp_path / "stopped" / "README.md").read_text().split("```")[0]
    assert f"the sweep stopped before its end, {total - 1} of {total} tasks done" in head
    assert "(?)" not in head and "sweep 0s" not in head


def test_an_optimum_on_a_rounded_grid_is_labelled_with_its_scaling_error(
        tmp_path: Path) -> None:
    """small-3d (Ring 4 x Ring 4 x Switch 4, per-hop latencies, 10 ns delay) has no exact
    time grid under the cap: CP-SAT's "optimal" is optimal within the model's scaling
    error. The row stores it (results.csv ``scaling_error_ns`` > 0) and the README says
    the optimum is on a rounded grid; small-2d's row proves an exact optimum (0)."""
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""\
        title = "rounded grid"
        time_limit_s = 60
        threads = 1
        [solver_params.cpsat]
        deterministic_time_s = 0.5
        [[grid]]
        networks = ["small-3d", "small-2d"]
        sizes = ["240KiB"]
        chunks = [2]
        endpoint_delay_ns = [10]
        policies = ["themis"]
        intra = ["fifo"]
        solvers = ["cpsat"]
        """))
    db = tmp_path / "s.sqlite"
    assert run_sweep(str(spec), str(db), workers=1, stream=io.StringIO()).failed == 0
    out = tmp_path / "r"
    assert main(["report", str(db), "--out", str(out)]) == 0
    with open(out / "results.csv", newline="") as fh:
        rows = {r["network"]: r for r in csv.DictReader(fh) if r["method"] == "cpsat"}
    assert rows["small-3d"]["status"] == "optimal"
    assert float(rows["small-3d"]["scaling_error_ns"]) > 0
    assert rows["small-2d"]["status"] == "optimal"
    assert float(rows["small-2d"]["scaling_error_ns"]) == 0
    readme = (out / "README.md").read_text()
    assert "1 of these optima is on a rounded time grid" in readme
