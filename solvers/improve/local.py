"""The local search of :func:`solvers.improve.improve`: routes, then dimension orders, in
rounds of fixed budgets (anytime: more evaluations never give a worse answer)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass

from themis.instance import Instance
from themis.plans import stage_plan
from themis.schedule import Schedule
from themis.simulator import SimResult, intra_names, simulate

#: Share of the evaluations spent on routes (the rest on dimension orders).
ROUTE_SHARE = 0.75


#: The local search's first round (then 2x, 4x, ...): every sub-budget is a share of a
#: round's size, so that more evaluations never give a worse answer.
ROUND_EVALUATIONS = 2000


@dataclass
class _Clock:
    """Counts evaluations; stops at the budget or at the optional wall-clock limit."""

    budget: int
    deadline: float | None
    used: int = 0
    stopped_by: str = ""

    def spend(self) -> bool:
        """Take one evaluation; ``False`` when none is left."""
        if self.used >= self.budget:
            self.stopped_by = self.stopped_by or "evaluations"
            return False
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.stopped_by = "time_limit"
            return False
        self.used += 1
        return True


def _order_search(schedule: Schedule, clock: _Clock) -> Schedule:
    """Move one stage to another place in its dimension's order while that shortens the
    replay (first improvement; passes repeat until none helps or the budget is spent)."""
    best = schedule
    improved = True
    while improved:
        improved = False
        orders = best.dimension_orders()
        for d in sorted(orders):
            seq = list(orders[d])
            for i, j in _moves(len(seq)):
                if seq[i][:2] == seq[j][:2]:
                    continue  # a chunk's own stages keep their order
                if not clock.spend():
                    return best
                moved = seq[:i] + seq[i + 1:]
                moved.insert(j, seq[i])
                trial = dict(orders)
                trial[d] = moved
                try:
                    res = _replay_orders(best, trial)
                except RuntimeError:  # the move contradicts a chunk's own order
                    continue
                if res.makespan_ns < best.makespan_ns * (1 - 1e-12):
                    best, improved = res.schedule, True
                    orders = best.dimension_orders()
                    seq = list(orders[d])
    return best


def _moves(n: int) -> Iterator[tuple[int, int]]:
    """(from, to) insertion moves, nearest first (adjacent swaps are distance 1), lazily."""
    for dist in range(1, n):
        for i in range(n):
            for j in (i - dist, i + dist):
                if 0 <= j < n:
                    yield i, j


def _replay_orders(schedule: Schedule, orders: dict) -> SimResult:
    """Replay ``schedule``'s plans with the given per-dimension orders."""
    per_coll: list[list] = [[] for _ in schedule.collectives]
    for c in sorted(schedule.chunks, key=lambda c: (c.collective, c.chunk)):
        per_coll[c.collective].append(c.phases)
    return simulate(schedule.network, schedule.collectives, timing=schedule.timing,
                    algorithms=schedule.algorithms,
                    endpoint_delay_ns=schedule.endpoint_delay_ns,
                    active_chunks=schedule.active_chunks, issue_ns=schedule.issue_ns,
                    plans=per_coll, dim_orders=orders, ag_order=schedule.ag_order)


@dataclass
class _Found:
    """A search's best: its schedule, the routes and discipline it was simulated with
    (the order search may have re-timed it since), and the routes' own makespan."""

    schedule: Schedule
    routes: list
    intra: str
    routes_ns: float


def _search(instance: Instance, start, clock: _Clock, seed: int, target: float,
            chained: Schedule | None, timed_out) -> tuple[_Found, dict]:
    """Local search (routes, then orders) in rounds of fixed budgets (see :func:`improve`).

    Every sub-budget is a fixed share of its round's budget (``ROUND_EVALUATIONS``
    x 2^k), never of ``clock.budget``: the clock only truncates. So a larger
    budget runs the same evaluations first, and the best so far (the answer) is
    never worse with more evaluations.
    """
    from themis.planning.local_search import evaluator, local_search
    from themis.planning.portfolio import best_plan
    from themis.policies.route_mix import all_routes

    coll, net, tm = instance.collective, instance.network, instance.timing

    def budget(n: int) -> int:  # n evaluations, truncated by the clock
        return max(0, min(n, clock.budget - clock.used))

    def simulated(routes: list, intra: str) -> Schedule:
        return simulate(net, coll, intra=intra, timing=tm,
                        plans=[[stage_plan(coll.kind, r) for r in routes]]).schedule

    first_q = start.intra or "fifo"
    best = _Found(simulated(start.routes, first_q), list(start.routes), first_q,
                  start.makespan_ns)
    if chained is not None and chained.makespan_ns < best.schedule.makespan_ns * (1 - 1e-12):
        best = _Found(chained, [], "", float("inf"))  # the doubling chain's split schedule
    rounds = 0
    while best.schedule.makespan_ns > target and clock.used < clock.budget \
            and not timed_out():
        size = ROUND_EVALUATIONS * 2 ** rounds
        route_budget = int(size * ROUTE_SHARE)
        used0 = clock.used
        found_by: dict[str, tuple[list, float]] = {}
        if rounds == 0:
            # Round 0: a route search under each discipline from its best portfolio
            # plan (half the route budget, shared equally), then the best continues.
            share = route_budget // 2 // max(1, len(intra_names()))
            for q in intra_names():
                plan = start if q == start.intra else best_plan(coll, net, tm, (q,))
                found = local_search(plan.routes, all_routes(net), evaluator(coll, net, tm, q),
                                     budget(share), seed=seed, start_ns=plan.makespan_ns,
                                     stop=timed_out, shuffle=True, target_ns=target)
                clock.used += found.evaluations
                found_by[q] = (found.routes, found.makespan_ns)
                if found.makespan_ns <= target:
                    break
        elif best.routes:
            found_by[best.intra] = (best.routes, best.routes_ns)
        if found_by:
            q = min(found_by, key=lambda k: (found_by[k][1], list(found_by).index(k)))
            routes, ns = found_by[q]
            found = local_search(routes, all_routes(net), evaluator(coll, net, tm, q),
                                 budget(route_budget - (clock.used - used0)),
                                 seed=seed + 1 if rounds == 0 else seed + 1000 * rounds,
                                 start_ns=ns, stop=timed_out, shuffle=True, target_ns=target)
            clock.used += found.evaluations
            for name, (r, t) in [*found_by.items(), (q, (found.routes, found.makespan_ns))]:
                if t < best.schedule.makespan_ns * (1 - 1e-12):
                    best = _Found(simulated(r, name), list(r), name, t)
        # Dimension orders (the rest of the round).
        order_clock = _Clock(budget(size - (clock.used - used0)), clock.deadline)
        if best.schedule.makespan_ns > target:
            tuned = _order_search(best.schedule, order_clock)
            clock.used += order_clock.used
            if tuned.makespan_ns < best.schedule.makespan_ns:
                best = dataclasses.replace(best, schedule=tuned)
        clock.stopped_by = clock.stopped_by or order_clock.stopped_by
        rounds += 1
        if clock.used == used0:
            break  # nothing left to try (e.g. every search is at its target)
    if clock.used >= clock.budget:
        clock.stopped_by = clock.stopped_by or "evaluations"
    return best, {"rounds": rounds}
