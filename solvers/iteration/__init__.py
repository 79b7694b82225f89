"""Exact small training iterations: the CP-SAT model of a whole iteration (:mod:`.model`)
over the loop's trace (:mod:`.trace`); a 1.0 workload's problem (:mod:`.workload`), a Chakra
trace's (:mod:`.et`)."""

from solvers.iteration.model import DETERMINISTIC_S, MAX_INTERVALS, IterationResult
from solvers.iteration.workload import replay_iteration, solve_iteration

__all__ = ["DETERMINISTIC_S", "MAX_INTERVALS", "IterationResult", "replay_iteration",
           "solve_iteration"]
