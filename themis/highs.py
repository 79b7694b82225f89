"""HiGHS for the models of every layer (route mixes, bounds, MILPs).

:func:`new_highs` is a quiet ``highspy.Highs``; :class:`LinearModel` a small
LP/MIP builder passed to HiGHS in one go, with deterministic work limits. A MIP
stops at optimality, at ``node_limit`` branch-and-bound nodes (a deterministic
work limit: on one thread, HiGHS's MIP search is the same on any machine and
load) or, as a safety net only, at a wall-clock limit; :class:`Solved` says which.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

_QUIET = False


def new_highs():
    """A quiet ``highspy.Highs`` (the first one prints a banner on fd 1: hide it)."""
    global _QUIET
    import highspy

    if not _QUIET:
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            h = highspy.Highs()
            try:
                import ctypes

                ctypes.CDLL(None).fflush(None)
            except (OSError, AttributeError):  # pragma: no cover - non-POSIX libc
                pass
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _QUIET = True
    else:
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


@dataclass(frozen=True)
class Solved:
    """A solve's value (LP optimum or MIP dual bound), solution and how it stopped.

    ``stop``: ``optimal``, ``nodes`` (the node limit), ``wall`` (the safety
    wall-clock limit: the value then depends on the machine) or ``failed``.
    """

    value: float
    solution: list[float] | None
    stop: str
    nodes: int = 0


class LinearModel:
    """Columns and rows accumulated in Python, then minimized by HiGHS."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[float, float, dict[int, float]]] = []

    def var(self, lb: float = 0.0, ub: float = float("inf"), cost: float = 0.0,
            integer: bool = False) -> int:
        """A new column; returns its index."""
        self.cost.append(cost)
        self.lb.append(lb)
        self.ub.append(ub)
        if integer:
            self.integer.append(len(self.cost) - 1)
        return len(self.cost) - 1

    def row(self, lo: float, hi: float, coefs: dict[int, float]) -> None:
        """The row ``lo <= sum coefs[i] * x_i <= hi``."""
        self.rows.append((lo, hi, coefs))

    def solve(self, node_limit: int | None = None, time_limit_s: float = 60.0,
              rel_gap: float = 0.0, abs_gap: float = 0.0) -> Solved:
        """Minimize; the LP optimum, or the MIP dual bound (valid at any stop).

        ``rel_gap`` / ``abs_gap``: the MIP's stopping gaps (0: prove optimality);
        the solution, when there is one, is the best incumbent.
        """
        import highspy
        import numpy as np

        h = new_highs()
        if self.integer:
            # HiGHS runs a MIP on one process-wide scheduler whose thread count is fixed
            # by the process's first run, and the MIP's path depends on it: reset it and
            # run on one thread, so the bound is the same whatever ran before, anywhere.
            highspy.Highs.resetGlobalScheduler(True)
            h.setOptionValue("threads", 1)
            h.setOptionValue("random_seed", 0)
        inf = highspy.kHighsInf
        n = len(self.cost)
        h.addVars(n, np.array(self.lb), np.array([min(u, inf) for u in self.ub]))
        h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(self.cost))
        for lo, hi, coefs in self.rows:
            idx = np.array(list(coefs), dtype=np.int32)
            val = np.array(list(coefs.values()), dtype=float)
            h.addRow(max(lo, -inf), min(hi, inf), len(idx), idx, val)
        if self.integer:
            idx = np.array(self.integer, dtype=np.int32)
            h.changeColsIntegrality(len(idx), idx,
                                    np.array([highspy.HighsVarType.kInteger] * len(idx)))
            h.setOptionValue("mip_rel_gap", float(rel_gap))
            h.setOptionValue("mip_abs_gap", float(abs_gap))
            if node_limit is not None:
                h.setOptionValue("mip_max_nodes", int(node_limit))
        h.setOptionValue("time_limit", float(time_limit_s))
        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        sol = list(h.getSolution().col_value) if info.primal_solution_status == 2 else None
        S = highspy.HighsModelStatus
        stop = {S.kOptimal: "optimal", S.kTimeLimit: "wall"}.get(status, "nodes")
        if self.integer:
            if status in (S.kInfeasible, S.kModelError, S.kSolveError, S.kNotset):
                return Solved(0.0, None, "failed")
            bound = info.mip_dual_bound
            value = float(bound) if bound == bound and bound > -inf else 0.0
            return Solved(value, sol, stop, int(info.mip_node_count))
        if status != S.kOptimal:
            return Solved(0.0, None, "failed")
        return Solved(float(info.objective_function_value), sol, "optimal")


__all__ = ["LinearModel", "Solved", "new_highs"]
