"""Integer scaling of the CP-SAT model: durations in ticks, and a timing that speaks ticks.

Two grids (:func:`grid`):

- **exact** (:func:`exact_grid`): every stage duration as an exact rational,
  ``fixed + sent / B`` from the timing's own stage cost (the fixed part,
  steps x (latency + delays), and the bytes sent, each read back as the
  simplest fraction within a few ulps: the inputs are decimal numbers and the
  sizes are divided by the P_d; B in bytes/ns is GB/s x 2^30 / 1e9), and the
  tick is their GCD; each duration is checked against the float the simulator
  uses. When the
  longest stage is below ``EXACT_CAP`` ticks the model is exact integer
  arithmetic: no scaling error, the makespan of a semi-active schedule is a
  whole number of ticks (so its lower bound is ``ceil(LB / tick)``) and
  CP-SAT may stop at a gap of 0. With a remainder chunk whose durations do
  not fit a fine enough common grid, the tick is the main class's GCD and
  only the remainder's stages are rounded up (``rounded_stages`` of them):
  the error is then ``rounded_stages`` ticks, not one tick per stage.
- **rounded** (the fallback where no exact grid fits, :func:`scale`): one
  tick is ``max stage duration / resolution`` ns and every duration is
  rounded *up* to whole ticks, so a schedule of the scaled model stays
  feasible with exact durations (the re-timed makespan is at most the
  solver's), and the scaled optimum exceeds the exact one by at most one
  tick per stage on a path (``stages * tick``).

Time reversal maps RS on d (route r) onto AG on d (AG order reversed(r)) with
the same exact duration; the tick counts of the two are made equal too (the
larger), so the mirror symmetry breaking is exact in the scaled model.

:class:`TickTiming` gives the simulator the scaled durations, so that
:func:`themis.simulator.replay` re-times a hint in ticks (no scheduler of our own).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from solvers.common import ProblemData
from themis.plans import PlanShape
from themis.schedule import stage_plan
from themis.stages import chain
from themis.timing import timing_meaning, timing_names
from themis.timing.base import StageCost, Timing

#: Largest number of ticks of the longest stage on an exact grid.
EXACT_CAP = 5_000_000
#: Relative floating-point noise tolerated when an input (latency, bytes sent,
#: bandwidth) is read back as a rational (a few ulps).
RATIONAL_TOL = 1e-14
#: Largest relative difference between an exact duration and the simulator's float.
DURATION_TOL = 1e-12


class Grid(enum.StrEnum):
    """Which time grid a scaled model uses."""

    EXACT = "exact"              # every duration a whole number of ticks
    EXACT_MAIN = "exact-main"    # exact for the main chunk class, remainder rounded up
    ROUNDED = "rounded"          # every duration rounded up (longest / resolution ticks)


@dataclass
class Scaled:
    """Durations in ticks: ``p_rs[k][r][d]``, ``p_ag[k][q][d]`` (see :class:`ProblemData`).

    ``grid`` says how they were obtained; ``rounded_stages`` bounds how many
    stages of one schedule have a rounded-up duration (0 on an exact grid,
    the stages of the remainder chunk on ``exact-main``, all on ``rounded``);
    ``rounding_ns = rounded_stages * tick_ns`` bounds the scaled optimum's
    excess over the exact one.
    """

    tick_ns: float
    resolution: int
    p_rs: list[list[dict[int, int]]]
    p_ag: list[list[dict[int, int]]]
    grid: Grid = Grid.ROUNDED
    rounded_stages: int = 0

    @property
    def rounding_ns(self) -> float:
        """How far the scaled optimum can exceed the exact one (ns)."""
        return self.rounded_stages * self.tick_ns

    @property
    def exact(self) -> bool:
        """Whether every duration is a whole number of ticks."""
        return self.grid == Grid.EXACT

    def rs(self, data: ProblemData, c: int, r: int, d: int) -> int:
        """RS ticks of chunk ``c`` on ``d`` along route ``r``."""
        return self.p_rs[data.class_of[c]][r][d]

    def ag(self, data: ProblemData, c: int, q: int, d: int) -> int:
        """AG ticks of chunk ``c`` on ``d`` in AG order ``q``."""
        return self.p_ag[data.class_of[c]][q][d]


def simplest_fraction(x: float, tol: float = RATIONAL_TOL) -> Fraction:
    """The fraction with the smallest denominator within ``tol * |x|`` of ``x``.

    (Stern-Brocot / continued fractions: the simplest rational in an interval.)
    """
    if x < 0:
        return -simplest_fraction(-x, tol)
    eps = Fraction(tol) * Fraction(x)
    lo, hi = Fraction(x) - eps, Fraction(x) + eps
    return _simplest_between(max(lo, Fraction(0)), hi)


def _simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The simplest fraction in the closed interval [lo, hi] (0 <= lo <= hi)."""
    fl = math.floor(lo)
    if fl == lo:
        return Fraction(fl)
    if fl + 1 <= hi:
        return Fraction(fl + 1)
    # Both in (fl, fl + 1): recurse on the reciprocals of the fractional parts.
    return fl + 1 / _simplest_between(1 / (hi - fl), 1 / (lo - fl))


