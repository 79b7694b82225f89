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
bound (the exact bounds of :mod:`solvers.bounds` are the same model,
:mod:`themis.route_model`, solved to its dual bound).

:func:`interleave` lays route counts out over the chunk order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from themis.collective import Collective
from themis.highs import LinearModel
from themis.limits import check_route_enumeration
from themis.plans import PlanShape, stage_plan
from themis.policies.base import Route
from themis.route_model import chain_rows, count_vars, used_min
from themis.timing import Timing
from topologies.network import Network

#: Branch-and-bound node cap of the route-count MIP (deterministic).
MAX_NODES = 50



def all_routes(network: Network) -> list[Route]:
    """Every permutation of the active dimensions, the baseline route first.

    Refuses (:func:`themis.limits.check_route_enumeration`) a network with more
    routes than a route-enumerating method can handle."""
    check_route_enumeration(len(network.active_dims), "this method", network.name)
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

    The LB3-like integer program of the module docstring on the shared
    route-count model (:mod:`themis.route_model`), solved by HiGHS with
    ``max_nodes`` branch-and-bound nodes at most (its best incumbent is used;
    if it has none, the LP optimum rounded by largest remainders).
    ``heads_tails=False`` drops the head, tail and chain terms (the LB2 mix).
    """
    unit = loads.unit_ns
    nr = len(loads.routes)
    ncls = len(loads.sizes)
    m = LinearModel()
    t_var = m.var(cost=1.0)
    counts = dict(enumerate(loads.counts))
    n = count_vars(m, [(k, r) for k in range(ncls) for r in range(nr)], counts, integer=True)
    for d in loads.dims:
        row: dict[int, float] = {t_var: 1.0}
        for (k, r), v in n.items():
            row[v] = -loads.busy[k][r][d] / unit
        const = 0.0
        if heads_tails:
            for table in (loads.head, loads.tail):
                values = {key: table[key[0]][key[1]][d] for key in n}
                low, terms = used_min(m, values, n, unit)
                const += low
                for a, coef in terms.items():
                    row[a] = -coef
        m.row(const, float("inf"), row)
    if heads_tails:
        chain_rows(m, t_var, [(v, loads.counts[k], loads.chain[k][r]) for (k, r), v in n.items()],
                   unit)
    solved = m.solve(int(max_nodes), rel_gap=1e-3, abs_gap=1e-6)
    x = solved.solution
    if x is None:  # no incumbent within the node cap: the LP relaxation, rounded
        m.integer = []
        x = m.solve().solution or [0.0] * len(m.cost)
    return [_round_counts({r: max(0.0, x[n[k, r]]) for r in range(nr)}, loads.counts[k])
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
