"""Portfolio: simulate a few dozen candidate plans and keep the shortest.

The candidates are route assignments from cheap rules, each simulated under
every discipline the caller allows (``fifo``, ``scf``, ``lrw`` when ``--intra``
leaves the choice open):

- ``baseline``, ``themis``, ``round-robin`` (up to :data:`SCREEN_CHUNKS` chunks);
- ``guarded`` (min-max projected load in ns, :mod:`themis.policies.guarded`);
- ``lb-mix`` layouts of the LB3-like route counts (interleaved or in blocks,
  routes ordered by count, index, head or tail) and of the LB2 (no head/tail)
  counts;
- ``guarded`` seeded with each dimension's head, and two list-scheduling
  greedies (each chunk takes the route that list-schedules best after the
  chunks before it), when there are at most :data:`SCREEN_CHUNKS` chunks;
- ``sim-greedy`` (each chunk's route chosen by simulating the chunks so far)
  and a local-search polish of the best, when chunks x routes is small;
- every single route, when there are at most 6 (D <= 3).

With more than :data:`SCREEN_CHUNKS` chunks, the candidates other than
baseline and Themis are first simulated under one discipline and only the
best few under the others.

Every candidate is scored as the run then applies it (a
:class:`~themis.policies.base.RunModel`: the run's timing, plan shape, queues
and tie order), and the run's references (what the same run gives baseline and
Themis, e.g. ASTRA-sim 1.0's with their own plan shapes) are candidates too.
The shortest (makespan, then candidate order, then discipline order) wins, so
the portfolio is never slower than baseline or Themis under the same
discipline and any timing. Its :class:`PolicyChoice` says which
candidate and discipline won (``label`` like ``lb-mix:interleave:count/lrw``).
Results are cached per collective shape (network, timing, algorithms, endpoint
delay, further timing options, collective, size, chunks, allowed disciplines, k, run
model), so a sweep or a training iteration pays once per shape.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from themis.collective import Collective
from themis.planning.evaluate import run_makespan_ns
from themis.planning.local_search import evaluator, local_search
from themis.plans import PlanShape
from themis.policies.base import PLAIN_RUN, PolicyChoice, Route, RunModel, register_policy
from themis.policies.greedy import Themis
from themis.policies.guarded import guarded_routes
from themis.policies.lb_mix import mix_routes
from themis.policies.round_robin import RoundRobin
from themis.policies.route_mix import RouteLoads, all_routes, route_counts
from themis.timing import Timing, make_timing
from topologies.network import Network

#: Sim-greedy candidates are built when chunks * routes is at most this.
SIM_GREEDY_LIMIT = 150
#: The best candidate is polished by local search when chunks * routes is at most this,
#: with at most :data:`POLISH_BUDGET` simulations per allowed discipline.
POLISH_LIMIT = 150
POLISH_BUDGET = 150
#: With more chunks than this, candidates other than :data:`REFERENCES` are first
#: simulated under one discipline (the first of :data:`SCREEN_ORDER` allowed) and
#: only the :data:`SCREEN_TOP` best of them under the others.
SCREEN_CHUNKS = 128
SCREEN_ORDER = ("scf", "lrw", "fifo")
SCREEN_TOP = 2
#: Candidates always simulated under every allowed discipline (the guarantee).
REFERENCES = ("baseline", "themis")

#: Cached choices (most recent last), at most :data:`CACHE_SIZE`.
_CACHE: OrderedDict[tuple, PolicyChoice] = OrderedDict()
CACHE_SIZE = 512


def clear_cache() -> None:
    """Forget every cached choice."""
    _CACHE.clear()


def list_greedy_routes(loads: RouteLoads, objective: str = "finish") -> list[Route]:
    """Per chunk, the route that list-schedules best after the chunks before it.

    Each dimension keeps the end of the last stage placed on it; a route's
    stages are placed in order, each at max(previous stage end, dimension
    free). ``objective``: ``finish`` (the chunk's own end first, then the
    largest dimension end) or ``makespan`` (the largest end so far first).
    """
    import numpy as np

    dims = loads.dims
    col = {d: i for i, d in enumerate(dims)}
    nr = len(loads.routes)
    ar = np.arange(nr)
    seq_dim = [np.array([[col[d] for d, _ in st] for st in per]) for per in loads.steps]
    seq_dur = [np.array([[t for _, t in st] for st in per]) for per in loads.steps]
    free = np.zeros(len(dims))
    span = 0.0
    scale = max(float(x.max()) for x in seq_dur) or 1.0
    out: list[Route] = []
    for k in loads.chunk_class:
        f = np.tile(free, (nr, 1))
        t = np.zeros(nr)
        for j in range(seq_dim[k].shape[1]):
            dj = seq_dim[k][:, j]
            t = np.maximum(t, f[ar, dj]) + seq_dur[k][:, j]
            f[ar, dj] = t
        fmax = np.maximum(f.max(axis=1), span)
        a, b = (t, fmax) if objective == "finish" else (fmax, t)
        r = int(np.lexsort((np.round(b / scale, 9), np.round(a / scale, 9)))[0])
        free = f[r]
        span = float(fmax[r])
        out.append(loads.routes[r])
    return out


def sim_greedy_routes(collective: Collective, network: Network, timing: Timing,
                      loads: RouteLoads, intra: str, active_chunks: int,
                      run: RunModel = PLAIN_RUN) -> list[Route]:
    """Per chunk, the route whose simulated partial collective (chunks so far) ends first."""
    sizes = collective.chunk_sizes()
    chosen: list[Route] = []
    for k in range(len(sizes)):
        # The first k + 1 chunks (a remainder chunk counts as a regular one here).
        part = Collective(collective.kind, sizes[0] * (k + 1), k + 1)
        best_r, best_t = loads.routes[0], float("inf")
        for r in loads.routes:
            plans = [run.plan(collective.kind, x) for x in chosen + [r]]
            t = run_makespan_ns(run, part, network, timing, plans, intra, active_chunks)
            if t < best_t * (1 - 1e-12):
                best_r, best_t = r, t
        chosen.append(best_r)
    return chosen


def candidates(collective: Collective, network: Network, timing: Timing,
               intra_options: Sequence[str] = ("fifo",), active_chunks: int = 1,
               run: RunModel = PLAIN_RUN) -> list[tuple[str, list[Route]]]:
    """The candidate route assignments (label, routes), duplicates removed; each is
    run with ``run``'s plan shape (its references are added by :func:`best_plan`)."""
    loads = RouteLoads.measure(collective, network, timing, run.shape)
    n = len(collective.chunk_sizes())
    out: list[tuple[str, list[Route]]] = [
        ("baseline", [tuple(network.active_dims)] * n),
        ("themis", Themis().routes(collective, network)),
        ("guarded", guarded_routes(loads)),
    ]
    large = n > SCREEN_CHUNKS
    if not large:  # round-robin never won on the at-scale set
        out.append(("round-robin", RoundRobin().routes(collective, network)))
    counts3 = route_counts(loads)
    for layout in ("interleave", "blocks"):
        for order in ("count", "index", "head") if large else ("count", "index", "head", "tail"):
            out.append((f"lb-mix:{layout}:{order}", mix_routes(loads, counts3, layout, order)))
    counts2 = route_counts(loads, heads_tails=False)
    for order in ("count",) if large else ("count", "head"):
        out.append((f"lb2-mix:interleave:{order}", mix_routes(loads, counts2, "interleave",
                                                             order)))
    if not large:  # these never won on the at-scale set: skip them where time counts
        # Guarded with a head start: each dimension starts "loaded" with the time
        # before the first chunk can reach it, so early chunks avoid late dimensions.
        k0 = loads.chunk_class[0]
        heads = {d: min(h[d] for h in loads.head[k0]) for d in loads.dims}
        out.append(("guarded:heads", guarded_routes(loads, heads)))
        for objective in ("finish", "makespan"):
            out.append((f"list-greedy:{objective}", list_greedy_routes(loads, objective)))
    if n * len(loads.routes) <= SIM_GREEDY_LIMIT:
        for q in intra_options:
            out.append((f"sim-greedy:{q}", sim_greedy_routes(collective, network, timing,
                                                             loads, q, active_chunks, run)))
    if len(loads.routes) <= 6:
        for r in loads.routes[1:]:
            out.append(("fixed:" + ",".join(map(str, r)), [r] * n))
    seen: set[tuple[Route, ...]] = set()
    unique = []
    for label, routes in out:
        key = tuple(routes)
        if key not in seen:
            seen.add(key)
            unique.append((label, routes))
    return unique


