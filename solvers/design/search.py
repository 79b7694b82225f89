"""The design search: starts (even split, LIBRA's, the bound's, route and lattice designs)
and the deterministic pattern search on the budget."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from solvers.design.problem import (
    BOUND,
    DEFAULT_EVALUATIONS,
    LIBRA,
    MIN_MOVE_SHARE,
    DesignEvaluator,
    DesignProblem,
    TraceSpec,
    design_policy_names,
)
from topologies.errors import InputError


@dataclass(frozen=True)
class Design:
    """A design found for one policy: its bandwidths, its time under that policy, its price,
    the start it came from and what the search spent."""

    policy: str
    bandwidths_GBps: tuple[float, ...]
    time_ns: float
    cost: float
    start: str
    starts_ns: dict[str, float] = field(default_factory=dict)
    evaluations: int = 0

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"policy": self.policy, "bandwidths_GBps": list(self.bandwidths_GBps),
                "time_ns": self.time_ns, "cost": self.cost, "start": self.start,
                "starts_ns": dict(self.starts_ns), "evaluations": self.evaluations}


def even_split(problem: DesignProblem) -> tuple[float, ...]:
    """The same bandwidth on every dimension a collective crosses, spending the budget."""
    active = problem.active_dims
    fixed = sum(problem.costs[d] * problem._floor(d) for d in range(problem.network.ndims)
                if d not in active)
    each = (problem.budget - fixed) / sum(problem.costs[d] for d in active)
    return problem.project([each if d in active else 0.0 for d in range(problem.network.ndims)])


def libra_design(problem: DesignProblem) -> tuple[float, ...]:
    """LIBRA's design: the fluid fixed-order optimum (closed form for one collective;
    the search on the fluid time for a mix)."""
    items = [i for i in problem.items if i.weight > 0 and i.dims()]
    if len(items) == 1:
        item = items[0]
        rounds = 2.0 if item.kind == "all-reduce" else 1.0
        traffic = [0.0] * problem.network.ndims
        before = 1
        for d in item.dims():
            n = item.group[d]
            traffic[d] = rounds * item.size_bytes * (n - 1) / n / before
            before *= n
        weighted = sum(c * t for c, t in zip(problem.costs, traffic, strict=True))
        return problem.project([problem.budget * t / weighted for t in traffic])
    evaluator = DesignEvaluator(problem)
    return _search(problem, lambda bws: evaluator.many(LIBRA, bws), even_split(problem),
                   10 * DEFAULT_EVALUATIONS)[0]


#: Route designs are start points up to this many dimensions (d! of them).
ROUTE_STARTS_MAX_DIMS = 5
#: The search runs from this many of the best start points.
SEARCH_STARTS = 3


def route_designs(problem: DesignProblem) -> dict[str, tuple[float, ...]]:
    """For each order of the dimensions, the fluid design of the workload run in that order
    (bandwidth in proportion to the bytes each dimension carries, weighted by the
    collectives' weights): start points that the fixed-order LIBRA design is one of."""
    active = problem.active_dims
    if len(active) > ROUTE_STARTS_MAX_DIMS:
        return {}
    out = {}
    for route in itertools.permutations(active):
        traffic = [0.0] * problem.network.ndims
        for item in problem.items:
            rounds = 2.0 if item.kind == "all-reduce" else 1.0
            before = 1
            for d in route:
                n = item.group[d]
                if n > 1:
                    traffic[d] += item.weight * rounds * item.size_bytes * (n - 1) / n / before
                    before *= n
        weighted = sum(c * t for c, t in zip(problem.costs, traffic, strict=True))
        if weighted > 0:
            out["route " + ",".join(map(str, route))] = problem.project(
                [problem.budget * t / weighted for t in traffic])
    return out


def lattice_designs(problem: DesignProblem, most: int) -> dict[str, tuple[float, ...]]:
    """The coarse grid of budget shares in multiples of 1/m over the active dimensions
    (every dimension at least one share), m the largest with at most ``most`` points:
    deterministic start points that cover the whole budget simplex."""
    active = problem.active_dims
    k = len(active)
    if k < 2 or most < 1:
        return {}
    m = k  # shares of 1/m, each dimension >= 1: C(m-1, k-1) points
    while math.comb(m, k - 1) <= most:
        m += 1
    fixed = sum(problem.costs[d] * problem._floor(d) for d in range(problem.network.ndims))
    spend = problem.budget - fixed
    out = {}
    for cuts in itertools.combinations(range(1, m), k - 1):
        parts = [b - a for a, b in zip((0, *cuts), (*cuts, m), strict=True)]
        bw = [problem._floor(d) for d in range(problem.network.ndims)]
        for d, part in zip(active, parts, strict=True):
            bw[d] += spend * part / m / problem.costs[d]
        out["grid " + ":".join(map(str, parts))] = problem.project(bw)
    return out


def _moves(problem: DesignProblem, bw: tuple[float, ...], delta: float
           ) -> Iterable[tuple[float, ...]]:
    """Every design one move away: ``delta`` of budget from dimension i to dimension j."""
    active = problem.active_dims
    for i in active:
        for j in active:
            if i == j:
                continue
            take = min(delta, problem.costs[i] * (bw[i] - problem._floor(i)),
                       problem.costs[j] * (problem.max_GBps[j] - bw[j]))
            if take <= 1e-12 * problem.budget:
                continue
            new = list(bw)
            new[i] -= take / problem.costs[i]
            new[j] += take / problem.costs[j]
            new[i] = max(new[i], problem._floor(i))
            yield tuple(new)


#: A batch objective: the times of a list of designs, in order (evaluated in parallel
#: where the evaluator has an executor; the search's result does not depend on it).
Objective = Callable[[list[tuple[float, ...]]], list[float]]


def _best_move(objective: Objective, cands: list[tuple[float, ...]], best_ns: float
               ) -> tuple[tuple[float, ...] | None, float]:
    """The first candidate of least time that improves on ``best_ns`` (relative 1e-9)."""
    move, move_ns = None, best_ns
    for cand, value in zip(cands, objective(cands), strict=True):
        if value < move_ns * (1 - 1e-9):
            move, move_ns = cand, value
    return move, move_ns


def _search(problem: DesignProblem, objective: Objective,
            start: tuple[float, ...], evaluations: int) -> tuple[tuple[float, ...], float, int]:
    """Deterministic pattern search from ``start``: best move of the current size, halving
    the size when none improves (relative 1e-9), until the size is below
    :data:`MIN_MOVE_SHARE` of the free budget or ``evaluations`` objective calls are spent."""
    best, best_ns = start, objective([start])[0]
    used = 1
    free = problem.budget - sum(problem.costs[d] * problem._floor(d)
                                for d in range(problem.network.ndims))
    delta = free / 4
    while delta >= MIN_MOVE_SHARE * free and used < evaluations:
        cands = list(itertools.islice(_moves(problem, best, delta), evaluations - used))
        used += len(cands)
        move, move_ns = _best_move(objective, cands, best_ns)
        if move is None:
            delta /= 2
        else:
            best, best_ns = move, move_ns
    return best, best_ns, used


def _step_moves(problem: DesignProblem, bw: tuple[float, ...], k: int
                ) -> Iterable[tuple[float, ...]]:
    """Designs ``k`` steps away on the grid: k steps from i to j, the price of k steps of i
    spent on j in whole steps, or k more steps on j where the budget allows."""
    g = problem.step_GBps
    free = [d for d in problem.active_dims if problem._stepped(d)]
    seen = set()
    for i in [None, *free]:
        for j in free:
            if i == j:
                continue
            gains = [k] if i is None else sorted({k, math.floor(k * problem.costs[i] /
                                                                problem.costs[j] + 1e-9)})
            for gain in gains:
                if gain < 1:
                    continue
                new = list(bw)
                if i is not None:
                    new[i] -= k * g
                    if new[i] < problem._step_floor(i) - 1e-9:
                        continue
                new[j] += gain * g
                cand = tuple(new)
                if cand in seen or new[j] > problem.max_GBps[j] * (1 + 1e-12) or \
                        problem.cost(cand) > problem.budget * (1 + 1e-12):
                    continue
                seen.add(cand)
                yield cand


def _step_search(problem: DesignProblem, objective: Objective,
                 start: tuple[float, ...], evaluations: int) -> tuple[tuple[float, ...], float]:
    """The pattern search on the step grid: best move of k steps, k halved when none
    improves, down to one step (or until the budget of evaluations ends)."""
    best, best_ns = start, objective([start])[0]
    used = 1
    k = 1
    while 2 * k * problem.step_GBps * max(problem.costs) <= problem.budget / 4:
        k *= 2
    while k >= 1 and used < evaluations:
        cands = list(itertools.islice(_step_moves(problem, best, k), evaluations - used))
        used += len(cands)
        move, move_ns = _best_move(objective, cands, best_ns)
        if move is None:
            k //= 2
        else:
            best, best_ns = move, move_ns
    return best, best_ns


def design(problem: DesignProblem, policy: str, evaluations: int = DEFAULT_EVALUATIONS,
           starts: dict[str, tuple[float, ...]] | None = None,
           evaluator: DesignEvaluator | None = None) -> Design:
    """The design that minimises the workload's time under ``policy`` on the budget.

    Start points: the even split, LIBRA's design, the bound's design (for a simulated
    policy) and ``starts``; the search starts from the best of them under ``policy``, so
    the result is never worse than any of them. Deterministic: same inputs, same design.
    """
    names = design_policy_names(problem.training is not None, problem.runner
                                or ("trace" if isinstance(problem.training, TraceSpec) else ""))
    if policy not in names:
        raise InputError(f"unknown design policy (one of {', '.join(names)})", "--policy",
                         policy)
    if evaluations < 1:
        raise InputError("must be at least 1", "--evaluations", evaluations)
    ev = evaluator or DesignEvaluator(problem)
    points = {"even": even_split(problem)}
    if problem.training is None:
        points["libra"] = libra_design(problem)  # a start point: its fluid closed form
    elif policy == LIBRA:
        raise InputError("LIBRA's fluid model times collective mixes, not a training "
                         "iteration", "--policy", policy)
    if policy not in (BOUND, LIBRA) and not problem.runner \
            and not isinstance(problem.training, TraceSpec):
        points["bound"] = design(problem, BOUND, evaluations, evaluator=ev).bandwidths_GBps
    for name, bw in (starts or {}).items():
        points[name] = problem.project(bw)
    points |= {n: bw for n, bw in route_designs(problem).items() if n not in points}
    points |= lattice_designs(problem, evaluations // 2)
    if problem.step_GBps:
        points = {name: problem.snap(bw) for name, bw in points.items()}
    starts_ns = dict(zip(points, ev.many(policy, list(points.values())), strict=True))
    order = sorted(starts_ns, key=lambda n: (starts_ns[n], list(points).index(n)))
    first = order[0]
    before = ev.evaluations
    free = problem if not problem.step_GBps else DesignProblem(
        problem.network, problem.items, problem.budget, problem.costs, problem.min_GBps,
        problem.max_GBps, problem.endpoint_delay_ns, problem.intra)
    bw, value = points[first], starts_ns[first]
    for name in order[:SEARCH_STARTS]:  # the best starts, while evaluations remain
        left = evaluations - (ev.evaluations - before)
        if left < 1:
            break
        found, found_ns, _ = _search(free, lambda bws: ev.many(policy, bws), points[name],
                                     left)
        if problem.step_GBps:
            found = problem.snap(found)
            found_ns = ev(policy, found)
        if found_ns < value * (1 - 1e-12):
            bw, value, first = found, found_ns, name
    if problem.step_GBps:
        left = max(1, evaluations - (ev.evaluations - before))
        bw, value = _step_search(problem, lambda bws: ev.many(policy, bws), bw, left)
    return Design(policy, bw, value, problem.cost(bw), first, starts_ns,
                  ev.evaluations - before)
