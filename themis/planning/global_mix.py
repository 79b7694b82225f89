"""``global-mix``: one route mix for the whole iteration, from the window LP of the bound.

An online router sees only the work already issued; the last collectives of
an iteration (often many small, latency-bound ones that load every dimension
alike) are not known when the large early ones are routed. This planner
routes every collective at once with the window LP of
:mod:`themis.training.bound` (its step 3, with one count column per collective
instead of per replayed issue time): every collective's chunks take
alternatives (routes and plan shapes the run can execute) so that, for every
threshold tau of the replayed earliest issue times, the work of the
collectives issued after tau fits on every dimension after the head and
before the tail no chunk avoids.

1. minimise ``M >= M_tau`` (the bound's LP: ``M_tau >= tau + head_d + load_d / k
   + tail_d + u_d`` for every dimension d, the loads of the collectives after
   tau);
2. with ``M`` held at its optimum, minimise ``sum_tau M_tau``: every later
   window as short as it can be too (the LP has many optima; this picks the
   one that also leaves the least for each suffix of the iteration).

Each collective's counts are integerized and laid out over its chunks as
``online-mix`` does (:func:`themis.training.online_mix.integer_counts`,
:func:`~themis.training.online_mix.interleaved`); the plans are then
simulated once with the run's discipline (``simulate_training(plans=...)``).

``global-online`` uses the same plans as a forecast only: each collective is
routed at its issue by ``online-mix``, counting as in flight the work still in
flight *plus* the work the plans give every collective issued after it (so
the early collectives leave room for the late ones, and every routing still
sees where the run really is).

Deterministic: LPs solved to optimality by HiGHS, no wall-clock limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from themis.highs import LinearModel
from themis.plans import Plan
from themis.route_model import count_vars
from themis.training.bound import Replayed, WindowBound, replay_issues
from themis.training.compile10 import compile_workload
from themis.training.config import TrainingConfig, TrainingResult
from themis.training.online_mix import OnlineMix, integer_counts, interleaved, options
from themis.training.routing import register_iteration_planner
from themis.training.simulate import prepare, simulate_training
from topologies.network import Network
from topologies.workload import Workload

#: One option of a chunk: its busy, byte, head and tail ns per dimension.
_Option = tuple[dict[int, float], dict[int, float], dict[int, float], dict[int, float]]

NAME = "global-mix"
ONLINE = "global-online"
#: Relative slack on M when the windows' sum is minimised (LP tolerances).
M_SLACK = 1e-9


def global_plans(workload: Workload, network: Network, cfg: TrainingConfig) -> list[list[Plan]]:
    """Every collective's chunk plans (issue order) from the two LPs of the module
    docstring, under ``cfg``'s timing, chunks and k."""
    return _plans(workload, network, cfg)[0]


def forecast_ns(workload: Workload, network: Network, cfg: TrainingConfig
                ) -> list[list[float]]:
    """Per collective (issue order), per dimension: the ns of work the
    :func:`global_plans` give every collective issued after it."""
    plans, issued, bound, ndims = _plans(workload, network, cfg)
    acc = [0.0] * ndims
    out: list[list[float]] = []
    for rep, cplans in zip(reversed(issued), reversed(plans), strict=True):
        out.append(list(acc))
        for plan, size in zip(cplans, rep.sizes, strict=True):
            for d, t, _ in bound.alts.steps(rep.kind, plan, float(size)):
                acc[d] += t
    out.reverse()
    return out


def _plans(workload: Workload, network: Network, cfg: TrainingConfig
           ) -> tuple[list[list[Plan]], list[Replayed], WindowBound, int]:
    wl, lnet, b, timings, law = prepare(workload, network, cfg)
    issued, _, bound = replay_issues(compile_workload(wl, lnet, b, cfg), lnet, cfg, timings,
                                     law)
    if not issued:
        return [], issued, bound, lnet.ndims
    fracs = _solve(issued, bound)
    out: list[list[Plan]] = []
    for rep, frac in zip(issued, fracs, strict=True):
        opts = options(bound.alts, rep.kind, rep.dims)
        classes = list(dict.fromkeys(rep.sizes))
        counts = [rep.sizes.count(s) for s in classes]
        loads = [[_busy(bound, rep, p, s) for _, p in opts] for s in classes]
        ints = integer_counts(frac, counts, loads, dict.fromkeys(rep.dims, 0.0), bound.k)
        seqs = [iter(interleaved(row)) for row in ints]
        index = {s: i for i, s in enumerate(classes)}
        out.append([opts[next(seqs[index[s]])][1] for s in rep.sizes])
    return out, issued, bound, lnet.ndims


def _busy(bound: WindowBound, rep: Replayed, plan: Plan, size: int) -> dict[int, float]:
    load = dict.fromkeys(rep.dims, 0.0)
    for d, t, _ in bound.alts.steps(rep.kind, plan, float(size)):
        load[d] += t
    return load


