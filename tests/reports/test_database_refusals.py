"""Sweep databases: damaged, emptied, foreign and unreadable ones are refused in one line
naming the database and what is wrong (exit 2); reading is really read-only."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import sqlite3
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from reports import db as dbmod
from reports.cli import main
from reports.db import files as db_files
from reports.sweep import run_sweep

SPEC = """
[[grid]]
networks = ["small-2d"]
sizes = ["16MiB"]
chunks = [2]
policies = ["baseline", "themis"]
intra = ["fifo"]
"""

TRAINING_SPEC = """
[[training]]
workloads = ["tiny.txt"]
networks = ["small-2d"]
policies = ["baseline/fifo", "themis"]
"""

TINY_WORKLOAD = ("DATA\n2\nl0 -1 500 NONE 0 300 NONE 0 200 ALLREDUCE 65536 1\n"
                 "l1 -1 400 NONE 0 300 NONE 0 100 ALLREDUCE 131072 1\n")


def _sweep(folder: Path, spec_text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.txt").write_text(TINY_WORKLOAD)
    spec = folder / "spec.toml"
    spec.write_text(textwrap.dedent(spec_text))
    path = folder / "r.sqlite"
    assert run_sweep(str(spec), str(path), workers=1, stream=io.StringIO()).failed == 0
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A finished collective sweep and a finished training sweep (closed: no -wal)."""
    root = tmp_path_factory.mktemp("made")
    return {"results": _sweep(root / "c", SPEC), "training": _sweep(root / "t", TRAINING_SPEC)}


