"""The README's commands on the shipped examples/ files work as written."""

from __future__ import annotations

import json
from pathlib import Path

from reports.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_simulate_the_examples(capsys, tmp_path: Path) -> None:
    net_yml, net_json = str(EXAMPLES / "my_net.yml"), str(EXAMPLES / "my_net.json")
    system = str(EXAMPLES / "my_system.txt")
    gantt = tmp_path / "gantt.png"
    assert main(["simulate", net_yml, "--policy", "themis", "--intra", "scf", "--chunks", "64",
                 "--gantt", str(gantt)]) == 0
    assert gantt.read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    assert main(["simulate", net_json, "--system", system, "--size", "1GiB", "--timing",
                 "astra-sim-1.0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["chunks"], data["policy"], data["intra"]) == (16, "themis", "scf")
    assert data["makespan_ns"] >= data["ideal_ns"]
    # Both files hold the same network: the same alpha-beta makespan.
    runs = []
    for net in (net_yml, net_json):
        assert main(["simulate", net, "--chunks", "8", "--json"]) == 0
        runs.append(json.loads(capsys.readouterr().out)["makespan_ns"])
    assert runs[0] == runs[1]


def test_the_training_study_example_is_a_valid_spec() -> None:
    from reports.sweep import load_spec

    spec = load_spec(EXAMPLES / "training-study.toml")
    # 2 workloads x 2 networks (one system) x 5 methods + bound, then 2 x 2 x 2 timings
    # x 2 methods + bound
    assert (spec.cases, len(spec.training), spec.tasks) == (4 + 8, 4 * 6 + 8 * 3, [])
    assert {t.case.system_name for t in spec.training} == {"my_system.txt", ""}
