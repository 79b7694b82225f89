"""A lower bound of a training iteration, valid for every policy and discipline.

It plays the role of the Themis paper's "Ideal". Two parts:

1. **The loop with every collective at its own bound.** The workload loop is
   replayed with each collective c ending exactly ``LB(c)`` after its issue
   (then its layer's update time): compute, the +1 cycles and every wait are
   as in the real loop. ``LB(c)`` is the larger of (a) its slowest chunk alone
   on its best route and plan, and (b) the total stage time of its chunks,
   each on its best route, over the dimensions it can use and their k servers.
   Every time in the loop is a max-plus expression that grows with the
   collectives' end times, and a real collective never ends earlier than its
   issue plus ``LB(c)``, so by induction over events every replayed time,
   the end included, is <= the real one. For a blocking collective this is
   "the compute critical path plus its own bound".
2. **Bandwidth before the end.** For every replayed issue time tau, all
   collectives issued at or after tau (their real issues are at or after
   their replayed ones) have their stages between tau and the end: the end is
   at least tau + (their total stage time) / (dimensions x k) + the smallest
   update time among them.

The bound is the larger of the two. A collective's "stage time" is its
chunks' stage times over the k servers; with bandwidth sharing
(``alpha-beta``, k > 1) a dimension sends at most B bytes per ns and runs at
most k fixed parts at once, so its need is the larger of its byte time
(bytes / B) and its fixed time over k. The suffix sum of part 2 adds the
needs (a sum of maxima: valid because each term is).
"""

from __future__ import annotations

import itertools
import math

from themis.plans import PlanShape, stage_plan
from themis.timing.base import Timing
from themis.training.config import CollectiveRecord, Phase, TrainingConfig
from themis.training.engine import A2A, Engine
from themis.training.loops import drive
from themis.training.runner import Run
from topologies.network import Network
from topologies.workload import Workload


class _ChainTimes:
    """Per chunk, over every route and plan shape allowed: the shortest no-wait time,
    the least byte time (bytes / B summed over stages) and the least fixed time."""

    def __init__(self, engine: Engine, astra: bool, local_bw_aware: bool) -> None:
        self.engine = engine
        shapes = [PlanShape.RS_AG]
        if astra:
            shapes.append(PlanShape.LOCAL_BW_AWARE if local_bw_aware else PlanShape.AR_PER_DIM)
        self.shapes = shapes
        self.bw = [d.bandwidth_bytes_per_ns for d in engine.network.dims]
        self._memo: dict[tuple[str, tuple[int, ...], float], tuple[float, float, float]] = {}

    def best(self, kind: str, dims: tuple[int, ...], size: float) -> tuple[float, float, float]:
        key = (kind, dims, size)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        best = [math.inf, math.inf, math.inf]
        for route in itertools.permutations(dims):
            if kind == "all-to-all":
                plans = [tuple((A2A, d) for d in route)]
            elif kind == "all-reduce":
                plans = [stage_plan(kind, route, shape=s) for s in self.shapes]
            else:
                plans = [stage_plan(kind, route)]
            for plan in plans:
                t = bt = fx = 0.0
                m: float = size
                for phase, d in plan:
                    _, c = self.engine.stage_cost(kind, phase, d, m)
                    t += c.duration_ns
                    bt += c.sent_bytes / self.bw[d]
                    fx += c.fixed_ns
                    m = c.output_bytes
                best = [min(best[0], t), min(best[1], bt), min(best[2], fx)]
        out = self._memo[key] = (best[0], best[1], best[2])
        return out


def iteration_bound(wl: Workload, network: Network, b: int, cfg: TrainingConfig,
                    timings: dict[str, Timing], shared: bool = False) -> float:
    """The lower bound of the module docstring for the (scaled) workload ``wl``."""
    from themis.training.simulate import ASTRA, CollectiveShapes

    astra = cfg.timing == ASTRA
    engine = Engine(network, timings, "fifo", cfg.active_chunks, cfg.boost_mode, astra)
    chains = _ChainTimes(engine, astra, cfg.local_bw_aware)
    shapes = CollectiveShapes(wl, network, b, cfg)
    k = cfg.active_chunks
    issued: list[tuple[float, float, int]] = []  # (issue, capacity work, update)

    def capacity(work: tuple[float, float, float]) -> float:
        """Dimension-ns a collective needs: stage time over k servers, or with sharing
        its byte time (one bandwidth) and its fixed time (k at once), whichever is more."""
        return max(work[1], work[2] / k) if shared else work[0] / k
    total_dims = len(network.active_dims)

    def issue(run: Run, i: int, phase: Phase, highest: bool) -> CollectiveRecord | None:
        shape = shapes.shape(run, i, phase, highest)
        if shape is None:
            return None
        kind, size, sizes, _, dims, prio = shape
        now = engine.now
        alone = max(chains.best(kind, dims, s)[0] for s in set(sizes))
        parts = [chains.best(kind, dims, s) for s in sizes]
        work = tuple(sum(p[j] for p in parts) for j in range(3))
        need = capacity(work)  # type: ignore[arg-type]
        lb = max(alone, need / len(dims))
        issued.append((now, need, wl.layers[i].update_ns))
        rec = CollectiveRecord(len(issued) - 1, i, str(phase), kind, size, dims, now)
        engine.at(now + lb, lambda: run.collective_done(rec, i, phase, engine.now))
        return rec

    run = Run.for_workload(wl, issue, engine, cfg.scheduling_policy)
    drive(run, wl, cfg.passes)
    best = float(run.end_ns if run.end_ns is not None else 0.0)
    issued.sort()
    work = 0.0
    update = math.inf
    for tau, w, u in reversed(issued):
        work += w
        update = min(update, u)
        best = max(best, tau + work / total_dims + update)
    return best
