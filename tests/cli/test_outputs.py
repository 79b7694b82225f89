"""Output files and stdout: unwritable targets give one line and exit 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reports.cli import main

ROOT = Path(__file__).parents[2]


def _cli(*argv: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "reports.cli", *argv], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=60, env=env)


def _one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    for n in needles:
        assert n in proc.stderr, (n, proc.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_stdout_is_one_line_exit_2() -> None:
    with open("/dev/full", "w") as full:
        proc = _cli("network", "small-2d", "--json", stdout=full)
    _one_line_error(proc, "stdout", "No space left")


def test_closed_stdout_is_one_line_exit_2() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(f"'{sys.executable}' -m reports.cli network small-2d --json >&-",
                          shell=True, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    _one_line_error(proc, "stdout is closed")


def test_stdout_closed_by_the_reader_is_not_an_error() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(f"'{sys.executable}' -m reports.cli presets | head -c 1 >/dev/null",
                          shell=True, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    assert proc.returncode == 0 and proc.stderr == ""


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG"), (".pdf", b"%PDF"),
                                               (".svg", b"<?xml")])
def test_gantt_honours_the_extension(capsys, tmp_path: Path, suffix: str, magic: bytes) -> None:
    out = tmp_path / f"g{suffix}"
    assert main(["simulate", "small-2d", "--chunks", "2", "--gantt", str(out)]) == 0
    assert out.read_bytes().startswith(magic)


def test_gantt_other_extension_is_refused_before_running(capsys, tmp_path: Path) -> None:
    out = tmp_path / "g.jpg"
    assert main(["simulate", "small-2d", "--chunks", "2", "--gantt", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--gantt" in err and ".pdf" in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--gantt", "--schedule-out"])
def test_unwritable_targets(capsys, tmp_path: Path, flag: str) -> None:
    name = "x.png" if flag == "--gantt" else "x.json"
    cases = [str(tmp_path), str(tmp_path / "nofolder" / name)]
    if os.path.isdir("/proc"):
        cases.append(f"/proc/{name}")
    for target in cases:
        assert main(["simulate", "small-2d", "--chunks", "2", flag, target]) == 2, target
        err = capsys.readouterr().err
        assert target in err and err.count("\n") == 1, err
    assert not (tmp_path / "nofolder").exists()


def test_schedule_out_through_a_symlink_keeps_the_link(capsys, tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert main(["simulate", "small-2d", "--chunks", "2", "--schedule-out", str(link)]) == 0
    assert link.is_symlink() and '"stages"' in real.read_text()


def test_spec_out_needs_its_folder(capsys, tmp_path: Path) -> None:
    out = tmp_path / "typo" / "spec.toml"
    assert main(["spec", "small-2d", "--solvers", "", "--out", str(out)]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert not out.parent.exists()


def test_sweep_db_and_report_out_create_one_folder(capsys, tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    assert main(["spec", "small-2d", "--chunks", "2", "--solvers", "", "--policies", "themis",
                 "--intra", "fifo", "--out", str(spec)]) == 0
    deep = tmp_path / "a" / "b" / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(deep), "--workers", "1"]) == 2
    assert "no such folder" in capsys.readouterr().err and not (tmp_path / "a").exists()
    db = tmp_path / "dbs" / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "1"]) == 0
    assert db.is_file()
    capsys.readouterr()
    assert main(["report", str(db), "--out", str(tmp_path / "x" / "y")]) == 2
    assert "no such folder" in capsys.readouterr().err and not (tmp_path / "x").exists()
    (tmp_path / "afile").write_text("keep")
    assert main(["report", str(db), "--out", str(tmp_path / "afile")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert (tmp_path / "afile").read_text() == "keep"
    assert main(["report", str(db), "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "README.md").is_file()


def test_out_dev_stdout_into_a_pipe() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        f"'{sys.executable}' -m reports.cli spec small-2d --solvers '' --out /dev/stdout | cat",
        shell=True, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    assert 'title = "Sweep of small-2d"' in proc.stdout


def test_sweep_db_must_be_a_regular_file(capsys, tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    assert main(["spec", "small-2d", "--chunks", "2", "--solvers", "", "--policies", "themis",
                 "--intra", "fifo", "--out", str(spec)]) == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target, what in ((tmp_path, "is a folder"), (fifo, "is a FIFO")):
        capsys.readouterr()
        assert main(["sweep", str(spec), "--db", str(target), "--workers", "1"]) == 2
        err = capsys.readouterr().err
        assert what in err
        assert "not a database file" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "spec.toml"]  # no journal
