"""The CP-SAT backend: parameters, the two search phases and the answer.

The model's time grid (:mod:`solvers.cpsat.scaling`): the **exact** grid
(tick = the GCD of the exact stage durations) wherever the longest stage is
at most ``EXACT_CAP`` ticks; then CP-SAT works in exact integers, its gap
limit is 0, its bound is exact (not lowered by any rounding) and "optimal"
means optimal (``scaling_error_ns`` 0). A remainder chunk may be rounded up on
the main class's grid (``exact-main``: the error is its stages' ticks). Where
no exact grid fits, the **rounded** grid (``resolution`` ticks for the longest
stage, every duration rounded up) is the fallback; CP-SAT then stops once its
gap is below ``stages`` ticks (rounding noise), so "optimal" means: within
``scaling_error_ns = 2 * stages * tick`` of the exact optimum.
``meta["grid"]`` says which grid the answer's model used.

Phase 1, the **coarse phase** (``coarse_fraction`` of the limits,
``coarse_resolution`` ticks for the longest stage, optionally LB3's route
counts; only when that is coarser than the main grid), is a schedule finder
and nothing more: its model is a restriction (rounded-up durations, fixed
route counts), so its search status and bound prove nothing and are never
reported as such. Its best schedule, re-timed exactly, is a hint for phase 2;
if that schedule meets our lower bound it is the answer (the grading proves it
optimal by the lower bound). Otherwise phase 2 runs the main model hinted with
the better of the phase-1 schedule and the hint, and its status and bound are
the answer.

Limits: the wall clock left in the solve's budget, and with
``deterministic_time_s`` CP-SAT's deterministic time on one worker (the same
search on any machine). ``RawSolution.stopped_by`` names the limit that ended
the search.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from solvers.backend import Problem
from solvers.bounds import LB3_SAFETY_S, RouteCounts
from solvers.common import Assignment, ProblemData, step_of
from solvers.cpsat import constraints, objective
from solvers.cpsat.hint import add_hint, hint_ticks
from solvers.cpsat.scaling import Scaled, grid, scale
from solvers.cpsat.variables import Variables, make_variables
from solvers.result import PROOF_TOL, RawSolution, Status
from themis.schedule import Schedule
from topologies.errors import InputError

if TYPE_CHECKING:  # OR-Tools is imported when a model is built (start-up time)
    from ortools.sat.python import cp_model

#: Largest model built: chunks x routes x dimensions (route-enforced chain terms).
MAX_TERMS = 100_000
#: Build time per term measured on the development machine (about 4 s at 98k terms):
#: a wall-clock-limited phase whose estimated build does not fit is skipped.
BUILD_S_PER_TERM = 4.5e-5


def terms(data: ProblemData) -> int:
    """The model's size: chunks x routes x dimensions."""
    return data.nchunks * len(data.perms) * len(data.dims)


def check_size(data: ProblemData) -> None:
    """Refuse instances whose CP-SAT model is too large to build in reasonable time."""
    n = terms(data)
    if n > MAX_TERMS:
        raise InputError(f"too large for the CP-SAT model ({n} chunk x route x dimension "
                         f"terms, at most {MAX_TERMS}); use fewer chunks, or the policies "
                         "and `themis bound` at this size", "chunks", data.nchunks)


def bound_safety_s(problem: Problem) -> float:
    """Wall-clock safety net of the LB3 MIPs inside a solve.

    With a deterministic budget the MIPs get their full safety net (the
    result must not depend on the machine); otherwise at most 30% of the time
    left, so the time limit holds (a MIP stopped by it falls back, see
    :mod:`solvers.bounds`).
    """
    if problem.params.deterministic:
        return LB3_SAFETY_S
    return min(LB3_SAFETY_S, max(0.05, 0.3 * problem.remaining_s()))


