"""Training studies as sweeps: [[training]] specs, resume, the bound task, train-report --db."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reports.cli import main
from reports.sweep import load_spec, run_sweep

#: A two-layer data-parallel iteration (one all-reduce per layer's weight gradient).
TINY_WORKLOAD = ("DATA\n2\nl0 -1 500 NONE 0 300 NONE 0 200 ALLREDUCE 65536 1\n"
                 "l1 -1 400 NONE 0 300 NONE 0 100 ALLREDUCE 131072 1\n")

SPEC = """
title = "tiny training study"
[[training]]
workloads = ["tiny.txt"]
networks = ["small-2d", "small-3d"]
timing = ["astra-sim-1.0", "alpha-beta"]
chunks = [2]
policies = ["baseline/fifo", "themis", "themis-running/scf"]
intra = ["fifo", "scf"]
"""
#: (cases, tasks): 1 workload x 2 networks x 2 timings; per case baseline/fifo,
#: themis/fifo, themis/scf, themis-running/scf and the bound.
CASES, TASKS = 4, 4 * 5
RUN_COLUMNS = ("runtime_s", "host", "finished_at", "versions")


def study(tmp_path: Path, spec: str = SPEC) -> Path:
    (tmp_path / "tiny.txt").write_text(TINY_WORKLOAD)
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(spec))
    return path


def training_rows(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute("SELECT * FROM training ORDER BY task_key")]
    return [{k: v for k, v in r.items() if k not in RUN_COLUMNS} for r in rows]


def test_in_process_and_two_workers_give_the_same_rows_and_the_bound_is_below_every_end(
        tmp_path: Path) -> None:
    spec = study(tmp_path)
    loaded = load_spec(spec)
    assert (loaded.cases, len(loaded.training), loaded.tasks) == (CASES, TASKS, [])
    log = io.StringIO()
    one = run_sweep(str(spec), str(tmp_path / "one.sqlite"), workers=1, stream=log)
    two = run_sweep(str(spec), str(tmp_path / "two.sqlite"), workers=2, stream=io.StringIO())
    assert (one.total, one.ran, one.failed) == (two.total, two.ran, two.failed) == (TASKS, TASKS, 0)
    assert log.getvalue().startswith(f"{CASES} training cases, {TASKS} training tasks "
                                     f"(16 policy, 4 bound); 0 already done, {TASKS} to run\n")
    assert f"[{TASKS}/{TASKS}] " in log.getvalue()
    rows = training_rows(tmp_path / "one.sqlite")
    assert rows == training_rows(tmp_path / "two.sqlite")
    assert len(rows) == TASKS and len({r["task_key"] for r in rows}) == TASKS
    by_case: dict[str, list[dict]] = {}
    for r in rows:
        by_case.setdefault(r["case_key"], []).append(r)
    assert len(by_case) == CASES
    from themis.training import TrainingConfig, simulate_training
    from topologies.presets import resolve_network
    from topologies.workload import load_workload

    for case in by_case.values():
        (bound,) = [r for r in case if r["kind"] == "bound"]
        ends = [r["end_ns"] for r in case if r["kind"] == "policy"]
        assert len(ends) == 4 and bound["lower_bound_ns"] <= min(ends)
        # the bound task equals the bound simulate_training computes beside a run
        run = simulate_training(load_workload(str(tmp_path / "tiny.txt")),
                                resolve_network(bound["network"]),
                                TrainingConfig(timing=bound["timing"], chunks=2))
        assert bound["lower_bound_ns"] == run.lower_bound_ns
        base = [r for r in case if r["method"] == "baseline/fifo"][0]
        assert base["end_ns"] == run.end_ns  # the default policy, baseline / fifo

    # a rerun finds everything done
    again = run_sweep(str(spec), str(tmp_path / "one.sqlite"), workers=1, stream=io.StringIO())
    assert (again.done_before, again.ran) == (TASKS, 0)


def test_train_report_from_the_database(tmp_path: Path, capsys) -> None:
    spec = study(tmp_path)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "1"]) == 0
    capsys.readouterr()
    out = tmp_path / "report"
    assert main(["train-report", "--db", str(db), "--out", str(out)]) == 0
    assert "README.md, results.csv, speedups-1.png, speedups-2.png" in capsys.readouterr().out
    table = list(csv.DictReader((out / "results.csv").open()))
    stored = {(r["network"], r["timing"], r["method"]): r for r in training_rows(db)}
    assert len(table) == 16  # the policy rows; the bound is each row's lower_bound_ns
    for row in table:
        mine = stored[row["network"], row["timing"], row["policy"]]
        bound = stored[row["network"], row["timing"], "bound"]["lower_bound_ns"]
        base = stored[row["network"], row["timing"], "baseline/fifo"]["end_ns"]
        assert float(row["end_ns"]) == pytest.approx(mine["end_ns"], abs=1e-3)  # 3 decimals
        assert float(row["lower_bound_ns"]) == pytest.approx(bound, abs=1e-3)
        assert float(row["speedup"]) == pytest.approx(base / mine["end_ns"], abs=1e-6)
    readme = (out / "README.md").read_text()
    assert readme.startswith("# tiny training study\n")
    assert "## astra-sim-1.0, 2 chunks, 1 pass, no system file" in readme
    assert "## alpha-beta, 2 chunks, 1 pass, no system file" in readme
    assert "### Speed-up over baseline/fifo" in readme and "ABOVE" not in readme
    # themis report refuses a database of training tasks only, with one line
    assert main(["report", str(db), "--out", str(tmp_path / "collective")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "themis train-report --db" in err
    assert main(["train-report", "--db", str(db), "--out", str(out), "--workers", "2"]) == 2
    assert "--workers = 2: not with --db alone" in capsys.readouterr().err


@pytest.mark.parametrize(("body", "key", "value"), [
    ('workloads = ["nosuch"]\nnetworks = ["small-2d"]', "training[0].workloads[0]", "'nosuch'"),
    ('workloads = ["tiny.txt"]\nnetworks = ["nonet"]', "training[0].networks[0]", "'nonet'"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\npolicies = ["baseline", "bogus"]',
     "training[0].policies[1]", "'bogus'"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\npolicies = ["2,0,1/scf"]',
     "training[0].policies[0]", "'2,0,1/scf'"),
    # a route fits the 2-D network but not its split by the transformer's group of 4
    ('workloads = ["transformer"]\nnetworks = ["nvlink-x-ib"]\npolicies = ["1,0/fifo"]',
     "training[0].policies[0]", "'1,0/fifo'"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\npolicies = ["themis/nope"]',
     "training[0].policies[0]", "'nope'"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\ntiming = "astra-sim-2"',
     "training[0].timing[0]", "'astra-sim-2'"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\npasses = [1, 0]',
     "training[0].passes[1]", "0"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\nsizes = ["1MiB"]',
     "training[0].sizes", "['1MiB']"),
    ('workloads = ["tiny.txt"]\nnetworks = ["small-2d"]\nbound = "yes"',
     "training[0].bound", "'yes'"),
    ('networks = ["small-2d"]', "training[0].workloads", None),
])
def test_bad_training_keys_are_one_line_and_run_nothing(tmp_path: Path, capsys, body: str,
                                                        key: str, value: str | None) -> None:
    spec = study(tmp_path, "[[training]]\n" + body + "\n")
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    where = f"{key} = {value}: " if value else f"{key}: "
    assert err.startswith(f"themis: error: {spec}: {where}") and err.count("\n") == 1
    assert not db.exists()


def test_a_system_file_key_it_needs_names_the_system_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "sys.txt").write_text("scheduling-policy: LIFO\nendpoint-delay: 10\n")
    spec = study(tmp_path, '[[training]]\nworkloads = ["tiny.txt"]\nnetworks = ["small-2d"]\n'
                           'systems = ["sys.txt"]\n')
    assert main(["sweep", str(spec), "--db", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"themis: error: {tmp_path / 'sys.txt'}: collective-optimization: "
                          "missing") and err.count("\n") == 1


def test_killed_training_sweep_resumes_with_one_row_per_task(tmp_path: Path) -> None:
    # vgg16 at 64 chunks: each task takes a few hundredths of a second, in-process.
    spec = study(tmp_path, """
        [[training]]
        workloads = ["vgg16"]
        networks = ["small-2d", "small-3d", "torus-2d"]
        policies = ["baseline/fifo", "themis/fifo", "themis/scf", "round-robin/fifo"]
    """)
    total = 3 * 5
    db = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "reports.cli", "sweep", str(spec), "--db", str(db),
           "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        seen = 0
        while time.monotonic() < deadline and proc.poll() is None and seen < 2:
            with contextlib.suppress(sqlite3.Error):
                seen = len(training_rows(db)) if db.exists() else 0
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {r["task_key"]: r for r in training_rows(db)}
    assert 2 <= len(before) < total
    log = io.StringIO()
    out = run_sweep(str(spec), str(db), workers=1, stream=log)
    assert f"{len(before)} already done, {total - len(before)} to run" in log.getvalue()
    assert (out.ran, out.failed, out.finished) == (total - len(before), 0, total)
    after = {r["task_key"]: r for r in training_rows(db)}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM training").fetchone()[0] == total
    assert len(after) == total and all(after[k] == r for k, r in before.items())


def test_collective_and_training_tables_in_one_spec(tmp_path: Path) -> None:
    spec = study(tmp_path, """
        [[grid]]
        networks = ["small-2d"]
        sizes = ["1MiB"]
        chunks = [2]
        policies = ["baseline"]
        intra = ["fifo"]
        [[training]]
        workloads = ["tiny.txt"]
        networks = ["small-2d"]
        chunks = [2]
        policies = ["baseline/fifo"]
    """)
    log = io.StringIO()
    out = run_sweep(str(spec), str(tmp_path / "r.sqlite"), workers=1, stream=log)
    assert log.getvalue().startswith("1 instances, 2 tasks (1 policy, 0 solver, 1 bound); "
                                     "1 training cases, 2 training tasks (1 policy, 1 bound)")
    assert (out.total, out.failed) == (4, 0)
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2
        assert conn.execute("SELECT COUNT(*) FROM training").fetchone()[0] == 2



def test_db_plots_name_their_setting_and_a_study_without_bound_draws_no_empty_bars(
        tmp_path: Path, monkeypatch) -> None:
    """Each setting's plot says its setting in the title; without a bound task the bound's
    (empty) bars are left out, and a setting with nothing to draw gets no plot."""
    import themis.plots
    from reports.report.training_db import write_db_report

    drawn: dict[str, tuple[str, list[str]]] = {}
    real_save = themis.plots.save_figure

    def save(fig, path, *args, **kwargs):
        legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        drawn[Path(path).name] = (fig._suptitle.get_text(), legend)
        return real_save(fig, path, *args, **kwargs)

    monkeypatch.setattr(themis.plots, "save_figure", save)
    spec = study(tmp_path, """
        [[training]]
        workloads = ["tiny.txt"]
        networks = ["small-2d"]
        timing = ["astra-sim-1.0", "alpha-beta"]
        chunks = [2]
        policies = ["baseline/fifo", "themis/fifo"]
        bound = false
        """)
    run_sweep(str(spec), str(tmp_path / "a.sqlite"), workers=1, stream=io.StringIO())
    write_db_report(tmp_path / "a.sqlite", tmp_path / "a")
    assert sorted(drawn) == ["speedups-1.png", "speedups-2.png"]
    titles = {drawn[p][0] for p in drawn}
    assert len(titles) == 2
    assert any("astra-sim-1.0, 2 chunks, 1 pass, no system file" in t for t in titles)
    assert any("alpha-beta, 2 chunks, 1 pass, no system file" in t for t in titles)
    assert all(legend == ["themis/fifo"] for _, legend in drawn.values())

    drawn.clear()
    spec = study(tmp_path, """
        [[training]]
        workloads = ["tiny.txt"]
        networks = ["small-2d"]
        chunks = [2]
        policies = ["baseline/fifo"]
        bound = false
        """)
    run_sweep(str(spec), str(tmp_path / "b.sqlite"), workers=1, stream=io.StringIO())
    written = write_db_report(tmp_path / "b.sqlite", tmp_path / "b")
    assert drawn == {} and not list((tmp_path / "b").glob("*.png"))
    assert [p.name for p in written] == ["README.md", "results.csv"]
    assert "No plot: one policy and no bound task" in (tmp_path / "b" / "README.md").read_text()
