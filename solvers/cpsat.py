"""The CP-SAT model of the chunk-to-dimension scheduling problem (model.md §7).

Variables, per chunk c:

- a literal per route r (``exactly_one``); in the ``free`` AG variant also a
  literal per AG order q (``exactly_one``);
- one interval per (c, RS, d) and one per (c, AG, d), whose size is the
  route-dependent duration: ``size == sum_r x[c, r] * p(c, r, d)``.

Constraints: one ``no_overlap`` per dimension over all its intervals; route
literals enforce the chain of their route (``only_enforce_if``); redundant
but helpful: a chunk's RS intervals do not overlap each other (whatever the
route), nor do its AG intervals, and every AG stage starts after all its RS
stages. The makespan is at least every chunk's end, at most the reference
(best Themis/baseline simulation, also the hint) and at least our lower bound.

Symmetry: chunks of equal size are interchangeable, so their RS stages on
one dimension (the first active one) are forced into chunk order; the hint is
relabeled the same way.

Integer scaling: one tick is ``max stage duration / resolution`` ns and every
duration is rounded *up* to whole ticks. So the solver's schedule stays
feasible when re-timed with exact durations (the re-timed makespan is at most
the solver's), and the scaled optimum exceeds the exact one by at most one
tick per stage on a path (``stages * tick``, subtracted from the solver's
bound). CP-SAT stops once its gap is below ``stages`` ticks (rounding noise),
so "optimal" means: within ``scaling_error_ns = 2 * stages * tick`` of the
exact optimum.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from solvers.common import (
    Assignment,
    ProblemData,
    chunk_relabeling,
    retime,
    retime_ticks,
    step_of,
)

#: Ticks given to the longest stage (see the module docstring).
DEFAULT_RESOLUTION = 1_000_000
#: Ticks of the longest stage in the coarse search phase, and its share of the time.
DEFAULT_COARSE_RESOLUTION = 2_000
DEFAULT_COARSE_FRACTION = 0.25


@dataclass
class RawSolution:
    """A backend's answer before re-timing (see :mod:`solvers.solve`)."""

    status: str
    assignment: Assignment | None
    solver_makespan_ns: float | None
    bound_ns: float
    scaling_error_ns: float = 0.0
    meta: dict = field(default_factory=dict)


def solve_cpsat(
    data: ProblemData,
    time_limit_s: float,
    lower_bound_ns: float,
    hint: Assignment | None,
    threads: int | None = None,
    resolution: int = DEFAULT_RESOLUTION,
    coarse_resolution: int = DEFAULT_COARSE_RESOLUTION,
    coarse_fraction: float = DEFAULT_COARSE_FRACTION,
    route_counts: object | None = None,
    **kwargs: object,
) -> RawSolution:
    """Solve in two phases: a coarse model to find schedules, the fine one to prove.

    Phase 1 (``coarse_fraction`` of the time, ``coarse_resolution`` ticks for
    the longest stage) searches for good schedules: a coarse model has fewer
    distinct times and CP-SAT finds near-optimal schedules much faster in it.
    Its schedule is re-timed exactly; if that meets ``lower_bound_ns`` it is
    optimal and we stop. Otherwise phase 2 runs the fine model (``resolution``)
    hinted with the better of the phase-1 schedule and ``hint``, and its status
    and bound are the answer. ``coarse_fraction=0`` skips phase 1.
    """
    t0 = time.perf_counter()
    meta: dict = {}
    first = None
    if coarse_fraction > 0 and coarse_resolution < resolution:
        first = _solve_once(data, coarse_fraction * time_limit_s, lower_bound_ns, hint,
                            threads, coarse_resolution, route_counts=route_counts, **kwargs)
        meta["coarse"] = {k: first.meta.get(k) for k in ("cpsat_status", "resolution",
                                                          "branches")}
        if first.assignment is not None:
            sched = retime(data.instance, first.assignment.plans(data),
                           first.assignment.dim_orders(), data.ag_order)
            meta["coarse"]["makespan_ns"] = sched.makespan_ns
            if sched.makespan_ns <= lower_bound_ns * (1 + 1e-8):
                # Our exact lower bound certifies it (solve() grades it optimal).
                first.status = "feasible"
                first.bound_ns = max(first.bound_ns, 0.0)
                first.scaling_error_ns = 0.0  # certified exactly, not through the scaling
                first.meta["phases"] = meta
                return first
            hint_ns = float("inf")
            if hint is not None:
                hint_ns = retime(data.instance, hint.plans(data), hint.dim_orders(),
                                 data.ag_order).makespan_ns
            if sched.makespan_ns < hint_ns:
                hint = first.assignment  # phase 2 may not end later than its hint
    remaining = max(0.01, time_limit_s - (time.perf_counter() - t0))
    second = _solve_once(data, remaining, lower_bound_ns, hint, threads, resolution, **kwargs)
    second.meta["phases"] = meta
    if second.assignment is None and first is not None and first.assignment is not None:
        # Keep the coarse schedule: its bound is the fine model's (if any).
        first.status = "feasible"
        first.bound_ns = max(second.bound_ns, 0.0)
        first.meta["phases"] = meta
        return first
    return second


