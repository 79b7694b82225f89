"""The disjunctive MILP (model.md §7) through PuLP: build, run a backend, read the answer.

Tolerances: a big-M row may be violated by ``M * integrality tolerance +
feasibility tolerance``; over a path of at most ``stages`` stages that bounds
how far the MILP's makespan and bound can be off (``scaling_error_ns``).
The backends (:mod:`~solvers.milp.cbc`, :mod:`~solvers.milp.highs`) return an
:class:`Outcome`; :func:`solve_milp` turns it into a
:class:`~solvers.result.RawSolution`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from solvers.backend import Problem
from solvers.common import Assignment, ProblemData, step_of
from solvers.cpsat.scaling import exact_grid
from solvers.milp.constraints import add_chains, add_disjunctions, order_pairs
from solvers.milp.variables import MilpVars, make_variables
from solvers.milp.warm_start import warm_start
from solvers.result import RawSolution, Status
from topologies.errors import InputError

if TYPE_CHECKING:  # PuLP is imported when a model is built (start-up time); untyped
    import pulp

#: Integrality and feasibility tolerances asked of the MILP solvers.
INT_TOL = 1e-9
FEAS_TOL = 1e-9
#: Largest model built: order binaries (pairs of stages on one dimension).
MAX_ORDER_BINARIES = 40_000
#: Largest exact grid (ticks of the longest stage) the MILP uses as its unit: coarser
#: grids keep the big-M rows' numbers small; finer ones use the default unit.
MILP_GRID_CAP = 100_000
#: Build time per order binary measured on the development machine (9 s at 32k):
#: a wall-clock-limited solve whose estimated build does not fit is skipped.
BUILD_S_PER_BINARY = 3e-4


def check_size(data: ProblemData) -> None:
    """Refuse instances whose MILP is too large to build in reasonable time."""
    pairs = order_pairs(data)
    if pairs > MAX_ORDER_BINARIES:
        raise InputError(f"too large for the MILP ({pairs} order binaries, at most "
                         f"{MAX_ORDER_BINARIES}); use fewer chunks or the cpsat solver",
                         "chunks", data.nchunks)


@dataclass
class Built:
    """The PuLP problem, its variables, units and error bound."""

    prob: pulp.LpProblem
    v: MilpVars
    unit: float
    ub_ns: float
    err_ns: float
    warm: bool
    grid: str = "default"


@dataclass
class Outcome:
    """What a MILP backend saw: solution or not, proof, bound (in model units)."""

    has_solution: bool
    proven: bool
    infeasible: bool
    bound_units: float | None
    meta: dict = field(default_factory=dict)
    extra_err_ns: float = 0.0
    stopped_by: str = ""
    reason: str = ""
    log: str | None = None
    failed: bool = False


def build(problem: Problem, use_grid: bool = False) -> Built:
    """The MILP of ``problem`` with its warm start (the hint), if any.

    ``use_grid``: on an exact time grid of at most ``MILP_GRID_CAP`` ticks, the
    unit is its tick and the makespan an integer (its bound rounds up). It
    helps HiGHS (D3 64 MiB C = 4, 2000 nodes: proven in 3.6 s instead of 6.3 s)
    but not CBC (the same instance: 5.7% gap at the node limit instead of
    proven), so only the HiGHS backend asks for it.
    """
    import pulp

    data = problem.data
    grid = exact_grid(data, MILP_GRID_CAP) if use_grid else None
    if grid is not None and grid.exact:
        exact, unit = True, grid.tick_ns
    else:
        exact, unit = False, data.max_duration_ns / 1000.0
    ub_ns = problem.hint.makespan_ns if problem.hint is not None else \
        sum(max(max(row.values()) for row in part[data.class_of[c]])
            for c in range(data.nchunks) for part in (data.rs, data.ag)) * len(data.dims)
    if exact:  # whole ticks: the makespan is an integer, its bound rounds up
        ub_units = float(math.ceil(ub_ns / unit - 1e-6))
        lb_units = min(float(math.ceil(problem.lower_bound_ns / unit - 1e-6)), ub_units)
    else:
        ub_units = ub_ns / unit * (1 + 1e-9) + 1e-6
        lb_units = min(problem.lower_bound_ns / unit * (1 - 1e-9), ub_units)
    prob = pulp.LpProblem("chunk_schedule", pulp.LpMinimize)
    v = make_variables(prob, data, unit, lb_units, ub_units, integer_makespan=exact)
    big = ub_units + 1000.0  # starts and ends lie in [0, ub]; a relaxed chain row adds one
    add_chains(prob, data, v, unit, big)
    add_disjunctions(prob, data, v, big, problem.params.symmetry)
    hint = problem.hint if problem.params.use_hint else None
    if hint is not None:
        warm_start(data, hint, v, unit)
    err = data.nstages * (ub_units * INT_TOL + FEAS_TOL) * unit
    return Built(prob, v, unit, ub_ns, err, hint is not None, "exact" if exact else "default")


Runner = Callable[[Problem, Built, float], Outcome]


def solve_milp(problem: Problem, run: Runner, use_grid: bool = False) -> RawSolution:
    """Build (``use_grid``: see :func:`build`), run ``run`` within the time left, and
    read its answer."""
    import pulp

    t0 = time.perf_counter()
    need = BUILD_S_PER_BINARY * order_pairs(problem.data)
    if not problem.params.deterministic and need > problem.remaining_s():
        return RawSolution(Status.UNKNOWN, None, None, 0.0, 0.0, {"build_estimate_s": need},
                           stopped_by="wall", reason=f"not enough time left to build the "
                           f"model (about {need:.2g} s)")
    built = build(problem, use_grid)
    prob = built.prob
    meta: dict = {"build_s": time.perf_counter() - t0, "unit_ns": built.unit,
                  "grid": built.grid,
                  "binaries": sum(1 for var in prob.variables() if var.cat == pulp.LpInteger),
                  "constraints": prob.numConstraints()}
    left = problem.remaining_s()
    if left <= 0:
        return RawSolution(Status.UNKNOWN, None, None, 0.0, built.err_ns, meta,
                           stopped_by="wall",
                           reason="the wall-clock limit ran out while building the model")
    out = run(problem, built, max(0.05, left))
    meta.update(out.meta)
    err = built.err_ns + out.extra_err_ns
    bound = 0.0 if out.bound_units is None else max(0.0, out.bound_units * built.unit - err)

    def answer(status: Status, assignment: Assignment | None, makespan_ns: float | None,
               bound_ns: float) -> RawSolution:
        return RawSolution(status, assignment, makespan_ns, bound_ns, err, meta,
                           stopped_by=out.stopped_by, reason=out.reason, log=out.log)

    if out.infeasible:
        return answer(Status.INFEASIBLE, None, None, 0.0)
    if not out.has_solution:
        return answer(Status.UNKNOWN, None, None, bound)
    mk = (built.v.T.varValue or 0.0) * built.unit
    return answer(Status.OPTIMAL if out.proven else Status.FEASIBLE,
                  extract(problem.data, built.v, built.unit), mk, bound)


def extract(data: ProblemData, v: MilpVars, unit: float) -> Assignment:
    """Routes from the binaries, per-dimension orders from the stages' mid-points."""
    nch = data.nchunks
    nr, nq = len(data.perms), len(data.ag_perms)

    def pick(var: dict, c: int, n: int) -> int:
        return max(range(n), key=lambda i: var[c, i].varValue or 0.0)

    route = [pick(v.x, c, nr) for c in range(nch)]
    ag = [pick(v.y, c, nq) for c in range(nch)] if data.free else list(route)
    orders = {}
    for d in data.dims:
        keyed = []
        for c in range(nch):
            k = data.class_of[c]
            for ph in ("RS", "AG"):
                p = data.rs[k][route[c]][d] if ph == "RS" else data.ag[k][ag[c]][d]
                mid = (v.s[c, ph, d].varValue or 0.0) + 0.5 * p / unit
                keyed.append((mid, c, step_of(data, route[c], ag[c], ph, d)))
        orders[d] = [(c, j) for _, c, j in sorted(keyed)]
    return Assignment(route, ag, orders)
