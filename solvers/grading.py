"""Grading a backend's answer: re-time once, check, compare with the hint, honest status.

The rules (each one a downgrade path tested with a fake backend):

- the answer is re-timed once by the simulator's replay (:mod:`solvers.retime`);
  a re-timing that fails (contradictory orders) or a schedule that fails the
  independent checker is a backend bug: the answer is dropped;
- a re-timed makespan above the solver's own by more than its scaling error
  withdraws an optimality claim;
- no schedule (a crash, a limit without incumbent, a dropped answer): the
  hint is the answer, status ``feasible`` (``unknown`` without a hint);
- a hint shorter than the solver's schedule is the answer; if the solver
  claimed optimality and the hint beats it by more than its scaling error,
  the claim is withdrawn; ``infeasible`` with a valid hint is withdrawn too;
- the lower bound is the larger of ours (LB0-LB3) and the solver's (already
  lowered by its tolerance). A bound above the makespan by less than
  ``BOUND_CLAMP_TOL`` (relative) is clamped to the makespan and the Result
  says so; by more, the solver's bound is discarded as wrong (and an
  optimality claim with it);
- ``feasible`` becomes ``optimal`` when the makespan is within ``PROOF_TOL``
  of the lower bound (``meta["proof"]`` says which proved it).
"""

from __future__ import annotations

import time
import warnings

from solvers.backend import Problem
from solvers.result import PROOF_TOL, BoundSource, RawSolution, Result, Status
from themis.checker import check
from themis.schedule import Schedule
from topologies.errors import InputError

#: Relative tolerance when comparing re-timed and solver makespans.
REL_TOL = 1e-9
#: A bound at most this much (relative) above the makespan is clamped, not discarded.
BOUND_CLAMP_TOL = 1e-6


def _warn(solver: str, text: str) -> None:
    warnings.warn(f"{solver}: {text}", RuntimeWarning, stacklevel=4)


def _solver_schedule(problem: Problem, raw: RawSolution, status: Status,
                     notes: list[str], meta: dict) -> tuple[Schedule | None, Status]:
    """The re-timed, checked schedule of the answer (or None), and the status."""
    solver = problem.solver
    if raw.assignment is None:
        return None, status
    try:
        sched = problem.retime(raw.assignment)
    except (RuntimeError, InputError) as err:  # contradictory orders: a backend bug
        _warn(solver, f"cannot re-time the solver's schedule: {err}")
        meta["retime_error"] = str(err)
        notes.append("the solver's schedule cannot be re-timed (a backend bug)")
        return None, Status.UNKNOWN if status != Status.INFEASIBLE else status
    violations = [str(v) for v in check(sched)]
    if violations:
        _warn(solver, f"the re-timed schedule FAILS the checker ({len(violations)} "
                      f"violations, first: {violations[0]}); this is a bug")
        meta["solver_violations"] = violations[:20]
        notes.append("the solver's schedule fails the checker (a bug)")
        return None, Status.UNKNOWN
    sm = raw.solver_makespan_ns
    if sm is not None and sched.makespan_ns > sm + raw.scaling_error_ns + \
            REL_TOL * sched.makespan_ns + 1e-6:
        _warn(solver, f"re-timed makespan {sched.makespan_ns} exceeds the solver's {sm} "
                      f"by more than the scaling error; not claiming optimality")
        meta["retime_mismatch_ns"] = sched.makespan_ns - sm
        if status == Status.OPTIMAL:
            status = Status.FEASIBLE
            notes.append("re-timed makespan above the solver's: optimality not claimed")
    return sched, status


