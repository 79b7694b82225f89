"""``themis design``: the table, --json, --out (a network the other commands take) and
bad input in one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main

LIBRA = Path(__file__).resolve().parents[3] / "shared" / "reference" / "libra"
needs_libra = pytest.mark.skipif(not LIBRA.is_dir(), reason="../shared/reference/libra absent")


def _net(tmp_path: Path) -> Path:
    net = tmp_path / "net.yml"
    net.write_text("topology: [ Ring, FullyConnected, Switch ]\nnpus_count: [ 4, 4, 4 ]\n"
                   "bandwidth: [ 1, 1, 1 ]\nlatency: [ 0, 0, 0 ]\n")
    return net


def test_json_and_out_agree_with_simulate(tmp_path, capsys) -> None:
    net, out = _net(tmp_path), tmp_path / "design.yml"
    assert main(["design", str(net), "--total-bandwidth", "300", "--size", "16MiB",
                 "--chunks", "16", "--evaluations", "40", "--json", "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sum(result["bandwidths_GBps"]) == pytest.approx(300.0)
    assert set(result["regret_table"]["policies"]) == {"themis", "baseline", "bound"}
    # The written network, simulated under the policy, takes the reported time.
    assert main(["simulate", str(out), "--policy", "themis", "--size", "16MiB",
                 "--chunks", "16", "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert sim["makespan_ns"] == pytest.approx(result["makespan_ns"], rel=1e-9)


@needs_libra
def test_libra_workload_with_its_cost_model(tmp_path, capsys) -> None:
    args = ["design", str(LIBRA / "network" / "4d_network.yml"),
            "--cost", str(LIBRA / "cost_model" / "4d_cost_model.yml"), "--budget", "10000",
            "--workload", str(LIBRA / "workload" / "ResNet_50.txt"),
            "--communicator", str(LIBRA / "communicator" / "ResNet_50_4d.yml"),
            "--policy", "baseline", "--regret", "baseline,bound", "--evaluations", "30",
            "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["cost"] == pytest.approx(10000.0)
    assert result["end_ns"] > 0 and len(result["bandwidths_GBps"]) == 4


@pytest.mark.parametrize(("extra", "flag"), [
    ([], "--total-bandwidth"),
    (["--total-bandwidth", "100", "--budget", "5"], "--budget"),
    (["--total-bandwidth", "-1"], "--total-bandwidth"),
    (["--total-bandwidth", "100", "--policy", "nope"], "--policy"),
    (["--total-bandwidth", "100", "--regret", "themis,nope"], "--regret"),
    (["--total-bandwidth", "100", "--min-bandwidth", "0=90,1=90"], "budget"),
    (["--total-bandwidth", "100", "--min-bandwidth", "7=1"], "--min-bandwidth"),
    (["--total-bandwidth", "100", "--fixed-bandwidth", "0=x"], "--fixed-bandwidth"),
    (["--total-bandwidth", "100", "--communicator", "c.yml"], "--communicator"),
])
def test_bad_input_is_one_line(tmp_path, capsys, extra, flag) -> None:
    out = tmp_path / "d.yml"
    assert main(["design", str(_net(tmp_path)), "--out", str(out), *extra]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and err.count("\n") == 1 and flag in err
    assert not out.exists()


def test_cost_file_of_the_wrong_length(tmp_path, capsys) -> None:
    cost = tmp_path / "cost.yml"
    cost.write_text("cost_per_GBps: [ 1, 2 ]\n")
    assert main(["design", str(_net(tmp_path)), "--cost", str(cost), "--budget", "100"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cost_per_GBps" in err and str(cost) in err


def test_training_workload_design(tmp_path, capsys) -> None:
    net = tmp_path / "net.yml"
    net.write_text("topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\n"
                   "bandwidth: [ 1, 1 ]\nlatency: [ 0, 0 ]\n")
    assert main(["design", str(net), "--total-bandwidth", "200", "--workload", "resnet50",
                 "--chunks", "8", "--policy", "baseline", "--regret", "baseline",
                 "--evaluations", "10", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["end_ns"] > 0 and sum(result["bandwidths_GBps"]) == pytest.approx(200.0)
    assert main(["design", str(net), "--total-bandwidth", "200", "--workload", "resnet50",
                 "--policy", "libra"]) == 2
    assert "--policy" in capsys.readouterr().err


def test_parallel_evaluation_gives_the_same_design(tmp_path, capsys) -> None:
    net = _net(tmp_path)
    args = ["design", str(net), "--total-bandwidth", "300", "--size", "16MiB", "--chunks", "8",
            "--evaluations", "30", "--regret", "baseline,themis", "--json"]
    assert main(args) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main([*args, "--workers", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == alone


RUNS = LIBRA.parent / "chakra" / "runs"


@pytest.mark.skipif(not RUNS.is_dir(), reason="../shared/reference/chakra absent")
def test_astra2_design_is_what_simulate_gives_on_the_written_network(tmp_path, capsys) -> None:
    # Under --timing astra-sim-2 with the user's system file the design's time is what
    # `simulate --timing astra-sim-2 --system FILE` prints for the written network.
    run = RUNS / "N2a_vgg16_s16"
    out = tmp_path / "d.yml"
    args = ["design", str(run / "network.yml"), "--system", str(run / "system.json"),
            "--timing", "astra-sim-2", "--total-bandwidth", "250", "--size", "64MiB",
            "--policy", "themis", "--regret", "baseline,themis", "--evaluations", "30",
            "--json", "--out", str(out)]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert all(d["bound_ns"] is None for d in result["regret_table"]["designs"].values())
    assert main(["simulate", str(out), "--system", str(run / "system.json"), "--timing",
                 "astra-sim-2", "--size", "64MiB", "--policy", "themis", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan_ns"] == result["makespan_ns"]
    assert main([*args[:-2], "--policy", "bound"]) == 2  # no bound under 2.x's timing
    assert "--policy" in capsys.readouterr().err


def test_astra1_design_with_a_bundled_system_file(tmp_path, capsys) -> None:
    out = tmp_path / "d.json"
    assert main(["design", "3d_switch", "--system", "3d_switch_themis", "--timing",
                 "astra-sim-1.0", "--total-bandwidth", "150", "--size", "64MiB",
                 "--regret", "baseline,themis", "--evaluations", "20", "--json",
                 "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["simulate", str(out), "--system", "3d_switch_themis", "--timing",
                 "astra-sim-1.0", "--size", "64MiB", "--policy", "themis", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan_ns"] == result["makespan_ns"]


@pytest.mark.skipif(not RUNS.is_dir(), reason="../shared/reference/chakra absent")
def test_chakra_trace_design_is_trains_end_on_the_written_network(tmp_path, capsys) -> None:
    run = RUNS / "N2a_MLP_ModelParallel_s16"
    out = tmp_path / "d.yml"
    assert main(["design", str(run / "network.yml"), "--system", str(run / "system.json"),
                 "--workload", str(run / "MLP_ModelParallel"), "--total-bandwidth", "250",
                 "--policy", "themis", "--regret", "baseline,themis", "--evaluations", "20",
                 "--json", "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["train", str(run / "MLP_ModelParallel"), str(out), "--system",
                 str(run / "system.json"), "--policy", "themis", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["end_ns"] == result["end_ns"]
    # text output, and no system file: ASTRA-sim 2.x's defaults and 4 splits, as train
    assert main(["design", str(run / "network.yml"), "--workload",
                 str(run / "MLP_ModelParallel"), "--total-bandwidth", "250",
                 "--evaluations", "20"]) == 0
    text = capsys.readouterr().out
    assert "Chakra traces (astra-sim-2)" in text
