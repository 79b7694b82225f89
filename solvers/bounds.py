"""Lower bounds LB0-LB3 on the makespan (model.md §7), valid for every schedule.

- LB0: the all-reduce's bytes over the sum of the bandwidths (``ideal_ns``).
- LB1: the largest chunk alone on its best route (no waiting, no sharing).
- LB2: an LP over the fraction of chunks taking each route: every dimension
  must run the stages routed through it, so T >= load(d) (latency included).
- LB3: the same with integer route counts, plus, per dimension, the head and
  tail it cannot avoid: its first stage is some chunk's RS stage, which starts
  no earlier than that chunk's RS stages before it (minimum over the routes
  in use), and its last stage is some chunk's AG stage, after which that
  chunk's remaining AG stages still run (minimum over the AG orders in use).
  A chunk's whole chain also fits in T, for every route in use.

In the ``free`` AG variant the RS route and the AG order of a chunk are two
independent choices, so the LP/MILP counts them separately (any pair of
marginals can be realized), heads come from the RS routes and tails from the
AG orders.

LB2 and LB3 are solved with HiGHS (highspy); their values are multiplied by
``1 - SAFETY`` to absorb the solver's feasibility tolerances, and LB3 uses the
MIP's dual bound, never its incumbent, so a time-limited LB3 is still valid.
"""

from __future__ import annotations

import copy
import ctypes
import itertools
import math
import os
import sys
from dataclasses import asdict, dataclass, field

from solvers.common import ProblemData, check_ag_order
from themis.instance import Instance
from themis.metrics import ideal_ns

#: Relative safety margin on LP/MILP-based bounds (solver tolerances).
SAFETY = 1e-9
#: Absolute slack removed too (objective units: 1e-9 of the longest stage).
#: HiGHS agrees with an exhaustive search to ~1e-16 on these models.
ABS_SLACK = 1e-6

_HIGHS_QUIET = False


def new_highs():
    """A quiet ``highspy.Highs`` (the first one prints a banner on fd 1: hide it)."""
    global _HIGHS_QUIET
    import highspy

    if not _HIGHS_QUIET:
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            h = highspy.Highs()
            try:
                ctypes.CDLL(None).fflush(None)
            except (OSError, AttributeError):  # pragma: no cover - non-POSIX libc
                pass
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _HIGHS_QUIET = True
    else:
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


@dataclass(frozen=True)
class RouteCounts:
    """How many chunks of class k take RS route r / AG order q in the LB3 optimum."""

    rs: dict[tuple[int, int], int]
    ag: dict[tuple[int, int], int]


@dataclass(frozen=True)
class Bounds:
    """The four lower bounds (ns) and their maximum ``lb_ns``."""

    lb0_ns: float
    lb1_ns: float
    lb2_ns: float
    lb3_ns: float
    lb_ns: float
    ag_order: str = "reverse"
    #: The LB3 MILP's route counts (a seed for heuristics; not part of the bound).
    route_counts: RouteCounts | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (without the route counts)."""
        out = asdict(self)
        out.pop("route_counts", None)
        return out


class _Model:
    """A tiny column/row accumulator passed to HiGHS in one go."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[float, float, dict[int, float]]] = []

    def var(self, lb: float = 0.0, ub: float = float("inf"), cost: float = 0.0,
            integer: bool = False) -> int:
        self.cost.append(cost)
        self.lb.append(lb)
        self.ub.append(ub)
        if integer:
            self.integer.append(len(self.cost) - 1)
        return len(self.cost) - 1

    def row(self, lo: float, hi: float, coefs: dict[int, float]) -> None:
        self.rows.append((lo, hi, coefs))

    def solve(self, time_limit_s: float = 10.0) -> tuple[float, list[float] | None]:
        """Minimize; return the LP optimum or the MIP dual bound, and a solution."""
        import highspy
        import numpy as np

        h = new_highs()
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
            h.setOptionValue("mip_rel_gap", 0.0)
            h.setOptionValue("mip_abs_gap", 0.0)
        h.setOptionValue("time_limit", float(time_limit_s))
        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        sol = list(h.getSolution().col_value) if info.primal_solution_status == 2 else None
        if self.integer:
            bound = info.mip_dual_bound
            return (float(bound) if bound == bound and bound > -inf else 0.0), sol
        if status != highspy.HighsModelStatus.kOptimal:
            return 0.0, None
        return float(info.objective_function_value), sol