def _cache_key(collective: Collective, network: Network, timing: Timing,
               intra_options: Sequence[str], active_chunks: int, run: RunModel) -> tuple:
    return (network, timing.name, tuple(timing.algorithms), float(timing.endpoint_delay_ns),
            tuple(sorted((getattr(timing, "options", None) or {}).items())),
            collective.kind, collective.size_bytes, collective.chunks, tuple(intra_options),
            active_chunks, run)


def _ns(choice: PolicyChoice) -> float:
    """A scored choice's makespan (every choice the portfolio makes is simulated)."""
    assert choice.makespan_ns is not None
    return choice.makespan_ns


def best_plan(collective: Collective, network: Network, timing: Timing,
              intra_options: Sequence[str], active_chunks: int = 1,
              run: RunModel = PLAIN_RUN) -> PolicyChoice:
    """Simulate every candidate under every allowed discipline; the shortest wins.

    Every candidate is scored as ``run`` applies it (plan shape, queues, tie order),
    and ``run``'s references (what the same run gives baseline and Themis) are
    candidates under every allowed discipline too, so the answer is never slower
    than any of them. With several ``intra_options`` the answer is also never
    slower than the plan for any one of them alone (local-search polish from
    different starts can differ)."""
    key = _cache_key(collective, network, timing, intra_options, active_chunks, run)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    t0 = time.perf_counter()
    best: PolicyChoice | None = None
    # The best per discipline among candidates in the run's own shape (polish starts).
    best_by_intra: dict[str, PolicyChoice] = {}
    plan_of: dict[tuple[Route, PlanShape | None], tuple] = {}

    def score(label: str, routes: Sequence[Route], q: str,
              shape: PlanShape | None = None) -> float:
        nonlocal best
        plans = []
        for r in routes:
            p = plan_of.get((r, shape))
            if p is None:
                p = plan_of[r, shape] = run.plan(collective.kind, r, shape)
            plans.append(p)
        t = run_makespan_ns(run, collective, network, timing, plans, q, active_chunks, shape)
        choice = PolicyChoice(list(routes), q, f"{label}/{q}", t, shape=shape)
        if shape is None and (q not in best_by_intra or t < _ns(best_by_intra[q])):
            best_by_intra[q] = choice
        if best is None or t < _ns(best):
            best = choice
        return t

    cands = candidates(collective, network, timing, intra_options, active_chunks, run)
    n = len(collective.chunk_sizes())
    screen = n > SCREEN_CHUNKS and len(intra_options) > 1
    first = next((q for q in SCREEN_ORDER if q in intra_options), intra_options[0])
    screened: list[tuple[float, int]] = []
    for i, (label, routes) in enumerate(cands):
        if not screen or label in REFERENCES:
            for q in intra_options:
                score(label, routes, q)
        else:
            screened.append((score(label, routes, first), i))
    for _, i in sorted(screened)[:SCREEN_TOP]:
        for q in intra_options:
            if q != first:
                score(*cands[i], q)
    for label, ref_routes, shape in run.references:
        # What the same run gives another policy (its own plan shape): never slower.
        for q in intra_options:
            score(f"run:{label}", ref_routes, q, None if shape == run.shape else shape)
    assert best is not None
    routes_all = all_routes(network)
    if n * len(routes_all) <= POLISH_LIMIT:
        for q in intra_options:
            start = best_by_intra[q]
            res = local_search(start.routes, routes_all,
                               evaluator(collective, network, timing, q, active_chunks, run),
                               POLISH_BUDGET, start_ns=_ns(start))
            if res.makespan_ns < _ns(best):
                best = PolicyChoice(res.routes, q, f"{start.label}+search", res.makespan_ns)
    polished = n * len(routes_all) <= POLISH_LIMIT
    if len(intra_options) > 1 and (screen or polished):
        # Free to choose: never slower than the portfolio held to any one of the
        # allowed disciplines. Without screening and polish the candidates here
        # already include each of those runs; with them (a polish from another start,
        # a candidate screened out) run each alone. They are cached, so a sweep that
        # also runs portfolio/fifo, /scf and /lrw pays once.
        for q in intra_options:
            single = best_plan(collective, network, timing, (q,), active_chunks, run)
            if _ns(single) < _ns(best):
                best = single
    best = dataclasses.replace(best, plan_s=time.perf_counter() - t0)
    _CACHE[key] = best
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return best


@register_policy("portfolio")
@dataclass(frozen=True)
class Portfolio:
    """Simulate-and-keep-best over candidate plans and disciplines (cached per shape)."""

    name: str = "portfolio"
    #: It picks the intra-dimension discipline too when the caller leaves it open.
    chooses_intra: bool = True

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The best routes under alpha-beta timing (no endpoint delay), FIFO or SCF."""
        return self.plan(collective, network, make_timing("alpha-beta", network),
                         ("fifo", "scf")).routes

    def plan(self, collective: Collective, network: Network, timing: Timing,
             intra_options: Sequence[str], active_chunks: int = 1,
             run: RunModel = PLAIN_RUN) -> PolicyChoice:
        """The best candidate and discipline among ``intra_options``, scored as ``run``
        applies it."""
        return best_plan(collective, network, timing, tuple(intra_options), active_chunks, run)