def _copy(src: Path, folder: Path, sql: str = "") -> Path:
    """A copy of the database ``src`` in ``folder`` with ``sql`` applied (then closed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "copy.sqlite"
    shutil.copyfile(src, path)
    if sql:
        conn = sqlite3.connect(path)
        conn.executescript(sql)
        conn.commit()
        conn.close()
    assert sorted(p.name for p in folder.iterdir()) == ["copy.sqlite"]
    return path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.mark.parametrize(("sql", "needles"), [
    ("UPDATE results SET routes = 'not json{'",
     ["results.routes (row 1) = 'not json{'", "not JSON", "damaged"]),
    ("UPDATE results SET makespan_ns = 'abc' WHERE kind = 'policy'",
     ["results.makespan_ns (row 2) = 'abc'", "not a number"]),
    ("DROP TABLE meta", ["no meta table"]),
    ("UPDATE results SET kind = 'weird' WHERE rowid = 3", ["results.kind (row 3) = 'weird'"]),
    ("UPDATE meta SET value = 'soon' WHERE key = 'sweep_wall_s'",
     ["meta.sweep_wall_s = 'soon'", "not a number"]),
    ("UPDATE meta SET value = 'x' WHERE key = 'tasks_total'", ["meta.tasks_total = 'x'"]),
    ("UPDATE meta SET value = '2.5' WHERE key = 'tasks_total'",
     ["meta.tasks_total = '2.5'", "not a whole number"]),
    ("UPDATE results SET dims = 2.5", ["results.dims (row 1) = 2.5"]),
    ("UPDATE results SET schedule_json = x'00ff'", ["results.schedule_json", "damaged"]),
    ("UPDATE results SET routes = '5' WHERE rowid = 2",
     ["results.routes (row 2) = '5'", "not a JSON object of counts"]),
    ("UPDATE results SET dim_utilization = '[\"x\"]' WHERE rowid = 2",
     ["results.dim_utilization (row 2)", "not a JSON list of numbers"]),
    ("UPDATE results SET versions = '[1]'", ["results.versions (row 1) = '[1]'"]),
    ("UPDATE results SET makespan_ns = 1e999 WHERE rowid = 2",
     ["results.makespan_ns (row 2) = inf", "not a finite number"]),
    ("UPDATE results SET npus = -5", ["results.npus (row 1) = -5", "a negative count"]),
    ("UPDATE results SET chunks = NULL", ["results.chunks (row 1)",
                                         "a bound row without its chunks"]),
])
def test_report_refuses_a_damaged_database(made: dict[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str], sql: str,
                                           needles: list[str]) -> None:
    path = _copy(made["results"], tmp_path / "db", sql)
    before = path.read_bytes()
    _refused(["report", str(path), "--out", str(tmp_path / "rep")], capsys, str(path),
             *needles)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["copy.sqlite"]


@pytest.mark.parametrize(("sql", "needles"), [
    ("UPDATE training SET end_ns = 'abc' WHERE kind = 'policy'",
     ["training.end_ns (row 1) = 'abc'", "not a number"]),
    ("UPDATE training SET config = '{broken'", ["training.config (row 1)", "not JSON"]),
    ("UPDATE training SET status = 'done'", ["training.status (row 1) = 'done'"]),
    ("UPDATE meta SET value = '[not json' WHERE key = 'training_order'",
     ["meta.training_order = '[not json'"]),
    ("DROP TABLE meta", ["no meta table"]),
    ("UPDATE training SET end_ns = 0 WHERE kind = 'policy'",
     ["training.end_ns (row 1) = 0.0", "not a positive time"]),
    ("UPDATE training SET lower_bound_ns = 0 WHERE kind = 'bound'",
     ["training.lower_bound_ns (row 4) = 0.0"]),
    ("UPDATE training SET compute_ns = NULL WHERE rowid = 2",
     ["training.compute_ns (row 2)", "a simulated row without its compute_ns"]),
    ("UPDATE training SET npus = NULL", ["training.npus (row 1)"]),
    ("UPDATE training SET method = 'abc'", ["training.method (row 4) = 'abc'",
                                            "a bound row of the method 'abc'"]),
    ("UPDATE training SET kind = 'policy'", ["training.method (row 4) = 'bound'"]),
])
def test_train_report_refuses_a_damaged_database(made: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str], sql: str,
                                                 needles: list[str]) -> None:
    path = _copy(made["training"], tmp_path / "db", sql)
    before = path.read_bytes()
    _refused(["train-report", "--db", str(path), "--out", str(tmp_path / "rep")], capsys,
             str(path), *needles)
    assert path.read_bytes() == before
    assert not (tmp_path / "rep").exists()


def test_sweep_refuses_to_resume_a_damaged_database(made: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    spec = made["results"].parent / "spec.toml"
    for sql, needle in [("UPDATE meta SET value = 'x' WHERE key = 'sweep_wall_s'",
                         "meta.sweep_wall_s = 'x'"),
                        ("DROP TABLE meta", "no meta table")]:
        path = _copy(made["results"], tmp_path / needle[:4], sql)
        before = path.read_bytes()
        _refused(["sweep", str(spec), "--db", str(path), "--workers", "1"], capsys, str(path),
                 needle)
        assert path.read_bytes() == before


def test_an_emptied_database_is_refused(made: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy(made["results"], tmp_path / "db",
                 "DELETE FROM results; DELETE FROM training; DELETE FROM meta")
    _refused(["report", str(path), "--out", str(tmp_path / "rep")], capsys, str(path),
             "an empty sweep database")
    _refused(["train-report", "--db", str(path), "--out", str(tmp_path / "rep")], capsys,
             str(path), "holds no training task")
    assert not (tmp_path / "rep").exists()


def _tables(path: Path) -> list[str]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))
    finally:
        conn.close()


@pytest.mark.parametrize(("make", "needle"), [
    ("CREATE TABLE users (id INTEGER, name TEXT)", "another application's database (users)"),
    ("PRAGMA application_id = 42; CREATE TABLE results (task_key TEXT); "
     "CREATE TABLE meta (key TEXT, value TEXT)", "application id 42"),
    ("CREATE TABLE results (task_key TEXT)", "no meta table"),
])
def test_sweep_never_writes_into_another_applications_database(
        made: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str,
        needle: str) -> None:
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(make)
    conn.commit()
    conn.close()
    before, tables = path.read_bytes(), _tables(path)
    spec = made["results"].parent / "spec.toml"
    _refused(["sweep", str(spec), "--db", str(path), "--workers", "1"], capsys, str(path),
             needle)
    assert path.read_bytes() == before and _tables(path) == tables
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite"]


def test_sweep_refuses_a_file_that_is_not_sqlite(made: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("my notes\n" * 20)
    spec = made["results"].parent / "spec.toml"
    _refused(["sweep", str(spec), "--db", str(path), "--workers", "1"], capsys, str(path),
             "not an SQLite database")
    assert path.read_text() == "my notes\n" * 20


def test_a_database_made_by_the_tool_is_marked_and_an_empty_file_becomes_one(
        made: dict[str, Path], tmp_path: Path) -> None:
    conn = sqlite3.connect(made["results"])
    assert conn.execute("PRAGMA application_id").fetchone()[0] == dbmod.APPLICATION_ID
    conn.close()
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    spec = made["results"].parent / "spec.toml"
    assert run_sweep(str(spec), str(empty), workers=1, stream=io.StringIO()).ran == 3


def test_report_reads_without_leaving_files_beside_its_input(
        made: dict[str, Path], tmp_path: Path) -> None:
    for kind, argv in [("results", ["report", "{db}", "--out", "{out}"]),
                       ("training", ["train-report", "--db", "{db}", "--out", "{out}"])]:
        path = _copy(made[kind], tmp_path / kind)
        before = path.read_bytes()
        out = tmp_path / f"{kind}-rep"
        assert main([a.format(db=path, out=out) for a in argv]) == 0
        assert sorted(p.name for p in path.parent.iterdir()) == ["copy.sqlite"]
        assert path.read_bytes() == before


@contextlib.contextmanager
def _immutable(folder: Path) -> Iterator[None]:
    """``folder`` made immutable (``chattr +i``) for the block; skips where it cannot be."""
    if shutil.which("chattr") is None:
        pytest.skip("no chattr")
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not permitted here: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_reports_of_a_database_in_an_immutable_folder(made: dict[str, Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """Read-only storage: the reports are made; a sweep is refused saying why."""
    folder = tmp_path / "frozen"
    folder.mkdir()
    shutil.copyfile(made["results"], folder / "c.sqlite")
    shutil.copyfile(made["training"], folder / "t.sqlite")
    spec = made["results"].parent / "spec.toml"
    with _immutable(folder):
        assert main(["report", str(folder / "c.sqlite"), "--out", str(tmp_path / "a")]) == 0
        assert main(["train-report", "--db", str(folder / "t.sqlite"),
                     "--out", str(tmp_path / "b")]) == 0
        capsys.readouterr()
        _refused(["sweep", str(spec), "--db", str(folder / "c.sqlite"), "--workers", "1"],
                 capsys, "c.sqlite", "takes no new file", "Operation not permitted")
        assert sorted(p.name for p in folder.iterdir()) == ["c.sqlite", "t.sqlite"]
    assert (tmp_path / "a" / "README.md").is_file() and (tmp_path / "b" / "README.md").is_file()


def test_results_still_in_the_write_ahead_log_are_reported(made: dict[str, Path],
                                                           tmp_path: Path) -> None:
    """A sweep killed before a checkpoint leaves rows in ``-wal``: the report reads them."""
    path = _copy(made["results"], tmp_path / "db")
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        with writer:
            writer.execute("UPDATE meta SET value = 'from the log' WHERE key = 'title'")
        assert dbmod._has_log(path)
        conn = dbmod.connect(path, create=False)
        try:
            assert dbmod.get_meta(conn)["title"] == "from the log"
        finally:
            conn.close()
    finally:
        writer.close()


def test_open_failures_say_why(made: dict[str, Path], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    spec = made["results"].parent / "spec.toml"
    dangling = tmp_path / "gone.sqlite"
    dangling.symlink_to(tmp_path / "nowhere.sqlite")
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.sqlite"
    folder.mkdir()
    cases = [(dangling, "a dangling symbolic link to"), (fifo, "a FIFO"),
             (folder, "a folder")]
    for path, what in cases:
        _refused(["report", str(path), "--out", str(tmp_path / "rep")], capsys, str(path),
                 what)
        _refused(["train-report", "--db", str(path), "--out", str(tmp_path / "rep")], capsys,
                 str(path), what)
        _refused(["sweep", str(spec), "--db", str(path), "--workers", "1"], capsys,
                 str(path), what)
    assert not (tmp_path / "nowhere.sqlite").exists() and not (tmp_path / "rep").exists()
    _refused(["report", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "rep")],
             capsys, "no such database")


def test_an_unreadable_database_says_permission_denied(made: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = _copy(made["results"], tmp_path / "db")
    if os.geteuid() != 0:  # a real unreadable file (root reads every file)
        path.chmod(0)
    else:
        def denied(file: object, *args: object, **kwargs: object) -> object:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))

        monkeypatch.setattr(db_files, "open", denied, raising=False)
    _refused(["report", str(path), "--out", str(tmp_path / "rep")], capsys, str(path),
             "cannot read: Permission denied")


def test_a_write_ahead_log_in_an_immutable_folder_is_read(made: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """A sweep killed on storage that then became read-only: its log is still reported."""
    path = _copy(made["results"], tmp_path / "db")
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        with writer:
            writer.execute("UPDATE meta SET value = 'from the log' WHERE key = 'title'")
        before = sorted(p.name for p in path.parent.iterdir())
        with _immutable(path.parent):
            assert main(["report", str(path), "--out", str(tmp_path / "rep")]) == 0
            assert sorted(p.name for p in path.parent.iterdir()) == before
    finally:
        writer.close()
    assert (tmp_path / "rep" / "README.md").read_text().startswith("# from the log\n")
