"""One entry point for the exact solvers: :func:`solve`.

Every backend returns routes and per-dimension stage orders; :func:`solve`
re-times them exactly with the simulator (a semi-active schedule), runs the
independent checker on the result, and reports an honest status:

- ``optimal`` only when the backend proved optimality (or when our own lower
  bound meets the makespan); for CP-SAT "optimal" holds up to the reported
  ``scaling_error_ns``;
- ``feasible`` with the best proven lower bound (ours or the solver's);
- ``infeasible`` / ``unknown`` as the backend says (no schedule).

A checker failure is a bug: the result says ``valid=False`` with the
violations, and a warning is raised.
"""

from __future__ import annotations

import time
import warnings

from solvers.bounds import bounds as compute_bounds
from solvers.common import (
    ProblemData,
    assignment_from_schedule,
    check_ag_order,
    reference,
    retime,
    seeded,
)
from solvers.cpsat import RawSolution
from solvers.result import Result
from themis.checker import check
from themis.instance import Instance
from themis.schedule import Schedule
from topologies.errors import InputError

#: The solver names :func:`solve` accepts.
SOLVERS: tuple[str, ...] = ("cpsat", "cbc", "highs")

#: Relative tolerance when comparing re-timed and solver makespans.
REL_TOL = 1e-9
#: A schedule within this relative distance of a proven lower bound is called optimal
#: (bounds and re-timed makespans add the same durations in different orders).
PROOF_TOL = 1e-8


def _validate(instance: Instance, solver: str, time_limit_s: float, ag_order: str,
              threads: int | None) -> None:
    if not isinstance(instance, Instance):
        raise InputError("not an Instance", "instance", type(instance).__name__)
    if solver not in SOLVERS:
        raise InputError(f"unknown solver (expected one of {', '.join(SOLVERS)})", "solver",
                         solver)
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, int | float) \
            or not time_limit_s > 0 or time_limit_s == float("inf"):
        raise InputError("time limit must be a positive number of seconds", "time-limit",
                         time_limit_s)
    check_ag_order(ag_order)
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise InputError("threads must be an integer >= 1", "threads", threads)


def solve(
    instance: Instance,
    solver: str = "cpsat",
    time_limit_s: float = 10.0,
    ag_order: str = "reverse",
    threads: int | None = None,
    **params: object,
) -> Result:
    """Solve ``instance`` exactly (model.md §7) with ``solver``.

    ``solver``: ``cpsat`` (OR-Tools CP-SAT), ``cbc`` or ``highs`` (the PuLP
    MILP). ``ag_order``: ``reverse`` (AG along the reversed route) or ``free``
    (each chunk picks its AG order). ``threads``: solver workers (default:
    the solver's own). ``params`` tune the backends (defaults are the tested
    ones): ``seed_lb3`` (also try schedules on LB3's route counts as hints),
    ``symmetry``, ``use_hint``, ``log``; CP-SAT only: ``resolution``,
    ``coarse_resolution``, ``coarse_fraction``, ``restrict_lb3`` (phase 1 keeps
    LB3's route counts), ``scaled_bound`` and any ``CpSolver.parameters`` field.

    The hint and upper bound is the best of Themis + SCF, Themis + FIFO,
    baseline + FIFO (and the LB3-seeded schedules); if the solver's schedule is
    worse, or it found none, that reference schedule is returned (re-timed and
    checked like any other).
    """
    _validate(instance, solver, time_limit_s, ag_order, threads)
    t0 = time.perf_counter()
    data = ProblemData(instance, ag_order)
    lb = compute_bounds(instance, ag_order, time_limit_s=min(1.0, 0.2 * time_limit_s), data=data)
    ref, ref_ns = reference(instance)
    best_ref = ref
    if params.pop("seed_lb3", True) and lb.route_counts is not None:
        for name, run in seeded(data, lb.route_counts.rs, lb.route_counts.ag).items():
            ref_ns[name] = run.makespan_ns
            if run.makespan_ns < best_ref.makespan_ns:
                best_ref = run
    sym_dim = data.dims[0] if params.get("symmetry", True) else None
    hint = assignment_from_schedule(data, best_ref.schedule, sym_dim)
    remaining = max(0.01, time_limit_s - (time.perf_counter() - t0))
    if solver == "cpsat":
        from solvers.cpsat import solve_cpsat

        if params.pop("restrict_lb3", True):
            params.setdefault("route_counts", lb.route_counts)
        raw = solve_cpsat(data, remaining, lb.lb_ns, hint, threads=threads, **params)
    else:
        from solvers.milp import solve_milp

        raw = solve_milp(data, solver, remaining, lb.lb_ns, hint, best_ref.makespan_ns,
                         threads=threads, **params)
    fallback = retime(instance, hint.plans(data), hint.dim_orders(), ag_order)
    return _finish(instance, data, raw, lb.lb_ns, ref_ns, solver, ag_order, t0,
                   {"bounds": lb.to_dict()}, fallback)


