"""Collectives, timing, schedules and their checker, policies and the simulator.

The planner layer (:mod:`themis.planning`, policies that simulate) is imported
last, so its policies are registered wherever a policy name is accepted.
"""

from themis.collective import Collective
from themis.schedule import ChunkPlan, Schedule, Stage, stage_plan
from themis.timing import StageCost, make_timing, register_timing, timing_names

# isort: off
from themis import planning  # noqa: E402  (last: it registers the planning policies)
# isort: on

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
