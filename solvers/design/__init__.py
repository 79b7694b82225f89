"""Network design: per-dimension bandwidth under a budget, for the scheduler that will run.

Two pieces. The **fluid** closed form (LIBRA's model of an all-reduce in the baseline schedule:
fixed ascending dimension order, perfect pipelining, no latency, negligible fill): dimension
``d`` carries ``T_d`` bytes per NPU and the collective ends at ``max_d T_d / B_d``; under
``sum_d c_d B_d = budget`` the optimum is ``B_d = budget * T_d / sum_j c_j T_j`` with time
``sum_j c_j T_j / budget``. A total-bandwidth budget is the case ``c_d = 1``.

The **search** (:func:`design`): a workload is a weighted mix of collectives, each over its
own dimensions (a LIBRA communicator: a group size per dimension), and its time under a
policy is ``sum_i w_i T_i(B)``, each collective run alone (LIBRA sums a training loop's
collectives the same way). ``T_i`` is the simulated makespan under a registered policy
(alpha-beta timing, the network's latencies), the route-LP lower bound (``bound``: no
scheduler beats it on that network), or the fluid fixed-order time (``libra``). The search
is a deterministic pattern search on the budget: move a share of the budget from one
dimension to another, keep the best move, halve the share when none improves; it starts
from the best of the even split, LIBRA's design and the bound's design (and any design
given), so the result is never worse than any of them under the policy it is made for.

The package: :mod:`.fluid` (the closed form), :mod:`.problem` (what a design is scored
on), :mod:`.search` (starts and the pattern search), :mod:`.study` (every scheduler, the
regret table).
"""

from __future__ import annotations

from solvers.design.fluid import FluidDesign, all_reduce_traffic_bytes, fluid_design, fluid_time_ns
from solvers.design.problem import (
    BOUND,
    DEFAULT_EVALUATIONS,
    LIBRA,
    MIN_MOVE_SHARE,
    DesignEvaluator,
    DesignItem,
    DesignProblem,
    TraceSpec,
    TrainingSpec,
    design_policy_names,
    workload_items,
)
from solvers.design.search import (
    ROUTE_STARTS_MAX_DIMS,
    SEARCH_STARTS,
    Design,
    Objective,
    design,
    even_split,
    lattice_designs,
    libra_design,
    route_designs,
)
from solvers.design.study import DesignStudy, RegretTable, design_study, regret_table

__all__ = ["BOUND", "DEFAULT_EVALUATIONS", "Design", "DesignEvaluator", "DesignItem",
           "DesignProblem", "DesignStudy", "FluidDesign", "LIBRA", "MIN_MOVE_SHARE",
           "Objective", "ROUTE_STARTS_MAX_DIMS", "RegretTable", "SEARCH_STARTS",
           "TraceSpec", "TrainingSpec", "all_reduce_traffic_bytes", "design",
           "design_policy_names", "design_study", "even_split", "fluid_design",
           "fluid_time_ns", "lattice_designs", "libra_design", "regret_table",
           "route_designs", "workload_items"]
