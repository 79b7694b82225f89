"""``themis solve``: a deterministic budget is not cut by the default wall-clock limit,
and the text output says which limit stopped the search (issue 14 §5)."""

from __future__ import annotations

import argparse
import json

import pytest

from reports.cli import main
from reports.cli.common import NO_WALL_LIMIT_S
from reports.cli.solve import DEFAULT_TIME_LIMIT_S, stopped_by_text


@pytest.mark.parametrize(("flags", "wall_s"), [
    ([], DEFAULT_TIME_LIMIT_S),
    (["--deterministic-time", "0.2"], NO_WALL_LIMIT_S),
    (["--deterministic-time", "0.2", "--time-limit", "30"], 30.0),
])
def test_a_deterministic_budget_lifts_the_default_wall_limit(capsys, flags, wall_s) -> None:
    assert main(["solve", "small-2d", "--chunks", "2", "--json", *flags]) == 0
    params = json.loads(capsys.readouterr().out)["meta"]["params"]
    assert params["time_limit_s"] == wall_s


def test_a_node_limit_lifts_it_too(capsys) -> None:
    assert main(["solve", "small-2d", "--chunks", "2", "--solver", "highs", "--node-limit",
                 "50", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["params"]["time_limit_s"] == \
        NO_WALL_LIMIT_S


def test_the_text_says_which_limit_stopped_the_search(capsys) -> None:
    args = argparse.Namespace(time_limit=10.0, deterministic_time=5.0, node_limit=100)
    assert "wall-clock limit (10 s)" in stopped_by_text("wall", args)
    assert stopped_by_text("deterministic", args) == "the deterministic time (5)"
    assert stopped_by_text("nodes", args) == "the node limit (100)"
    assert "finished" in stopped_by_text("", args)
    assert main(["solve", "small-2d", "--chunks", "2", "--deterministic-time", "0.2"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("stopped by"))
    assert "deterministic time (0.2)" in row or "finished" in row


def test_improves_cpsat_phase_has_no_default_wall_limit(monkeypatch) -> None:
    # themis improve's deterministic CP-SAT budget is not cut by a wall-clock default.
    import importlib

    from solvers.improve import improve
    from themis.instance import Instance
    from topologies.presets import resolve_network

    solve_module = importlib.import_module("solvers.solve")  # the module, not the function
    seen = []
    real = solve_module.solve

    def spy(instance, solver, params=None, bounds=None, hint=None):
        seen.append(params.time_limit_s)
        return real(instance, solver, params, bounds=bounds, hint=hint)

    monkeypatch.setattr(solve_module, "solve", spy)
    inst = Instance(resolve_network("small-3d"), 64 << 20, 6)
    improve(inst, evaluations=20, cpsat_dtime_s=0.1)
    assert seen and all(t >= NO_WALL_LIMIT_S for t in seen)


def test_a_tiny_time_limit_bounds_the_whole_solve_and_says_so(capsys) -> None:
    """--time-limit covers the whole solve: with almost no time the latency-0 and C/2
    sub-solves (each a whole solve of its own) do not start, the meta says why, and
    the answer is the hint, labelled as stopped by the wall clock (issue 23)."""
    assert main(["solve", "small-4d", "--chunks", "16", "--time-limit", "0.001",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    meta = data["meta"]
    assert data["status"] == "feasible" and meta["stopped_by"] == "wall"
    assert "time limit ran out" in data["reason"] and data["valid"]
    for phase in ("latency0", "doubling"):
        assert meta[phase]["skipped"].startswith("skipped: not enough time left for the ")
        assert "of the 0.001 s time limit" in meta[phase]["skipped"]
    assert set(meta["latency0"]) == {"skipped"}  # no sub-solve ran


def test_a_deterministic_budget_runs_every_phase_whatever_the_wall(capsys) -> None:
    """With a deterministic budget the result must not depend on the machine: the
    sub-solves run even when a tight wall limit is given too."""
    assert main(["solve", "small-4d", "--chunks", "4", "--time-limit", "0.001",
                 "--deterministic-time", "0.5", "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)["meta"]
    assert "skipped" not in meta.get("latency0", {})
    assert "skipped" not in meta.get("doubling", {})


def test_a_tiny_time_limit_bounds_improve_and_says_so(capsys) -> None:
    """improve --time-limit: CP-SAT (its second half) is not started without the time
    for it; the meta says so and the run is labelled as stopped by the time limit."""
    assert main(["improve", "small-4d", "--chunks", "16", "--time-limit", "0.001",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    meta = data["meta"]
    assert meta["stopped_by"] == "time_limit" and data["valid"]
    assert "cpsat" not in meta and meta["skipped"]["cpsat"].startswith(
        "not enough time left")


def test_compare_time_limit_bounds_the_whole_command(capsys) -> None:
    """compare --time-limit is the whole command's: the solvers share what the bounds
    and policies leave (the first gets at most a third with three solvers), and a
    solver reached after the limit is not started, its row saying so (issue 23)."""
    args = ["compare", "small-3d", "--chunks", "4", "--policies", "themis", "--intra",
            "scf", "--json"]
    assert main([*args, "--time-limit", "1e-9"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["kind"] == "solver"]
    assert [r["method"] for r in rows] == ["cpsat", "cbc", "highs"]
    for r in rows:
        assert r["status"] == "unknown" and r["stopped_by"] == "wall"
        assert r["reason"].startswith("not started") and r["makespan_ns"] is None
    assert main([*args[:-1], "--time-limit", "1e-9"]) == 0
    assert "cbc: not started: the command's --time-limit was used up" in \
        capsys.readouterr().out
    assert main([*args, "--time-limit", "30"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["kind"] == "solver"]
    assert 0 < rows[0]["time_limit_s"] <= 10.0
    assert all(0 < r["time_limit_s"] <= 30.0 and r["status"] == "optimal" for r in rows)
