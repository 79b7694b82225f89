"""lb-mix: the lower bound's integer route counts, laid out over the chunk order.

The route counts come from the LB3-like integer program of
:func:`themis.policies.route_mix.route_counts` (busy time per dimension in ns
with heads, tails and chains, deterministic HiGHS). Each size class's counts
are spread over its chunks by proportional interleaving, the most used route
first among equals. Strong at scale (many chunks), weaker with few chunks on
4-D networks, where the order matters more than the mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from themis.collective import Collective
from themis.plans import PlanShape
from themis.policies.base import PLAIN_RUN, PolicyChoice, Route, RunModel, register_policy
from themis.policies.route_mix import RouteLoads, blocks, interleave, route_counts
from themis.timing import Timing, make_timing
from topologies.network import Network

#: Layouts of the route counts over the chunks.
LAYOUTS: tuple[str, ...] = ("interleave", "blocks")


def mix_routes(loads: RouteLoads, counts: list[dict[int, int]],
               layout: str = "interleave", order: str = "count") -> list[Route]:
    """Routes per chunk from ``counts`` (one dict per size class).

    ``layout``: ``interleave`` (proportional) or ``blocks`` (contiguous);
    ``order`` of the routes among equals / of the blocks: ``count`` (most
    used first), ``index`` (baseline first) or ``head`` (shortest head on the
    busiest dimension first).
    """
    per_class: list[list[int]] = []
    for k, cnt in enumerate(counts):
        keys = sorted(cnt)
        if order == "count":
            keys.sort(key=lambda r: -cnt[r])
        elif order == "head":
            keys.sort(key=lambda r: loads.chain[k][r] - max(loads.tail[k][r].values()))
        elif order == "tail":
            keys.sort(key=lambda r: -min(loads.tail[k][r].values()))
        seq = interleave(cnt, keys) if layout == "interleave" else blocks(cnt, keys)
        per_class.append(seq)
    pos = [0] * len(counts)
    out: list[Route] = []
    for k in loads.chunk_class:
        out.append(loads.routes[per_class[k][pos[k]]])
        pos[k] += 1
    return out


@register_policy("lb-mix")
@dataclass(frozen=True)
class LbMix:
    """The integer route counts of the bound, interleaved over the chunks."""

    layout: str = "interleave"
    order: str = "count"
    name: str = "lb-mix"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Routes with the default alpha-beta timing (no endpoint delay)."""
        return self._routes(collective, network, make_timing("alpha-beta", network))

    def _routes(self, collective: Collective, network: Network, timing: Timing,
                shape: PlanShape = PlanShape.RS_AG) -> list[Route]:
        loads = RouteLoads.measure(collective, network, timing, shape)
        return mix_routes(loads, route_counts(loads), self.layout, self.order)

    def plan(self, collective: Collective, network: Network, timing: Timing,
             intra_options: Sequence[str], active_chunks: int = 1,
             run: RunModel = PLAIN_RUN) -> PolicyChoice:
        """Routes measured with the run's own ``timing`` and plan shape; the caller's
        discipline."""
        return PolicyChoice(self._routes(collective, network, timing, run.shape), None,
                            self.name)
