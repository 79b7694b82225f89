"""A disjunctive MILP of the scheduling problem (model.md §7), solved through PuLP.

Per chunk c: route binaries ``x[c, r]`` (exactly one; in the ``free`` AG
variant also AG-order binaries ``y[c, q]``), a start per (c, phase, d), and
durations that are linear expressions of the route binaries. Route r's chain
holds when ``x[c, r] = 1`` (big-M); every AG stage starts after the chunk's
RS stages (no big-M). Per dimension, every pair of stages of different chunks
gets an order binary and two big-M disjunctions. Chunks of equal size run
their RS stages on the first dimension in chunk order (symmetry breaking, as
in CP-SAT). The makespan is minimized; M is the reference (best
Themis/baseline) makespan, which is also the warm start.

Times are in units of 1/1000 of the longest stage to keep the numbers
moderate. Backends: CBC (``PULP_CBC_CMD``; status from PuLP's ``sol_status``,
the best bound parsed from CBC's log) and HiGHS (``pulp.HiGHS``, the highspy
API; status and the MIP dual bound read from the ``highspy.Highs`` object).

Tolerances: a big-M row may be violated by ``M * integrality tolerance +
feasibility tolerance``; over a path of at most ``stages`` stages that bounds
how far the MILP's makespan and bound can be off (``scaling_error_ns``).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import warnings

from solvers.common import Assignment, ProblemData, retime, step_of
from solvers.cpsat import RawSolution

#: Integrality and feasibility tolerances asked of the MILP solvers.
INT_TOL = 1e-9
FEAS_TOL = 1e-9


def _build(data: ProblemData, ub_units: float, lb_units: float, unit: float,
           symmetry: bool):
    """The PuLP problem and its variables."""
    import pulp

    prob = pulp.LpProblem("chunk_schedule", pulp.LpMinimize)
    dims = data.dims
    nch = data.nchunks
    nr, nq = len(data.perms), len(data.ag_perms)
    # Big enough that a relaxed row never binds: starts and ends lie in [0, ub], and
    # a relaxed chain row adds a duration that is not the chunk's.
    big = ub_units + 1000.0
    p_rs = [[{d: v / unit for d, v in row.items()} for row in k] for k in data.rs]
    p_ag = [[{d: v / unit for d, v in row.items()} for row in k] for k in data.ag]
    binary = pulp.LpBinary
    x = {(c, r): prob.add_variable(f"x_{c}_{r}", 0, 1, binary)
         for c in range(nch) for r in range(nr)}
    y = ({(c, q): prob.add_variable(f"y_{c}_{q}", 0, 1, binary)
          for c in range(nch) for q in range(nq)} if data.free else x)
    s = {(c, ph, d): prob.add_variable(f"s_{c}_{ph}_{d}", 0, ub_units)
         for c in range(nch) for ph in ("RS", "AG") for d in dims}
    done = {c: prob.add_variable(f"f_{c}", 0, ub_units) for c in range(nch)}
    t_var = prob.add_variable("T", lb_units, ub_units)
    prob += t_var

    dur = {}
    for c in range(nch):
        k = data.class_of[c]
        prob += pulp.lpSum(x[c, r] for r in range(nr)) == 1, f"route_{c}"
        if data.free:
            prob += pulp.lpSum(y[c, q] for q in range(nq)) == 1, f"agorder_{c}"
        for d in dims:
            dur[c, "RS", d] = pulp.lpSum(p_rs[k][r][d] * x[c, r] for r in range(nr))
            dur[c, "AG", d] = pulp.lpSum(p_ag[k][q][d] * y[c, q] for q in range(nq))
        for r, perm in enumerate(data.perms):
            for a, b in zip(perm, perm[1:], strict=False):
                prob += (s[c, "RS", b] >= s[c, "RS", a] + p_rs[k][r][a] - big * (1 - x[c, r]),
                         f"rs_{c}_{r}_{a}")
        for q, perm in enumerate(data.ag_perms):
            for a, b in zip(perm, perm[1:], strict=False):
                prob += (s[c, "AG", b] >= s[c, "AG", a] + p_ag[k][q][a] - big * (1 - y[c, q]),
                         f"ag_{c}_{q}_{a}")
        for d in dims:
            prob += done[c] >= s[c, "RS", d] + dur[c, "RS", d], f"done_{c}_{d}"
            prob += s[c, "AG", d] >= done[c], f"agafter_{c}_{d}"
            prob += t_var >= s[c, "AG", d] + dur[c, "AG", d], f"mk_{c}_{d}"

    order = {}
    sym_dim = dims[0]
    for d in dims:
        keys = [(c, ph) for c in range(nch) for ph in ("RS", "AG")]
        for i, (ca, pa) in enumerate(keys):
            for cb, pb in keys[i + 1:]:
                if ca == cb:
                    continue
                a, b = (ca, pa, d), (cb, pb, d)
                if symmetry and d == sym_dim and pa == pb == "RS" \
                        and data.class_of[ca] == data.class_of[cb]:
                    prob += s[b] >= s[a] + dur[a], f"sym_{ca}_{cb}"
                    continue
                o = prob.add_variable(f"o_{ca}{pa}_{cb}{pb}_{d}", 0, 1, binary)
                order[a, b] = o
                prob += s[b] >= s[a] + dur[a] - big * (1 - o), f"ab_{ca}{pa}_{cb}{pb}_{d}"
                prob += s[a] >= s[b] + dur[b] - big * o, f"ba_{ca}{pa}_{cb}{pb}_{d}"
    return prob, {"x": x, "y": y, "s": s, "done": done, "T": t_var, "order": order,
                  "dur": dur}


def _warm_start(data: ProblemData, hint: Assignment, v: dict, unit: float) -> None:
    """Set every variable's initial value from the (relabeled) hint."""
    sched = retime(data.instance, hint.plans(data), hint.dim_orders(), data.ag_order)
    start = {(st.chunk, st.phase, st.dim): st.start_ns / unit for st in sched.stages}
    end = {(st.chunk, st.phase, st.dim): st.end_ns / unit for st in sched.stages}
    for (c, r), var in v["x"].items():
        var.setInitialValue(1 if hint.route[c] == r else 0)
    if data.free:
        for (c, q), var in v["y"].items():
            var.setInitialValue(1 if hint.ag[c] == q else 0)
    for key, var in v["s"].items():
        var.setInitialValue(start[key])
    for c, var in v["done"].items():
        var.setInitialValue(max(end[c, "RS", d] for d in data.dims))
    v["T"].setInitialValue(sched.makespan_ns / unit)
    for (a, b), var in v["order"].items():
        var.setInitialValue(1 if start[a] < start[b] else 0)


