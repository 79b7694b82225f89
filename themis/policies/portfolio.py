"""Portfolio: simulate a few dozen candidate plans and keep the shortest.

The candidates are route assignments from cheap rules, each simulated under
every discipline the caller allows (``fifo``, ``scf``, ``lrw`` when ``--intra``
leaves the choice open):

- ``baseline``, ``themis``, ``round-robin``;
- ``guarded`` (min-max projected load in ns, :mod:`themis.policies.guarded`),
  also seeded with each dimension's smallest head;
- ``lb-mix`` layouts of the LB3-like route counts (interleaved or in blocks,
  routes ordered by count, index, head or tail) and of the LB2 (no head/tail)
  counts;
- every single route, when there are at most 6 (D <= 3).

The shortest (makespan, then candidate order, then discipline order) wins, so
the portfolio is never slower than baseline or Themis under the same
discipline: both are candidates. Its :class:`PolicyChoice` says which
candidate and discipline won (``label`` like ``lb-mix:interleave:count/lrw``).
Results are cached per collective shape (network, timing, algorithms, endpoint
delay, collective, size, chunks, allowed disciplines, k), so a sweep or a
training iteration pays once per shape.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import PolicyChoice, Route, register_policy
from themis.policies.guarded import guarded_routes
from themis.policies.lb_mix import mix_routes
from themis.policies.route_mix import RouteLoads, route_counts
from themis.timing import Timing, make_timing
from topologies.network import Network

#: Cached choices (most recent last), at most :data:`CACHE_SIZE`.
_CACHE: OrderedDict[tuple, PolicyChoice] = OrderedDict()
CACHE_SIZE = 512


def clear_cache() -> None:
    """Forget every cached choice."""
    _CACHE.clear()


def candidates(collective: Collective, network: Network, timing: Timing
               ) -> list[tuple[str, list[Route]]]:
    """The candidate route assignments (label, routes), duplicates removed."""
    from themis.policies.greedy import Themis
    from themis.policies.round_robin import RoundRobin

    loads = RouteLoads.measure(collective, network, timing)
    n = len(collective.chunk_sizes())
    out: list[tuple[str, list[Route]]] = [
        ("baseline", [tuple(network.active_dims)] * n),
        ("themis", Themis().routes(collective, network)),
        ("guarded", guarded_routes(loads)),
        ("round-robin", RoundRobin().routes(collective, network)),
    ]
    counts3 = route_counts(loads)
    for layout in ("interleave", "blocks"):
        for order in ("count", "index", "head", "tail"):
            out.append((f"lb-mix:{layout}:{order}", mix_routes(loads, counts3, layout, order)))
    counts2 = route_counts(loads, heads_tails=False)
    for order in ("count", "head"):
        out.append((f"lb2-mix:interleave:{order}", mix_routes(loads, counts2, "interleave",
                                                             order)))
    # Guarded with a head start: each dimension starts "loaded" with the time
    # before the first chunk can reach it, so early chunks avoid late dimensions.
    k0 = loads.chunk_class[0]
    heads = {d: min(h[d] for h in loads.head[k0]) for d in loads.dims}
    out.append(("guarded:heads", guarded_routes(loads, heads)))
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
               intra_options: Sequence[str], active_chunks: int) -> tuple:
    return (network, timing.name, tuple(timing.algorithms), float(timing.endpoint_delay_ns),
            collective.kind, collective.size_bytes, collective.chunks, tuple(intra_options),
            active_chunks)


def best_plan(collective: Collective, network: Network, timing: Timing,
              intra_options: Sequence[str], active_chunks: int = 1) -> PolicyChoice:
    """Simulate every candidate under every allowed discipline; the shortest wins."""
    from themis.plans import stage_plan
    from themis.simulator import simulate

    key = _cache_key(collective, network, timing, intra_options, active_chunks)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    best: PolicyChoice | None = None
    for label, routes in candidates(collective, network, timing):
        plans = [stage_plan(collective.kind, r) for r in routes]
        for q in intra_options:
            res = simulate(network, collective, intra=q, timing=timing, plans=[plans],
                           active_chunks=active_chunks)
            if best is None or res.makespan_ns < best.makespan_ns:
                best = PolicyChoice(list(routes), q, f"{label}/{q}", res.makespan_ns)
    assert best is not None
    _CACHE[key] = best
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return best


@register_policy("portfolio")
@dataclass(frozen=True)
class Portfolio:
    """Simulate-and-keep-best over candidate plans and disciplines (cached per shape)."""

    name: str = "portfolio"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The best routes under alpha-beta timing (no endpoint delay), FIFO or SCF."""
        return self.plan(collective, network, make_timing("alpha-beta", network),
                         ("fifo", "scf")).routes

    def plan(self, collective: Collective, network: Network, timing: Timing,
             intra_options: Sequence[str], active_chunks: int = 1) -> PolicyChoice:
        """The best candidate and discipline among ``intra_options``."""
        return best_plan(collective, network, timing, tuple(intra_options), active_chunks)
