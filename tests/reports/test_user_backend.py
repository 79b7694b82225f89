"""A solver backend a user registers works in ``solve``, ``compare`` and ``sweep``, and
the callers pass down what they have: compare its bounds and policy schedules, a sweep
its bounds (LB0-LB3 once per instance and AG variant, not once per solver task)."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import solvers
from reports.cli import main
from reports.compare import compare
from reports.sweep import run_sweep
from solvers.backend import Problem, register_backend, unregister_backend
from solvers.hints import hint_methods
from solvers.result import RawSolution, Status
from themis.instance import Instance
from topologies.presets import resolve_network

NAME = "echo"


@pytest.fixture
def echo() -> Iterator[list[Problem]]:
    """The backend ``echo``: answers with its hint (feasible, no bound of its own); the
    problems it was given are recorded."""
    seen: list[Problem] = []

    def run(problem: Problem) -> RawSolution:
        seen.append(problem)
        return RawSolution(Status.FEASIBLE, problem.hint.assignment, problem.hint.makespan_ns,
                           0.0)

    register_backend(NAME)(run)
    yield seen
    unregister_backend(NAME)


@pytest.fixture
def bound_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every LB0-LB3 computation, by AG variant (the bound method's and a solver's own),
    of the instances themselves (not of the latency-0 instances CP-SAT's ``latency0``
    step solves: other instances, with bounds of their own)."""
    from solvers.latency0 import zero_latency

    calls: list[str] = []
    real = solvers.bounds

    def counting(instance, ag_order="reverse", *args, **kwargs):
        if zero_latency(instance) is not None:
            calls.append(str(ag_order))
        return real(instance, ag_order, *args, **kwargs)

    monkeypatch.setattr(solvers, "bounds", counting)
    monkeypatch.setattr(sys.modules["solvers.solve"], "compute_bounds", counting)
    return calls


def test_solve_command_runs_a_registered_backend(echo, capsys) -> None:
    assert main(["solve", "small-2d", "--size", "16MiB", "--chunks", "2", "--solver", NAME,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solver"] == NAME and len(echo) == 1
    # The answer is the hint: never below the bound, and re-timed to the hint's makespan;
    # optimal only as the grading proves it (the hint meets the lower bound).
    assert out["makespan_ns"] == pytest.approx(echo[0].hint.makespan_ns, rel=1e-9)
    assert out["makespan_ns"] >= out["lower_bound_ns"] * (1 - 1e-9)
    proven = out["makespan_ns"] <= out["lower_bound_ns"] * (1 + 1e-6)
    assert out["status"] == ("optimal" if proven else "feasible")


def test_compare_runs_it_and_passes_down_bounds_and_schedules(echo, bound_calls,
                                                              monkeypatch, capsys) -> None:
    simulated: list[tuple[str, str | None]] = []
    real = Instance.simulate

    def counting(self, policy="themis", intra="scf"):
        simulated.append((getattr(policy, "name", policy), intra))
        return real(self, policy, intra)

    monkeypatch.setattr(Instance, "simulate", counting)
    inst = Instance(resolve_network("small-2d"), 16 << 20, 3, 10.0)
    comp = compare(inst, ["baseline", "themis"], ["fifo", "scf"], [NAME], time_limit_s=20)
    row = comp.row(NAME)
    assert row.status in ("optimal", "feasible") and len(echo) == 1
    # The bounds: computed once, by the bound method, and handed to the solver as they are.
    assert bound_calls == ["reverse"]
    assert echo[0].bounds is comp.bounds[0].detail
    # The hint candidates the compare simulated are not simulated again: the solver runs
    # only the (policy, discipline) pairs of its default hint that compare did not.
    ran = {("baseline", "fifo"), ("baseline", "scf"), ("themis", "fifo"), ("themis", "scf")}
    assert simulated[:4] == sorted(ran)
    assert simulated[4:] == [m for m in hint_methods() if m not in ran]
    # The best policy schedule is among the hints: the echo is never worse than it.
    best_policy = min(r.makespan_ns for r in comp.rows if r.kind == "policy")
    assert row.makespan_ns <= best_policy * (1 + 1e-9)
    assert main(["compare", "small-2d", "--size", "16MiB", "--chunks", "2", "--policies",
                 "themis", "--intra", "scf", "--solvers", f"cpsat,{NAME}", "--json"]) == 0
    methods = [r["method"] for r in json.loads(capsys.readouterr().out)["rows"]]
    assert methods == ["themis/scf", "cpsat", NAME]


def test_sweep_runs_it_and_computes_the_bounds_once_per_instance(echo, bound_calls,
                                                                 tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent(f"""
        time_limit_s = 20
        ag_order = ["reverse", "free"]
        [[grid]]
        networks = ["small-2d"]
        sizes = ["16MiB"]
        chunks = [2, 3]
        policies = ["themis"]
        intra = ["scf"]
        solvers = ["{NAME}", "cpsat"]
        [solver_params.cpsat]
        deterministic_time_s = 2
    """))
    db = tmp_path / "r.sqlite"
    out = run_sweep(str(spec), str(db), workers=1)
    assert out.failed == 0 and out.ran == 2 * (1 + 2 * 2 + 2)  # policy, solvers, bounds
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT method, ag_order, status FROM results").fetchall()
    assert sorted(r[:2] for r in rows if r[0] == NAME) == [(NAME, "free")] * 2 + [
        (NAME, "reverse")] * 2
    assert {r[2] for r in rows if r[0] == NAME} <= {"optimal", "feasible"}
    # Two instances x two AG variants: four bound computations for eight solver tasks.
    assert sorted(bound_calls) == ["free"] * 2 + ["reverse"] * 2 and len(echo) == 4
    # A rerun after a solver row is lost computes that one instance's bounds again.
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM results WHERE rowid = (SELECT min(rowid) FROM results "
                     "WHERE method = ? AND ag_order = 'free')", (NAME,))
    del bound_calls[:]
    out = run_sweep(str(spec), str(db), workers=1)
    assert out.ran == 1 and out.failed == 0 and bound_calls == ["free"]
