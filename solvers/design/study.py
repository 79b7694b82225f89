"""Design for every scheduler and the regret of designing for the wrong one."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from solvers.design.problem import (
    BOUND,
    DEFAULT_EVALUATIONS,
    DesignEvaluator,
    DesignProblem,
    TraceSpec,
)
from solvers.design.search import Design, design, even_split


@dataclass(frozen=True)
class RegretTable:
    """Every design run under every policy: ``time_ns[design][policy]``, each design's
    bound, and the regret of running ``policy`` on a design made for another."""

    designs: dict[str, tuple[float, ...]]
    policies: tuple[str, ...]
    time_ns: dict[str, dict[str, float]]
    #: Each design's route-LP bound (``None`` under an ASTRA-sim timing: it bounds alpha-beta).
    bound_ns: dict[str, float | None]

    def regret(self, design_name: str, policy: str) -> float | None:
        """``time(design, policy) / time(policy's own design, policy) - 1`` (None without
        a design made for ``policy``)."""
        own = self.time_ns.get(policy, {}).get(policy)
        if own is None or own <= 0:
            return None
        return self.time_ns[design_name][policy] / own - 1.0

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"policies": list(self.policies),
                "designs": {n: {"bandwidths_GBps": list(bw), "time_ns": self.time_ns[n],
                                "bound_ns": self.bound_ns[n],
                                "regret": {p: self.regret(n, p) for p in self.policies}}
                            for n, bw in self.designs.items()}}


def regret_table(problem: DesignProblem, designs: dict[str, tuple[float, ...]],
                 policies: Sequence[str], evaluator: DesignEvaluator | None = None
                 ) -> RegretTable:
    """Run every design under every policy (and its bound)."""
    ev = evaluator or DesignEvaluator(problem)
    times = {n: {p: ev(p, bw) for p in policies} for n, bw in designs.items()}
    no_bound = problem.runner or isinstance(problem.training, TraceSpec)
    bounds: dict[str, float | None] = {
        n: None if no_bound else ev(BOUND, bw) for n, bw in designs.items()}
    return RegretTable(dict(designs), tuple(policies), times, bounds)


@dataclass(frozen=True)
class DesignStudy:
    """A design per policy (each searched from every design made before it too, so each is
    the best design found under its own policy) and the regret table of all of them."""

    problem: DesignProblem
    designs: dict[str, Design]
    table: RegretTable

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"budget": self.problem.budget, "costs": list(self.problem.costs),
                "designs": {n: d.to_dict() for n, d in self.designs.items()},
                "regret_table": self.table.to_dict()}


def design_study(problem: DesignProblem, policies: Sequence[str],
                 evaluations: int = DEFAULT_EVALUATIONS,
                 executor: Executor | None = None) -> DesignStudy:
    """Design for each policy in turn, then run every design (and the even split) under
    every policy: what designing for the wrong scheduler costs. ``executor`` evaluates
    batches of designs in parallel (same result)."""
    ev = DesignEvaluator(problem, executor=executor)
    made: dict[str, Design] = {}
    for policy in policies:
        starts = {f"{n} design": d.bandwidths_GBps for n, d in made.items()}
        made[policy] = design(problem, policy, evaluations, starts, ev)
    for policy in policies:  # a design made later may beat an earlier one under its policy
        others = {f"{n} design": d.bandwidths_GBps for n, d in made.items() if n != policy}
        if any(ev(policy, bw) < made[policy].time_ns for bw in others.values()):
            made[policy] = design(problem, policy, evaluations, others, ev)
    designs = {"even": even_split(problem)} | {n: d.bandwidths_GBps for n, d in made.items()}
    return DesignStudy(problem, made, regret_table(problem, designs, policies, ev))
