"""Sequencing heuristics for a given route mix (issue 26): list schedules from t = 0.

Given how many chunks of each size class take each route (e.g. LB3's route
counts, :attr:`solvers.bounds.Bounds.route_counts`), a *list schedule* decides
the stage order of every dimension: it advances in time, and whenever a
dimension is free and stages wait for it, it starts one of them (non-delay:
no dimension idles while a stage is ready for it, so every dimension whose
mix has a route starting on it starts at t = 0). The rules that pick the
stage (:data:`RULES`):

- ``spt``: the shortest waiting stage first (finishes chunks' short middle
  stages quickly, keeping the next dimensions fed);
- ``fluid``: the stage whose class (route, position in the chain) is most
  behind its share: LB3's perfect pipeline runs every class at a constant
  rate, its n-th stage at n / count of the makespan, so the class with the
  smallest (stages started) / (chunks on the route) goes first (the priority
  of Bertsimas and Sethuraman's fluid synchronization).

Ties go to the lower chunk, then the earlier step. The orders are then
**replayed** by the simulator (each chunk's plan, each dimension's order,
every stage as early as they allow) and checked by :func:`themis.checker.check`:
what is returned is the simulator's schedule, exact, never the heuristic's own
arithmetic. Deterministic: no randomness, no time limit.

``themis improve --sequence`` (``improve(..., sequence=True)``) makes them on
LB3's mix and, where the best beats its start, searches from it too and keeps
the best run; measured in ``docs/solvers.md``.
"""

from __future__ import annotations

from collections.abc import Mapping

from solvers.common import Assignment, ProblemData
from solvers.retime import Retimer
from themis.checker import check
from themis.instance import Instance
from themis.schedule import Schedule
from topologies.errors import InputError

__all__ = ["RULES", "best_sequence", "chunk_routes", "list_orders", "sequence"]

#: The list-scheduling rules, in the order candidates are made (first wins ties).
RULES: tuple[str, ...] = ("spt", "fluid")


def chunk_routes(data: ProblemData, counts: Mapping[tuple[int, int], int]) -> list[int]:
    """Each chunk's route index (into ``data.perms``) from per-class route counts
    ``counts[(class, route)]``, the routes of a class interleaved (one of each route
    in use in turn), so that every prefix of the chunks has about the mix's shares.

    An :class:`InputError` when the counts of a class do not sum to its chunks.
    """
    routes = [0] * data.nchunks
    for k in range(len(data.classes)):
        members = [c for c in range(data.nchunks) if data.class_of[c] == k]
        left = {r: counts.get((k, r), 0) for r in range(len(data.perms))}
        if any(v < 0 for v in left.values()) or sum(left.values()) != len(members):
            raise InputError(f"route counts of size class {k} do not sum to its "
                             f"{len(members)} chunks", "route_counts", dict(counts))
        seq: list[int] = []
        while any(left.values()):
            for r in sorted(left):
                if left[r]:
                    seq.append(r)
                    left[r] -= 1
        for c, r in zip(members, seq, strict=True):
            routes[c] = r
    return routes


def list_orders(data: ProblemData, routes: list[int],
                rule: str) -> dict[int, list[tuple[int, int]]]:
    """The per-dimension stage orders ``{dim: [(chunk, step), ...]}`` of the non-delay
    list schedule of ``routes`` under ``rule`` (see the module docstring)."""
    if rule not in RULES:
        raise InputError(f"unknown sequencing rule (expected {', '.join(RULES)})", "rule", rule)
    if data.free:
        raise InputError("list schedules are made for the reverse AG variant", "ag_order",
                         data.ag_order)
    n = len(data.dims)
    steps = 2 * n
    dims: list[list[int]] = []
    durs: list[list[float]] = []
    for c, r in enumerate(routes):
        k, perm = data.class_of[c], data.perms[r]
        dims.append([*perm, *reversed(perm)])
        durs.append([data.rs[k][r][d] for d in perm] + [data.ag[k][r][d] for d in reversed(perm)])
    on_route = {r: routes.count(r) for r in set(routes)}
    started: dict[tuple[int, int], int] = {}
    step = [0] * len(routes)
    ready = [0.0] * len(routes)   # when each chunk's next stage may start (its chain)
    free = dict.fromkeys(data.dims, 0.0)
    orders: dict[int, list[tuple[int, int]]] = {d: [] for d in data.dims}
    for _ in range(steps * len(routes)):
        # The earliest any waiting stage can start, and on which dimension (lowest first).
        t, dim = min((max(ready[c], free[dims[c][step[c]]]), dims[c][step[c]])
                     for c in range(len(routes)) if step[c] < steps)

        def key(c: int) -> tuple:
            j = step[c]
            if rule == "spt":
                return (durs[c][j], c, j)
            return (started.get((routes[c], j), 0) / on_route[routes[c]], c, j)

        waiting = [c for c in range(len(routes)) if step[c] < steps
                   and dims[c][step[c]] == dim and max(ready[c], free[dim]) <= t]
        c = min(waiting, key=key)
        j = step[c]
        orders[dim].append((c, j))
        started[routes[c], j] = started.get((routes[c], j), 0) + 1
        free[dim] = ready[c] = t + durs[c][j]
        step[c] += 1
    return orders


def _replayed(data: ProblemData, routes: list[int],
              orders: dict[int, list[tuple[int, int]]]) -> Schedule:
    """The simulator's schedule of ``routes`` and ``orders`` (checked), re-timed as every
    solver answer is (:class:`solvers.retime.Retimer`; reverse AG: ``ag == route``)."""
    sched = Retimer(data)(Assignment(routes, routes, orders))
    problems = check(sched)
    if problems:  # the replay is the simulator's: a violation is a bug, not a result
        raise AssertionError(f"sequenced schedule fails the checker: {problems[0]}")
    return sched


def sequence(instance: Instance, counts: Mapping[tuple[int, int], int],
             data: ProblemData | None = None) -> dict[str, Schedule]:
    """One replayed, checked schedule per rule of :data:`RULES` (keyed ``seq-<rule>``)
    for the route mix ``counts[(class, route index)]`` (reverse AG orders)."""
    data = data if data is not None and data.ag_order == "reverse" else ProblemData(instance)
    routes = chunk_routes(data, counts)
    out: dict[str, Schedule] = {}
    for rule in RULES:
        sched = _replayed(data, routes, list_orders(data, routes, rule))
        sched.meta.update({"policy": f"seq-{rule}", "solver": "sequence"})
        out[f"seq-{rule}"] = sched
    return out


def best_sequence(instance: Instance, counts: Mapping[tuple[int, int], int] | None,
                  data: ProblemData | None = None) -> tuple[Schedule | None, dict[str, float]]:
    """The shortest of :func:`sequence`'s schedules (the first among equals) and every
    candidate's makespan; ``(None, {})`` without counts."""
    if not counts:
        return None, {}
    found = sequence(instance, counts, data)
    spans = {k: s.makespan_ns for k, s in found.items()}
    name = min(found, key=spans.__getitem__)  # min keeps the first among equals
    return found[name], spans
