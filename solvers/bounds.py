"""Lower bounds LB0-LB3 on the makespan (model.md §7), each valid for one AG variant.

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
AG orders. A bound of one variant is not a bound of the other: a reverse
bound may exceed the free optimum (score each variant against its own).

LB2 and LB3 are solved with HiGHS (highspy); their values are multiplied by
``1 - SAFETY`` to absorb the solver's feasibility tolerances. LB3 is the MIP's
dual bound, never its incumbent, after at most ``LB3_NODE_LIMIT``
branch-and-bound nodes: a deterministic work limit, so LB3 is the same number
on any machine and load. Only if the MIP also hits the safety wall-clock limit
``LB3_SAFETY_S`` (or fails) does LB3 fall back, deterministically, to LB2.
``Bounds.lb3_method`` records which: ``optimal``, ``node-limit`` or ``lp``.
"""

from __future__ import annotations

import copy
import enum
import math
from dataclasses import asdict, dataclass, field

from solvers.common import ProblemData, check_ag_order
from solvers.highs_model import LinearModel, new_highs
from solvers.params import LB3_NODE_LIMIT
from themis.instance import Instance
from themis.metrics import ideal_ns
from themis.route_model import chain_rows, used_min

__all__ = ["LB3_NODE_LIMIT", "Bounds", "Lb3Method", "RouteCounts", "bounds", "lp_bound_ns",
           "new_highs", "scaled_lb_ticks"]

#: Relative safety margin on LP/MILP-based bounds (solver tolerances).
SAFETY = 1e-9
#: Absolute slack removed too (objective units: 1e-9 of the longest stage).
#: HiGHS agrees with an exhaustive search to ~1e-16 on these models.
ABS_SLACK = 1e-6
#: Wall-clock safety net of the LB3 MIP; hitting it makes LB3 fall back to LB2.
LB3_SAFETY_S = 120.0


class Lb3Method(enum.StrEnum):
    """How LB3 was obtained (all deterministic)."""

    OPTIMAL = "optimal"        # the MIP solved to optimality
    NODE_LIMIT = "node-limit"  # the MIP's dual bound after LB3_NODE_LIMIT nodes
    LP = "lp"                  # fallback: LB2 (the MIP hit the safety limit or failed)


@dataclass(frozen=True)
class RouteCounts:
    """How many chunks of class k take RS route r / AG order q in the LB3 solution."""

    rs: dict[tuple[int, int], int]
    ag: dict[tuple[int, int], int]