def _solve(issued: list[Replayed], bound: WindowBound) -> list[list[list[float]]]:
    """Fractional counts per collective, size class and option (the two LPs)."""
    alts, k = bound.alts, bound.k
    fields = bound.fields
    # Per collective and size class: each option's (load, byte, head, tail) per dimension.
    table: list[list[list[_Option]]] = []
    counts: list[list[int]] = []
    for rep in issued:
        classes = list(dict.fromkeys(rep.sizes))
        counts.append([rep.sizes.count(s) for s in classes])
        per: list[list[_Option]] = []
        for s in classes:
            opt_row = []
            for _, plan in options(alts, rep.kind, rep.dims):
                alt = alts.measure(rep.kind, rep.dims, plan, float(s))
                opt_row.append((alt.load_ns, alt.byte_ns, alt.head_ns, alt.tail_ns))
            per.append(opt_row)
        table.append(per)
    unit = max(max(max(v for v in o[0].values()) for row in per for o in row)
               for per in table) / 100.0 or 1.0
    taus = sorted({rep.e_ns for rep in issued}, reverse=True)
    peak = 0.0
    sol: list[list[list[float]]] | None = None
    for phase in ("peak", "windows"):
        m = LinearModel()
        m_var = m.var(cost=1.0 if phase == "peak" else 0.0)
        if phase == "windows":
            m.row(-math.inf, peak * (1 + M_SLACK) + 1e-9, {m_var: 1.0})
        cols: list[dict[tuple[int, int], int]] = [{} for _ in issued]
        cum: dict[tuple[int, str], int] = {}
        head: dict[int, float] = {}
        tail: dict[int, float] = {}
        least_u: dict[int, float] = {}
        for tau in taus:
            members = [c for c, rep in enumerate(issued) if rep.e_ns == tau]
            for c in members:
                keys = [(s, a) for s, orow in enumerate(table[c]) for a in range(len(orow))]
                cols[c] = count_vars(m, keys, dict(enumerate(counts[c])), integer=False)
                for d in issued[c].dims:
                    least_u[d] = min(least_u.get(d, math.inf), issued[c].update_ns)
                    for orow in table[c]:
                        for o in orow:
                            head[d] = min(head.get(d, math.inf), o[2][d])
                            tail[d] = min(tail.get(d, math.inf), o[3][d])
            m_tau = m.var(cost=1.0 if phase == "windows" else 0.0)
            m.row(0.0, math.inf, {m_var: 1.0, m_tau: -1.0})
            for d in sorted(least_u):
                for f, field in enumerate(fields):
                    new = m.var()
                    row: dict[int, float] = {new: 1.0}
                    if (d, field) in cum:
                        row[cum[d, field]] = -1.0
                    for c in members:
                        if d not in issued[c].dims:
                            continue
                        for (s, a), v in cols[c].items():
                            o = table[c][s][a]
                            coef = o[0][d] / k if f == 0 else o[1][d]
                            if coef:
                                row[v] = row.get(v, 0.0) - coef / unit
                    m.row(0.0, 0.0, row)
                    cum[d, field] = new
                    const = (tau + head[d] + tail[d] + least_u[d]) / unit
                    m.row(const, math.inf, {m_tau: 1.0, new: -1.0})
        solved = m.solve()
        if solved.stop != "optimal" or solved.solution is None:
            break
        x = solved.solution
        peak = x[m_var]
        sol = [[[x[cols[c][s, a]] for a in range(len(row))] for s, row in enumerate(table[c])]
               for c in range(len(issued))]
    if sol is None:  # no LP answer: every chunk on its first option
        return [[[float(n)] + [0.0] * (len(row) - 1) for n, row in zip(counts[c], table[c],
                                                                       strict=True)]
                for c in range(len(issued))]
    return sol


@register_iteration_planner(NAME)
def global_mix(workload: Workload, network: Network, config: TrainingConfig,
               bound: bool = True, progress: Callable[[int, int, int], None] | None = None
               ) -> TrainingResult:
    """The iteration with :func:`global_plans` under ``config``'s discipline."""
    plans = global_plans(workload, network, config)
    res = simulate_training(workload, network, config, bound=bound, progress=progress,
                            plans=plans)
    res.config = replace(res.config, policy=NAME)
    if res.schedule is not None:
        res.schedule.meta["policy"] = NAME
    return res


@register_iteration_planner(ONLINE)
def global_online(workload: Workload, network: Network, config: TrainingConfig,
                  bound: bool = True, progress: Callable[[int, int, int], None] | None = None
                  ) -> TrainingResult:
    """The iteration routed by ``online-mix`` with the :func:`forecast_ns` of the later
    collectives counted as in flight (see the module docstring)."""
    future = forecast_ns(workload, network, config)
    res = simulate_training(workload, network, config, bound=bound, progress=progress,
                            router=partial(OnlineMix, future_ns=future))
    res.config = replace(res.config, policy=ONLINE)
    if res.schedule is not None:
        res.schedule.meta["policy"] = ONLINE
    return res
