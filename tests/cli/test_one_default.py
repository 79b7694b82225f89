"""One default per question (issue 23): the endpoint delay under ASTRA-sim 2.x's timing and
the wall limit beside a deterministic budget are the same rule in compare, spec and sweep."""

from __future__ import annotations

import tomllib

from reports.cli import main


def _spec(capsys, *argv: str) -> dict:
    assert main(["spec", "small-2d", "--chunks", "2", *argv]) == 0
    return tomllib.loads(capsys.readouterr().out)


def test_spec_under_astra2_writes_its_default_delay_and_refuses_zero(capsys) -> None:
    data = _spec(capsys, "--timing", "alpha-beta,astra-sim-2")
    assert data["grid"][0]["endpoint_delay_ns"] == [10.0]
    assert _spec(capsys)["grid"][0]["endpoint_delay_ns"] == [0.0]
    assert main(["spec", "small-2d", "--timing", "astra-sim-2", "--endpoint-delay", "0,10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--endpoint-delay" in err and "aborts" in err


def test_spec_wall_limit_never_cuts_a_deterministic_budget(capsys) -> None:
    # Every solver budgeted (CP-SAT 20 deterministic s, CBC/HiGHS 100,000 nodes): no wall
    # limit in effect; a solver without a budget: 30 s.
    assert _spec(capsys, "--solvers", "cpsat,cbc,highs")["time_limit_s"] == 7 * 24 * 3600.0
    assert _spec(capsys, "--deterministic-time", "0")["time_limit_s"] == 30.0
    assert _spec(capsys, "--time-limit", "5")["time_limit_s"] == 5.0


def test_compare_under_astra2_runs_with_its_default_delay(capsys) -> None:
    assert main(["compare", "small-2d", "--timing", "astra-sim-2", "--chunks", "2",
                 "--solvers", "", "--policies", "baseline", "--intra", "fifo", "--json"]) == 0
    assert '"makespan_ns"' in capsys.readouterr().out
