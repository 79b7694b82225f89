"""Sweeps: spec validation, task counting, resume, errors retried, kill -9, Dask."""

from __future__ import annotations

import contextlib
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
from reports.sweep import Progress, load_spec, run_sweep
from topologies.errors import InputError

TINY = """
time_limit_s = 20
threads = 1

[[grid]]
networks = ["small-2d"]
sizes = ["16MiB"]
chunks = [2, 3]
endpoint_delay_ns = [10]
policies = ["baseline", "themis"]
intra = ["fifo"]
solvers = ["cpsat"]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT task_key, status FROM results ORDER BY task_key").fetchall()


def test_issue_example_counts_12_method_tasks_plus_a_bound_per_variant(tmp_path: Path
                                                                       ) -> None:
    spec = load_spec(write(tmp_path / "s.toml", """
        time_limit_s = 10
        ag_order = ["reverse", "free"]
        [[grid]]
        networks = ["small-3d"]
        sizes = ["64MiB"]
        chunks = [4]
        solvers = ["cpsat", "cbc", "highs"]
    """))
    assert spec.instances == 1
    assert spec.counts() == {"policy": 6, "solver": 6, "bound": 2}
    assert len({t.key for t in spec.tasks}) == 14
    assert {t.method.ag_order for t in spec.tasks if t.kind == "bound"} == {"reverse", "free"}


def test_networks_relative_to_the_spec_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "nets").mkdir()
    write(tmp_path / "nets" / "mine.yml", """
        topology: [Ring, Switch]
        npus_count: [4, 4]
        bandwidth: [4, 1]
        latency: [20, 500]
    """)
    spec = load_spec(write(tmp_path / "s.toml", """
        [[grid]]
        networks = ["nets/mine.yml", "small-2d"]
        sizes = ["1MiB", 1048576]
        chunks = [2]
        policies = ["themis"]
        intra = ["scf"]
    """))
    # the same dimensions under two names and the same size twice: one instance
    assert spec.instances == 1 and len(spec.tasks) == 2 and spec.duplicates == 6


@pytest.mark.parametrize("body,field,value", [
    ("sizez = [1]", "grid[0].sizez", "[1]"),
    ('sizes = ["64MiB", "12XB"]', "grid[0].sizes[1]", "'12XB'"),
    ('sizes = ["64MiB", 0]', "grid[0].sizes[1]", "0"),
    ("chunks = [4, 0]", "grid[0].chunks[1]", "0"),
    ('networks = ["small-2d", "missing.yml"]', "grid[0].networks[1]", "'missing.yml'"),
    ('policies = ["themis", "greedy"]', "grid[0].policies[1]", "'greedy'"),
    ('intra = ["lifo"]', "grid[0].intra[0]", "'lifo'"),
    ('solvers = ["gurobi"]', "grid[0].solvers[0]", "'gurobi'"),
    ("endpoint_delay_ns = [-1]", "grid[0].endpoint_delay_ns[0]", "-1"),
    ('ag_order = "sideways"', "grid[0].ag_order", "'sideways'"),
])
def test_spec_errors_name_file_key_and_value(tmp_path: Path, body: str, field: str,
                                             value: str) -> None:
    lines = {"networks": 'networks = ["small-2d"]', "sizes": 'sizes = ["64MiB"]',
             "chunks": "chunks = [4]"}
    key = body.split("=")[0].strip()
    lines[key] = body
    spec = write(tmp_path / "bad.toml", "[[grid]]\n" + "\n".join(lines.values()) + "\n")
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert err.value.file == str(spec) and err.value.field == field
    assert repr(err.value.value) == value or str(err.value.value) == value.strip("'")
    assert "\n" not in str(err.value)


def test_spec_error_via_cli_is_one_line_and_runs_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path / "bad.toml", """
        colour = "blue"
        [[grid]]
        networks = ["small-2d"]
        sizes = ["64MiB"]
        chunks = [4]
    """)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err == f"themis: error: {spec}: colour = 'blue': unknown key (expected one of " \
                  "title, description, time_limit_s, ag_order, threads, solver_params, " \
                  "improve, timing, grid, training)\n"
    assert not db.exists()
    write(spec, "time_limit_s = 1\n[[grid]\n")
    assert main(["sweep", str(spec), "--db", str(db)]) == 2
    assert "invalid TOML" in capsys.readouterr().err


def test_sweep_in_process_resumes_and_retries_errors(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers

    spec = write(tmp_path / "s.toml", TINY)
    db = tmp_path / "r.sqlite"

    def broken(*args, **kwargs):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(solvers, "solve", broken)
    log = io.StringIO()
    out = run_sweep(str(spec), str(db), workers=1, stream=log)
    assert (out.total, out.ran, out.failed) == (8, 8, 2)
    assert "[8/8]" in log.getvalue() and "error: RuntimeError: solver exploded" in log.getvalue()
    got = dict(rows(db))
    assert len(got) == 8 and sorted(got.values()).count("error") == 2

    monkeypatch.undo()
    out = run_sweep(str(spec), str(db), workers=1, stream=io.StringIO())
    assert (out.done_before, out.ran, out.failed) == (6, 2, 0)
    got = dict(rows(db))
    assert len(got) == 8 and "error" not in got.values()
    assert list(got.values()).count("optimal") == 2

    out = run_sweep(str(spec), str(db), workers=1, stream=io.StringIO())
    assert out.ran == 0 and out.finished == 8
    with sqlite3.connect(db) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        blobs = conn.execute("SELECT method, schedule_json IS NOT NULL FROM results "
                             "WHERE kind != 'bound'").fetchall()
    assert meta["command"] == f"themis sweep {spec} --db {db} --workers 1"
    assert meta["spec_text"] == spec.read_text()
    assert all(has for _, has in blobs)  # baseline, themis and the solver keep schedules


def test_progress_bar_on_a_tty_and_plain_lines_otherwise() -> None:
    buf = io.StringIO()
    p = Progress(4, 1, buf, tty=True)
    p.update("themis/scf on small-2d", {"status": "simulated", "kind": "policy",
                                        "makespan_ns": 1e6})
    p.update("cpsat on small-2d", {"status": "error", "kind": "solver", "error": "x"})
    p.close()
    text = buf.getvalue()
    assert "\x1b[" in text  # a terminal gets the rich bar (control codes)
    assert "3/4" in text and "failed 1" in text and "ETA" in text
    buf = io.StringIO()
    p = Progress(2, 0, buf, tty=False)
    p.update("themis/scf on small-2d", {"status": "simulated", "kind": "policy",
                                        "makespan_ns": 1e6})
    p.update("cpsat on small-2d", {"status": "optimal", "kind": "solver",
                                   "makespan_ns": 2e6, "runtime_s": 0.25})
    p.close()
    assert buf.getvalue() == ("[1/2] themis/scf on small-2d: 1,000.0 us\n"
                              "[2/2] cpsat on small-2d: 2,000.0 us optimal in 0.2 s\n")


def children(pid: int) -> set[int]:
    """Live child processes of ``pid`` (Linux /proc)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sweep_killed_with_sigkill_loses_nothing_duplicates_nothing_and_leaves_no_worker(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Large chunk counts make each task take a noticeable fraction of a second.
    spec = write(tmp_path / "s.toml", """
        [[grid]]
        networks = ["small-4d"]
        sizes = ["64MiB"]
        chunks = [2048, 3000, 4096]
    """)
    db = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "reports.cli", "sweep", str(spec), "--db", str(db),
           "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        seen = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    seen = len(rows(db))
                except sqlite3.OperationalError:
                    seen = 0
                if seen >= 2:
                    break
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        # A second sweep on the same database stops at once: one line, exit 2.
        assert main(["sweep", str(spec), "--db", str(db), "--workers", "1"]) == 2
        captured = capsys.readouterr()
        assert "another themis sweep or report is using this database" in captured.err
        assert captured.err.count("\n") == 1 and "instances" not in captured.err
        workers = children(proc.pid)
        assert workers, "the pool has no worker processes"
        os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers must follow
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.05)
        assert not any(alive(w) for w in workers), "workers outlived their driver"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = rows(db)
    assert 2 <= len(before) < 21
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} already done, {21 - len(before)} to run" in done.stderr
    after = rows(db)
    assert len(after) == 21 and len({k for k, _ in after}) == 21
    assert set(before) <= set(after)


