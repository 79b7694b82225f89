"""CLI: inputs that used to be silently wrong, and the astra-sim-1.0 below-ideal note."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reports.cli import main
from reports.formatting import print_json
from topologies.errors import InputError

RING8 = "topology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [0]\n"


def test_print_json_refuses_non_finite_numbers(capsys) -> None:
    with pytest.raises(InputError, match="not finite"):
        print_json({"makespan_ns": math.inf})
    assert capsys.readouterr().out == ""  # nothing half-printed


@pytest.mark.parametrize("delay", ["inf", "nan", "1e300"])
def test_endpoint_delay_must_be_finite(capsys, delay: str) -> None:
    assert main(["simulate", "small-2d", "--chunks", "2", "--endpoint-delay", delay,
                 "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--endpoint-delay" in err and err.count("\n") == 1


def test_network_file_as_system(capsys, tmp_path: Path) -> None:
    net = tmp_path / "ring8.yml"
    net.write_text(RING8)
    assert main(["simulate", str(net), "--system", str(net)]) == 2
    err = capsys.readouterr().err
    assert f"{net}: topology: this is a network file" in err


def test_below_ideal_note_under_astra_timing(capsys, tmp_path: Path) -> None:
    # ASTRA-sim 1.0's congestion-free direct on a Ring of 8: each of the 7 messages of a
    # step gets the full link bandwidth, so the makespan is about 1/7 of the ideal.
    net = tmp_path / "ring8.yml"
    net.write_text(RING8)
    system = tmp_path / "direct.txt"
    system.write_text("preferred-dataset-splits: 64\ncollective-optimization: localBWAware\n"
                      "all-reduce-implementation: direct\n")
    argv = ["simulate", str(net), "--system", str(system), "--size", "64MiB", "--json"]
    assert main([*argv, "--timing", "astra-sim-1.0"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["makespan_ns"] < data["ideal_ns"]
    assert err.count("\n") == 1 and "themis: note: the makespan is below the ideal" in err
    assert "congestion-free" in err
    assert main([*argv, "--timing", "alpha-beta"]) == 0  # alpha-beta: no note
    out, err = capsys.readouterr()
    assert json.loads(out)["makespan_ns"] >= json.loads(out)["ideal_ns"] and err == ""
