"""From a network file to a published report in three commands (spec, sweep, report)."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

from reports.cli import main

NET = "topology: [Ring, Switch]\nnpus_count: [4, 4]\nbandwidth: [4, 1]\nlatency: [10, 50]\n"


def test_three_commands_from_a_network_file(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "mine.yml").write_text(NET)
    (tmp_path / "specs").mkdir()  # spec --out creates no folders
    assert main(["spec", "nets/mine.yml", "--chunks", "2,3", "--solvers", "cpsat",
                 "--policies", "baseline,round-robin,themis", "--intra", "fifo,scf",
                 "--time-limit", "5", "--out", "specs/spec.toml"]) == 0
    spec = tomllib.loads((tmp_path / "specs" / "spec.toml").read_text())
    assert spec["grid"][0]["networks"] == ["../nets/mine.yml"]
    assert main(["sweep", "specs/spec.toml", "--db", "r.sqlite", "--workers", "1"]) == 0
    assert main(["report", "r.sqlite", "--out", "rep"]) == 0
    rows = list(csv.DictReader((tmp_path / "rep" / "results.csv").open()))
    # 2 instances x (3 policies x 2 disciplines + 1 solver + 1 bound) = 16 tasks.
    assert len(rows) == 16
    solved = [r for r in rows if r["method"] == "cpsat"]
    assert {r["status"] for r in solved} == {"optimal"}
    text = (tmp_path / "rep" / "README.md").read_text()
    assert "themis/scf" in text and "gap_by_chunks.png" in text


def test_spec_on_stdout_and_errors(tmp_path: Path, capsys) -> None:
    assert main(["spec", "small-2d", "--solvers", ""]) == 0
    out = capsys.readouterr().out
    data = tomllib.loads(out)
    assert data["grid"][0]["networks"] == ["small-2d"] and data["grid"][0]["solvers"] == []
    assert main(["spec", str(tmp_path / "nothere.yml")]) == 2
    assert "nothere.yml" in capsys.readouterr().err
    assert main(["spec", "small-2d", "--chunks", "2,x"]) == 2
    assert "--chunks" in capsys.readouterr().err
    assert main(["spec", "small-2d", "--sizes", "12XB"]) == 2
    assert "12XB" in capsys.readouterr().err
    assert not (tmp_path / "spec.toml").exists()


def test_a_title_with_quotes_hashes_and_newlines_round_trips(tmp_path: Path, capsys) -> None:
    """tomli-w writes the spec: no comment can end up inside a string, and sweep reads it."""
    from reports.sweep import load_spec

    title = 'My "best" [[grid]] sweep # not a comment\nsecond line \\ and \'quotes\''
    out = tmp_path / "spec.toml"
    assert main(["spec", "small-2d", "--chunks", "2", "--solvers", "", "--policies",
                 "themis,1,0", "--intra", "scf", "--title", title, "--out", str(out)]) == 0
    capsys.readouterr()
    assert tomllib.loads(out.read_text())["title"] == title
    spec = load_spec(out)
    assert spec.title == title
    assert {t.method.label for t in spec.tasks} >= {"themis/scf", "1,0/scf"}
    assert main(["sweep", str(out), "--db", str(tmp_path / "r.sqlite"), "--workers", "1"]) == 0
    assert "tasks done" in capsys.readouterr().out


def test_spec_and_sweep_accept_routes_and_registered_policies(tmp_path: Path, capsys,
                                                              backwards_policy) -> None:
    out = tmp_path / "spec.toml"
    assert main(["spec", "small-2d", "--chunks", "2", "--solvers", "", "--policies",
                 "backwards,1,0", "--intra", "fifo", "--out", str(out)]) == 0
    assert tomllib.loads(out.read_text())["grid"][0]["policies"] == ["backwards", "1,0"]
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(out), "--db", str(db), "--workers", "1"]) == 0
    assert main(["report", str(db), "--out", str(tmp_path / "rep")]) == 0
    capsys.readouterr()
    rows = {r["method"]: r for r in csv.DictReader((tmp_path / "rep" / "results.csv").open())}
    assert set(rows) == {"bound", "backwards/fifo", "1,0/fifo"}
    # backwards on two dimensions is the route 1,0: the same schedule
    assert rows["backwards/fifo"]["makespan_ns"] == rows["1,0/fifo"]["makespan_ns"]
    # a route that is not a permutation of the dimensions is refused with its key
    out.write_text(out.read_text().replace('"1,0"', '"0,1,2"'))
    assert main(["sweep", str(out), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "grid[0].policies[1]" in err and "0,1,2" in err