def _extract(data: ProblemData, v: dict, unit: float) -> Assignment:
    """Routes from the binaries, per-dimension orders from the start values."""
    nch = data.nchunks
    nr, nq = len(data.perms), len(data.ag_perms)

    def pick(var: dict, c: int, n: int) -> int:
        return max(range(n), key=lambda i: var[c, i].varValue or 0.0)

    route = [pick(v["x"], c, nr) for c in range(nch)]
    ag = [pick(v["y"], c, nq) for c in range(nch)] if data.free else list(route)
    orders = {}
    for d in data.dims:
        keyed = []
        for c in range(nch):
            k = data.class_of[c]
            for ph in ("RS", "AG"):
                p = data.rs[k][route[c]][d] if ph == "RS" else data.ag[k][ag[c]][d]
                mid = (v["s"][c, ph, d].varValue or 0.0) + 0.5 * p / unit
                keyed.append((mid, c, step_of(data, route[c], ag[c], ph, d)))
        orders[d] = [(c, j) for _, c, j in sorted(keyed)]
    return Assignment(route, ag, orders)


def _cbc_bound(log_text: str) -> float | None:
    """CBC's best possible objective from its log, if it printed one."""
    for pattern in (r"Lower bound:\s+([-+0-9.eE]+)", r"best possible\s+([-+0-9.eE]+)"):
        found = re.findall(pattern, log_text)
        if found:
            try:
                return float(found[-1])
            except ValueError:
                continue
    return None