def _hint_ticks(data: ProblemData, hint: Assignment, p_rs: list, p_ag: list,
                symmetry: bool) -> tuple[tuple[list[int], list[int], dict], int]:
    """The hint in model terms: routes, AG orders and start ticks per (c, phase, d).

    The hint's orders are re-timed with the rounded durations (semi-active). With
    ``symmetry``, the hint is mirrored in time if it idles longer before the first
    stage of the symmetry dimension than after its last one, then its identical
    chunks are relabeled so their RS stages on that dimension run in chunk order:
    the hint then satisfies the model's symmetry-breaking constraints.
    """
    nch = data.nchunks
    durs, dim_of = [], []
    for c in range(nch):
        k, r, q = data.class_of[c], hint.route[c], hint.ag[c]
        plan = data.plan(r, q if data.free else None)
        durs.append([p_rs[k][r][d] if ph == "RS" else p_ag[k][q][d] for ph, d in plan])
        dim_of.append([d for _, d in plan])
    starts, ub = retime_ticks(durs, dim_of, hint.orders)
    route, ag = list(hint.route), list(hint.ag)
    times = {}
    for c in range(nch):
        for d in data.dims:
            for ph in ("RS", "AG"):
                times[c, ph, d] = starts[c][step_of(data, route[c], ag[c], ph, d)]
    if not symmetry:
        return (route, ag, times), ub
    sym = data.dims[0]

    def dur(c: int, ph: str, d: int) -> int:
        k = data.class_of[c]
        return p_rs[k][route[c]][d] if ph == "RS" else p_ag[k][ag[c]][d]

    head = min(times[c, "RS", sym] for c in range(nch))
    last = max(times[c, "AG", sym] + dur(c, "AG", sym) for c in range(nch))
    if head + last > ub:
        mirrored = {}
        for c in range(nch):
            for d in data.dims:
                mirrored[c, "RS", d] = ub - times[c, "AG", d] - dur(c, "AG", d)
                mirrored[c, "AG", d] = ub - times[c, "RS", d] - dur(c, "RS", d)
        new_route = [data.perms.index(tuple(reversed(data.ag_perms[q]))) for q in ag]
        new_ag = [data.ag_perms.index(tuple(reversed(data.perms[r]))) for r in route]
        route, ag, times = new_route, new_ag, mirrored
    new_of_old = chunk_relabeling(data, [times[c, "RS", sym] for c in range(nch)])
    route2, ag2, times2 = [0] * nch, [0] * nch, {}
    for old, new in enumerate(new_of_old):
        route2[new], ag2[new] = route[old], ag[old]
        for d in data.dims:
            for ph in ("RS", "AG"):
                times2[new, ph, d] = times[old, ph, d]
    return (route2, ag2, times2), ub


