"""Collectives, timing, schedules and their checker, policies and the simulator.

Importing the package is light: the names below are loaded on first use, and
the planner layer (:mod:`themis.planning`, policies that simulate) is imported
by the registries when they first need a name they do not hold or list their
names (:mod:`themis.plugins`), so its policies are found wherever a policy name
is accepted while a command that uses none of them never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from themis import plugins

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis import planning
    from themis.collective import Collective
    from themis.schedule import ChunkPlan, Schedule, Stage, stage_plan
    from themis.timing import StageCost, make_timing, register_timing, timing_names

__all__ = [
    "ChunkPlan",
    "Collective",
    "Schedule",
    "Stage",
    "StageCost",
    "make_timing",
    "planning",
    "register_timing",
    "stage_plan",
    "timing_names",
]

_SCHEDULE = frozenset({"ChunkPlan", "Schedule", "Stage", "stage_plan"})
_TIMING = frozenset({"StageCost", "make_timing", "register_timing", "timing_names"})


def _load_planning() -> None:
    import themis.planning  # noqa: F401  (registers the planning policies and planners)


plugins.add_loader(_load_planning, ("policy", "planner"),
                   ("portfolio", "global-mix", "global-online", "auto"))


def __getattr__(name: str) -> Any:
    # The re-exports, imported on first use (start-up is part of every run's time).
    if name == "Collective":
        from themis.collective import Collective

        return Collective
    if name in _SCHEDULE:
        import themis.schedule

        return getattr(themis.schedule, name)
    if name in _TIMING:
        import themis.timing

        return getattr(themis.timing, name)
    if name == "planning":
        plugins.load_plugins()
        import themis.planning

        return themis.planning
    raise AttributeError(f"module 'themis' has no attribute {name!r}")
