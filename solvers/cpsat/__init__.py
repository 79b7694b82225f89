"""The CP-SAT backend (OR-Tools), registered as ``cpsat``.

PyJobShop's shape: :mod:`~solvers.cpsat.variables`, :mod:`~solvers.cpsat.constraints`,
:mod:`~solvers.cpsat.objective`, :mod:`~solvers.cpsat.hint` and
:mod:`~solvers.cpsat.solve` (parameters, phases, answer); integer scaling in
:mod:`~solvers.cpsat.scaling`. OR-Tools is imported only when a model is built.
"""

from solvers.backend import register_backend
from solvers.cpsat.solve import check_size, solve_cpsat

register_backend("cpsat", check_size, "deterministic_time_s")(solve_cpsat)

__all__ = ["solve_cpsat"]
