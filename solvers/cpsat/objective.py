"""CP-SAT objective: minimize the makespan, bounded by the hint and the lower bounds.

The makespan lies in [lb_ticks, horizon]: the horizon is the hint's makespan
in ticks (or a sum of the longest durations without a hint); lb_ticks the
largest of our exact lower bound rounded *up* to ticks and, on a rounded grid
with ``scaled_bound``, LB1/LB3 of the scaled model itself (deterministic work
limit, see :func:`solvers.bounds.scaled_lb_ticks`).

Rounding the bound up is valid on every grid: the scaled durations are the
exact ones or rounded up, so the scaled optimum is at least the exact one, at
least LB; and the model's makespan is a whole number of ticks (on an exact
grid a semi-active makespan is a sum of durations). So CP-SAT stops the moment
it meets LB3.
"""

from __future__ import annotations

import math

from solvers.bounds import scaled_lb_ticks
from solvers.common import ProblemData
from solvers.cpsat.scaling import Scaled
from solvers.cpsat.variables import Variables

#: Node limit of the scaled model's LB3 (a helper bound: kept cheap, deterministic).
SCALED_LB3_NODES = 200
#: Floating-point noise (ticks) ignored when the lower bound is rounded up to ticks
#: (our bounds are already lowered by their solvers' tolerances, ~1e-9 relative).
LB_NOISE_TICKS = 1e-6


def horizon_ticks(data: ProblemData, scaled: Scaled, hint_ub: int | None) -> int:
    """The latest time any stage may end."""
    if hint_ub is not None:
        return hint_ub
    longest = 0
    for c in range(data.nchunks):
        k = data.class_of[c]
        for part in (scaled.p_rs, scaled.p_ag):
            longest += max(max(row.values()) for row in part[k])
    return longest * len(data.dims)


def lower_bound_ticks(data: ProblemData, scaled: Scaled, lower_bound_ns: float,
                      scaled_bound: bool, horizon: int, safety_s: float) -> int:
    """The makespan's lower bound in ticks (never above the horizon).

    ``safety_s`` is the scaled LB3's wall-clock safety net (then it gives LB1).
    """
    lb = max(0, math.ceil(lower_bound_ns / scaled.tick_ns - LB_NOISE_TICKS))
    if scaled_bound and not scaled.exact:
        lb = max(lb, scaled_lb_ticks(data, scaled.p_rs, scaled.p_ag, SCALED_LB3_NODES,
                                     safety_s))
    return min(lb, horizon)


def minimize_makespan(m, v: Variables) -> None:
    """The objective."""
    m.minimize(v.makespan)
