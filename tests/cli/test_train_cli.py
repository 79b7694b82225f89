"""``themis train`` and ``themis train-report`` on bundled and hand-made workloads."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from reports.cli import main
from reports.report.training_plots import exposed_intervals, timeline_data
from topologies.workload import load_workload

TUTORIAL = Path(__file__).parents[1] / "data" / "astra-sim-1.0" / "tutorial"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "train", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_vgg16_on_tpu_out_of_the_box(capsys) -> None:
    code, out, err = run(capsys, "train", "vgg16", "tpu")
    assert code == 0 and err == ""
    for part in ("vgg16 (DATA, 16 layers)", "256 NPUs", "policy themis", "end (us)",
                 "exposed communication (us)", "block1_conv1", "predictions"):
        assert part in out


def test_json_fields_and_cross_checks(capsys) -> None:
    data = run_json(capsys, "vgg16", "tpu")
    for key in ("end_ns", "pass_end_ns", "compute_ns", "exposed_comm_ns", "layers", "dims",
                "collectives", "runtime_s", "lower_bound_ns"):
        assert key in data
    assert data["exposed_comm_ns"] == data["end_ns"] - data["compute_ns"]
    # DATA, one pass: compute = sum f + sum w + sum_{i>=1} g, straight from the file
    wl = load_workload("vgg16")
    want = sum(ly.fwd_compute_ns + ly.wg_compute_ns for ly in wl.layers) + sum(
        ly.ig_compute_ns for ly in wl.layers[1:])
    assert data["compute_ns"] == want
    per_layer = sum(ly[f"{p}_compute_ns"] for ly in data["layers"] for p in ("fwd", "ig", "wg"))
    assert per_layer == want
    assert [ly["name"] for ly in data["layers"]] == [ly.name for ly in wl.layers]
    assert len(data["collectives"]) == 16  # one weight-gradient all-reduce per layer
    assert len(data["pass_end_ns"]) == 1 and data["pass_end_ns"][0] <= data["end_ns"]
    for dim in data["dims"]:
        assert 0 <= dim["busy_ns"] <= data["end_ns"] and 0 <= dim["utilization"] <= 1
    assert data["workload"] == "vgg16" and data["npus"] == 256


def test_data_pass_end_formula_on_a_hand_made_file(capsys, tmp_path) -> None:
    # two layers, no collectives: pass end = sum f + sum w + g_1 + 3L - 2
    path = tmp_path / "two.txt"
    path.write_text("DATA\n2\nl0 -1 10 NONE 0 30 NONE 0 50 NONE 0 1\n"
                    "l1 -1 20 NONE 0 40 NONE 0 60 NONE 0 1\n")
    data = run_json(capsys, str(path), "small-2d", "--passes", "2")
    assert data["pass_end_ns"][0] == 10 + 20 + 50 + 60 + 40 + 3 * 2 - 2
    assert len(data["pass_end_ns"]) == 2
    assert data["compute_ns"] == 2 * (10 + 20 + 50 + 60 + 40)
    assert data["collectives"] == []


def test_compare_and_system_file(capsys) -> None:
    data = run_json(capsys, "vgg16", "tpu", "--system", str(TUTORIAL / "tpu.txt"),
                    "--compare", "--policy", "themis")
    assert data["speedup_over_baseline"] == pytest.approx(data["baseline_end_ns"]
                                                          / data["end_ns"])
    assert data["config"]["splits"] == 4  # the tutorial system's preferred-dataset-splits
    same = run_json(capsys, "vgg16", "tpu", "--policy", "baseline", "--intra", "fifo",
                    "--compare")
    assert same["speedup_over_baseline"] == 1.0
    code, out, _ = run(capsys, "train", "vgg16", "tpu", "--compare", "--chunks", "8")
    assert code == 0 and "speed-up over baseline" in out


def test_scales_and_passes(capsys) -> None:
    one = run_json(capsys, "mlp-data-model", "small-3d", "--chunks", "4")
    scaled = run_json(capsys, "mlp-data-model", "small-3d", "--chunks", "4",
                      "--compute-scale", "2")
    assert scaled["compute_ns"] == 2 * one["compute_ns"]
    two = run_json(capsys, "mlp-data-model", "small-3d", "--chunks", "4", "--passes", "2")
    assert two["compute_ns"] == 2 * one["compute_ns"] and len(two["pass_end_ns"]) == 2
    big = run_json(capsys, "mlp-data-model", "small-3d", "--chunks", "4", "--comm-scale", "4")
    assert sum(c["size_bytes"] for c in big["collectives"]) == 4 * sum(
        c["size_bytes"] for c in one["collectives"])


def test_timeline_file(capsys, tmp_path) -> None:
    png = tmp_path / "t.png"
    code, _, err = run(capsys, "train", "dlrm", "small-3d", "--chunks", "4",
                       "--timeline", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gantt_file(capsys, tmp_path) -> None:
    # --gantt draws the run's Schedule (every stage, one row per logical dimension).
    png = tmp_path / "g.png"
    code, _, err = run(capsys, "train", "dlrm", "small-3d", "--chunks", "4",
                       "--gantt", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_exposed_intervals_by_hand() -> None:
    assert exposed_intervals([(0, 10), (5, 20), (30, 40)], 50) == [(20, 30), (40, 50)]
    assert exposed_intervals([(3, 5)], 5) == [(0, 3)]
    assert exposed_intervals([], 7) == [(0, 7)]


def test_timeline_data_lies_inside_the_run() -> None:
    from themis.training import TrainingConfig, simulate_training
    from topologies.presets import resolve_network

    result = simulate_training(load_workload("mlp-data-model"), resolve_network("small-3d"),
                               TrainingConfig(chunks=4, policy="themis"))
    compute, stages, ndims = timeline_data(result)
    assert ndims == len(result.dims) == 3
    assert sum(e - s for s, e in compute) == result.compute_ns
    assert stages and all(0 <= s <= e <= result.end_ns for _, _, s, e in stages)
    assert {c for _, c, _, _ in stages} <= {c.id for c in result.collectives}


def test_train_report_is_deterministic(capsys, tmp_path) -> None:
    from reports.cli import main

    outs = []
    for name, workers in (("a", "1"), ("b", "2")):  # in this process, and in a pool
        out = tmp_path / name
        assert main(["train-report", "--out", str(out), "--workloads", "mlp-model,dlrm",
                     "--networks", "small-2d,small-3d", "--policies",
                     "baseline/fifo,themis/scf", "--workers", workers]) == 0
        outs.append(out)
    capsys.readouterr()
    a, b = outs
    assert (a / "results.csv").read_text() == (b / "results.csv").read_text()
    rows = list(csv.DictReader((a / "results.csv").open()))
    assert len(rows) == 2 * 2 * 2
    for row in rows:
        if row["policy"] == "baseline/fifo":
            assert float(row["speedup"]) == 1.0
        assert float(row["end_ns"]) == pytest.approx(
            float(row["compute_ns"]) + float(row["exposed_comm_ns"]))
    readme = (a / "README.md").read_text()
    assert "themis train-report" in readme and "ResNet-152" in readme
    assert "Small iterations: policies vs the proven optimum" in readme

    def timeless(text: str) -> list[str]:
        return [line.replace(str(b), str(a)) for line in text.splitlines()
                if "wall time" not in line]
    assert timeless(readme) == timeless((b / "README.md").read_text())
    assert (a / "speedups.png").stat().st_size > 0 and (a / "timeline.png").stat().st_size > 0


def test_solve_refuses_a_large_iteration(capsys) -> None:
    code, out, err = run(capsys, "train", "vgg16", "tpu", "--solve", "--chunks", "64")
    assert code == 2 and out == ""
    assert "too large for the exact iteration model" in err and len(err.strip().splitlines()) == 1


def test_solve_a_tiny_iteration(capsys, tmp_path) -> None:
    path = tmp_path / "tiny.txt"
    path.write_text("DATA\n2\nl0 -1 500 NONE 0 300 NONE 0 200 ALLREDUCE 65536 1\n"
                    "l1 -1 400 NONE 0 300 NONE 0 100 ALLREDUCE 131072 1\n")
    data = run_json(capsys, str(path), "small-2d", "--chunks", "2", "--solve",
                    "--solve-budget", "5")
    solved = data["solve"]
    assert solved["status"] in ("optimal", "feasible")
    assert solved["iteration_bound_ns"] <= solved["lower_bound_ns"] <= solved["makespan_ns"]
    assert solved["makespan_ns"] <= data["end_ns"]
    code, out, _ = run(capsys, "train", str(path), "small-2d", "--chunks", "2", "--solve",
                       "--solve-budget", "5")
    assert code == 0 and "exact iteration (--solve)" in out


def test_solve_time_limit_stops_the_search_and_is_labelled(capsys, tmp_path) -> None:
    """--time-limit bounds --solve by the wall clock: a limit too short for the model
    leaves no schedule, labelled 'wall'; a generous one changes nothing (the
    deterministic budget decides); without --solve it is refused up front."""
    path = tmp_path / "tiny.txt"
    path.write_text("DATA\n2\nl0 -1 500 NONE 0 300 NONE 0 200 ALLREDUCE 65536 1\n"
                    "l1 -1 400 NONE 0 300 NONE 0 100 ALLREDUCE 131072 1\n")
    base = ["--chunks", "2", "--solve", "--solve-budget", "5"]
    cut = run_json(capsys, str(path), "small-2d", *base, "--time-limit", "1e-6")["solve"]
    assert cut["status"] == "unknown" and cut["stopped_by"] == "wall"
    assert "time limit" in cut["reason"] and cut["makespan_ns"] is None
    free = run_json(capsys, str(path), "small-2d", *base)["solve"]
    generous = run_json(capsys, str(path), "small-2d", *base, "--time-limit", "1000")["solve"]
    assert (generous["status"], generous["makespan_ns"]) == (free["status"], free["makespan_ns"])
    code, out, err = run(capsys, "train", str(path), "small-2d", "--time-limit", "5")
    assert code == 2 and out == "" and "--time-limit" in err and "--solve" in err
    assert len(err.strip().splitlines()) == 1


def _lab(hex_color: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour, by the textbook formulas."""
    from matplotlib.colors import to_rgb

    def linear(u: float) -> float:
        return u / 12.92 if u <= 0.04045 else ((u + 0.055) / 1.055) ** 2.4

    r, g, b = map(linear, to_rgb(hex_color))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_timeline_colours_are_distinct_saturated_and_not_reused_nearby() -> None:
    """No pale colour, none grey like compute, each far from every other; in the drawing,
    collectives in a row of as many as the palette holds all differ."""
    import itertools

    from reports.report.training_plots import (
        COLLECTIVE_COLORS,
        plot_training_timeline,
        timeline_colors,
    )
    from themis.training import TrainingConfig, simulate_training
    from topologies.presets import resolve_network

    labs = [_lab(c) for c in COLLECTIVE_COLORS]
    assert len(set(COLLECTIVE_COLORS)) == len(COLLECTIVE_COLORS) >= 16
    for lightness, a, b in labs:
        assert lightness <= 75 and (a * a + b * b) ** 0.5 >= 20  # not pale, not grey
    assert min(sum((p - q) ** 2 for p, q in zip(u, v, strict=True)) ** 0.5
               for u, v in itertools.combinations(labs, 2)) >= 25
    result = simulate_training(load_workload("vgg16"), resolve_network("small-2d"),
                               TrainingConfig(chunks=2, policy="themis", passes=2))
    stages = timeline_data(result)[1]
    colors = timeline_colors(stages)
    first = list(dict.fromkeys(cid for _, cid, _, _ in sorted(stages, key=lambda s: s[2])))
    assert len(first) > len(COLLECTIVE_COLORS)  # the palette goes round
    n = len(COLLECTIVE_COLORS)
    for i in range(len(first) - n + 1):
        assert len({colors[c] for c in first[i:i + n]}) == n
    from matplotlib.colors import to_hex

    ax = plot_training_timeline(result)
    drawn = {to_hex(c.get_facecolor()[0]) for c in ax.collections[2:]}  # after exposed, compute
    assert drawn == set(colors.values())