def _lb1(data: ProblemData) -> float:
    """Every chunk must run its whole chain: the longest of the shortest chains."""
    best = 0.0
    for k in range(len(data.classes)):
        if data.free:
            t = min(data.rs_chain(k, r) for r in range(len(data.perms))) + \
                min(data.ag_chain(k, q) for q in range(len(data.ag_perms)))
        else:
            t = min(data.rs_chain(k, r) + data.ag_chain(k, r) for r in range(len(data.perms)))
        best = max(best, t)
    return best


def _route_model(data: ProblemData, integer: bool, unit: float, floor: float = 0.0,
                 time_limit_s: float = 1.0) -> tuple[float, RouteCounts | None]:
    """LB2 (``integer=False``) or LB3 (``integer=True``) in ns, and the route counts."""
    m = _Model()
    t_var = m.var(cost=1.0)
    ncls = len(data.classes)
    nr, nq = len(data.perms), len(data.ag_perms)
    # Count variables: RS routes; in the free variant also AG orders.
    n_rs = {(k, r): m.var(0.0, data.class_count[k], integer=integer)
            for k in range(ncls) for r in range(nr)}
    n_ag = ({(k, q): m.var(0.0, data.class_count[k], integer=integer)
             for k in range(ncls) for q in range(nq)} if data.free else n_rs)
    for k in range(ncls):
        m.row(data.class_count[k], data.class_count[k], {n_rs[k, r]: 1.0 for r in range(nr)})
        if data.free:
            m.row(data.class_count[k], data.class_count[k],
                  {n_ag[k, q]: 1.0 for q in range(nq)})
    for d in data.dims:
        load: dict[int, float] = {t_var: 1.0}
        for (k, r), v in n_rs.items():
            load[v] = load.get(v, 0.0) - data.rs[k][r][d] / unit
        for (k, q), v in n_ag.items():
            load[v] = load.get(v, 0.0) - data.ag[k][q][d] / unit
        if integer:
            # Head: sorted candidate prefixes h_1 < h_2 < ...; the head is at least
            # h_j unless a route with a shorter prefix is used, i.e.
            # head >= sum_j (h_j - h_{j-1}) * max(0, 1 - sum_{i: h_i < h_j} n_i).
            # The tail is the same over AG orders and their suffixes.
            heads = {key: data.rs_prefix(key[0], key[1], d) for key in n_rs}
            tails = {key: data.ag_suffix(key[0], key[1], d) for key in n_ag}
            for values, counts in ((heads, n_rs), (tails, n_ag)):
                levels = sorted(set(values.values()))
                for lo, hi in itertools.pairwise(levels):
                    a = m.var(0.0, 1.0)
                    row = {a: 1.0}
                    for key, v in values.items():
                        if v <= lo:
                            row[counts[key]] = 1.0
                    m.row(1.0, float("inf"), row)
                    load[a] = load.get(a, 0.0) - (hi - lo) / unit
                if levels and levels[0] > 0:
                    load[t_var] = 1.0
                    # Every route's head is at least levels[0]: a constant term.
                    const = levels[0] / unit
                    c = m.var(const, const)
                    load[c] = -1.0
        m.row(0.0, float("inf"), load)
    if integer:
        # Every used route's chain fits: T >= chain * y, y = 1 if the route is used.
        min_rs = [min(data.rs_chain(k, r) for r in range(nr)) for k in range(ncls)]
        min_ag = [min(data.ag_chain(k, q) for q in range(nq)) for k in range(ncls)]
        # Only chains longer than ``floor`` (a bound T already meets) can bind.
        for (k, r), v in n_rs.items():
            chain = data.rs_chain(k, r) + (min_ag[k] if data.free else data.ag_chain(k, r))
            if chain <= floor:
                continue
            y = m.var(0.0, 1.0, integer=True)
            m.row(-float("inf"), 0.0, {v: 1.0, y: -float(data.class_count[k])})
            m.row(0.0, float("inf"), {t_var: 1.0, y: -chain / unit})
        if data.free:
            for (k, q), v in n_ag.items():
                if data.ag_chain(k, q) + min_rs[k] <= floor:
                    continue
                y = m.var(0.0, 1.0, integer=True)
                m.row(-float("inf"), 0.0, {v: 1.0, y: -float(data.class_count[k])})
                m.row(0.0, float("inf"),
                      {t_var: 1.0, y: -(data.ag_chain(k, q) + min_rs[k]) / unit})
    # HiGHS's optimality tests have absolute tolerances around 1e-6 in objective
    # units: ``unit`` keeps objectives in the thousands (callers apply SAFETY).
    value, sol = m.solve(time_limit_s)
    counts = None
    if sol is not None and integer:
        counts = RouteCounts(
            {key: int(round(sol[v])) for key, v in n_rs.items()},
            {key: int(round(sol[v])) for key, v in n_ag.items()},
        )
    return max(0.0, value * unit), counts


