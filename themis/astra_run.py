"""Running ASTRA-sim 1.0 system files: its inter-dimension policies and plans.

:func:`simulate_astra` maps a :class:`~topologies.system.SystemConfig` to the
right :func:`~themis.simulator.simulate` call with the ``astra-sim-1.0``
timing (:mod:`themis.timing.astra10`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.policies.base import InterPolicy, Route
from themis.timing.astra10 import NAME, MiB, themis_bandwidth
from topologies.errors import InputError
from topologies.network import Network
from topologies.system import INTER_ALIASES, INTRA_ALIASES, SystemConfig

if TYPE_CHECKING:  # pragma: no cover
    from themis.simulator import SimResult


# -- ASTRA-sim 1.0's inter-dimension policies --------------------------------------
def _involved(network: Network) -> list[bool]:
    return [d.npus > 1 for d in network.dims]


def _recommended_chunk(collective: Collective, network: Network) -> int:
    """ASTRA's recommended chunk size: of the shard for an all-gather."""
    if collective.kind == "all-gather":
        n = math.prod(network.dims[i].npus for i in network.active_dims)
        return collective.chunk_bytes // n
    return collective.chunk_bytes


@dataclass(frozen=True)
class AstraBaseline:
    """ASTRA-sim 1.0's ``baseline``: 0..D-1 (all-gather: D-1..0) for every chunk."""

    name: str = "baseline"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The same route for every chunk."""
        active = network.active_dims
        route = tuple(reversed(active)) if collective.kind == "all-gather" else active
        return [route] * len(collective.chunk_sizes())


@dataclass(frozen=True)
class AstraRoundRobin:
    """ASTRA-sim 1.0's ``roundRobin``: chunk k rotates the dimension list by k mod D.

    The list is 0..D-1 (reversed for an all-gather) over all dimensions,
    including those of size 1, which are then skipped.
    """

    name: str = "round-robin"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Rotated routes, in chunk order."""
        ndims = network.ndims
        base = list(range(ndims))
        if collective.kind == "all-gather":
            base.reverse()
        inv = _involved(network)
        out = []
        for k in range(len(collective.chunk_sizes())):
            r = k % ndims
            out.append(tuple(d for d in base[r:] + base[:r] if inv[d]))
        return out


