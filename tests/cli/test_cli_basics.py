"""CLI: presets, network, simulate, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports.cli import main

DATA = Path(__file__).parents[1] / "data" / "astra-sim-1.0"
TUTORIAL = DATA / "tutorial"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("name", "want"), [
    ("3d_switch.json", [("Switch", 8, 50.0, 1.0)] * 3),
    ("tpu.json", [("Ring", 16, 124.0, 500.0)] * 2),
    ("dgx2.json", [("Switch", 16, 150.0, 500.0), ("Switch", 16, 6.25, 500.0)]),
])
def test_network_json_on_tutorial_files(capsys, name, want) -> None:
    code, out, _ = run(capsys, "network", str(TUTORIAL / name), "--json")
    assert code == 0
    data = json.loads(out)
    got = [(d["topology"], d["npus"], d["bandwidth_GBps"], d["latency_ns"]) for d in data["dims"]]
    assert got == want
    assert data["npus"] == 8**3 if name.startswith("3d") else data["npus"] == 256


def test_network_human_and_presets(capsys) -> None:
    code, out, _ = run(capsys, "network", "3d_switch")
    assert code == 0 and "total NPUs: 512" in out
    code, out, _ = run(capsys, "presets")
    assert code == 0 and "small-3d" in out and "tpu" in out


def test_simulate_json_fields(capsys, tmp_path) -> None:
    sched = tmp_path / "s.json"
    code, out, _ = run(capsys, "simulate", "small-3d", "--size", "64MiB", "--chunks", "8",
                       "--policy", "themis", "--intra", "scf", "--json",
                       "--schedule-out", str(sched))
    assert code == 0
    data = json.loads(out)
    for key in ("makespan_ns", "ideal_ns", "bw_utilization", "policy", "intra", "timing",
                "chunks", "stages", "dims", "routes", "runtime_s"):
        assert key in data
    assert data["stages"] == 8 * 6 and sum(data["routes"].values()) == 8
    assert 0 < data["bw_utilization"] <= 1
    from themis.checker import check
    from themis.schedule import Schedule

    assert check(Schedule.load(sched)) == []


def test_system_file_values_are_defaults_flags_override(capsys) -> None:
    sysfile = str(TUTORIAL / "3d_switch_themis.txt")
    code, out, _ = run(capsys, "simulate", str(TUTORIAL / "3d_switch.json"), "--system", sysfile,
                       "--size", "1GiB", "--json")
    data = json.loads(out)
    assert (data["policy"], data["intra"], data["chunks"]) == ("themis", "scf", 64)
    code, out, _ = run(capsys, "simulate", str(TUTORIAL / "3d_switch.json"), "--system", sysfile,
                       "--size", "1GiB", "--policy", "baseline", "--chunks", "16", "--json")
    data = json.loads(out)
    assert (data["policy"], data["chunks"]) == ("baseline", 16)


def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


GOOD_YAML = "topology: [Ring, Switch]\nnpus_count: [4, 4]\nbandwidth: [4, 1]\nlatency: [10, 50]\n"


@pytest.mark.parametrize(("files", "argv", "needles"), [
    ({}, ["network", "{tmp}/missing.yml"], ["missing.yml"]),
    ({"bad.yml": "topology: [Ring\n"}, ["network", "{tmp}/bad.yml"], ["bad.yml"]),
    ({"bad.json": "{\"units-count\": [4,"}, ["network", "{tmp}/bad.json"], ["bad.json"]),
    ({"t.yml": GOOD_YAML.replace("Switch", "Torus")}, ["network", "{tmp}/t.yml"],
     ["t.yml", "topology", "Torus"]),
    ({"l.yml": GOOD_YAML.replace("[4, 1]", "[4]")}, ["network", "{tmp}/l.yml"], ["l.yml"]),
    ({"n.yml": GOOD_YAML.replace("[4, 4]", "[4, 0]")}, ["network", "{tmp}/n.yml"],
     ["n.yml", "npus", "0"]),
    ({"b.yml": GOOD_YAML.replace("[4, 1]", "[4, 0]")}, ["network", "{tmp}/b.yml"],
     ["b.yml", "bandwidth", "0"]),
    ({"b.yml": GOOD_YAML.replace("[4, 1]", "[4, tbd]")}, ["network", "{tmp}/b.yml"],
     ["b.yml", "bandwidth", "tbd"]),
    ({"a.yml": GOOD_YAML.replace("[10, 50]", "[10, -5]")}, ["network", "{tmp}/a.yml"],
     ["a.yml", "latency", "-5"]),
    ({"n.yml": GOOD_YAML, "s.txt": "all-reduce-implementation: ring_foo\n"},
     ["simulate", "{tmp}/n.yml", "--system", "{tmp}/s.txt"], ["s.txt", "implementation", "foo"]),
    ({"n.yml": GOOD_YAML.replace("[4, 4]", "[4, 6]"),
      "s.txt": "preferred-dataset-splits: 4\nall-reduce-implementation: ring_halvingDoubling\n"},
     ["simulate", "{tmp}/n.yml", "--system", "{tmp}/s.txt"], ["s.txt", "halvingDoubling"]),
    ({"n.yml": GOOD_YAML}, ["simulate", "{tmp}/n.yml", "--size", "12XB"], ["--size", "12XB"]),
    ({"n.yml": GOOD_YAML}, ["simulate", "{tmp}/n.yml", "--size", "-1"], ["--size", "-1"]),
    ({"n.yml": GOOD_YAML}, ["simulate", "{tmp}/n.yml", "--chunks", "0"], ["chunks", "0"]),
    ({"n.yml": GOOD_YAML}, ["simulate", "{tmp}/n.yml", "--policy", "greedy"],
     ["policy", "greedy"]),
    ({"n.yml": GOOD_YAML}, ["simulate", "{tmp}/n.yml", "--intra", "lifo"], ["intra", "lifo"]),
    ({"n.yml": GOOD_YAML}, ["simulate", "{tmp}/n.yml", "--timing", "fast"], ["timing", "fast"]),
    ({}, ["network", "no-such-preset"], ["NETWORK", "no-such-preset"]),
])
def test_bad_input_one_line_exit_2(capsys, tmp_path, files, argv, needles) -> None:
    for name, text in files.items():
        _write(tmp_path, name, text)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def test_subprocess_error_has_no_traceback(tmp_path) -> None:
    p = _write(tmp_path, "b.yml", GOOD_YAML.replace("[4, 1]", "[4, tbd]"))
    proc = subprocess.run([sys.executable, "-m", "reports.cli", "network", p],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert "bandwidth" in proc.stderr and "tbd" in proc.stderr


def test_help_exits_zero() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0


@pytest.mark.parametrize(("system", "want"), [
    ("3d_switch_themis.txt", 13635870),
    ("3d_switch_baseline.txt", 35008128),
])
def test_simulate_reproduces_astra_sim_r1(capsys, system, want) -> None:
    # The acceptance command: ASTRA-sim 1.0 tutorial exercise 3 (R1).
    code, out, _ = run(capsys, "simulate", str(TUTORIAL / "3d_switch.json"), "--system",
                       str(TUTORIAL / system), "--size", "1GiB", "--timing", "astra-sim-1.0",
                       "--json")
    assert code == 0
    assert json.loads(out)["makespan_ns"] == want


@pytest.mark.parametrize(("run_file", "size", "want"), [
    ("sys_tpu_s64_baseline_FIFO.txt", "64MiB", 1925120),
    ("sys_tpu_s64_themis_FIFO.txt", "64MiB", 1481600),
    ("sys_tpu_s64_themis_SCF.txt", "1GiB", 9015680),
])
def test_simulate_reproduces_astra_sim_r2(capsys, run_file, size, want) -> None:
    code, out, _ = run(capsys, "simulate", str(TUTORIAL / "tpu.json"), "--system",
                       str(DATA / "runs" / run_file), "--size", size, "--timing",
                       "astra-sim-1.0", "--json")
    assert code == 0
    assert json.loads(out)["makespan_ns"] == want
