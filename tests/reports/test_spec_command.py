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
