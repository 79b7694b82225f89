"""Exact chunk-to-dimension scheduling (model.md §7): CP-SAT, MILPs, lower bounds.

``solve(instance, solver, params=SolverParams(...),
bounds=..., hint=...)`` returns a :class:`Result` whose schedule was re-timed
by the simulator and checked by :mod:`themis.checker`; ``bounds(instance,
ag_order)`` gives LB0-LB3 of one AG variant; ``backend_names()`` the solver
names (the registry: ``cpsat``, ``cbc``, ``highs`` and any registered later).
"""

from solvers.bounds import Bounds, Lb3Method, bounds
from solvers.params import SolverParams
from solvers.registry import backend_names
from solvers.result import BoundSource, Result, Status
from solvers.solve import solve

__all__ = ["BoundSource", "Bounds", "Lb3Method", "Result", "SolverParams", "Status",
           "backend_names", "bounds", "solve"]
