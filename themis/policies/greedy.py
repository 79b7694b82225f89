"""Themis (ISCA 2022): greedy per-chunk routes that balance dimension loads.

This is model.md §6, the OfflineGreedy of ASTRA-sim: loads in "MiB at B_0",
a persistent stable-sorted dimension list, a fallback to 0..D-1 when the
load gap is worth fewer than chunk/16 bytes, loads reset per collective.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from themis.collective import Collective
from themis.policies.base import Route, register_policy
from topologies.network import Network
from topologies.units import MiB


@register_policy("themis")
@dataclass(frozen=True)
class Themis:
    """The Themis greedy. ``threshold_divisor`` is the 16 of chunk/16.

    ``astra`` runs ASTRA-sim 1.0's ``OfflineGreedy::get_chunk_scheduling``
    with its quirks (what ``astra-sim-1.0`` system files run):

    * bandwidths as ASTRA's Themis sees them (``themis_bandwidth``: whole
      usable links), chunk sizes as unsigned integers (``/=`` floors);
    * the threshold is ``recommended // 16`` for every chunk (the regular
      chunk, for an all-gather its shard), no forced fallback on chunk 0;
    * all-gather gap: the least-loaded involved entry l against the first
      involved one, in bytes of l (``/ (P_l - 1)``), then integer-divided by
      the size of every involved entry from the first one up to l (l
      excluded); after a fallback the loads are added through the reversed
      list (dimension i's term lands on the entry of dimension D-1-i).

    For all-reduce and reduce-scatter with whole-link bandwidths and sizes
    that divide exactly, both variants choose the same routes.
    """

    threshold_divisor: int = 16
    astra: bool = False
    name: str = "themis"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Routes for every chunk, chosen in chunk order at issue time."""
        return self.routes_with_loads(collective, network)[0]

    def routes_with_loads(
        self, collective: Collective, network: Network
    ) -> tuple[list[Route], dict[int, float]]:
        """Routes and the final per-dimension loads (MiB at B_0) of the active dims
        (with ``astra``: of every dimension, size-1 ones at 0)."""
        routes, entries = self.routes_from(collective, network)
        return routes, {d: load for load, d in sorted(entries, key=itemgetter(1))
                        if self.astra or network.dims[d].npus > 1}

    def routes_from(self, collective: Collective, network: Network,
                    entries: list[list[Any]] | None = None
                    ) -> tuple[list[Route], list[list[Any]]]:
        """Routes for every chunk, starting from the greedy's list ``entries`` of
        ``[load, dim]`` in its persistent order (default: every load 0, in dimension
        order, ASTRA's ``OfflineGreedy::reset_loads``), and that list afterwards (a copy:
        ``entries`` is left as it is)."""
        dims = network.dims
        nd = len(dims)
        astra = self.astra
        div = self.threshold_divisor
        size = [d.npus for d in dims]
        inv = [p > 1 for p in size]
        all_active = all(inv)
        if astra:  # late: the plain simulator's runs need not import ASTRA-sim 1.0's timing
            from themis.timing.astra10 import themis_bandwidth

            bw = [themis_bandwidth(d) for d in dims]
        else:
            bw = [d.bandwidth_GBps for d in dims]
        ratio = [b / bw[0] for b in bw]
        gather = collective.kind == "all-gather"
        active = network.active_dims
        n_total = math.prod(size[d] for d in active)
        rec = collective.chunk_bytes // n_total if gather else collective.chunk_bytes
        # A stage's load is ((size / MiB) * fac) / ratio, in this order of operations.
        fac = [float(p - 1) for p in size] if gather else [(p - 1) / p if p else 0.0
                                                           for p in size]
        by_load, by_dim = itemgetter(0), itemgetter(1)

        # The persistent list of [load, dim] (size-1 dimensions stay at load 0 and
        # are skipped: a stable sort keeps the active ones' relative order).
        entries = [[0.0, i] for i in range(nd)] if entries is None else \
            [list(e) for e in entries]  # [load, dim] pairs
        routes: list[Route] = []
        for idx, c in enumerate(collective.chunk_sizes()):
            entries.sort(key=by_load)
            if gather:
                entries.reverse()
            order = entries if all_active else [e for e in entries if inv[e[1]]]
            first, last = order[0][1], order[-1][1]
            if astra:
                cs0: float = rec
                threshold = rec // div
            else:
                cs0 = c / n_total if gather else float(c)
                threshold = c // div
            if astra and gather:
                diff = abs(order[-1][0] - order[0][0])
                gap: float = int(((diff * ratio[last]) / float(size[last] - 1)) * MiB)
                for e in order[:-1][::-1]:  # the involved entries before l, down to the first
                    gap //= size[e[1]]
            else:
                diff = abs(entries[-1][0] - order[0][0]) if astra else \
                    abs(order[-1][0] - order[0][0])
                gap = ((diff * ratio[first]) / ((size[first] - 1) / size[first])) * MiB
                if astra:
                    gap = int(gap)
            if (idx == 0 and not astra) or gap < threshold:
                # Fall back to 0..D-1; the list goes back to index order.
                entries.sort(key=by_dim)
                if gather and astra:
                    entries.reverse()  # so dimension i's term lands on entry D-1-i
                cs = cs0
                for i in active:
                    entries[i][0] += ((cs / MiB) * fac[i]) / ratio[i]
                    cs = cs * size[i] if gather else (cs // size[i] if astra else cs / size[i])
                routes.append(active)
                continue
            cs = cs0
            for e in order:
                i = e[1]
                e[0] += ((cs / MiB) * fac[i]) / ratio[i]
                cs = cs * size[i] if gather else (cs // size[i] if astra else cs / size[i])
            routes.append(tuple([e[1] for e in order]))
        return routes, entries
