"""MILP variables: route binaries, stage starts, chain ends, makespan; durations as expressions.

Per chunk c: route binaries ``x[c, r]`` (in the ``free`` AG variant also
AG-order binaries ``y[c, q]``), a start per (c, phase, d), the end of its RS
stages ``done[c]`` and the makespan ``T``. A stage's duration is a linear
expression of the route binaries. Times are in units of 1/1000 of the
longest stage, so the numbers stay moderate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solvers.common import ProblemData


@dataclass
class MilpVars:
    """The PuLP problem's variables and duration expressions."""

    x: dict[tuple[int, int], Any]
    y: dict[tuple[int, int], Any]
    s: dict[tuple[int, str, int], Any]
    done: dict[int, Any]
    T: Any
    dur: dict[tuple[int, str, int], Any]
    order: dict[tuple, Any] = field(default_factory=dict)


def make_variables(prob, data: ProblemData, unit: float, lb_units: float,
                   ub_units: float, integer_makespan: bool = False) -> MilpVars:
    """Create the variables of ``data`` in ``prob``; the objective is ``T``.

    ``integer_makespan`` (on an exact grid, ``unit`` = its tick): ``T`` is a
    whole number of ticks, as every semi-active makespan is, so the solver may
    round its bound up.
    """
    import pulp

    dims, nch = data.dims, data.nchunks
    nr, nq = len(data.perms), len(data.ag_perms)
    binary = pulp.LpBinary
    x = {(c, r): prob.add_variable(f"x_{c}_{r}", 0, 1, binary)
         for c in range(nch) for r in range(nr)}
    y = ({(c, q): prob.add_variable(f"y_{c}_{q}", 0, 1, binary)
          for c in range(nch) for q in range(nq)} if data.free else x)
    s = {(c, ph, d): prob.add_variable(f"s_{c}_{ph}_{d}", 0, ub_units)
         for c in range(nch) for ph in ("RS", "AG") for d in dims}
    done = {c: prob.add_variable(f"f_{c}", 0, ub_units) for c in range(nch)}
    t_var = prob.add_variable("T", lb_units, ub_units,
                              pulp.LpInteger if integer_makespan else pulp.LpContinuous)
    prob += t_var
    dur = {}
    for c in range(nch):
        k = data.class_of[c]
        for d in dims:
            dur[c, "RS", d] = pulp.lpSum(data.rs[k][r][d] / unit * x[c, r] for r in range(nr))
            dur[c, "AG", d] = pulp.lpSum(data.ag[k][q][d] / unit * y[c, q] for q in range(nq))
    return MilpVars(x, y, s, done, t_var, dur)