def _finish(instance: Instance, data: ProblemData, raw: RawSolution, lb_ns: float,
            ref_ns: dict[str, float], solver: str, ag_order: str, t0: float,
            meta: dict, fallback: Schedule | None = None) -> Result:
    """Re-time, check and grade a backend's answer.

    ``fallback`` (the reference schedule the solver was hinted with) is
    returned instead when it is better than the solver's schedule (then the
    status stays the solver's: an optimal claim covers any better schedule)
    or when the solver found none (then the status is ``feasible``).
    """
    meta = {**meta, **raw.meta}
    lower = max(lb_ns, raw.bound_ns)
    status = raw.status
    schedule = None
    makespan = None
    valid = None
    violations: list[str] = []
    routes: dict[str, int] = {}
    if raw.assignment is not None:
        try:
            schedule = retime(instance, raw.assignment.plans(data),
                              raw.assignment.dim_orders(), ag_order)
            meta["schedule_source"] = "solver"
        except RuntimeError as err:  # contradictory orders: a backend bug
            warnings.warn(f"{solver}: cannot re-time the solver's schedule: {err}",
                          RuntimeWarning, stacklevel=3)
            meta["retime_error"] = str(err)
            status = "unknown"
    if fallback is not None and status != "infeasible" and (
            schedule is None or fallback.makespan_ns < schedule.makespan_ns):
        if schedule is None:
            status = "feasible"
        schedule = fallback
        meta["schedule_source"] = "reference"
    if schedule is not None:
        schedule.meta.update({"solver": solver, "status": status})
        makespan = schedule.makespan_ns
        routes = schedule.route_histogram()
        violations = [str(v) for v in check(schedule)]
        valid = not violations
        if not valid:
            warnings.warn(f"{solver}: the re-timed schedule FAILS the checker "
                          f"({len(violations)} violations, first: {violations[0]}); "
                          f"this is a bug", RuntimeWarning, stacklevel=3)
        tol = REL_TOL * makespan + 1e-6
        sm = raw.solver_makespan_ns
        if sm is not None and meta["schedule_source"] == "solver" \
                and makespan > sm + raw.scaling_error_ns + tol:
            warnings.warn(f"{solver}: re-timed makespan {makespan} exceeds the solver's "
                          f"{sm} by more than the scaling error; not claiming optimality",
                          RuntimeWarning, stacklevel=3)
            meta["retime_mismatch_ns"] = makespan - sm
            if status == "optimal":
                status = "feasible"
        if lower > makespan * (1 + 1e-6) + 1e-6:
            warnings.warn(f"{solver}: lower bound {lower} above the makespan {makespan}: "
                          f"a bound is wrong", RuntimeWarning, stacklevel=3)
            meta["bound_above_makespan"] = True
        lower = min(lower, makespan)
        if status == "feasible" and makespan <= lower * (1 + PROOF_TOL):
            status = "optimal"  # our bound meets the makespan: proven
            meta["proof"] = "lower bound"
        elif status == "optimal":
            meta.setdefault("proof", solver)
    return Result(
        status=status,
        makespan_ns=makespan,
        lower_bound_ns=lower,
        runtime_s=time.perf_counter() - t0,
        solver=solver,
        ag_order=ag_order,
        schedule=schedule,
        valid=valid,
        violations=violations,
        scaling_error_ns=raw.scaling_error_ns,
        solver_makespan_ns=raw.solver_makespan_ns,
        chunks=data.nchunks,
        routes=routes,
        reference_ns=ref_ns,
        meta=meta,
    )