def solve_cpsat(problem: Problem) -> RawSolution:
    """Both phases (see the module docstring)."""
    p = problem.params
    main = grid(problem.data, p.resolution)
    frac = p.coarse_fraction if p.coarse_resolution < main.resolution else 0.0
    det = p.deterministic_time_s
    hint = problem.hint.schedule if problem.hint is not None and p.use_hint else None
    phases: dict = {}
    first = None
    if frac > 0:
        counts = problem.bounds.route_counts if p.restrict_lb3 else None
        coarse = scale(problem.data, p.coarse_resolution)
        first = _solve_once(problem, coarse, frac * problem.remaining_s(),
                            None if det is None else frac * det, hint, counts)
        # A schedule finder only: its status and bound prove nothing about the problem.
        first.status = Status.FEASIBLE if first.assignment is not None else Status.UNKNOWN
        first.bound_ns = 0.0
        phases["coarse"] = {"role": "hint only (a restricted, rounded model)",
                            "search": first.meta.pop("cpsat_status", None)}
        phases["coarse"].update({k: first.meta.get(k) for k in (
            "grid", "resolution", "tick_ns", "branches", "build_s", "deterministic_time_s")})
        if first.assignment is not None:
            sched = problem.retime(first.assignment)
            phases["coarse"]["makespan_ns"] = sched.makespan_ns
            if sched.makespan_ns <= problem.lower_bound_ns * (1 + PROOF_TOL):
                # Our exact lower bound certifies it (the grading says optimal).
                first.scaling_error_ns = 0.0
                first.stopped_by = ""
                first.meta["phases"] = phases
                first.meta["deterministic_time_total_s"] = first.meta.get("deterministic_time_s")
                return first
            if hint is None or sched.makespan_ns < hint.makespan_ns:
                hint = sched  # phase 2 may not end later than its hint
    used = 0.0 if first is None else first.meta.get("deterministic_time_s", 0.0)
    second = _solve_once(problem, main, problem.remaining_s(),
                         None if det is None else max(0.01, det - used), hint, None)
    second.meta["phases"] = phases
    second.meta["deterministic_time_total_s"] = used + (second.meta.get("deterministic_time_s")
                                                      or 0.0)
    if second.assignment is None and first is not None and first.assignment is not None:
        # Keep the coarse schedule: its bound is the main model's (if any).
        first.status, first.bound_ns = Status.FEASIBLE, max(second.bound_ns, 0.0)
        first.stopped_by, first.reason = second.stopped_by, second.reason
        first.scaling_error_ns = 0.0  # re-timed exactly; the bound is the main model's
        first.meta.update({k: second.meta.get(k) for k in (
            "grid", "tick_ns", "resolution", "deterministic_time_total_s")})
        first.meta["phases"] = phases
        return first
    return second


def _build(problem: Problem, scaled: Scaled, hint: Schedule | None,
           counts: RouteCounts | None):
    """The model, its variables and the hint's makespan in ticks."""
    from ortools.sat.python import cp_model

    data, p = problem.data, problem.params
    th = hint_ticks(data, hint, scaled, p.symmetry) if hint is not None else None
    horizon = objective.horizon_ticks(data, scaled, None if th is None else th.ub)
    lb_ticks = objective.lower_bound_ticks(data, scaled, problem.lower_bound_ns,
                                           p.scaled_bound, horizon, bound_safety_s(problem))
    m = cp_model.CpModel()
    v = make_variables(m, data, scaled, horizon, lb_ticks)
    constraints.add_chains(m, data, v)
    constraints.add_resources(m, data, v)
    if counts is not None:
        constraints.add_route_counts(m, data, v, counts)
    if p.symmetry:
        constraints.add_symmetry(m, data, v)
    objective.minimize_makespan(m, v)
    if th is not None:
        add_hint(m, data, v, scaled, th)
    return m, v, {"hint_ticks": None if th is None else th.ub, "lb_ticks": lb_ticks}


def _configure(solver, problem: Problem, scaled: Scaled, wall_s: float,
               det_s: float | None) -> None:
    p = problem.params
    prm = solver.parameters
    prm.max_time_in_seconds = max(0.01, wall_s)
    if det_s is not None:
        prm.max_deterministic_time = det_s
        prm.num_workers = p.threads or 1
        # N workers in deterministic batches (SolverParams.search): reproducible per N.
        prm.interleave_search = prm.num_workers > 1
    elif p.threads is not None:
        prm.num_workers = p.threads
    prm.random_seed = p.seed
    prm.log_search_progress = p.log
    # Rounding makes the scaled optimum exceed the exact one by up to a tick per
    # rounded stage: a gap below that is noise, stop there (reported as scaling
    # error). On an exact grid: 0 (prove the optimum itself).
    prm.absolute_gap_limit = float(scaled.rounded_stages)
    for key, value in p.cpsat_parameters.items():
        try:
            setattr(prm, key, value)
        except (TypeError, ValueError, AttributeError) as err:
            raise InputError(f"bad CpSolver parameter value ({err})", key, value) from None


