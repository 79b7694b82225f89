"""Long train runs (issue 23): progress says what follows the last collective, and a large
workload prints a summary of its layers instead of every row."""

from __future__ import annotations

import io
from dataclasses import replace

from reports.cli import main
from reports.cli.train import MAX_LAYER_ROWS, LongRunProgress
from topologies.workload import load_workload


def test_phase_line_after_the_counted_work() -> None:
    out = io.StringIO()
    progress = LongRunProgress("train x", "collectives", stream=out, tty=False,
                               plain_after_s=0.0, plain_every_s=0.0)
    progress(3, 3, 3)
    progress.phase("the iteration bound")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("themis: train x: 100%")
    assert lines[-1].startswith("themis: train x: all collectives done in ")
    assert lines[-1].endswith("computing the iteration bound")


def test_short_runs_say_nothing() -> None:
    out = io.StringIO()
    progress = LongRunProgress("train x", "collectives", stream=out, tty=False)
    progress(1, 1, 1)
    progress.phase("the iteration bound")
    assert out.getvalue() == ""


def test_a_large_workload_prints_the_layers_that_expose_most(tmp_path, capsys) -> None:
    wl = load_workload("vgg16")
    n = MAX_LAYER_ROWS + 40
    layers = [replace(ly, name=f"{ly.name}_{i}") for i in range(n // len(wl.layers) + 1)
              for ly in wl.layers][:n]
    path = tmp_path / "big.txt"
    head = open(wl.file).read().splitlines()[0]
    body = []
    for ly in layers:
        body.append("\t".join(str(v) for v in (
            ly.name, ly.reserved, ly.fwd_compute_ns, ly.fwd_type, ly.fwd_size_bytes,
            ly.ig_compute_ns, ly.ig_type, ly.ig_size_bytes, ly.wg_compute_ns, ly.wg_type,
            ly.wg_size_bytes, ly.update_ns)))
    path.write_text("\n".join([head, str(n), *body]) + "\n")
    assert main(["train", str(path), "small-2d", "--chunks", "4"]) == 0
    out = capsys.readouterr().out
    assert f"the {MAX_LAYER_ROWS} of {n} layers with the most exposed communication" in out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("layer "))
    end = next(i for i, line in enumerate(lines) if line.startswith("(columns"))
    assert end - start - 2 == MAX_LAYER_ROWS  # header, rule, then the rows
