"""``online-mix``: at each issue, a route-mix LP against the work still in flight.

When a collective is issued, every dimension still has work of earlier
collectives ahead of it: queued, running and future stages of chunks already
issued, in ns (each stage's duration as it runs alone; a running stage the part
still ahead, read from the :class:`~themis.engine.Engine`'s stage table). The
router chooses how many of the collective's chunks of each size take each
*alternative* (a route and plan shape the run can execute: every permutation of
the collective's dimensions, RS-AG and, under ``astra-sim-1.0``, ASTRA's
all-reduce shape) with the route-count model (:mod:`themis.route_model`) on
HiGHS (:mod:`themis.highs`):

1. minimise the peak ``P >= (W_d + sum_a x_a load_d(a)) / k`` over the
   collective's dimensions d (``W_d`` the work in flight on d);
2. with ``P`` held at its optimum, minimise the total work ``sum_a x_a sum_d
   load_d(a)`` (no more busy time than the peak needs).

The counts are integerized deterministically: each count rounded down, then
each remaining chunk (size classes in order) takes the alternative that keeps
the projected peak lowest (then the least total work, then the first in
enumeration order); alternatives that load every dimension alike share their
group's count evenly (the same to every load, but their chunks end on
different dimensions, so they drain in parallel); the counts are laid out over
the chunks by proportional interleaving, the most used alternative first. No wall-clock limit: HiGHS
solves an LP to optimality.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from themis.engine import Engine
from themis.highs import LinearModel
from themis.plans import Plan, PlanShape
from themis.policies.route_mix import interleave
from themis.route_model import count_vars
from themis.runkind import RunKind
from themis.training.bound import Alternatives
from themis.training.planner import route_of
from themis.training.routing import Route, register_router
from topologies.network import Network

#: Relative slack on the peak when the total is minimised (LP tolerances).
PEAK_SLACK = 1e-9
#: Alternatives whose per-dimension loads agree to this fraction of the largest are alike.
SAME_LOAD = 1e-3


def options(alts: Alternatives, kind: str, dims: tuple[int, ...]) -> list[tuple[Route, Plan]]:
    """Every distinct stage plan of a chunk over ``dims`` with its route, in
    :meth:`Alternatives.plans` order (routes in permutation order, then plan shapes)."""
    return [(route_of(kind, p), p) for p in alts.plans(kind, dims)]


def inflight_ns(engine: Engine, now: float, first: int = 0) -> tuple[list[float], int]:
    """Per dimension, the ns of stages (from stage id ``first`` on) that have not ended
    at ``now``: queued and future stages whole, running ones the part still ahead.
    Also the first stage id that has not ended (the next call's ``first``)."""
    table = engine.table
    dim, dur, start, end = table.dim, table.duration_ns, engine.start, engine.end
    out = [0.0] * engine.ndims
    n = len(dur)
    while first < n and end[first] >= 0:
        first += 1
    for sid in range(first, n):
        if end[sid] >= 0:
            continue
        s = start[sid]
        out[dim[sid]] += dur[sid] if s < 0 else max(0.0, s + dur[sid] - now)
    return out, first


def integer_counts(frac: Sequence[Sequence[float]], counts: Sequence[int],
                   loads: Sequence[Sequence[dict[int, float]]], base: dict[int, float],
                   k: int) -> list[list[int]]:
    """Integer counts per size class and alternative: ``frac`` rounded down, then each
    remaining chunk on the alternative with the lowest projected peak, the least
    total work, the first index (see the module docstring)."""
    out = [[int(math.floor(v + 1e-9)) for v in row] for row in frac]
    for s, row in enumerate(out):
        while sum(row) > counts[s]:  # solver noise above the count: trim the largest
            row[max(range(len(row)), key=lambda a: (row[a], -a))] -= 1
    level = dict(base)
    for s, row in enumerate(out):
        for a, c in enumerate(row):
            for d, t in loads[s][a].items():
                level[d] += c * t / k
    for s, row in enumerate(out):
        for _ in range(counts[s] - sum(row)):
            best, key = 0, (math.inf, math.inf)
            for a, load in enumerate(loads[s]):
                peak = max(level[d] + load.get(d, 0.0) / k for d in level)
                cand = (round(peak, 6), round(sum(load.values()), 6))
                if cand < key:
                    best, key = a, cand
            row[best] += 1
            for d, t in loads[s][best].items():
                level[d] += t / k
    return [spread(row, loads[s]) for s, row in enumerate(out)]


def spread(row: Sequence[int], loads: Sequence[dict[int, float]]) -> list[int]:
    """``row``'s counts with every group of alternatives that load each dimension alike
    (within :data:`SAME_LOAD` of the largest load) sharing its group's total evenly
    (the remainder to the first in order): they are the same to every load, but
    chunks that end on different dimensions drain in parallel."""
    scale = max((v for load in loads for v in load.values()), default=0.0) or 1.0
    groups: dict[tuple, list[int]] = {}
    for a, load in enumerate(loads):
        sig = tuple(round(load[d] / scale / SAME_LOAD) for d in sorted(load))
        groups.setdefault(sig, []).append(a)
    out = list(row)
    for members in groups.values():
        total = sum(row[a] for a in members)
        q, r = divmod(total, len(members))
        for i, a in enumerate(members):
            out[a] = q + (i < r)
    return out


def interleaved(counts: Sequence[int]) -> list[int]:
    """Alternative indices for ``sum(counts)`` chunks, each spread evenly
    (:func:`themis.policies.route_mix.interleave`, the most used first among equals)."""
    used = {a: c for a, c in enumerate(counts) if c > 0}
    return interleave(used, sorted(used, key=lambda a: (-used[a], a)))


@register_router("online-mix")
class OnlineMix:
    """The router of the module docstring, one per run."""

    def __init__(self, network: Network, engine: Engine, kind: RunKind,
                 shape: PlanShape, future_ns: Sequence[Sequence[float]] | None = None) -> None:
        self.network, self.engine = network, engine
        #: Optional, per collective (issue order): per dimension the work (ns) that the
        #: collectives issued after it will bring (a planner's forecast), counted as if
        #: it were in flight already.
        self.future_ns = future_ns
        self.alts = Alternatives(engine, kind)
        self.k = engine.k
        self._first = 0
        self._options: dict[tuple[str, tuple[int, ...]], list[tuple[Route, Plan]]] = {}

    def options(self, kind: str, dims: tuple[int, ...]) -> list[tuple[Route, Plan]]:
        """Every (route, plan) of a chunk over ``dims`` (:func:`options`), cached."""
        key = (kind, dims)
        hit = self._options.get(key)
        if hit is None:
            hit = self._options[key] = options(self.alts, kind, dims)
        return hit

    def choose(self, kind: str, mask: tuple[bool, ...], sizes: Sequence[int],
               now: float) -> tuple[list[Route], list[Plan] | None]:
        """Routes and plans of the collective's chunks (see the module docstring)."""
        dims = tuple(i for i, (d, m) in enumerate(zip(self.network.dims, mask, strict=True))
                     if m and d.npus > 1)
        opts = self.options(kind, dims)
        if len(opts) == 1:
            return [opts[0][0]] * len(sizes), [opts[0][1]] * len(sizes)
        inflight, self._first = inflight_ns(self.engine, now, self._first)
        if self.future_ns is not None:
            ahead = self.future_ns[len(self.engine.pending)]
            inflight = [w + f for w, f in zip(inflight, ahead, strict=True)]
        classes = list(dict.fromkeys(sizes))
        counts = [sizes.count(s) for s in classes]
        loads = [[self._load(kind, p, s, dims) for _, p in opts] for s in classes]
        frac = self._solve(loads, counts, {d: inflight[d] for d in dims})
        ints = integer_counts(frac, counts, loads, {d: inflight[d] / self.k for d in dims},
                              self.k)
        seqs = [iter(interleaved(row)) for row in ints]
        index = {s: i for i, s in enumerate(classes)}
        chosen = [opts[next(seqs[index[s]])] for s in sizes]
        return [r for r, _ in chosen], [p for _, p in chosen]

    def _load(self, kind: str, plan: Plan, size: int, dims: tuple[int, ...]) -> dict[int, float]:
        load = dict.fromkeys(dims, 0.0)
        for d, t, _ in self.alts.steps(kind, plan, float(size)):
            load[d] += t
        return load

    def _solve(self, loads: list[list[dict[int, float]]], counts: list[int],
               inflight: dict[int, float]) -> list[list[float]]:
        """The two LPs of the module docstring; fractional counts per class and option."""
        unit = max(max(v for load in row for v in load.values()) for row in loads) / 100.0
        unit = unit or 1.0
        k = self.k
        keys = [(s, a) for s, row in enumerate(loads) for a in range(len(row))]
        peak = 0.0
        x: list[float] | None = None
        for phase in ("peak", "total"):
            m = LinearModel()
            p_var = m.var(cost=1.0 if phase == "peak" else 0.0)
            n = count_vars(m, keys, dict(enumerate(counts)), integer=False)
            if phase == "total":
                for (s, a), v in n.items():
                    m.cost[v] = sum(loads[s][a].values()) / unit
                m.row(-math.inf, peak * (1 + PEAK_SLACK) + 1e-9, {p_var: 1.0})
            for d, w in inflight.items():
                row = {p_var: 1.0}
                for (s, a), v in n.items():
                    row[v] = -loads[s][a][d] / (k * unit)
                m.row(w / (k * unit), math.inf, row)
            solved = m.solve()
            if solved.stop != "optimal" or solved.solution is None:
                break
            x = solved.solution
            peak = x[p_var]
            sol = [[x[n[s, a]] for a in range(len(row))] for s, row in enumerate(loads)]
        if x is None:  # no LP answer: everything on the first option, then rounded
            return [[float(c)] + [0.0] * (len(row) - 1) for c, row in zip(counts, loads,
                                                                         strict=True)]
        return sol
