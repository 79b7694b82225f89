"""Exact chunk-to-dimension scheduling (model.md §7): CP-SAT, MILPs, lower bounds.

``solve(instance, solver="cpsat"|"cbc"|"highs", params=SolverParams(...),
bounds=..., hint=...)`` returns a :class:`Result` whose schedule was re-timed
by the simulator and checked by :mod:`themis.checker`; ``bounds(instance,
ag_order)`` gives LB0-LB3 of one AG variant.
"""

from solvers.bounds import Bounds, Lb3Method, bounds
from solvers.params import SolverParams
from solvers.result import BoundSource, Result, Status
from solvers.solve import SOLVERS, solve

__all__ = ["SOLVERS", "BoundSource", "Bounds", "Lb3Method", "Result", "SolverParams", "Status",
           "bounds", "solve"]