def _gcd(values: list[Fraction]) -> Fraction:
    """GCD of positive rationals (the largest rational dividing each a whole number of times)."""
    g = Fraction(0)
    for v in values:
        g = Fraction(math.gcd(g.numerator * v.denominator, v.numerator * g.denominator),
                     g.denominator * v.denominator)
    return g


def exact_durations(data: ProblemData) -> tuple[list, list] | None:
    """Every duration of ``data`` as a :class:`~fractions.Fraction` (``rs``, ``ag`` shapes).

    ``None`` unless the timing's meaning is ``affine_exact`` (alpha-beta: ``fixed +
    sent / B``) and
    every exact value agrees with the float duration within ``DURATION_TOL``.
    """
    inst = data.instance
    tm = inst.timing
    name = getattr(tm, "name", "")
    if name not in timing_names() or not timing_meaning(name).affine_exact:
        return None
    bw = {d: simplest_fraction(inst.network.dims[d].bandwidth_GBps) * 2**30 / 10**9
          for d in data.dims}
    n = len(data.dims)
    rs, ag = [], []
    for size in data.classes:
        rs_k, ag_k = [], []
        for r in range(len(data.perms)):
            plan = data.plan(r)
            costs = [c for _, c in chain(tm, "all-reduce", float(size), plan)]
            rs_k.append({d: _exact(c, bw[d]) for (_, d), c in zip(plan[:n], costs[:n],
                                                                   strict=True)})
            if not data.free:
                ag_k.append({d: _exact(c, bw[d]) for (_, d), c in zip(plan[n:], costs[n:],
                                                                       strict=True)})
        if data.free:
            for q in range(len(data.ag_perms)):
                plan = data.plan(0, q)
                costs = [c for _, c in chain(tm, "all-reduce", float(size), plan)]
                ag_k.append({d: _exact(c, bw[d]) for (_, d), c in zip(plan[n:], costs[n:],
                                                                       strict=True)})
        rs.append(rs_k)
        ag.append(ag_k)
    for exact, floats in ((rs, data.rs), (ag, data.ag)):
        for ek, fk in zip(exact, floats, strict=True):
            for erow, frow in zip(ek, fk, strict=True):
                for d, v in erow.items():
                    if abs(float(v) - frow[d]) > DURATION_TOL * max(abs(frow[d]), 1.0):
                        return None
    return rs, ag


def _exact(cost, bandwidth: Fraction) -> Fraction:
    return simplest_fraction(cost.fixed_ns) + simplest_fraction(cost.sent_bytes) / bandwidth


