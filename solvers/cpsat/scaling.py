"""Integer scaling of the CP-SAT model: durations in ticks, and a timing that speaks ticks.

One tick is ``max stage duration / resolution`` ns and every duration is
rounded *up* to whole ticks, so a schedule of the scaled model stays feasible
with exact durations (the re-timed makespan is at most the solver's), and the
scaled optimum exceeds the exact one by at most one tick per stage on a path
(``stages * tick``). Time reversal maps RS on d (route r) onto AG on d (AG
order reversed(r)) with the same exact duration; the rounded durations of
the two are made equal too (the larger), so the mirror symmetry breaking is
exact in the scaled model.

:class:`TickTiming` gives the simulator the scaled durations, so that
:func:`themis.simulator.replay` re-times a hint in ticks (no scheduler of our own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from solvers.common import ProblemData
from themis.schedule import stage_plan
from themis.timing.base import StageCost, Timing


@dataclass
class Scaled:
    """Durations in ticks: ``p_rs[k][r][d]``, ``p_ag[k][q][d]`` (see :class:`ProblemData`)."""

    tick_ns: float
    resolution: int
    p_rs: list[list[dict[int, int]]]
    p_ag: list[list[dict[int, int]]]

    def rs(self, data: ProblemData, c: int, r: int, d: int) -> int:
        """RS ticks of chunk ``c`` on ``d`` along route ``r``."""
        return self.p_rs[data.class_of[c]][r][d]

    def ag(self, data: ProblemData, c: int, q: int, d: int) -> int:
        """AG ticks of chunk ``c`` on ``d`` in AG order ``q``."""
        return self.p_ag[data.class_of[c]][q][d]


def scale(data: ProblemData, resolution: int) -> Scaled:
    """Round every duration of ``data`` up to ticks of ``max duration / resolution``."""
    tick = data.max_duration_ns / resolution

    def ticks(ns: float) -> int:
        return max(1, math.ceil(ns / tick))

    p_rs = [[{d: ticks(v) for d, v in row.items()} for row in k] for k in data.rs]
    p_ag = [[{d: ticks(v) for d, v in row.items()} for row in k] for k in data.ag]
    for k in range(len(data.classes)):
        for r, perm in enumerate(data.perms):
            q = data.ag_perms.index(tuple(reversed(perm)))
            for d in data.dims:
                both = max(p_rs[k][r][d], p_ag[k][q][d])
                p_rs[k][r][d] = p_ag[k][q][d] = both
    return Scaled(tick, resolution, p_rs, p_ag)


class TickTiming:
    """The instance's timing with every stage lasting its scaled ticks (as float ns).

    Sizes and bytes are the exact timing's, so the simulator walks a plan
    through the same sizes as :class:`ProblemData` did and finds each stage's
    ticks by (phase, dimension, input size). Where two entries share a key
    the larger tick count is kept (a hint timed with it stays feasible).
    """

    shares_bandwidth = False

    def __init__(self, data: ProblemData, scaled: Scaled) -> None:
        base: Timing = data.instance.timing
        self.base = base
        self.name = base.name
        self.network = base.network
        self.algorithms = tuple(base.algorithms)
        self.endpoint_delay_ns = base.endpoint_delay_ns
        self.table: dict[tuple[str, int, float], int] = {}
        for k, size in enumerate(data.classes):
            for r in range(len(data.perms)):
                for q in (range(len(data.ag_perms)) if data.free else (r,)):
                    plan = stage_plan("all-reduce", data.perms[r],
                                      data.ag_perms[q] if data.free else None)
                    m = float(size)
                    for phase, d in plan:
                        t = scaled.p_rs[k][r][d] if phase == "RS" else scaled.p_ag[k][q][d]
                        key = (phase, d, m)
                        self.table[key] = max(t, self.table.get(key, 0))
                        m = base.stage(phase, d, m).output_bytes

    def stage(self, phase: str, dim: int, input_bytes: float) -> StageCost:
        """The stage's exact cost with its duration replaced by its ticks."""
        cost = self.base.stage(phase, dim, input_bytes)
        return StageCost(float(self.table[phase, dim, input_bytes]), 0.0, cost.sent_bytes,
                         cost.output_bytes)

    def all_gather_input(self, chunk_bytes: float) -> float:
        """As the exact timing."""
        return self.base.all_gather_input(chunk_bytes)
