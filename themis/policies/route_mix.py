"""Route loads in ns and the integer route-count model (LB3-like) for policies.

:class:`RouteLoads` measures, with the timing model's own stage times
(latency included), what every route costs every dimension for each chunk
size of a collective: the busy time it adds (its stages in the run's plan
shape: RS + AG, or ASTRA-sim's AR stages), the head (stages the chunk runs
before it first reaches the dimension), the tail (stages after it last leaves
it) and the whole chain.

:func:`route_counts` solves the integer program over how many chunks of each
size take each route (model.md §7, LB3): minimise T with, per dimension,
T >= smallest head in use + load + smallest tail in use, and T >= the chain
of every route in use. It uses HiGHS with deterministic limits only (a node
cap, no wall clock), so its answer is reproducible; it is a *plan*, not a
bound (the exact bounds live in :mod:`solvers.bounds`, which could reuse
this model).

:func:`interleave` lays route counts out over the chunk order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from themis.collective import Collective
from themis.highs import new_highs
from themis.plans import PlanShape, stage_plan
from themis.policies.base import Route
from themis.timing import Timing
from topologies.network import Network

#: Branch-and-bound node cap of the route-count MIP (deterministic).
MAX_NODES = 50



def all_routes(network: Network) -> list[Route]:
    """Every permutation of the active dimensions, the baseline route first."""
    return list(itertools.permutations(network.active_dims))


@dataclass
class RouteLoads:
    """Per chunk-size class and route: busy ns per dimension, heads, tails, chains.

    ``sizes[k]`` is the k-th distinct chunk size, ``counts[k]`` how many chunks
    have it; ``busy[k][r][d]`` is the time route ``routes[r]`` keeps dimension
    d busy for one chunk of that size; ``head``/``tail`` as in the module
    docstring; ``chain[k][r]`` the sum of all its stages.
    """

    routes: list[Route]
    sizes: list[int]
    counts: list[int]
    chunk_class: list[int]
    busy: list[list[dict[int, float]]]
    head: list[list[dict[int, float]]]
    tail: list[list[dict[int, float]]]
    chain: list[list[float]]
    dims: tuple[int, ...]
    #: ``steps[k][r]``: the route's stages in order, as (dimension, duration ns).
    steps: list[list[list[tuple[int, float]]]]

    @classmethod
    def measure(cls, collective: Collective, network: Network, timing: Timing,
                shape: PlanShape = PlanShape.RS_AG) -> RouteLoads:
        """Measure every route with ``timing`` for ``collective`` on ``network``, each
        all-reduce chunk crossing it with the plan ``shape`` (the run's)."""
        routes = all_routes(network)
        chunk_sizes = collective.chunk_sizes()
        sizes = sorted(set(chunk_sizes), key=chunk_sizes.index)
        index = {s: i for i, s in enumerate(sizes)}
        counts = [chunk_sizes.count(s) for s in sizes]
        busy, head, tail, chain, steps = [], [], [], [], []
        gather = collective.kind == "all-gather"
        for s in sizes:
            b_k, h_k, t_k, c_k, s_k = [], [], [], [], []
            for r in routes:
                plan = stage_plan(collective.kind, r, shape=shape)
                m = timing.all_gather_input(s) if gather else float(s)
                durs = []
                for phase, d in plan:
                    cost = timing.stage(phase, d, m)
                    durs.append((d, cost.duration_ns))
                    m = cost.output_bytes
                total = sum(t for _, t in durs)
                b = {d: 0.0 for d in network.active_dims}
                h: dict[int, float] = {}
                t: dict[int, float] = {}
                acc = 0.0
                for d, dur in durs:
                    h.setdefault(d, acc)
                    b[d] += dur
                    acc += dur
                    t[d] = total - acc
                b_k.append(b)
                h_k.append(h)
                t_k.append(t)
                c_k.append(total)
                s_k.append(durs)
            busy.append(b_k)
            head.append(h_k)
            tail.append(t_k)
            chain.append(c_k)
            steps.append(s_k)
        return cls(routes, sizes, counts, [index[s] for s in chunk_sizes], busy, head, tail,
                   chain, tuple(network.active_dims), steps)

    @cached_property
    def unit_ns(self) -> float:
        """A time unit that keeps the MIP's numbers near 1000."""
        longest = max(max(c) for c in self.chain)
        return max(longest / 1000.0, 1e-9)


def route_counts(loads: RouteLoads, max_nodes: int = MAX_NODES,
                 heads_tails: bool = True) -> list[dict[int, int]]:
    """How many chunks of each size class take each route (route index -> count).

    The LB3-like integer program of the module docstring, solved by HiGHS with
    ``max_nodes`` branch-and-bound nodes at most (its best incumbent is used;
    if it has none, the LP optimum rounded by largest remainders).
    ``heads_tails=False`` drops the head, tail and chain terms (the LB2 mix).
    """
    import highspy
    import numpy as np

    unit = loads.unit_ns
    nr = len(loads.routes)
    ncls = len(loads.sizes)
    cost: list[float] = [1.0]
    lo: list[float] = [0.0]
    hi: list[float] = [highspy.kHighsInf]
    integer: list[int] = []
    rows: list[tuple[float, float, dict[int, float]]] = []

    def var(lb: float, ub: float, is_int: bool = False) -> int:
        cost.append(0.0)
        lo.append(lb)
        hi.append(ub)
        if is_int:
            integer.append(len(cost) - 1)
        return len(cost) - 1

    n = {(k, r): var(0.0, float(loads.counts[k]), True) for k in range(ncls) for r in range(nr)}
    for k in range(ncls):
        rows.append((loads.counts[k], loads.counts[k], {n[k, r]: 1.0 for r in range(nr)}))
    for d in loads.dims:
        row: dict[int, float] = {0: 1.0}
        for (k, r), v in n.items():
            row[v] = -loads.busy[k][r][d] / unit
        const = 0.0
        if heads_tails:
            for table in (loads.head, loads.tail):
                values = {key: table[key[0]][key[1]][d] for key in n}
                levels = sorted(set(values.values()))
                const += levels[0] / unit
                for a_lo, a_hi in itertools.pairwise(levels):
                    a = var(0.0, 1.0)
                    cover = {a: 1.0}
                    for key, level in values.items():
                        if level <= a_lo:
                            cover[n[key]] = 1.0
                    rows.append((1.0, highspy.kHighsInf, cover))
                    row[a] = -(a_hi - a_lo) / unit
        rows.append((const, highspy.kHighsInf, row))
    if heads_tails:
        for (k, r), v in n.items():
            y = var(0.0, 1.0, True)
            rows.append((-highspy.kHighsInf, 0.0, {v: 1.0, y: -float(loads.counts[k])}))
            rows.append((0.0, highspy.kHighsInf, {0: 1.0, y: -loads.chain[k][r] / unit}))

    # HiGHS runs its MIP on one process-wide scheduler whose thread count is fixed by
    # the first run in the process (e.g. a bound computed with the default threads),
    # and the MIP's path depends on it: reset it so this model always runs on one
    # thread, whatever ran before and on any machine.
    highspy.Highs.resetGlobalScheduler(True)
    h = new_highs()
    h.setOptionValue("threads", 1)
    h.setOptionValue("mip_max_nodes", int(max_nodes))
    h.setOptionValue("mip_rel_gap", 1e-3)
    h.setOptionValue("random_seed", 0)
    nvar = len(cost)
    h.addVars(nvar, np.array(lo), np.array(hi))
    h.changeColsCost(nvar, np.arange(nvar, dtype=np.int32), np.array(cost))
    for r_lo, r_hi, coefs in rows:
        idx = np.array(list(coefs), dtype=np.int32)
        h.addRow(r_lo, r_hi, len(idx), idx, np.array(list(coefs.values()), dtype=float))
    ints = np.array(integer, dtype=np.int32)
    h.changeColsIntegrality(len(ints), ints,
                            np.array([highspy.HighsVarType.kInteger] * len(ints)))
    h.run()
    sol = h.getSolution()
    if h.getInfo().primal_solution_status == 2:
        x = list(sol.col_value)
        return [_round_counts({r: max(0.0, x[n[k, r]]) for r in range(nr)}, loads.counts[k])
                for k in range(ncls)]
    # No incumbent within the node cap: the LP relaxation, rounded.
    h.changeColsIntegrality(len(ints), ints,
                            np.array([highspy.HighsVarType.kContinuous] * len(ints)))
    h.run()
    x = list(h.getSolution().col_value)
    return [_round_counts({r: x[n[k, r]] for r in range(nr)}, loads.counts[k])
            for k in range(ncls)]


def _round_counts(frac: dict[int, float], total: int) -> dict[int, int]:
    """Largest-remainder rounding of fractional counts summing to ``total``."""
    base = {r: int(v + 1e-6) for r, v in frac.items()}
    while sum(base.values()) > total:  # solver noise above the total: trim the largest
        r = max(base, key=lambda r: (base[r], -r))
        base[r] -= 1
    rest = total - sum(base.values())
    order = sorted(frac, key=lambda r: (-(frac[r] - base[r]), r))
    for i in range(max(rest, 0)):
        base[order[i % len(order)]] += 1
    return {r: c for r, c in base.items() if c > 0}


def interleave(counts: dict[int, int], order: Sequence[int] | None = None) -> list[int]:
    """Route indices for ``sum(counts)`` chunks, each route spread evenly.

    Proportional interleaving: chunk i takes the route furthest behind its
    share ``counts[r] * (i + 1) / total`` (ties: first in ``order``, default
    ascending route index).
    """
    total = sum(counts.values())
    keys = list(order) if order is not None else sorted(counts)
    keys = [r for r in keys if counts.get(r, 0) > 0]
    used = dict.fromkeys(keys, 0)
    out: list[int] = []
    for i in range(total):
        r = max(keys, key=lambda r: (counts[r] * (i + 1) / total - used[r], -keys.index(r)))
        used[r] += 1
        out.append(r)
    return out


def blocks(counts: dict[int, int], order: Sequence[int]) -> list[int]:
    """Route indices in contiguous blocks, routes in ``order``."""
    return [r for r in order for _ in range(counts.get(r, 0))]


__all__ = ["MAX_NODES", "RouteLoads", "all_routes", "blocks", "interleave", "route_counts"]
