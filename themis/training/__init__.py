"""Training iterations end to end: ASTRA-sim 1.0 workload files on the per-dimension queues.

:func:`simulate_training` runs a :class:`~topologies.workload.Workload` on a
network with a :class:`TrainingConfig` and returns a :class:`TrainingResult`
(workloads.md of the ASTRA-sim 1.0 reference: the loops of every parallelism
keyword, dimension masks and splits, priorities and queue rules).

Importing the package is light: the names below are loaded on first use, and
the routers of :mod:`themis.training.routing` are imported when that registry
first needs them (:mod:`themis.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from themis import plugins

if TYPE_CHECKING:  # pragma: no cover - typing only
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

_CONFIG = frozenset(__all__) - {"simulate_training"}


def _load_routers() -> None:
    # The routers of themis.training.routing, in registration order; new ones go last.
    # isort: off
    import themis.training.running  # noqa: F401
    import themis.training.online_mix  # noqa: F401
    # isort: on


plugins.add_loader(_load_routers, ("router",), ("themis-running", "online-mix"))


def __getattr__(name: str) -> Any:
    # The re-exports, imported on first use (start-up is part of every run's time).
    if name in _CONFIG:
        import themis.training.config

        return getattr(themis.training.config, name)
    if name == "simulate_training":
        from themis.training.simulate import simulate_training

        return simulate_training
    raise AttributeError(f"module 'themis.training' has no attribute {name!r}")