def test_dask_address_that_does_not_work_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    spec = write(tmp_path / "s.toml", TINY)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--dask", "notanaddress"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "--dask" in captured.err and "notanaddress" in captured.err
    assert not db.exists() and list(tmp_path.iterdir()) == [spec]


def test_sweep_on_a_local_dask_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    pytest.importorskip("distributed")
    spec = write(tmp_path / "s.toml", """
        [[grid]]
        networks = ["small-2d", "small-3d"]
        sizes = ["1MiB"]
        chunks = [4]
        policies = ["themis", "baseline"]
        intra = ["scf"]
    """)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--dask", "local", "--workers", "2"]) == 0
    captured = capsys.readouterr()
    assert "dask: 2 workers" in captured.err and "6/6 tasks done" in captured.out
    got = rows(db)
    assert len(got) == 6 and {s for _, s in got} == {"simulated", "bound"}


def test_spec_solver_params_are_checked_and_stored(tmp_path: Path) -> None:
    base = TINY.replace("threads = 1\n", "threads = 1\n[solver_params]\n")
    spec = load_spec(write(tmp_path / "ok.toml", base.replace(
        "[solver_params]\n", "[solver_params]\ndeterministic_time_s = 2.5\n")))
    solver_tasks = [t for t in spec.tasks if t.kind == "solver"]
    assert solver_tasks and all(t.method.solver_params == '{"deterministic_time_s":2.5}'
                                for t in solver_tasks)
    for body, key in [("bogus = 1", "solver_params.bogus"),
                      ("deterministic_time_s = -1", "solver_params.deterministic_time_s"),
                      ("threads = 2", "solver_params.threads")]:
        bad = write(tmp_path / "bad.toml", base.replace("[solver_params]\n",
                                                        f"[solver_params]\n{body}\n"))
        with pytest.raises(InputError) as err:
            load_spec(bad)
        assert err.value.field == key and err.value.file == str(bad)
    # a deterministic time with two workers: CP-SAT's interleaved search (reproducible)
    two = write(tmp_path / "two.toml", base.replace("threads = 1", "threads = 2").replace(
        "[solver_params]\n", "[solver_params]\ndeterministic_time_s = 2\n"))
    assert load_spec(two)
    bad = write(tmp_path / "bad.toml", base.replace("threads = 1", "threads = 0"))
    with pytest.raises(InputError) as err:
        load_spec(bad)
    assert err.value.field == "threads"


