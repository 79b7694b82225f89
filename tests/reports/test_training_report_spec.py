"""``themis train-report``: the training report is a sweep of its own spec, then its report.

The committed spec ``reports/specs/training.toml`` expands to the committed report's
runs; a tiny spec run by ``train-report`` writes the report's tables from its
database, the same rows ``themis sweep`` stores; an interrupted run loses nothing and
resumes.
"""

from __future__ import annotations

import csv
import re
import shutil
import sqlite3
import textwrap
from pathlib import Path

import pytest

from reports.cli import main

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "reports" / "training"

#: One 1.0 workload on one network, two policies and the bound (3 tasks).
TINY_SPEC = """
title = "tiny training report"
[[training]]
workloads = ["mlp-model"]
networks = ["small-2d"]
systems = ["sys.txt"]
timing = ["astra-sim-1.0"]
chunks = [4]
policies = ["baseline/fifo", "themis/scf"]
"""
SYSTEM = ("scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 1\n"
          "preferred-dataset-splits: 4\nboost-mode: 1\ncollective-optimization: localBWAware\n")


@pytest.fixture
def no_small_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The small-iteration table (CP-SAT, tested in tests/cli/test_train_cli.py) left
    empty, for speed."""
    from reports.report import training_exact

    monkeypatch.setattr(training_exact, "run_small", lambda *a, **k: [])


def tiny(tmp_path: Path) -> Path:
    (tmp_path / "sys.txt").write_text(SYSTEM)
    path = tmp_path / "tiny.toml"
    path.write_text(textwrap.dedent(TINY_SPEC))
    return path


def test_the_committed_spec_expands_to_the_committed_reports_runs() -> None:
    from reports.report.training import SPEC
    from reports.sweep import load_spec
    from reports.sweep.training import DEFAULT_POLICIES

    spec = load_spec(SPEC)
    policy_tasks = [t for t in spec.training if t.method is not None]
    readme = (COMMITTED / "README.md").read_text()
    runs = int(re.search(r"^(\d+) runs: ", readme, re.M)[1])  # type: ignore[index]
    rows = list(csv.DictReader((COMMITTED / "results.csv").open()))
    assert len(policy_tasks) == runs == len(rows) == 640
    assert spec.cases == 80 and len(spec.training) == 640 + 80  # one bound task per case
    assert {(t.case.workload_name, t.case.network_name, t.name) for t in policy_tasks} \
        == {(r["workload"], r["network"], r["policy"]) for r in rows}
    # the report's policies are the [[training]] tables' default, in its order
    assert list(dict.fromkeys(r["policy"] for r in rows)) == list(DEFAULT_POLICIES)
    configs = {t.case.config.with_(policy="baseline", intra="fifo") for t in spec.training}
    assert len(configs) == 1
    (config,) = configs
    assert (config.timing, config.passes, config.chunks, config.endpoint_delay_ns,
            config.scheduling_policy) == ("astra-sim-1.0", 1, 64, 10.0, "LIFO")


def test_a_tiny_spec_runs_as_a_sweep_and_its_report_has_the_tables(
        tmp_path: Path, capsys, no_small_table) -> None:
    spec = tiny(tmp_path)
    db, out = tmp_path / "t.sqlite", tmp_path / "report"
    assert main(["train-report", "--spec", str(spec), "--db", str(db), "--out", str(out),
                 "--workers", "1"]) == 0
    assert "README.md, results.csv, speedups.png, timeline.png" in capsys.readouterr().out
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["policy"] for r in rows] == ["baseline/fifo", "themis/scf"]
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        stored = {r["method"]: dict(r) for r in conn.execute("SELECT * FROM training")}
    assert set(stored) == {"baseline/fifo", "themis/scf", "bound"}
    for row in rows:
        assert float(row["end_ns"]) == pytest.approx(stored[row["policy"]]["end_ns"],
                                                     abs=1e-3)
        assert float(row["lower_bound_ns"]) == pytest.approx(
            stored["bound"]["lower_bound_ns"], abs=1e-3)
        assert float(row["lower_bound_ns"]) <= float(row["end_ns"])
    readme = (out / "README.md").read_text()
    assert f"runs `{spec}` as a sweep" in readme
    assert "2 runs: workloads mlp-model; networks small-2d" in readme
    for title in ("## Speed-up over baseline/fifo", "## The paper's numbers beside ours",
                  "## Iteration time (ms)", "## Exposed communication"):
        assert title in readme
    assert "scheduling-policy: LIFO; endpoint-delay: 10" in readme
    # the same database, reported alone, is the study report of its training tasks
    assert main(["train-report", "--db", str(db), "--out", str(tmp_path / "study")]) == 0
    study = list(csv.DictReader((tmp_path / "study" / "results.csv").open()))
    assert [(r["policy"], r["end_ns"]) for r in study] \
        == [(r["policy"], r["end_ns"]) for r in rows]
    # a rerun resumes: nothing left to run, the same files
    before = (out / "results.csv").read_text()
    assert main(["train-report", "--spec", str(spec), "--db", str(db), "--out", str(out),
                 "--workers", "1"]) == 0
    assert "0 to run" in capsys.readouterr().err
    assert (out / "results.csv").read_text() == before


def test_an_interrupted_report_keeps_its_runs_and_resumes(tmp_path: Path, capsys,
                                                          monkeypatch, no_small_table) -> None:
    import reports.sweep.run as run

    spec = tiny(tmp_path)
    real = run.run_training_task
    calls = []

    def interrupted_after_one(task):
        calls.append(task.key)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(run, "run_training_task", interrupted_after_one)
    out = tmp_path / "report"
    assert main(["train-report", "--spec", str(spec), "--out", str(out), "--workers",
                 "1"]) == 130
    err = capsys.readouterr().err
    assert not out.exists()  # a folder this run made is removed while still empty
    resume = re.search(r"resume with:\n  (.*)\n", err)[1]  # type: ignore[index]
    db = Path(re.search(r"--db (\S+)", resume)[1])  # type: ignore[index]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM training").fetchone()[0] == 1
    monkeypatch.setattr(run, "run_training_task", real)
    assert main(resume.split()[1:]) == 0
    assert "1 already done, 2 to run" in capsys.readouterr().err
    assert len(list(csv.DictReader((out / "results.csv").open()))) == 2
    shutil.rmtree(db.parent)


def test_a_spec_of_several_settings_is_refused_before_any_run(tmp_path: Path,
                                                              capsys) -> None:
    spec = tiny(tmp_path)
    spec.write_text(spec.read_text().replace('chunks = [4]', 'chunks = [2, 4]'))
    assert main(["train-report", "--spec", str(spec), "--out", str(tmp_path / "r")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"--spec = '{spec}': the training report is of one setting" in err
    assert not (tmp_path / "r").exists()


def test_auto_is_one_method_with_its_own_discipline(capsys) -> None:
    from reports.sweep.training_policies import parse_policies
    from topologies.errors import InputError

    methods = parse_policies(["auto", "auto/best", "auto/scf", "themis"], ["fifo", "scf"],
                             "policies")
    assert [(m.label, m.policy, m.intra) for m in methods] == [
        ("auto/best", "auto", "scf"), ("auto/scf", "auto", "scf"),
        ("themis/fifo", "themis", "fifo"), ("themis/scf", "themis", "scf")]
    with pytest.raises(InputError) as err:
        parse_policies(["baseline", "themis/best"], ["fifo"], "policies", "s.toml")
    assert str(err.value).startswith("s.toml: policies[1] = 'themis/best': /best is for "
                                     "a policy that chooses its own discipline (auto)")
