"""Bounded work, up front: training runs too large to simulate and absurd worker counts are
refused or capped before anything runs, with the estimate in the message."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from reports.cli import main
from reports.sweep import run_sweep
from reports.sweep.run import cpu_count, worker_count
from themis.limits import MAX_TRAINING_STEPS, check_training_steps, training_steps
from topologies.errors import InputError

#: Two data-parallel layers: two all-reduces per pass.
TINY_WORKLOAD = ("DATA\n2\nl0 -1 500 NONE 0 300 NONE 0 200 ALLREDUCE 65536 1\n"
                 "l1 -1 400 NONE 0 300 NONE 0 100 ALLREDUCE 131072 1\n")


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


def test_the_estimate_and_its_limit() -> None:
    # passes x collectives per pass x chunks x dimensions, by hand
    assert training_steps(3, 5, 7, 2) == 210
    assert training_steps(1, 0, 4, 0) == 4  # at least one collective and one dimension
    check_training_steps(MAX_TRAINING_STEPS // 128, 1, 64, 2, "passes", 1)  # at the limit
    with pytest.raises(InputError) as err:
        check_training_steps(MAX_TRAINING_STEPS // 128 + 1, 1, 64, 2, "passes", 7, "w.txt")
    assert str(err.value).startswith("w.txt: passes = 7: about ")
    assert f"more than the {MAX_TRAINING_STEPS:,}" in str(err.value)


def test_train_refuses_a_million_passes_or_chunks(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    wl = tmp_path / "tiny.txt"
    wl.write_text(TINY_WORKLOAD)
    # 1,000,000 passes x 2 all-reduces x 4 chunks (the default) x 2 dimensions
    _one_line(capsys, ["train", str(wl), "small-2d", "--passes", "1000000"],
              "tiny.txt: --passes = 1000000", "about 16,000,000 chunk steps",
              "1,000,000 passes x 2 collectives x 4 chunks x 2 dimensions")
    # vgg16: 16 weight-gradient all-reduces x 1,000,000 chunks x 2 dimensions
    _one_line(capsys, ["train", "vgg16", "small-2d", "--chunks", "1000000"],
              "--chunks = 1000000", "about 32,000,000 chunk steps", "1 pass x 16 collectives")
    # a large but allowed run is not refused by the estimate
    assert main(["train", str(wl), "small-2d", "--passes", "3", "--json"]) == 0


def test_a_training_spec_of_a_billion_passes_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tiny.txt").write_text(TINY_WORKLOAD)
    spec = tmp_path / "big.toml"
    spec.write_text(textwrap.dedent("""
        [[training]]
        workloads = ["tiny.txt"]
        networks = ["small-2d"]
        passes = [1, 1000000000]
    """))
    db = tmp_path / "r.sqlite"
    _one_line(capsys, ["sweep", str(spec), "--db", str(db), "--workers", "1"],
              "big.toml: training[0].passes = 1000000000", "about 1.6e+10 chunk steps")
    assert not db.exists()


def test_worker_count_is_capped_at_the_tasks_and_the_cpus() -> None:
    cpus = cpu_count()
    assert worker_count(100000, 2) == min(2, cpus)
    assert worker_count(None, 10**6) == cpus
    assert worker_count(3, 1) == 1 and worker_count(1, 50) == 1
    assert worker_count(100000, 2, remote=True) == 100000  # a Dask cluster's own business


def test_a_sweep_with_a_hundred_thousand_workers_runs_on_a_few(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        [[grid]]
        networks = ["small-2d"]
        sizes = ["1MiB"]
        chunks = [2]
        policies = ["baseline", "themis"]
        intra = ["fifo"]
    """))
    stream = io.StringIO()
    out = run_sweep(str(spec), str(tmp_path / "r.sqlite"), workers=100000, stream=stream)
    assert out.ran == 3 and out.failed == 0
    assert f"--workers 100000: capped at {min(3, cpu_count())} (3 tasks, " in stream.getvalue()


def test_compare_and_sweep_grids_refuse_a_million_chunks(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    # small-2d: 2 active dimensions, an all-reduce chunk has 2 x 2 stages; 1 GiB in
    # 1,000,000 splits is 1,000,001 chunks (ASTRA-sim's remainder chunk)
    _one_line(capsys, ["compare", "small-2d", "--size", "1GiB", "--chunks", "1000000"],
              "--chunks = 1000000: 4,000,004 stages (1,000,001 chunks x 4)",
              "the limit is 2,000,000 stages (use fewer chunks)")
    spec = tmp_path / "s.toml"
    spec.write_text('[[grid]]\nnetworks = ["small-2d"]\nsizes = ["1GiB"]\n'
                    "chunks = [2, 1000000]\n")
    db = tmp_path / "r.sqlite"
    _one_line(capsys, ["sweep", str(spec), "--db", str(db)],
              "s.toml: grid[0].chunks[1] = 1000000: 4,000,004 stages")
    assert not db.exists()
