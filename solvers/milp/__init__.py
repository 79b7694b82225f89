"""The MILP backends (PuLP), registered as ``cbc`` and ``highs``.

PyJobShop's shape: :mod:`~solvers.milp.variables`, :mod:`~solvers.milp.constraints`,
:mod:`~solvers.milp.warm_start`, :mod:`~solvers.milp.solve` (build, run, answer)
and one file per backend (:mod:`~solvers.milp.cbc`, :mod:`~solvers.milp.highs`).
PuLP and HiGHS are imported only when a model is built.
"""

from solvers.backend import Problem, register_backend
from solvers.milp.cbc import run_cbc
from solvers.milp.highs import run_highs
from solvers.milp.solve import check_size, solve_milp
from solvers.result import RawSolution


@register_backend("cbc", check_size, "node_limit")
def solve_cbc(problem: Problem) -> RawSolution:
    """The MILP solved by CBC."""
    return solve_milp(problem, run_cbc)


@register_backend("highs", check_size, "node_limit")
def solve_highs(problem: Problem) -> RawSolution:
    """The MILP solved by HiGHS."""
    return solve_milp(problem, run_highs, use_grid=True)
