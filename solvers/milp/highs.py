"""HiGHS (highspy, through ``pulp.HiGHS``) as a MILP backend.

Status and the MIP dual bound are read from the ``highspy.Highs`` object. The
warm start is passed as a MIP start. HiGHS has no deterministic time: its
deterministic work limit is ``node_limit`` (``mip_max_nodes``).
"""

from __future__ import annotations

import warnings

from solvers.backend import Problem
from solvers.highs_model import new_highs
from solvers.milp.solve import FEAS_TOL, INT_TOL, Built, Outcome

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

            def findSolutionValues(self, lp):  # noqa: N802 - PuLP's name
                # PuLP maps only some statuses; a node limit (kSolutionLimit) is not one.
                # The values are assigned before the lookup fails; run_highs reads the
                # status from the Highs object itself.
                try:
                    return super().findSolutionValues(lp)
                except KeyError:
                    feasible = lp.solverModel.getInfo().primal_solution_status == 2
                    return (pulp.LpStatusNotSolved, pulp.LpSolutionIntegerFeasible
                            if feasible else pulp.LpSolutionNoSolutionFound)

        _HIGHS_CLS = HiGHSWarm
    return _HIGHS_CLS


def run_highs(problem: Problem, built: Built, limit_s: float) -> Outcome:
    """Solve with HiGHS."""
    import highspy

    p = problem.params
    new_highs()  # swallow HiGHS's start-up banner before PuLP creates its instance
    if p.threads is not None:
        # HiGHS keeps one global thread pool; its size can only change after a reset.
        highspy.Highs.resetGlobalScheduler(True)
    options = {"mip_feasibility_tolerance": INT_TOL, "primal_feasibility_tolerance": FEAS_TOL,
               "random_seed": p.seed}
    if p.node_limit is not None:
        options["mip_max_nodes"] = p.node_limit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmd = _highs_class()(msg=p.log, timeLimit=limit_s, threads=p.threads, gapRel=0.0,
                             gapAbs=0.0, **options)
        cmd.start = built.warm
        built.prob.solve(cmd)
    h = built.prob.solverModel
    status = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    has_solution = info.primal_solution_status == 2
    proven = status == S.kOptimal and has_solution
    bound = info.mip_dual_bound
    bound = bound if bound == bound and abs(bound) < highspy.kHighsInf else None
    stopped = ""
    if not proven and status != S.kInfeasible:
        stopped = "wall" if status == S.kTimeLimit else "nodes"
    meta = {"highs_status": h.modelStatusToString(status),
            "bound_source": "highs mip_dual_bound" if bound is not None else "ours"}
    return Outcome(has_solution, proven, status == S.kInfeasible, bound, meta,
                   stopped_by=stopped)