@dataclass(frozen=True)
class Bounds:
    """The four lower bounds (ns) of one AG variant and their maximum ``lb_ns``."""

    lb0_ns: float
    lb1_ns: float
    lb2_ns: float
    lb3_ns: float
    lb_ns: float
    ag_order: str = "reverse"
    lb3_method: str = Lb3Method.OPTIMAL
    lb3_nodes: int = 0
    #: The LB3 MILP's route counts (a seed for heuristics; not part of the bound).
    route_counts: RouteCounts | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (without the route counts; ``lb_ns`` is printed as
        ``lower_bound_ns``, the name every command uses)."""
        out = asdict(self)
        out.pop("route_counts", None)
        out = {("lower_bound_ns" if k == "lb_ns" else k): v for k, v in out.items()}
        out["lb3_method"] = str(self.lb3_method)
        return out


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


def _loads(data: ProblemData, n_rs: dict, n_ag: dict, d: int, unit: float) -> dict[int, float]:
    """Coefficients of the work routed through ``d`` (its stages' durations)."""
    load: dict[int, float] = {}
    for (k, r), v in n_rs.items():
        load[v] = load.get(v, 0.0) + data.rs[k][r][d] / unit
    for (k, q), v in n_ag.items():
        load[v] = load.get(v, 0.0) + data.ag[k][q][d] / unit
    return load


def _unavoidable_head_tail(m: LinearModel, load: dict[int, float], heads: dict,
                           tails: dict, n_rs: dict, n_ag: dict, unit: float) -> None:
    """Add to ``load`` the head and tail of a dimension (see the module docstring):
    the smallest RS prefix over the RS routes in use, the smallest AG suffix over the
    AG orders in use (:func:`themis.route_model.used_min`)."""
    for values, counts in ((heads, n_rs), (tails, n_ag)):
        const, terms = used_min(m, values, counts, unit)
        for a, coef in terms.items():
            load[a] = load.get(a, 0.0) + coef
        if const > 0:  # every route's head is at least the smallest one
            c = m.var(const, const)
            load[c] = 1.0


def _chain_rows(m: LinearModel, data: ProblemData, t_var: int, n_rs: dict, n_ag: dict,
                unit: float, floor: float) -> None:
    """Every used route's chain fits: T >= chain * y, y = 1 if the route is used."""
    ncls = len(data.classes)
    nr, nq = len(data.perms), len(data.ag_perms)
    min_rs = [min(data.rs_chain(k, r) for r in range(nr)) for k in range(ncls)]
    min_ag = [min(data.ag_chain(k, q) for q in range(nq)) for k in range(ncls)]
    chains = [(v, data.class_count[k], data.rs_chain(k, r)
               + (min_ag[k] if data.free else data.ag_chain(k, r))) for (k, r), v in n_rs.items()]
    if data.free:
        chains += [(v, data.class_count[k], data.ag_chain(k, q) + min_rs[k])
                   for (k, q), v in n_ag.items()]
    chain_rows(m, t_var, chains, unit, floor)


@dataclass(frozen=True)
class _RouteBound:
    value_ns: float
    counts: RouteCounts | None
    stop: str
    nodes: int


def _route_model(data: ProblemData, integer: bool, unit: float, floor: float = 0.0,
                 node_limit: int | None = LB3_NODE_LIMIT,
                 safety_s: float = LB3_SAFETY_S) -> _RouteBound:
    """LB2 (``integer=False``) or LB3 (``integer=True``) in ns, and the route counts."""
    m = LinearModel()
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
        load = _loads(data, n_rs, n_ag, d, unit)
        if integer:
            heads = {key: data.rs_prefix(key[0], key[1], d) for key in n_rs}
            tails = {key: data.ag_suffix(key[0], key[1], d) for key in n_ag}
            _unavoidable_head_tail(m, load, heads, tails, n_rs, n_ag, unit)
        row = {v: -c for v, c in load.items()}
        row[t_var] = 1.0
        m.row(0.0, float("inf"), row)
    if integer:
        _chain_rows(m, data, t_var, n_rs, n_ag, unit, floor)
    # HiGHS's optimality tests have absolute tolerances around 1e-6 in objective
    # units: ``unit`` keeps objectives in the thousands (callers apply SAFETY).
    solved = m.solve(node_limit if integer else None, safety_s)
    counts = None
    if solved.solution is not None and integer:
        sol = solved.solution
        counts = RouteCounts(
            {key: int(round(sol[v])) for key, v in n_rs.items()},
            {key: int(round(sol[v])) for key, v in n_ag.items()},
        )
    return _RouteBound(max(0.0, solved.value * unit), counts, solved.stop, solved.nodes)


def _safe(value: float, unit: float) -> float:
    return max(0.0, (value - ABS_SLACK * unit) * (1.0 - SAFETY))


def bounds(instance: Instance, ag_order: str = "reverse", data: ProblemData | None = None,
           node_limit: int = LB3_NODE_LIMIT, safety_s: float = LB3_SAFETY_S) -> Bounds:
    """LB0-LB3 of ``instance`` for the ``ag_order`` variant (see the module docstring).

    Each bound is valid for that AG variant only. ``node_limit`` is the LB3
    MIP's deterministic work limit (its dual bound is LB3 when it stops
    there); ``safety_s`` a wall-clock safety net after which LB3 falls back to
    LB2 (``lb3_method="lp"``). ``data`` reuses a prepared
    :class:`~solvers.common.ProblemData`.
    """
    check_ag_order(ag_order)
    if data is None or data.ag_order != ag_order:
        data = ProblemData(instance, ag_order)
    lb0 = ideal_ns(instance.network, [instance.collective])
    lb1 = _lb1(data)
    unit = (data.max_duration_ns or 1.0) / 1000.0
    lb2 = _safe(_route_model(data, integer=False, unit=unit).value_ns, unit)
    mip = _route_model(data, integer=True, unit=unit, floor=lb2, node_limit=node_limit,
                       safety_s=safety_s)
    if mip.stop in ("wall", "failed"):
        lb3, method = lb2, Lb3Method.LP
    else:
        lb3 = max(_safe(mip.value_ns, unit), lb2)
        method = Lb3Method.OPTIMAL if mip.stop == "optimal" else Lb3Method.NODE_LIMIT
    return Bounds(lb0, lb1, lb2, lb3, max(lb0, lb1, lb2, lb3), ag_order, method, mip.nodes,
                  mip.counts)


def lp_bound_ns(instance: Instance, ag_order: str = "reverse") -> float:
    """max(LB0, LB1, LB2) of ``instance``: the bounds without the LB3 MIP (about a
    millisecond on a 4-D network, where LB3 takes a second), for searches that
    evaluate many networks (``themis design --policy bound``)."""
    check_ag_order(ag_order)
    data = ProblemData(instance, ag_order)
    unit = (data.max_duration_ns or 1.0) / 1000.0
    lb2 = _safe(_route_model(data, integer=False, unit=unit).value_ns, unit)
    return max(ideal_ns(instance.network, [instance.collective]), _lb1(data), lb2)


def scaled_lb_ticks(data: ProblemData, p_rs: list, p_ag: list,
                    node_limit: int = LB3_NODE_LIMIT, safety_s: float = LB3_SAFETY_S) -> int:
    """LB1/LB3 of the integer-scaled model whose durations are ``p_rs``/``p_ag`` ticks.

    All its durations are whole ticks, so its LB3 optimum is an integer: the
    HiGHS value is rounded up after removing a small tolerance. A MIP stopped
    by the safety wall clock gives LB1 only (deterministic).
    """
    scaled = copy.copy(data)
    scaled.rs = [[{d: float(v) for d, v in row.items()} for row in k] for k in p_rs]
    scaled.ag = [[{d: float(v) for d, v in row.items()} for row in k] for k in p_ag]
    scaled.__dict__.pop("max_duration_ns", None)
    unit = max(1.0, scaled.max_duration_ns / 1000.0)
    lb1 = _lb1(scaled)
    mip = _route_model(scaled, integer=True, unit=unit, floor=lb1, node_limit=node_limit,
                       safety_s=safety_s)
    if mip.stop in ("wall", "failed"):
        return int(round(lb1))
    return max(int(round(lb1)), math.ceil(mip.value_ns - 1e-3))
