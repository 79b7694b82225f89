"""Every command's --json follows one vocabulary (docs/json.md).

Each command runs once on a small case; the checks walk the whole object.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from reports.cli import main

#: Names the vocabulary replaced (docs/json.md): never printed.
RETIRED = {"bytes", "wall_s", "lb_ns", "wall_time_s", "deterministic_time",
           "deterministic_time_total"}
UNITS = ("_ns", "_s", "_bytes", "_GBps")
SNAKE = re.compile(r"^[a-z][a-z0-9_]*(_GBps)?$")  # the unit GBps keeps its case
#: Objects keyed by their data (route text, method names...), not by field names.
MAPS = {"routes", "reference_ns", "meta", "params", "hint", "references",
        "timing_references", "versions"}

COMMANDS: dict[str, list[str]] = {
    "presets": ["presets"],
    "network": ["network", "small-2d"],
    "simulate": ["simulate", "small-2d", "--size", "6005", "--chunks", "6"],
    "simulate-astra": ["simulate", "small-2d", "--size", "6005", "--chunks", "6",
                       "--timing", "astra-sim-1.0", "--policy", "portfolio"],
    "solve": ["solve", "small-2d", "--size", "6005", "--chunks", "2", "--solver", "highs"],
    "solve-cpsat": ["solve", "small-2d", "--size", "6005", "--chunks", "2", "--solver", "cpsat",
                    "--deterministic-time", "5"],
    "bound": ["bound", "small-2d", "--size", "6005", "--chunks", "6"],
    "improve": ["improve", "small-2d", "--size", "6005", "--chunks", "3",
                "--evaluations", "30"],
    "compare": ["compare", "small-2d", "--size", "6005", "--chunks", "3", "--solvers", "",
                "--policies", "baseline,themis", "--timing", "alpha-beta,astra-sim-1.0"],
    "train": ["train", "microAllReduce", "small-2d", "--chunks", "2"],
    "train-solve-compare": ["train", "microAllReduce", "small-2d", "--chunks", "2", "--compare",
                            "--solve", "--solve-budget", "5"],
}


def output(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[dict, list[str]]:
    """The JSON object and the text of every float that is a whole number."""
    assert main([*argv, "--json"]) == 0
    text = capsys.readouterr().out
    whole: list[str] = []

    def parse_float(s: str) -> float:
        if float(s).is_integer():
            whole.append(s)
        return float(s)

    return json.loads(text, parse_float=parse_float), whole


def walk(obj: Any, path: str = "") -> list[tuple[str, str, Any, dict]]:
    """(path, key, value, parent) of every object field, maps' entries skipped."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((path, k, v, obj))
            if k not in MAPS:
                out += walk(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += walk(v, f"{path}[{i}]")
    return out


def every_key(obj: Any) -> list[str]:
    """Every key at every depth, maps (``meta``...) included."""
    if isinstance(obj, dict):
        return [k for k, v in obj.items() for k in [k, *every_key(v)]]
    if isinstance(obj, list):
        return [k for v in obj for k in every_key(v)]
    return []


def number_or_map(v: Any) -> bool:
    if v is None or (isinstance(v, int | float) and not isinstance(v, bool)):
        return True
    if isinstance(v, dict):
        return all(number_or_map(x) for x in v.values())
    return isinstance(v, list) and all(number_or_map(x) for x in v)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_json_follows_the_vocabulary(capsys: pytest.CaptureFixture[str], command: str) -> None:
    data, whole = output(capsys, COMMANDS[command])
    assert whole == [], f"whole numbers printed as floats: {whole[:5]}"
    for path, key, value, parent in walk(data):
        where = f"{command}: {path}.{key}"
        assert key not in RETIRED, where
        assert SNAKE.match(key), where
        if key.endswith(UNITS) and key not in MAPS:
            assert number_or_map(value), where
        if key == "dims":
            assert isinstance(value, list) and all(isinstance(d, dict) for d in value), where
        if key == "chunks":
            assert isinstance(value, int), where
            if "chunk_count" in parent:
                assert value == parent["chunk_count"], where
        if key == "splits" and path in ("", ".instance"):
            assert {"chunk_count", "chunk_sizes"} <= set(parent), where
        if key == "chunk_sizes":
            assert all(set(c) == {"size_bytes", "count"} for c in value), where
            assert sum(c["count"] for c in value) == parent["chunk_count"], where
        if key == "reference_ns":  # methods named as compare names them: policy/discipline
            assert all("+" not in name for name in value), where
    for key in every_key(data):  # a duration says its unit, in meta too
        assert key not in RETIRED, f"{command}: {key}"
        if {"time", "wall", "duration"} & set(key.split("_")):
            assert key.endswith(UNITS), f"{command}: {key} names a duration without its unit"
    if command.startswith("train"):  # a topology, a collective: never a bare "kind"
        assert "kind" not in every_key(data)


def test_the_split_is_reported_alike_by_every_command(capsys) -> None:
    """6005 bytes in 6 splits: 6 chunks of 1000 bytes and one of 5, everywhere."""
    want = {"splits": 6, "chunk_count": 7,
            "chunk_sizes": [{"size_bytes": 1000, "count": 6}, {"size_bytes": 5, "count": 1}]}
    for command in ("simulate", "bound"):
        data, _ = output(capsys, COMMANDS[command])
        assert {k: data[k] for k in want} == want
    data, _ = output(capsys, COMMANDS["bound"])
    assert {k: data["instance"][k] for k in want} == want
    assert data["lower_bound_ns"] == max(data[f"lb{k}_ns"] for k in range(4))


def test_improve_names_its_bound(capsys) -> None:
    data, _ = output(capsys, COMMANDS["improve"])
    assert data["splits"] == 3 and data["chunk_count"] == 4 == data["chunks"]
    assert data["lb3_method"] in ("optimal", "node-limit", "lp")
    assert data["bound_source"] == "lower bounds"  # no CP-SAT ran
    # With CP-SAT: "cpsat" exactly when its proven bound beats LB0-LB3.
    data, _ = output(capsys, ["improve", "small-2d", "--size", "6005", "--chunks", "3",
                              "--evaluations", "0", "--cpsat-dtime", "2"])
    from solvers import bounds
    from themis.instance import Instance
    from topologies.presets import preset_network

    ours = bounds(Instance(preset_network("small-2d"), 6005, 3)).lb_ns
    cpsat = data["meta"].get("cpsat") or {}
    want = "cpsat" if (cpsat.get("lower_bound_ns") or 0) > ours else "lower bounds"
    assert data["bound_source"] == want
