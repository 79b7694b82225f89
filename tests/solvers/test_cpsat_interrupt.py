"""Ctrl-C during a CP-SAT search is a KeyboardInterrupt (the CLI exits 130), not a result."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from ortools.sat.python import cp_model

from solvers.cpsat.solve import run_interruptibly


def _hard_model() -> cp_model.CpModel:
    """A model CP-SAT does not close quickly (it would run to the 60 s limit)."""
    m = cp_model.CpModel()
    xs = [m.new_int_var(0, 1000, f"x{i}") for i in range(60)]
    for i in range(59):
        m.add(xs[i] + xs[i + 1] != 500 + i)
    m.add_all_different(xs)
    m.maximize(sum((i % 7) * x for i, x in enumerate(xs)))
    return m


def test_ctrl_c_stops_the_search_and_raises() -> None:
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 60
    solver.parameters.num_workers = 1
    # a real SIGINT, as Ctrl-C sends (CP-SAT's own C handler used to catch it)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_interruptibly(solver, _hard_model())
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    # CP-SAT's own handler, which swallowed Ctrl-C, is off
    assert solver.parameters.catch_sigint_signal is False


def test_an_uninterrupted_solve_returns_its_status() -> None:
    m = cp_model.CpModel()
    x = m.new_int_var(0, 5, "x")
    m.maximize(x)
    solver = cp_model.CpSolver()
    assert run_interruptibly(solver, m) == cp_model.OPTIMAL
    assert solver.value(x) == 5