def _with_hint(problem: Problem, raw: RawSolution, sched: Schedule | None, status: Status,
               notes: list[str]) -> tuple[Schedule | None, str, Status]:
    """Pick between the solver's schedule and the hint."""
    hint = problem.hint
    if hint is None:
        return sched, "solver" if sched is not None else "", status
    if sched is None:
        if status == Status.INFEASIBLE:
            notes.append("the solver said infeasible, but the hint is a valid schedule "
                         "(a model bug): claim withdrawn")
        elif status == Status.OPTIMAL:
            notes.append("optimality claim without a usable schedule: withdrawn")
        notes.append(f"answered with the hint ({hint.name})")
        return hint.schedule, "hint", Status.FEASIBLE
    shorter = sched.makespan_ns - hint.makespan_ns
    if shorter <= REL_TOL * sched.makespan_ns:
        return sched, "solver", status
    if status == Status.OPTIMAL and shorter > raw.scaling_error_ns + REL_TOL * sched.makespan_ns:
        status = Status.FEASIBLE
        notes.append(f"the solver claimed optimality but the hint is {shorter:.6g} ns "
                     f"shorter: claim withdrawn")
    notes.append(f"the hint ({hint.name}) is shorter than the solver's schedule: "
                 f"answered with the hint")
    return hint.schedule, "hint", status


def grade(problem: Problem, raw: RawSolution, t0: float, reference_ns: dict[str, float],
          meta: dict) -> Result:
    """The :class:`Result` of ``raw`` (see the module docstring)."""
    solver = problem.solver
    meta = {**meta, **raw.meta, "stopped_by": raw.stopped_by}
    notes = [raw.reason] if raw.reason else []
    status = Status(raw.status)
    sched, status = _solver_schedule(problem, raw, status, notes, meta)
    sched, source, status = _with_hint(problem, raw, sched, status, notes)
    meta["schedule_source"] = source
    ours = problem.lower_bound_ns
    lower = max(ours, raw.bound_ns)
    bound_source = BoundSource.SOLVER if raw.bound_ns > ours else BoundSource.OURS
    makespan = None
    violations: list[str] = []
    if sched is not None:
        if source == "hint":
            violations = [str(v) for v in check(sched)]
            if violations:
                _warn(solver, f"the hint FAILS the checker: {violations[0]}")
        makespan = sched.makespan_ns
        sched.meta.update({"solver": solver, "status": str(status)})
        if lower > makespan:
            excess = lower - makespan
            if excess <= BOUND_CLAMP_TOL * makespan + 1e-6:
                meta["bound_clamped_ns"] = excess
                notes.append(f"{bound_source} bound {excess:.3g} ns above the makespan "
                             f"(within the {BOUND_CLAMP_TOL:g} tolerance): clamped to it")
                lower = makespan
            else:
                _warn(solver, f"lower bound {lower} above the makespan {makespan}: "
                              "a bound is wrong")
                meta["bound_above_makespan"] = True
                notes.append(f"{bound_source} bound above the makespan by {excess:.6g} ns: "
                             "discarded as wrong")
                if bound_source == BoundSource.SOLVER and status == Status.OPTIMAL:
                    status = Status.FEASIBLE
                lower = ours if ours <= makespan else makespan
                bound_source = BoundSource.OURS
        if status == Status.FEASIBLE and makespan <= lower * (1 + PROOF_TOL):
            status = Status.OPTIMAL  # a bound meets the makespan: proven
            meta["proof"] = "lower bound" if bound_source == BoundSource.OURS else "solver bound"
        elif status == Status.OPTIMAL:
            meta.setdefault("proof", solver)
    elif status == Status.FEASIBLE:  # no schedule to show for it
        status = Status.UNKNOWN
    return Result(
        status=status, makespan_ns=makespan, lower_bound_ns=lower,
        runtime_s=time.perf_counter() - t0, solver=solver, ag_order=problem.data.ag_order,
        schedule=sched, valid=None if sched is None else not violations,
        violations=violations,
        scaling_error_ns=raw.scaling_error_ns, solver_makespan_ns=raw.solver_makespan_ns,
        chunks=problem.data.nchunks, routes={} if sched is None else sched.route_histogram(),
        reference_ns=reference_ns, meta=meta, reason="; ".join(notes),
        bound_source=bound_source, lb3_method=str(problem.bounds.lb3_method),
        solver_log=raw.log,
    )
