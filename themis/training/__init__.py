"""Training iterations end to end: ASTRA-sim 1.0 workload files on the per-dimension queues.

:func:`simulate_training` runs a :class:`~topologies.workload.Workload` on a
network with a :class:`TrainingConfig` and returns a :class:`TrainingResult`
(workloads.md of the ASTRA-sim 1.0 reference: the loops of every parallelism
keyword, dimension masks and splits, priorities and queue rules).
"""

from themis.training.config import (
    CollectiveRecord,
    DimStats,
    LayerStats,
    Phase,
    SchedulingPolicy,
    Timeline,
    TrainingConfig,
    TrainingResult,
)
from themis.training.simulate import simulate_training

# isort: off
# The routers of themis.training.routing, in registration order; new ones go last.
from themis.training import running  # noqa: F401
from themis.training import online_mix  # noqa: F401
# isort: on

__all__ = [
    "CollectiveRecord",
    "DimStats",
    "LayerStats",
    "Phase",
    "SchedulingPolicy",
    "Timeline",
    "TrainingConfig",
    "TrainingResult",
    "simulate_training",
]
