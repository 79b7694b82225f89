"""How a planner scores a candidate: the makespan the run would give it.

A planner (:mod:`themis.planning.portfolio`, :mod:`themis.planning.local_search`)
is a client of the simulator: it hands the simulator plans and a discipline, as
the run it plans for applies them (a :class:`~themis.policies.base.RunModel`:
plan shape, queues, tie order), and reads the makespan only
(:func:`themis.simulator.makespan_ns`: no Schedule, no metrics).
"""

from __future__ import annotations

from collections.abc import Sequence

from themis.collective import Collective
from themis.plans import Plan, PlanShape
from themis.policies.base import RunModel
from themis.simulator import SimConfig, makespan_ns
from themis.timing import Timing
from topologies.network import Network


def run_makespan_ns(run: RunModel, collective: Collective, network: Network, timing: Timing,
                    plans: Sequence[Plan], intra: str, active_chunks: int = 1,
                    shape: PlanShape | None = None) -> float:
    """The makespan ``run`` gives ``plans`` (of shape ``shape``, default the run's)
    under the discipline ``intra`` (as the run queues it)."""
    lbw = (shape or run.shape) is PlanShape.LOCAL_BW_AWARE and collective.kind == "all-reduce"
    config = SimConfig(intra=run.discipline(intra), timing=timing, active_chunks=active_chunks,
                       local_bw_aware=lbw, tie_order=run.tie_order)
    return makespan_ns(network, collective, config, plans=[plans])
