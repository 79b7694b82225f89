"""Guarded: per chunk, the route that minimises the projected max load in ns.

Loads are what each dimension has been given so far, measured with the timing
model's own stage times in the run's plan shape (RS + AG, or ASTRA-sim 1.0's
AR stages; latency included), not Themis' bandwidth-only
"MiB at B_0". Chunks are taken in chunk order; each takes, of all D! routes,
the one whose projected loads (current loads plus its own stages) have the
smallest maximum; among equal maxima the one whose sorted projected loads are
lexicographically smallest (the second-busiest dimension next, and so on), and
then the first route (the baseline route comes first).

The guard: a chunk never takes a route that raises the projected max load above
what the baseline route would give. Because the baseline route is one of the
candidates this holds by construction, and it is what stops Themis' overshoot
(sending a chunk's first and largest stage to the least-loaded, often slowest,
dimension). No simulator in the loop: O(C * D! * D).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from themis.collective import Collective
from themis.policies.base import PLAIN_RUN, PolicyChoice, Route, RunModel, register_policy
from themis.policies.route_mix import RouteLoads
from themis.timing import Timing, make_timing
from topologies.network import Network


def guarded_routes(loads: RouteLoads, start_ns: dict[int, float] | None = None) -> list[Route]:
    """The guarded rule over ``loads`` (a :class:`RouteLoads`), in chunk order."""
    import numpy as np  # late: a simulate that does not plan need not import numpy

    dims = loads.dims
    add = [np.array([[b[d] for d in dims] for b in per_route]) for per_route in loads.busy]
    cur = np.array([(start_ns or {}).get(d, 0.0) for d in dims])
    scale = max(float(a.max()) for a in add) or 1.0
    out: list[Route] = []
    for k in loads.chunk_class:
        proj = cur + add[k]
        # Relative rounding so that float noise does not break ties.
        key = np.round(-np.sort(-proj, axis=1) / scale, 9)
        # lexsort: last key is primary, so feed columns from least to most significant.
        order = np.lexsort(tuple(key[:, j] for j in range(key.shape[1] - 1, -1, -1)))
        r = int(order[0])
        base_max, r_max = key[0, 0], key[r, 0]
        if r_max > base_max:  # the guard (cannot trigger: the baseline is a candidate)
            r = 0
        cur = proj[r]
        out.append(loads.routes[r])
    return out


@register_policy("guarded")
@dataclass(frozen=True)
class Guarded:
    """Min-max projected load in ns per chunk, never above the baseline route's."""

    name: str = "guarded"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Routes with the default alpha-beta timing (no endpoint delay)."""
        return guarded_routes(RouteLoads.measure(collective, network,
                                                 make_timing("alpha-beta", network)))

    def plan(self, collective: Collective, network: Network, timing: Timing,
             intra_options: Sequence[str], active_chunks: int = 1,
             run: RunModel = PLAIN_RUN) -> PolicyChoice:
        """Routes measured with the run's own ``timing`` and plan shape; the caller's
        discipline."""
        loads = RouteLoads.measure(collective, network, timing, run.shape)
        return PolicyChoice(guarded_routes(loads), None, self.name)