def run_interruptibly(solver: cp_model.CpSolver,
                      model: cp_model.CpModel) -> cp_model.CpSolverStatus:
    """``solver.solve(model)``; Ctrl-C stops the search and raises KeyboardInterrupt.

    CP-SAT's own SIGINT handler (``catch_sigint_signal``) would end the search
    quietly and return its incumbent, so an interrupted solve looked finished
    (exit 0). Here the search runs in a worker thread with that handler off; the
    calling (main) thread waits, and on KeyboardInterrupt stops the search,
    waits for it and re-raises (the CLI then exits 130, as for CBC and HiGHS).
    """
    solver.parameters.catch_sigint_signal = False
    statuses: list[cp_model.CpSolverStatus] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            statuses.append(solver.solve(model))
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller
            errors.append(err)
        finally:
            done.set()

    threading.Thread(target=work, name="cp-sat", daemon=True).start()
    # Event.wait, not Thread.join: a KeyboardInterrupt inside join() can leave the
    # thread marked finished while it still runs (CPython gh-90882).
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        solver.stop_search()
        done.wait()
        raise
    if errors:
        raise errors[0]
    return statuses[0]


def _solve_once(problem: Problem, scaled: Scaled, wall_s: float, det_s: float | None,
                hint: Schedule | None, counts: RouteCounts | None) -> RawSolution:
    """Build and solve one model; ``counts`` restricts the route counts (a heuristic)."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    data = problem.data
    need = BUILD_S_PER_TERM * terms(data)
    if not problem.params.deterministic and need > min(wall_s, problem.remaining_s()):
        return RawSolution(Status.UNKNOWN, None, None, 0.0, 0.0, {"build_estimate_s": need},
                           stopped_by="wall", reason=f"not enough time left to build the "
                           f"model (about {need:.2g} s)")
    m, v, meta = _build(problem, scaled, hint, counts)
    build_s = time.perf_counter() - t0
    meta.update(grid=str(scaled.grid), tick_ns=scaled.tick_ns, resolution=scaled.resolution,
                rounded_stages=scaled.rounded_stages, build_s=build_s)
    rounding = scaled.rounding_ns  # |scaled optimum - exact optimum|
    err = 2 * rounding  # makespan - optimum when "optimal" (rounding + gap limit)
    left = min(wall_s - build_s, problem.remaining_s())
    if left <= 0:
        return RawSolution(Status.UNKNOWN, None, None, 0.0, err, meta, stopped_by="wall",
                           reason="the wall-clock limit ran out while building the model")
    solver = cp_model.CpSolver()
    _configure(solver, problem, scaled, left, det_s)
    status = run_interruptibly(solver, m)
    meta.update(cpsat_status=solver.status_name(status), branches=solver.num_branches,
                conflicts=solver.num_conflicts, deterministic_time_s=solver.deterministic_time)
    stopped = ""
    if status not in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
        hit_det = det_s is not None and solver.deterministic_time >= 0.999 * det_s
        stopped = "deterministic" if hit_det else "wall"
    if status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT model invalid: {m.validate()}")
    bound = solver.best_objective_bound * scaled.tick_ns - rounding if counts is None else 0.0
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        proven = status == cp_model.OPTIMAL and counts is None
        return RawSolution(Status.OPTIMAL if proven else Status.FEASIBLE,
                           _assignment(solver, data, v), solver.objective_value * scaled.tick_ns,
                           max(0.0, bound), err, meta, stopped_by=stopped)
    if status == cp_model.INFEASIBLE:
        st = Status.INFEASIBLE if counts is None else Status.UNKNOWN
        return RawSolution(st, None, None, 0.0, err, meta)
    return RawSolution(Status.UNKNOWN, None, None, max(0.0, bound), err, meta,
                       stopped_by=stopped, reason="no schedule found within the limit")


def _assignment(solver, data: ProblemData, v: Variables) -> Assignment:
    """Routes from the literals, per-dimension orders from the start values."""
    nch = data.nchunks
    route = [next(r for r, lit in enumerate(v.x[c]) if solver.boolean_value(lit))
             for c in range(nch)]
    ag = ([next(q for q, lit in enumerate(v.y[c]) if solver.boolean_value(lit))
           for c in range(nch)] if data.free else list(route))
    orders: dict[int, list[tuple[int, int]]] = {}
    for d in data.dims:
        keyed = []
        for c in range(nch):
            keyed.append((solver.value(v.rs[c, d].start), c,
                          step_of(data, route[c], ag[c], "RS", d)))
            keyed.append((solver.value(v.ag[c, d].start), c,
                          step_of(data, route[c], ag[c], "AG", d)))
        orders[d] = [(c, j) for _, c, j in sorted(keyed)]
    return Assignment(route, ag, orders)
