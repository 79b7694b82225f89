"""Collectives, timing, schedules and their checker, policies and the simulator."""

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
    "register_timing",
    "stage_plan",
    "timing_names",
]