@dataclass(frozen=True)
class AstraThemis:
    """ASTRA-sim 1.0's Themis (``OfflineGreedy::get_chunk_scheduling``), quirks included.

    Loads are doubles in "MiB at B_0" over every dimension (size-1 ones too,
    with load 0), reset per collective; the persistent list is stable-sorted
    by load (reversed for an all-gather); chunk sizes are unsigned integers
    (``/=`` floors). Reduce-scatter gap: last entry of the list minus the first
    involved one, in bytes of the first. All-gather gap: the least-loaded
    involved entry l (last involved in the list) against the first involved
    one, in bytes of l, then integer-divided by the size of every involved
    entry from the first one up to l (l excluded), as the source's loop does.
    A gap worth fewer than ``recommended // 16`` bytes falls back to route
    0..D-1; the loads are then added in index order, for an all-gather through
    the reversed list (dimension i's term lands on the entry of D-1-i).
    """

    name: str = "themis"
    threshold_divisor: int = 16

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Routes for every chunk, in chunk order at issue time."""
        return self.routes_with_loads(collective, network)[0]

    def routes_with_loads(
        self, collective: Collective, network: Network
    ) -> tuple[list[Route], dict[int, float]]:
        """Routes and the final load of every dimension."""
        dims = network.dims
        ndims = len(dims)
        size = [d.npus for d in dims]
        bw = [themis_bandwidth(d) for d in dims]
        inv = _involved(network)
        gather = collective.kind == "all-gather"
        rec = _recommended_chunk(collective, network)
        threshold = rec // self.threshold_divisor
        active = network.active_dims
        entries = [[0.0, i] for i in range(ndims)]  # [load, dim], the persistent list

        def term(d: int, cs: int) -> float:
            ratio = bw[d] / bw[0]
            if gather:
                return ((cs / MiB) * float(size[d] - 1)) / ratio
            return ((cs / MiB) * ((size[d] - 1) / size[d])) / ratio

        routes: list[Route] = []
        for _ in collective.chunk_sizes():
            entries.sort(key=lambda e: e[0])
            if gather:
                entries.reverse()
            cs = rec
            route: list[int] = []
            checked = False
            fallback = False
            for ptr, e in enumerate(entries):
                d = e[1]
                if not inv[d]:
                    continue
                if not checked:
                    checked = True
                    if not gather:
                        diff = abs(entries[-1][0] - e[0])
                        gap = int(((diff * (bw[d] / bw[0])) / ((size[d] - 1) / size[d])) * MiB)
                    else:
                        li = ndims - 1
                        while not inv[entries[li][1]]:
                            li -= 1
                        ld = entries[li][1]
                        diff = abs(entries[li][0] - e[0])
                        gap = int(((diff * (bw[ld] / bw[0])) / float(size[ld] - 1)) * MiB)
                        li -= 1
                        while ptr <= li:
                            if inv[entries[li][1]]:
                                gap //= size[entries[li][1]]
                            li -= 1
                    if gap < threshold:
                        fallback = True
                        break
                route.append(d)
                e[0] += term(d, cs)
                cs = cs * size[d] if gather else cs // size[d]
            if fallback:
                entries.sort(key=lambda e: e[1])
                if gather:
                    entries.reverse()
                cs = rec
                for i in range(ndims):
                    if not inv[i]:
                        continue
                    entries[i][0] += term(i, cs)
                    cs = cs * size[i] if gather else cs // size[i]
                routes.append(tuple(active))
            else:
                routes.append(tuple(route))
        return routes, {d: load for load, d in entries}


# -- running a system file ----------------------------------------------------------
#: Endpoint delay when a system file leaves it out: the value every ASTRA-sim
#: tutorial system file sets (ASTRA-sim's own built-in default was not checked).
DEFAULT_ENDPOINT_DELAY_NS = 10.0


def astra_plans(
    kind: str, routes: list[Route], local_bw_aware: bool, themis: bool
) -> list[tuple[tuple[str, int], ...]]:
    """Per-chunk stage plans as ASTRA-sim 1.0 builds them (``Sys::generate_collective``).

    reduce-scatter: RS along the route; all-gather: AG along the route. An
    all-reduce with ``collective-optimization: localBWAware`` runs RS along the
    route then AG back for Themis (``themis``), and otherwise RS on all but the
    route's last dimension, one AR there, AG back. Without localBWAware ASTRA
    runs a whole all-reduce (AR) on every dimension of the route in turn.
    """
    out = []
    for r in routes:
        if kind == "reduce-scatter":
            out.append(tuple(("RS", d) for d in r))
        elif kind == "all-gather":
            out.append(tuple(("AG", d) for d in r))
        elif not local_bw_aware:
            out.append(tuple(("AR", d) for d in r))
        elif themis:
            out.append(tuple(("RS", d) for d in r) + tuple(("AG", d) for d in reversed(r)))
        else:
            out.append(tuple(("RS", d) for d in r[:-1]) + (("AR", r[-1]),)
                       + tuple(("AG", d) for d in reversed(r[:-1])))
    return out


def simulate_astra(
    network: Network,
    system: SystemConfig,
    collective: Collective,
    policy: InterPolicy | None = None,
) -> SimResult:
    """Simulate ``collective`` as ASTRA-sim 1.0 runs it with ``system``.

    ``system`` is a :class:`~topologies.system.SystemConfig`; fields left
    ``None`` become: endpoint delay :data:`DEFAULT_ENDPOINT_DELAY_NS`, 1 active
    chunk, ``baseline`` / ``FIFO``, no localBWAware, boost-mode 0, each
    dimension's default algorithm. The chunk count is the collective's own
    (``system.chunks`` is the caller's business). What is run:

    * timing ``astra-sim-1.0`` with ``system``'s algorithms for the collective kind;
    * routes from :class:`AstraBaseline`, :class:`AstraThemis` or
      :class:`AstraRoundRobin`, stage plans from :func:`astra_plans`
      (localBWAware per ``collective-optimization``);
    * intra ``FIFO`` -> ``fifo``, ``SCF`` -> ``astra-scf`` (all-reduce stages by arrival);
    * tie order ``dim`` for ``boost-mode: 1``, ``start`` otherwise.

    ``policy`` (e.g. a :class:`~themis.policies.FixedRoute`) overrides
    ``system.inter``: its routes are used as they are, with the plans of a
    non-Themis policy (localBWAware: one AR stage on the route's last dimension).

    Returns a :class:`~themis.simulator.SimResult`; its times are whole ns,
    ASTRA-sim 1.0's printed "all passes finished" time minus the workload's
    1 ns update. Raises :class:`~topologies.errors.InputError` for a policy or
    discipline ASTRA-sim 1.0 does not have, or a network the timing rejects.
    """
    # late import: the simulator imports the timing registry
    from themis.simulator import policy_routes, simulate

    kind = collective.kind
    raw_inter = (system.inter or "baseline").strip().lower()
    raw_intra = (system.intra or "fifo").strip().lower()
    inter = INTER_ALIASES.get(raw_inter, raw_inter)
    intra = INTRA_ALIASES.get(raw_intra, raw_intra)
    if policy is not None:
        inter = "given"
    elif inter == "themis":
        policy = AstraThemis()
    elif inter == "round-robin":
        policy = AstraRoundRobin()
    elif inter == "baseline":
        policy = AstraBaseline()
    else:
        raise InputError("the astra-sim-1.0 timing runs baseline, themis or round-robin",
                         "inter-dimension-scheduling", system.inter)
    assert policy is not None
    if intra not in ("fifo", "scf"):
        raise InputError("the astra-sim-1.0 timing runs FIFO or SCF",
                         "intra-dimension-scheduling", system.intra)
    routes = policy_routes(policy, collective, network)
    lbw = system.local_bw_aware
    plans = astra_plans(kind, routes, lbw, inter == "themis")
    endpoint = (system.endpoint_delay_ns if system.endpoint_delay_ns is not None
                else DEFAULT_ENDPOINT_DELAY_NS)
    res = simulate(
        network,
        collective,
        intra="astra-scf" if intra == "scf" else "fifo",
        timing=NAME,
        algorithms=system.algorithms_for(kind),
        endpoint_delay_ns=endpoint,
        active_chunks=system.active_chunks or 1,
        local_bw_aware=lbw and kind == "all-reduce" and inter != "themis",
        tie_order="dim" if system.boost_mode else "start",
        plans=[plans],
    )
    res.schedule.meta["policy"] = policy.name
    res.routes = [list(routes)]
    return res
