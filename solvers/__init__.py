"""Exact chunk-to-dimension scheduling (model.md §7): CP-SAT, MILPs, lower bounds.

``solve(instance, solver="cpsat"|"cbc"|"highs", ...)`` returns a
:class:`Result` whose schedule was re-timed by the simulator and checked by
:mod:`themis.checker`; ``bounds(instance)`` gives LB0-LB3.
"""

from solvers.bounds import Bounds, bounds
from solvers.result import Result
from solvers.solve import SOLVERS, solve

__all__ = ["SOLVERS", "Bounds", "Result", "bounds", "solve"]