def _safe(value: float, unit: float) -> float:
    return max(0.0, (value - ABS_SLACK * unit) * (1.0 - SAFETY))


def bounds(instance: Instance, ag_order: str = "reverse", time_limit_s: float = 0.5,
           data: ProblemData | None = None) -> Bounds:
    """LB0-LB3 of ``instance`` for the ``ag_order`` variant (see module docstring).

    ``time_limit_s`` caps the LB3 MILP; when it stops early, LB3 is its dual
    bound (still valid, possibly weaker). ``data`` reuses a prepared
    :class:`~solvers.common.ProblemData`.
    """
    check_ag_order(ag_order)
    if data is None or data.ag_order != ag_order:
        data = ProblemData(instance, ag_order)
    lb0 = ideal_ns(instance.network, [instance.collective])
    lb1 = _lb1(data)
    unit = (data.max_duration_ns or 1.0) / 1000.0
    lb2 = _safe(_route_model(data, integer=False, unit=unit)[0], unit)
    raw3, counts = _route_model(data, integer=True, unit=unit, floor=lb2,
                                time_limit_s=time_limit_s)
    lb3 = max(_safe(raw3, unit), lb2)
    return Bounds(lb0, lb1, lb2, lb3, max(lb0, lb1, lb2, lb3), ag_order, counts)


def scaled_lb_ticks(data: ProblemData, p_rs: list, p_ag: list, time_limit_s: float = 1.0) -> int:
    """LB1/LB3 of the integer-scaled model whose durations are ``p_rs``/``p_ag`` ticks.

    All its durations are whole ticks, so its LB3 optimum is an integer: the
    HiGHS value is rounded up after removing a small tolerance.
    """
    scaled = copy.copy(data)
    scaled.rs = [[{d: float(v) for d, v in row.items()} for row in k] for k in p_rs]
    scaled.ag = [[{d: float(v) for d, v in row.items()} for row in k] for k in p_ag]
    scaled.__dict__.pop("max_duration_ns", None)
    unit = max(1.0, scaled.max_duration_ns / 1000.0)
    lb1 = _lb1(scaled)
    lb3, _ = _route_model(scaled, integer=True, unit=unit, floor=lb1,
                          time_limit_s=time_limit_s)
    return max(int(round(lb1)), math.ceil(lb3 - 1e-3))
