"""CP-SAT variables: route literals, one interval per stage, chain ends, makespan.

Per chunk c: a literal per route r (``exactly_one``); in the ``free`` AG
variant also a literal per AG order q. One interval per (c, RS, d) and one
per (c, AG, d), whose size is the route-dependent duration in ticks:
``size == sum_r x[c, r] * p(c, r, d)`` (a constant when every route agrees).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solvers.common import ProblemData
from solvers.cpsat.scaling import Scaled


@dataclass
class StageVar:
    """Start, size (an int when fixed), end and interval of one stage."""

    start: Any
    size: Any
    end: Any
    interval: Any


@dataclass
class Variables:
    """Every variable of the model, keyed by chunk (and phase, dimension)."""

    x: list[list[Any]]
    y: list[list[Any]]
    rs: dict[tuple[int, int], StageVar]
    ag: dict[tuple[int, int], StageVar]
    done: list[Any]
    makespan: Any
    horizon: int
    extra: dict[str, Any] = field(default_factory=dict)


def _stage(m, lits: list, table: list[dict[int, int]], d: int, horizon: int,
           name: str) -> StageVar:
    from ortools.sat.python import cp_model

    values = sorted({row[d] for row in table})
    start = m.new_int_var(0, horizon, f"s{name}")
    end = m.new_int_var(0, horizon, f"e{name}")
    if len(values) == 1:
        size = values[0]
    else:
        size = m.new_int_var_from_domain(cp_model.Domain.from_values(values), f"p{name}")
        m.add(size == sum(row[d] * lit for row, lit in zip(table, lits, strict=True)))
    return StageVar(start, size, end, m.new_interval_var(start, size, end, f"i{name}"))


def make_variables(m, data: ProblemData, scaled: Scaled, horizon: int,
                   lb_ticks: int) -> Variables:
    """Create the variables of ``data`` in model ``m`` (makespan in [lb_ticks, horizon])."""
    nch = data.nchunks
    x = [[m.new_bool_var(f"x{c}_{r}") for r in range(len(data.perms))] for c in range(nch)]
    y = ([[m.new_bool_var(f"y{c}_{q}") for q in range(len(data.ag_perms))]
          for c in range(nch)] if data.free else x)
    rs, ag = {}, {}
    for c in range(nch):
        k = data.class_of[c]
        for d in data.dims:
            rs[c, d] = _stage(m, x[c], scaled.p_rs[k], d, horizon, f"{c}_rs{d}")
            ag[c, d] = _stage(m, y[c], scaled.p_ag[k], d, horizon, f"{c}_ag{d}")
    done = [m.new_int_var(0, horizon, f"rsdone{c}") for c in range(nch)]
    makespan = m.new_int_var(lb_ticks, horizon, "makespan")
    return Variables(x, y, rs, ag, done, makespan, horizon)
