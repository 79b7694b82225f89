"""The one re-timing of a solver's answer: the simulator replaying its routes and orders.

A backend's answer is an :class:`~solvers.common.Assignment` (routes and the
order in which every dimension runs its stages). The simulator replays it with
exact durations (each stage as early as its chunk and its dimension allow: a
semi-active schedule), so every makespan a :class:`~solvers.result.Result`
reports is the simulator's. :class:`Retimer` does it at most once per distinct
answer (a backend that checks an intermediate answer and the final grading
share it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from solvers.common import Assignment, ProblemData
from themis.schedule import Schedule
from themis.simulator import simulate


def _key(a: Assignment) -> tuple:
    return (tuple(a.route), tuple(a.ag),
            tuple((d, tuple(order)) for d, order in sorted(a.orders.items())))


class Retimer:
    """Re-times assignments of one problem, each distinct one once."""

    def __init__(self, data: ProblemData) -> None:
        self.data = data
        self._cache: dict[tuple, Schedule] = {}
        #: How many replays ran (the tests check that an answer is re-timed once).
        self.replays = 0

    def __call__(self, assignment: Assignment) -> Schedule:
        """The semi-active exact schedule of ``assignment`` (RuntimeError: contradictory orders)."""
        key = _key(assignment)
        sched = self._cache.get(key)
        if sched is None:
            inst = self.data.instance
            self.replays += 1
            res = simulate(inst.network, inst.collective, timing=inst.timing,
                           plans=[assignment.plans(self.data)],
                           dim_orders=cast(dict[int, Sequence[tuple[int, int, int]]],
                                           assignment.dim_orders()),
                           ag_order=self.data.ag_order)
            sched = res.schedule
            sched.meta["policy"] = "solver"
            self._cache[key] = sched
        return sched