def _tick_of(durations: list[Fraction], cap: int) -> Fraction | None:
    """The GCD of ``durations`` if the longest is at most ``cap`` ticks."""
    fracs = sorted({v for v in durations if v > 0})
    if not fracs:
        return None
    tick = _gcd(fracs)
    if tick <= 0 or max(fracs) / tick > cap:
        return None
    return tick


def exact_grid(data: ProblemData, cap: int = EXACT_CAP) -> Scaled | None:
    """The exact grid of ``data`` (see the module docstring), or ``None`` if none fits."""
    exact = exact_durations(data)
    if exact is None:
        return None
    rs, ag = exact
    ncls = len(data.classes)

    def of(classes) -> list[Fraction]:
        return [v for part in (rs, ag) for k in classes for row in part[k] for v in row.values()]

    tick = _tick_of(of(range(ncls)), cap)
    grid, exact_classes = Grid.EXACT, set(range(ncls))
    if tick is None and ncls > 1:
        main = max(range(ncls), key=lambda k: data.class_count[k])
        tick = _tick_of(of([main]), cap)
        grid, exact_classes = Grid.EXACT_MAIN, {main}
        if tick is not None and max(of(range(ncls))) / tick > 2 * cap:
            tick = None
    if tick is None:
        return None

    def ticks(k: int, v: Fraction) -> int:
        return max(1, math.ceil(v / tick))  # whole on the exact classes, rounded up else

    p_rs = [[{d: ticks(k, v) for d, v in row.items()} for row in rs[k]] for k in range(ncls)]
    p_ag = [[{d: ticks(k, v) for d, v in row.items()} for row in ag[k]] for k in range(ncls)]
    _mirror(data, p_rs, p_ag)
    rounded = sum(2 * len(data.dims) * data.class_count[k] for k in range(ncls)
                  if k not in exact_classes)
    longest = max(max(row.values()) for part in (p_rs, p_ag) for k in part for row in k)
    return Scaled(float(tick), longest, p_rs, p_ag, grid, rounded)


def grid(data: ProblemData, resolution: int, cap: int = EXACT_CAP) -> Scaled:
    """The exact grid where one fits (and is at least as fine as needed), else :func:`scale`."""
    exact = exact_grid(data, cap)
    return exact if exact is not None else scale(data, resolution)


def _mirror(data: ProblemData, p_rs: list, p_ag: list) -> None:
    for k in range(len(data.classes)):
        for r, perm in enumerate(data.perms):
            q = data.ag_perms.index(tuple(reversed(perm)))
            for d in data.dims:
                both = max(p_rs[k][r][d], p_ag[k][q][d])
                p_rs[k][r][d] = p_ag[k][q][d] = both


def scale(data: ProblemData, resolution: int) -> Scaled:
    """Round every duration of ``data`` up to ticks of ``max duration / resolution``."""
    tick = data.max_duration_ns / resolution

    def ticks(ns: float) -> int:
        return max(1, math.ceil(ns / tick))

    p_rs = [[{d: ticks(v) for d, v in row.items()} for row in k] for k in data.rs]
    p_ag = [[{d: ticks(v) for d, v in row.items()} for row in k] for k in data.ag]
    _mirror(data, p_rs, p_ag)
    return Scaled(tick, resolution, p_rs, p_ag, Grid.ROUNDED, data.nstages)


class TickTiming:
    """The instance's timing with every stage lasting its scaled ticks (as float ns).

    Sizes and bytes are the exact timing's, so the simulator walks a plan
    through the same sizes as :class:`ProblemData` did and finds each stage's
    ticks by (phase, dimension, input size). Where two entries share a key
    the larger tick count is kept (a hint timed with it stays feasible).
    """

    resource_law = "exclusive"
    #: The model's plans are reduce-scatter then all-gather (the only stages it times).
    plan_shapes: ClassVar[tuple[PlanShape, ...]] = (PlanShape.RS_AG,)

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