def solve_milp(
    data: ProblemData,
    solver: str,
    time_limit_s: float,
    lower_bound_ns: float,
    hint: Assignment | None,
    ub_ns: float,
    threads: int | None = None,
    symmetry: bool = True,
    use_hint: bool = True,
    log: bool = False,
) -> RawSolution:
    """Build the MILP and solve it with ``solver`` (``cbc`` or ``highs``)."""
    import pulp

    t0 = time.perf_counter()
    unit = data.max_duration_ns / 1000.0
    ub_units = ub_ns / unit * (1 + 1e-9) + 1e-6
    lb_units = min(lower_bound_ns / unit * (1 - 1e-9), ub_units)
    prob, v = _build(data, ub_units, lb_units, unit, symmetry)
    if hint is not None and use_hint:
        _warm_start(data, hint, v, unit)
    build_s = time.perf_counter() - t0
    limit = max(0.05, time_limit_s - build_s)
    meta: dict = {"build_s": build_s, "unit_ns": unit, "binaries": sum(
        1 for var in prob.variables() if var.cat == pulp.LpInteger),
        "constraints": prob.numConstraints()}
    err = data.nstages * (ub_units * INT_TOL + FEAS_TOL) * unit
    solver_bound = None
    if solver == "cbc":
        fd, log_path = tempfile.mkstemp(prefix="themis_cbc_", suffix=".log")
        os.close(fd)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # PuLP 3 deprecation notices
                cmd = pulp.PULP_CBC_CMD(msg=False, timeLimit=limit, threads=threads,
                                        warmStart=hint is not None and use_hint,
                                        gapRel=0.0, gapAbs=0.0, logPath=log_path,
                                        options=[f"integerT {INT_TOL}", f"primalT {FEAS_TOL}"])
                prob.solve(cmd)
            with open(log_path) as f:
                text = f.read()
        finally:
            os.unlink(log_path)
        if log:
            print(text)
        # CBC writes values with about 8 significant digits: widen the error bound.
        err += 1e-7 * ub_ns
        sol = prob.sol_status
        meta["pulp_status"] = pulp.LpStatus[prob.status]
        meta["pulp_sol_status"] = sol
        has_solution = sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
        proven = sol == pulp.LpSolutionOptimal
        infeasible = sol == pulp.LpSolutionInfeasible
        solver_bound = _cbc_bound(text)
        if proven and has_solution:
            solver_bound = pulp.value(prob.objective)
        meta["bound_source"] = "cbc log" if solver_bound is not None else "ours"
    elif solver == "highs":
        import highspy

        from solvers.bounds import new_highs

        new_highs()  # swallow HiGHS's start-up banner before PuLP creates its instance
        if threads is not None:
            # HiGHS keeps one global thread pool; its size can only change after a reset.
            highspy.Highs.resetGlobalScheduler(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cmd = _highs_class()(msg=log, timeLimit=limit, threads=threads, gapRel=0.0,
                                 gapAbs=0.0, mip_feasibility_tolerance=INT_TOL,
                                 primal_feasibility_tolerance=FEAS_TOL)
            cmd.start = hint is not None and use_hint
            prob.solve(cmd)
        h = prob.solverModel
        status = h.getModelStatus()
        info = h.getInfo()
        meta["highs_status"] = h.modelStatusToString(status)
        has_solution = info.primal_solution_status == 2
        proven = status == highspy.HighsModelStatus.kOptimal and has_solution
        infeasible = status == highspy.HighsModelStatus.kInfeasible
        bound = info.mip_dual_bound
        solver_bound = bound if bound == bound and abs(bound) < highspy.kHighsInf else None
        meta["bound_source"] = "highs mip_dual_bound" if solver_bound is not None else "ours"
    else:  # pragma: no cover - solve() validates
        raise ValueError(solver)

    bound_ns = 0.0 if solver_bound is None else max(0.0, solver_bound * unit - err)
    if infeasible:
        return RawSolution("infeasible", None, None, 0.0, err, meta)
    if not has_solution:
        return RawSolution("unknown", None, None, bound_ns, err, meta)
    assignment = _extract(data, v, unit)
    mk = (v["T"].varValue or 0.0) * unit
    return RawSolution("optimal" if proven else "feasible", assignment, mk, bound_ns, err, meta)


_HIGHS_CLS = None


def _highs_class():
    """``pulp.HiGHS`` that passes the variables' initial values as a MIP start."""
    global _HIGHS_CLS
    if _HIGHS_CLS is None:
        import highspy
        import pulp

        class HiGHSWarm(pulp.HiGHS):
            start = False

            def callSolver(self, lp):  # noqa: N802 - PuLP's name
                if self.start:
                    sol = highspy.HighsSolution()
                    sol.col_value = [var.varValue if var.varValue is not None else 0.0
                                     for var in lp.variables()]
                    sol.value_valid = True
                    lp.solverModel.setSolution(sol)
                lp.solverModel.run()

        _HIGHS_CLS = HiGHSWarm
    return _HIGHS_CLS
