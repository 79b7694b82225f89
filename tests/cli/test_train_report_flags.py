"""``themis train-report --system FILE --policies A,B/D``: a system's defaults, chosen methods."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from reports.cli import main

SYSTEM = """scheduling-policy: FIFO
endpoint-delay: 20
active-chunks-per-dimension: 1
preferred-dataset-splits: 4
boost-mode: 1
collective-optimization: localBWAware
intra-dimension-scheduling: SCF
"""


def one_error(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    return err.strip()


def test_system_and_policies_run_as_themis_train_does(tmp_path: Path, capsys,
                                                      monkeypatch) -> None:
    from reports.report import training_exact

    monkeypatch.setattr(training_exact, "run_small", lambda *a, **k: [])  # CP-SAT: elsewhere
    system = tmp_path / "sys.txt"
    system.write_text(SYSTEM)
    out = tmp_path / "report"
    assert main(["train-report", "--out", str(out), "--workloads", "mlp-model", "--networks",
                 "small-2d", "--system", str(system), "--policies",
                 "baseline,themis/fifo,lb-mix", "--workers", "1"]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader((out / "results.csv").open()))
    # a name without a discipline takes the system file's (SCF); the first is the baseline
    labels = ["baseline/scf", "themis/fifo", "lb-mix/scf"]
    assert [r["policy"] for r in rows] == labels
    for row in rows:
        policy, intra = row["policy"].split("/")
        assert main(["train", "mlp-model", row["network"], "--system", str(system),
                     "--policy", policy, "--intra", intra, "--json"]) == 0
        alone = json.loads(capsys.readouterr().out)
        assert float(row["end_ns"]) == pytest.approx(alone["end_ns"], abs=1e-3)
        assert float(row["lower_bound_ns"]) == pytest.approx(alone["lower_bound_ns"],
                                                             abs=1e-3)
        assert alone["config"]["splits"] == 4  # the file's preferred-dataset-splits
        if row["policy"] == labels[0]:
            assert float(row["speedup"]) == 1.0
    readme = (out / "README.md").read_text()
    assert "## Speed-up over baseline/scf" in readme
    assert f"--system {system}" in readme and "scheduling-policy: FIFO; endpoint-delay: 20" \
        in readme  # the file's own lines


def test_bad_policies_and_systems_are_one_line_before_any_run(tmp_path: Path, capsys,
                                                              monkeypatch) -> None:
    import reports.sweep.run as run

    def no_runs(*args, **kwargs):
        raise AssertionError("the simulations started")

    monkeypatch.setattr(run, "run_spec", no_runs)
    base = ["train-report", "--out", str(tmp_path / "r"), "--workloads", "mlp-model",
            "--networks", "small-2d"]
    err = one_error(capsys, *base, "--policies", "baseline,bogus/fifo")
    assert err.startswith("themis: error: --policies = 'bogus/fifo': unknown policy")
    err = one_error(capsys, *base, "--policies", "themis/nope")
    assert err.startswith("themis: error: --policies = 'nope': unknown intra-dimension")
    err = one_error(capsys, *base, "--policies", "2,0,1/scf")
    assert err.startswith("themis: error: --policies = '2,0,1/scf': a route must be a "
                          "permutation")
    err = one_error(capsys, *base, "--policies", " ")
    assert err.startswith("themis: error: --policies = ' ': an empty value")
    err = one_error(capsys, *base, "--policies", "themis,,baseline")
    assert err.startswith("themis: error: --policies = 'themis,,baseline': a list with an "
                          "empty item")
    err = one_error(capsys, *base, "--system", str(tmp_path / "none.txt"))
    assert "none.txt" in err and "no such file" in err
    partial = tmp_path / "partial.txt"
    partial.write_text("scheduling-policy: LIFO\nendpoint-delay: 10\n")
    err = one_error(capsys, *base, "--system", str(partial))
    assert err.startswith(f"themis: error: {partial}: ") and "missing" in err
    assert not (tmp_path / "r").exists()