def test_spec_solver_params_per_solver(tmp_path: Path) -> None:
    # A sub-table named after a solver goes to that solver only; shared keys to all.
    base = TINY.replace('solvers = ["cpsat"]', 'solvers = ["cpsat", "highs"]')
    spec = load_spec(write(tmp_path / "ok.toml", base + textwrap.dedent("""
        [solver_params]
        seed = 3
        [solver_params.cpsat]
        deterministic_time_s = 2.5
        [solver_params.highs]
        node_limit = 50
        """)))
    got = {t.method.name: t.method.solver_params for t in spec.tasks if t.kind == "solver"}
    assert got == {"cpsat": '{"deterministic_time_s":2.5,"seed":3}',
                   "highs": '{"node_limit":50,"seed":3}'}
    # A work limit shared by every solver is refused for the one it does not apply to,
    # before anything runs, naming the user's key.
    bad = write(tmp_path / "bad.toml", base + "[solver_params]\nnode_limit = 50\n")
    with pytest.raises(InputError) as err:
        load_spec(bad)
    assert err.value.field == "solver_params.node_limit" and "cpsat" in str(err.value)
    bad = write(tmp_path / "bad2.toml", base + "[solver_params.cpsat]\nnode_limit = 50\n")
    with pytest.raises(InputError) as err:
        load_spec(bad)
    assert err.value.field == "solver_params.node_limit"
