"""The MILP warm start: every variable's initial value from the hint's exact times.

The hint's stage times are those of its schedule (a simulation or the
caller's checked schedule), under the chunk relabeling the symmetry breaking
needs; nothing is re-timed here.
"""

from __future__ import annotations

import math

from solvers.common import ProblemData
from solvers.hints import Hint
from solvers.milp.variables import MilpVars


def warm_start(data: ProblemData, hint: Hint, v: MilpVars, unit: float) -> None:
    """Set the initial values of ``v`` from ``hint``."""
    a = hint.assignment
    start = {key: t[0] / unit for key, t in hint.times_ns.items()}
    for (c, r), var in v.x.items():
        var.setInitialValue(1 if a.route[c] == r else 0)
    if data.free:
        for (c, q), var in v.y.items():
            var.setInitialValue(1 if a.ag[c] == q else 0)
    for key, var in v.s.items():
        var.setInitialValue(start[key])
    for c, var in v.done.items():
        var.setInitialValue(max(hint.times_ns[c, "RS", d][1] for d in data.dims) / unit)
    t = hint.makespan_ns / unit
    v.T.setInitialValue(math.ceil(t - 1e-6) if v.T.cat == "Integer" else t)
    for (ka, kb), var in v.order.items():
        var.setInitialValue(1 if start[ka] < start[kb] else 0)
