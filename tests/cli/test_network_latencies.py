"""CLI: per-dimension NIC and router latencies of an ASTRA-sim 1.0 network file."""

from __future__ import annotations

import json

from reports.cli import main


def test_network_shows_per_dimension_latencies(capsys, tmp_path) -> None:
    path = tmp_path / "net.json"
    path.write_text(json.dumps({
        "topologies-per-dim": ["Ring", "Switch", "Switch"], "units-count": [4, 8, 2],
        "links-count": [2, 1, 1], "link-bandwidth": [25, 50, 10],
        "link-latency": [7, 5, 1], "nic-latency": [3, 0, 0],
        "router-latency": [0, 20, 40]}))
    assert main(["network", str(path), "--json"]) == 0
    dims = json.loads(capsys.readouterr().out)["dims"]
    assert [d["nic_latency_ns"] for d in dims] == [3, 0, 0]
    assert [d["router_latency_ns"] for d in dims] == [0, 20, 40]
    assert main(["network", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NIC ns" in out and "router ns" in out
    row2 = next(line for line in out.splitlines() if line.lstrip().startswith("2 "))
    assert row2.split()[-2:] == ["0", "40"]
    # and it simulates under both timings
    for timing in ("astra-sim-1.0", "alpha-beta"):
        assert main(["simulate", str(path), "--size", "1MiB", "--chunks", "4",
                     "--timing", timing, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["makespan_ns"] > 0
