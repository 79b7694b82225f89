"""Training at scale: progress of long runs, limits and refusals (issue 14 §4)."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

from reports.cli.train import LongRunProgress
from themis.training import TrainingConfig, simulate_training
from themis.training.simulate import expected_collectives
from topologies.presets import resolve_network
from topologies.workload import load_workload


def test_progress_counts_every_collective_issued_and_ended() -> None:
    wl = load_workload("vgg16")
    calls: list[tuple[int, int, int]] = []
    res = simulate_training(wl, resolve_network("tpu"), TrainingConfig(policy="themis", chunks=64),
                            progress=lambda *c: calls.append(c))
    n = len(res.collectives)
    assert n == expected_collectives(wl, 1) == 16  # vgg16: one wg all-reduce per layer
    assert len(calls) == 2 * n
    assert [c[0] for c in calls if c[1] == 0][-1] == n
    assert calls[-1] == (n, n, n)
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(calls, calls[1:], strict=False))


def test_plain_progress_lines_only_once_a_run_is_long() -> None:
    quiet = io.StringIO()
    p = LongRunProgress("train x", "collectives", stream=quiet, tty=False)
    for i in range(100):
        p(i, 0, 100)
    p.close()
    assert quiet.getvalue() == ""  # a short run prints nothing
    out = io.StringIO()
    p = LongRunProgress("train x", "collectives", stream=out, tty=False, plain_after_s=0,
                        plain_every_s=0)
    p(50, 0, 100)
    p(100, 50, 100)
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("themis: train x: 25% (50 issued, 0 ended of 100 collectives)")
    assert lines[1].startswith("themis: train x: 75% (100 issued, 50 ended of 100")
    assert all("ETA" in line for line in lines)


def test_terminal_bar_is_cleared_at_the_end() -> None:
    out = io.StringIO()
    p = LongRunProgress("train x", "collectives", stream=out, tty=True, after_s=0)
    p(3, 1, 4)
    assert "50%" in out.getvalue()
    p.close()
    assert p._bar is None


def test_simulate_refuses_a_huge_chunk_count_before_running(capsys, tmp_path,
                                                           monkeypatch) -> None:
    from reports.cli import main

    chunks = 10_000_000
    assert main(["simulate", "tpu", "--chunks", str(chunks)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"themis: error: --chunks = {chunks}: ")
    assert "40,000,004 stages" in err[0] and "GiB of memory" in err[0]
    assert "--no-limit" in err[0]
    system = tmp_path / "big.txt"
    system.write_text(f"preferred-dataset-splits: {chunks}\n")
    assert main(["simulate", "tpu", "--system", str(system)]) == 2
    assert f"big.txt: preferred-dataset-splits = {chunks}: " in capsys.readouterr().err
    from reports import limits

    monkeypatch.setattr(limits, "MAX_STAGES", 100)
    # tpu is 2-D: an all-reduce chunk has 4 stages, a reduce-scatter chunk 2
    assert main(["simulate", "tpu", "--chunks", "32"]) == 2
    assert main(["simulate", "tpu", "--chunks", "32", "--collective", "reduce-scatter"]) == 0
    assert main(["simulate", "tpu", "--chunks", "32", "--no-limit"]) == 0


def one_error(capsys, *argv: str) -> str:
    from reports.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # a flag's type check (argparse): the same one line
        code = exc.code
    assert code == 2
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in cap.err, cap.err
    return lines[0]


def test_train_refuses_scales_past_float32_and_the_limits(capsys) -> None:
    err = one_error(capsys, "train", "vgg16", "tpu", "--comm-scale", "1e40")
    assert err.startswith("themis: error: --comm-scale = 1e+40: ") and "float32" in err
    err = one_error(capsys, "train", "vgg16", "tpu", "--compute-scale", "1e40")
    assert err.startswith("themis: error: --compute-scale = 1e+40: ")
    # 3584 bytes x 1e12 is 3.6 PB: past 1 PiB under either timing
    err = one_error(capsys, "train", "vgg16", "tpu", "--comm-scale", "1e12", "--timing",
                    "alpha-beta")
    assert "vgg16.txt: layer 0 (block1_conv1) wg_size 3584 x 1e+12" in err
    for bad in ("inf", "nan", "0", "-1"):
        assert "must be a positive number" in one_error(capsys, "train", "vgg16", "tpu",
                                                        "--comm-scale", bad)


def test_workload_values_beyond_the_limits_are_refused(capsys, tmp_path) -> None:
    for col, value in ((10, "1" + "0" * 40), (4, str(2 * 2**50)), (2, str(10**13))):
        toks = ["l0", "-1", "5", "NONE", "0", "5", "NONE", "0", "5", "ALLREDUCE", "4096", "1"]
        toks[col] = value
        path = tmp_path / "w.txt"
        path.write_text("DATA\n1\n" + "\t".join(toks) + "\n")
        err = one_error(capsys, "train", str(path), "tpu")
        assert "w.txt:3: l0 " in err and f"= '{value}': more than" in err


def _no_runs(*args, **kwargs):
    raise AssertionError("the simulations started")


def test_train_report_refuses_before_any_run(capsys, tmp_path, monkeypatch) -> None:
    import fcntl
    import os

    import reports.sweep.run as run

    monkeypatch.setattr(run, "run_spec", _no_runs)
    for flag, text in (("--workloads", ",,"), ("--networks", " , ")):
        err = one_error(capsys, "train-report", "--out", str(tmp_path / "a"), flag, text)
        # refused before parsing: an empty list item (or an empty value) names the flag
        assert err == f"themis: error: {flag} = {text!r}: a list with an empty item"
    assert not (tmp_path / "a").exists()
    # another report holds the folder
    busy = tmp_path / "busy"
    busy.mkdir()
    fd = os.open(busy, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        err = one_error(capsys, "train-report", "--out", str(busy))
    finally:
        os.close(fd)
    assert f"--out = '{busy}': another train-report is writing into this folder" in err
    assert list(busy.iterdir()) == []
    # a folder nobody may write into (sysfs refuses new files even to root)
    try:
        os.close(os.open("/sys/kernel/.themis-test", os.O_CREAT | os.O_WRONLY))
        os.unlink("/sys/kernel/.themis-test")
        return  # pragma: no cover - a machine where even sysfs is writable
    except OSError:
        pass
    err = one_error(capsys, "train-report", "--out", "/sys/kernel")
    assert err.startswith("themis: error: /sys/kernel: ") and "cannot write" in err


def test_train_report_interrupted_leaves_no_empty_folder(capsys, tmp_path,
                                                         monkeypatch) -> None:
    import reports.sweep.run as run
    from reports.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "run_training_task", interrupted)
    out = tmp_path / "new"
    argv = ["--workloads", "vgg16", "--networks", "small-2d", "--workers", "1"]
    assert main(["train-report", "--out", str(out), *argv]) == 130
    assert not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    assert main(["train-report", "--out", str(kept), *argv]) == 130
    assert kept.is_dir()  # the user's own folder stays
    # each run kept its temporary database and said how to resume it
    dbs = re.findall(r"--db (\S+)", capsys.readouterr().err)
    assert len(set(dbs)) == 2
    for db in dbs:
        assert Path(db).is_file()
        shutil.rmtree(Path(db).parent)
