"""Local search over chunk routes with the simulator as the evaluator.

Deterministic (a seeded :class:`random.Random`, a budget counted in
simulations, never in seconds): the same inputs give the same answer on any
machine. Used by the ``portfolio`` policy (a small polish of its best
candidate) and by ``themis improve`` (:mod:`solvers.improve`).

Moves, in order: give one chunk another route (first improvement, chunks in
order); swap the routes of two chunks. When a full pass finds nothing, the
search perturbs the best assignment (a few chunks get random routes) and
descends again (iterated local search), until the budget is spent.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from themis.collective import Collective
from themis.planning.evaluate import run_makespan_ns
from themis.policies.base import PLAIN_RUN, Route, RunModel
from themis.timing import Timing
from topologies.network import Network

#: Relative improvement that counts (below it, two makespans are equal).
EPS = 1e-12


@dataclass
class SearchResult:
    """The best routes found, their makespan and how many simulations were spent."""

    routes: list[Route]
    makespan_ns: float
    evaluations: int
    start_ns: float


def evaluator(collective: Collective, network: Network, timing: Timing, intra: str,
              active_chunks: int = 1, run: RunModel = PLAIN_RUN,
              ) -> Callable[[Sequence[Route]], float]:
    """A function routes -> simulated makespan (ns) under ``intra``, as ``run`` applies
    the routes (its plan shape, queues and tie order)."""
    cache: dict[Route, tuple] = {}

    def plan(r: Route) -> tuple:
        p = cache.get(r)
        if p is None:
            p = cache[r] = run.plan(collective.kind, r)
        return p

    def evaluate(routes: Sequence[Route]) -> float:
        return run_makespan_ns(run, collective, network, timing, [plan(r) for r in routes],
                               intra, active_chunks)

    return evaluate


def local_search(routes: Sequence[Route], all_routes: Sequence[Route],
                 evaluate: Callable[[Sequence[Route]], float], budget: int,
                 seed: int = 0, start_ns: float | None = None,
                 stop: Callable[[], bool] | None = None,
                 shuffle: bool = False, target_ns: float | None = None) -> SearchResult:
    """Improve ``routes`` with at most ``budget`` calls of ``evaluate``.

    Never returns anything worse than the start (``start_ns``, its makespan,
    is evaluated if not given and then counts against the budget). ``stop``,
    if given, is asked before every evaluation (e.g. a wall-clock limit).
    ``shuffle`` visits the chunks in a (seeded) random order in every pass
    instead of chunk order (better coverage when the budget is below a pass).
    The search ends early once a makespan of at most ``target_ns`` is found.
    """
    import random  # late: only a search needs it

    rng = random.Random(seed)
    used = 0
    cur = list(routes)
    if start_ns is None:
        start_ns = evaluate(cur)
        used += 1
    cur_t = start_ns
    best, best_t = list(cur), cur_t

    def done() -> bool:
        return (used >= budget or (stop is not None and stop())
                or (target_ns is not None and min(cur_t, best_t) <= target_ns))

    n = len(cur)

    def descend() -> None:
        nonlocal cur, cur_t, used
        improved = True
        while improved and not done():
            improved = False
            visit = list(range(n))
            if shuffle:
                rng.shuffle(visit)
            for i in visit:
                for r in all_routes:
                    if r == cur[i]:
                        continue
                    if done():
                        return
                    trial = cur[:i] + [r] + cur[i + 1:]
                    t = evaluate(trial)
                    used += 1
                    if t < cur_t * (1 - EPS):
                        cur, cur_t, improved = trial, t, True
            for i, j in itertools.combinations(range(n), 2):
                if done():
                    return
                if cur[i] == cur[j]:
                    continue
                trial = list(cur)
                trial[i], trial[j] = trial[j], trial[i]
                t = evaluate(trial)
                used += 1
                if t < cur_t * (1 - EPS):
                    cur, cur_t, improved = trial, t, True

    descend()
    if cur_t < best_t:
        best, best_t = list(cur), cur_t
    while not done():
        cur = list(best)
        for _ in range(max(1, min(3, n // 4 + 1))):
            cur[rng.randrange(n)] = all_routes[rng.randrange(len(all_routes))]
        cur_t = evaluate(cur)
        used += 1
        descend()
        if cur_t < best_t * (1 - EPS):
            best, best_t = list(cur), cur_t
    return SearchResult(best, best_t, used, start_ns)