def _solve_once(
    data: ProblemData,
    time_limit_s: float,
    lower_bound_ns: float,
    hint: Assignment | None,
    threads: int | None = None,
    resolution: int = DEFAULT_RESOLUTION,
    symmetry: bool = True,
    use_hint: bool = True,
    scaled_bound: bool = True,
    log: bool = False,
    route_counts: object | None = None,
    **params: object,
) -> RawSolution:
    """Build and solve the CP-SAT model once; ``params`` go to ``solver.parameters``.

    ``route_counts`` (a :class:`~solvers.bounds.RouteCounts`) restricts how many
    chunks of each class take each route (a heuristic restriction: the result
    is then only a schedule, its status at best "feasible").
    """
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    tick = data.max_duration_ns / resolution
    dims = data.dims
    n = len(dims)
    nr, nq = len(data.perms), len(data.ag_perms)
    nch = data.nchunks

    def ticks(ns: float) -> int:
        return max(1, math.ceil(ns / tick))

    p_rs = [[{d: ticks(v) for d, v in row.items()} for row in k] for k in data.rs]
    p_ag = [[{d: ticks(v) for d, v in row.items()} for row in k] for k in data.ag]
    # Time reversal maps RS on d (route r) onto AG on d (AG order reversed(r)) with the
    # same exact duration; make the rounded durations equal too (the larger of the
    # two), so the mirror symmetry breaking below is exact in the scaled model.
    for k in range(len(data.classes)):
        for r, perm in enumerate(data.perms):
            q = data.ag_perms.index(tuple(reversed(perm)))
            for d in dims:
                both = max(p_rs[k][r][d], p_ag[k][q][d])
                p_rs[k][r][d] = p_ag[k][q][d] = both

    # Hint times in ticks: re-time the hint's orders with the rounded durations.
    hint_times = None
    ub = None
    if hint is not None:
        hint_times, ub = _hint_ticks(data, hint, p_rs, p_ag, symmetry)
    horizon = ub if ub is not None else sum(
        max(max(row.values()) for row in part[data.class_of[c]])
        for c in range(nch) for part in (p_rs, p_ag)) * n
    lb_ticks = max(0, math.floor(lower_bound_ns / tick * (1 - 1e-9)))
    if scaled_bound:
        from solvers.bounds import scaled_lb_ticks

        lb_ticks = max(lb_ticks, scaled_lb_ticks(data, p_rs, p_ag,
                                                 min(1.0, 0.2 * time_limit_s)))
    lb_ticks = min(lb_ticks, horizon)

    m = cp_model.CpModel()
    x = [[m.new_bool_var(f"x{c}_{r}") for r in range(nr)] for c in range(nch)]
    y = [[m.new_bool_var(f"y{c}_{q}") for q in range(nq)] for c in range(nch)] \
        if data.free else x
    for c in range(nch):
        m.add_exactly_one(x[c])
        if data.free:
            m.add_exactly_one(y[c])

    def stage_vars(c: int, lits: list, table: list[dict[int, int]], d: int, name: str):
        values = sorted({row[d] for row in table})
        start = m.new_int_var(0, horizon, f"s{name}")
        end = m.new_int_var(0, horizon, f"e{name}")
        if len(values) == 1:
            size = values[0]
        else:
            size = m.new_int_var_from_domain(cp_model.Domain.from_values(values), f"p{name}")
            m.add(size == sum(row[d] * lit for row, lit in zip(table, lits, strict=True)))
        iv = m.new_interval_var(start, size, end, f"i{name}")
        return start, size, end, iv

    rs_s, rs_e, rs_iv, ag_s, ag_e, ag_iv = ({} for _ in range(6))
    rs_p, ag_p = {}, {}
    makespan = m.new_int_var(lb_ticks, horizon, "makespan")
    rs_done = []
    for c in range(nch):
        k = data.class_of[c]
        for d in dims:
            rs_s[c, d], rs_p[c, d], rs_e[c, d], rs_iv[c, d] = stage_vars(
                c, x[c], p_rs[k], d, f"{c}_rs{d}")
            ag_s[c, d], ag_p[c, d], ag_e[c, d], ag_iv[c, d] = stage_vars(
                c, y[c], p_ag[k], d, f"{c}_ag{d}")
        for r, perm in enumerate(data.perms):
            for a, b in zip(perm, perm[1:], strict=False):
                m.add(rs_e[c, a] <= rs_s[c, b]).only_enforce_if(x[c][r])
        for q, perm in enumerate(data.ag_perms):
            for a, b in zip(perm, perm[1:], strict=False):
                m.add(ag_e[c, a] <= ag_s[c, b]).only_enforce_if(y[c][q])
        done = m.new_int_var(0, horizon, f"rsdone{c}")
        rs_done.append(done)
        for d in dims:
            m.add(done >= rs_e[c, d])
            m.add(ag_s[c, d] >= done)
            m.add(makespan >= ag_e[c, d])
        # The chunk's chain, whatever its route (redundant; strengthens the LP).
        m.add(done >= sum(rs_p[c, d] for d in dims))
        m.add(makespan >= done + sum(ag_p[c, d] for d in dims))
        if n > 1:
            m.add_no_overlap([rs_iv[c, d] for d in dims])
            m.add_no_overlap([ag_iv[c, d] for d in dims])
    for d in dims:
        m.add_no_overlap([rs_iv[c, d] for c in range(nch)] + [ag_iv[c, d] for c in range(nch)])
    if route_counts is not None:
        for (k, r), cnt in route_counts.rs.items():
            m.add(sum(x[c][r] for c in range(nch) if data.class_of[c] == k) == cnt)
        if data.free:
            for (k, q), cnt in route_counts.ag.items():
                m.add(sum(y[c][q] for c in range(nch) if data.class_of[c] == k) == cnt)
    sym_dim = dims[0]
    head = last = None
    if symmetry:
        for a in range(nch):
            for b in range(a + 1, nch):
                if data.class_of[a] == data.class_of[b]:
                    m.add(rs_e[a, sym_dim] <= rs_s[b, sym_dim])
                    break
        # Mirror symmetry: reversing time maps a schedule onto one with the same
        # makespan (RS <-> AG stages, routes <-> reversed AG orders, equal durations),
        # swapping the idle time before and after the stages of one dimension.
        head = m.new_int_var(0, horizon, "head")
        last = m.new_int_var(0, horizon, "last")
        m.add_min_equality(head, [rs_s[c, sym_dim] for c in range(nch)])
        m.add_max_equality(last, [ag_e[c, sym_dim] for c in range(nch)])
        m.add(head + last <= makespan)
    m.minimize(makespan)

    if use_hint and hint_times is not None:
        route_h, ag_h, times = hint_times
        for c in range(nch):
            k, r, q = data.class_of[c], route_h[c], ag_h[c]
            for rr in range(nr):
                m.add_hint(x[c][rr], rr == r)
            if data.free:
                for qq in range(nq):
                    m.add_hint(y[c][qq], qq == q)
            for d in dims:
                for ph, p, sv, ev, pv in (("RS", p_rs[k][r][d], rs_s, rs_e, rs_p),
                                          ("AG", p_ag[k][q][d], ag_s, ag_e, ag_p)):
                    t = times[c, ph, d]
                    m.add_hint(sv[c, d], t)
                    m.add_hint(ev[c, d], t + p)
                    if not isinstance(pv[c, d], int):
                        m.add_hint(pv[c, d], p)
            m.add_hint(rs_done[c], max(times[c, "RS", d] + p_rs[k][r][d] for d in dims))
        m.add_hint(makespan, ub)
        if head is not None:
            m.add_hint(head, min(times[c, "RS", sym_dim] for c in range(nch)))
            m.add_hint(last, max(times[c, "AG", sym_dim] + p_ag[data.class_of[c]][ag_h[c]][
                sym_dim] for c in range(nch)))

    solver = cp_model.CpSolver()
    build_s = time.perf_counter() - t0
    solver.parameters.max_time_in_seconds = max(0.01, time_limit_s - build_s)
    if threads is not None:
        solver.parameters.num_workers = threads
    solver.parameters.log_search_progress = log
    # Rounding makes the scaled optimum exceed the exact one by up to a tick per
    # stage: a gap below that is noise, stop there (reported as scaling error).
    solver.parameters.absolute_gap_limit = float(data.nstages)
    for key, value in params.items():
        setattr(solver.parameters, key, value)
    status = solver.solve(m)
    rounding = data.nstages * tick  # |scaled optimum - exact optimum| <= rounding
    err = 2 * rounding  # makespan - optimum when "optimal" (rounding + gap limit)
    meta = {"tick_ns": tick, "resolution": resolution, "build_s": build_s,
            "cpsat_status": solver.status_name(status), "branches": solver.num_branches,
            "conflicts": solver.num_conflicts, "hint_ticks": ub, "lb_ticks": lb_ticks,
            "symmetry_dim": sym_dim if symmetry else None}
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        route = [next(r for r in range(nr) if solver.boolean_value(x[c][r])) for c in range(nch)]
        ag = [next(q for q in range(nq) if solver.boolean_value(y[c][q])) for c in range(nch)] \
            if data.free else list(route)
        orders: dict[int, list[tuple[int, int]]] = {}
        for d in dims:
            keyed = []
            for c in range(nch):
                keyed.append((solver.value(rs_s[c, d]), c, step_of(data, route[c], ag[c], "RS", d)))
                keyed.append((solver.value(ag_s[c, d]), c, step_of(data, route[c], ag[c], "AG", d)))
            orders[d] = [(c, j) for _, c, j in sorted(keyed)]
        obj = solver.objective_value
        bound = solver.best_objective_bound
        proven = status == cp_model.OPTIMAL and route_counts is None
        return RawSolution(
            "optimal" if proven else "feasible", Assignment(route, ag, orders), obj * tick,
            bound * tick - rounding if route_counts is None else 0.0, err, meta)
    if status == cp_model.INFEASIBLE:
        return RawSolution("infeasible" if route_counts is None else "unknown", None, None,
                           0.0, err, meta)
    if status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT model invalid: {m.validate()}")
    bound = solver.best_objective_bound * tick - rounding if route_counts is None else 0.0
    return RawSolution("unknown", None, None, max(0.0, bound), err, meta)
