"""Offline improvement of one instance's schedule: local search, then warm-started CP-SAT.

:func:`improve` starts from the ``portfolio`` policy's best plan (every
candidate under every discipline), then

1. local search over the chunks' routes with the simulator as the evaluator
   (:func:`themis.planning.local_search.local_search`; one chunk's route
   changed, two chunks' routes swapped, perturbations), under the winning
   discipline;
2. local search over the per-dimension stage orders of the best schedule
   (adjacent stages of one dimension swapped, each trial replayed semi-actively);
3. optionally CP-SAT, warm-started from the best schedule
   (:func:`solvers.solve` with ``hint=``), on a deterministic budget.

Before 1, with ``chain_dtime_s`` > 0, the **doubling chain**
(:mod:`solvers.doubling`): CP-SAT solves the instance at the largest chunk
count C0 = C / 2^j <= ``chain_chunks`` (itself hinted up its own chain,
C0/8, C0/4, C0/2), and that schedule split into C / C0 pieces per chunk is a
candidate start; at latency 0 a proven C0 optimum split is no longer than it,
often within 0.2% of LB3 at C = 64-256. ``meta["chain"]`` says what it found.

Budgets that reproduce on any machine: ``evaluations`` (simulator runs for 1
and 2) and ``cpsat_dtime_s`` (CP-SAT's deterministic time, one worker). A
wall-clock ``time_limit_s`` may cap everything too (for interactive use; a
result that depends on it says so in ``meta["stopped_by"]``).

**Never worse with more evaluations.** Steps 1 and 2 run in rounds of
``ROUND_EVALUATIONS`` x 2^k evaluations (k = 0, 1, ...): round 0 is the search
above (each discipline, then the best one, then the orders), round k >= 1 a
route search from the best routes (seed ``seed + 1000 k``) and an order search
from the best schedule. Every sub-budget is a fixed share of its round's size,
never of ``evaluations``, which only cuts the last round short; the local
searches are anytime (their moves do not depend on their budget), so a larger
budget makes the same evaluations first and the answer, the best so far, is
never worse (``meta["rounds"]``). Up to ``ROUND_EVALUATIONS`` (the default
budget) this is the single search it always was. ``seeds`` > 1 runs steps 1-2
with seeds ``seed`` ... ``seed + seeds - 1``, each with the whole budget, and
keeps the best (the first among equals; ``meta["seeds"]``, ``meta["seed"]``).
CP-SAT (step 3) only ever replaces that answer by a shorter one; its own
result is not monotone in its deterministic time (a different budget splits
differently between its phases).

The result is a :class:`solvers.Result`: never worse than the start, the
schedule checked by :func:`themis.checker.check`, status ``optimal`` only when
CP-SAT proved it or the makespan meets a lower bound (LB0-LB3 or the solver's),
else ``feasible``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass

from solvers.bounds import LB3_NODE_LIMIT, LB3_SAFETY_S, Bounds, bounds
from solvers.doubling import doubling_bound, linear_in_size, split_schedule, splits, with_chunks
from solvers.params import SolverParams
from solvers.result import PROOF_TOL, BoundSource, Result, Status
from solvers.solve import time_short
from themis.checker import check
from themis.instance import Instance
from themis.plans import stage_plan
from themis.schedule import Schedule
from themis.simulator import SimResult, intra_names, simulate
from topologies.errors import InputError

#: By default the searches stop once the makespan is within this relative distance of
#: the lower bound (nothing worth a simulation is left; the bounds are deterministic).
TARGET_GAP = 1e-4
#: Share of the evaluations spent on routes (the rest on dimension orders).
ROUTE_SHARE = 0.75
#: The parameters :func:`improve` takes from a sweep spec's ``improve`` table.
PARAM_KEYS: tuple[str, ...] = ("evaluations", "cpsat_dtime_s", "seed", "target_gap",
                               "chain_dtime_s", "chain_chunks", "doubling", "latency0",
                               "seeds", "sequence", "lb3_nodes")
DEFAULT_EVALUATIONS = 2000
#: The local search's first round (then 2x, 4x, ...): every sub-budget is a share of a
#: round's size, so that more evaluations never give a worse answer.
ROUND_EVALUATIONS = 2000
#: Largest chunk count the doubling chain solves with CP-SAT (then splits for C).
CHAIN_CHUNKS = 32
#: Chain base results by (instance key, deterministic time, seed): the base solve is
#: deterministic, so C = 64 ... 1024 of one network and size share it.
_CHAIN_CACHE: dict[tuple[str, float, int, bool], tuple[Result, dict[str, Schedule]]] = {}


def check_params(value: object, where: str = "improve", file: str = "") -> dict:
    """A table of :func:`improve` parameters (``evaluations``, ``cpsat_dtime_s``,
    ``seed``, ``target_gap``, ``chain_dtime_s``, ``chain_chunks``, ``doubling``,
    ``lb3_nodes``, ...),
    checked: every bad key or value is an :class:`InputError` naming it."""
    if not isinstance(value, dict):
        raise InputError(f"must be a table ({', '.join(PARAM_KEYS)})", where, value, file)
    for k, v in value.items():
        key = f"{where}.{k}"
        if k not in PARAM_KEYS:
            raise InputError(f"unknown improve parameter (expected {', '.join(PARAM_KEYS)})",
                             key, v, file)
        if k in ("evaluations", "seed"):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError("must be an integer >= 0", key, v, file)
        elif k == "seeds":
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError("must be an integer >= 1", key, v, file)
        elif k in ("doubling", "latency0", "sequence"):
            if not isinstance(v, bool):
                raise InputError("must be true or false", key, v, file)
        elif k == "lb3_nodes":
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError("must be an integer >= 1", key, v, file)
        elif k == "chain_chunks":
            if isinstance(v, bool) or not isinstance(v, int) or v < 2:
                raise InputError("must be an integer >= 2", key, v, file)
        elif k == "target_gap":
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 1:
                raise InputError("must be a relative gap in [0, 1)", key, v, file)
        elif isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < float("inf"):
            raise InputError("must be a number of deterministic seconds >= 0", key, v, file)
    return dict(value)


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


def _cpsat(instance: Instance, schedule: Schedule, bnds: Bounds, dtime_s: float | None,
           time_limit_s: float | None, seed: int, latency0: bool = True) -> Result | None:
    """CP-SAT warm-started from ``schedule`` on a deterministic budget (None if the
    model is too large to build).

    Without ``time_limit_s`` there is in effect no wall-clock limit (a week), so
    that only the deterministic limit binds, however loaded the machine.
    """
    # Looked up when called (a test spies on solvers.solve.solve); not a cycle:
    # nothing solvers.solve imports imports this module.
    from solvers.solve import solve

    wall = time_limit_s if time_limit_s is not None else 7 * 24 * 3600.0
    params = SolverParams(time_limit_s=wall, deterministic_time_s=dtime_s, threads=1,
                          seed=seed, latency0=latency0)
    try:
        return solve(instance, "cpsat", params, bounds=bnds, hint=[schedule])
    except InputError:  # e.g. a model too large to build: keep the search's schedule
        return None


def chain_base(chunks: int, instance: Instance, chain_chunks: int = CHAIN_CHUNKS) -> int | None:
    """The largest C0 = chunks / 2^j <= ``chain_chunks`` (j >= 1) whose chunks split
    exactly into ``chunks / C0`` pieces each, or ``None``."""
    c0, factor = chunks, 1
    while c0 % 2 == 0 and c0 // 2 >= 2:
        c0, factor = c0 // 2, factor * 2
        if c0 <= chain_chunks:
            base = with_chunks(instance, c0)
            return c0 if splits(base, factor) else None
    return None


def _chain(instance: Instance, dtime_s: float, chain_chunks: int, seed: int,
           time_limit_s: float | None, latency0: bool = True) -> tuple[Schedule | None, dict]:
    """The doubling chain's candidate for ``instance`` (see the module docstring).

    With latency, the C0 solve's latency-0 answers (replayed on the network,
    :func:`solvers.solve.latency0_hints`) are split into C too, and the
    shortest split is the candidate (``meta["chain"]["splits"]`` lists them).
    """
    from solvers.solve import _solve  # looked up when called, as in _cpsat

    c = instance.chunks
    c0 = chain_base(c, instance, chain_chunks)
    if c0 is None:
        return None, {"skipped": f"no chunk count C/2^j <= {chain_chunks} splits into C"}
    base = with_chunks(instance, c0)
    key = (base.key(), float(dtime_s), seed, latency0)
    cached = _CHAIN_CACHE.get(key) if time_limit_s is None else None
    if cached is None:
        wall = time_limit_s if time_limit_s is not None else max(60.0, 30 * dtime_s)
        params = SolverParams(time_limit_s=wall, deterministic_time_s=dtime_s, threads=1,
                              seed=seed, latency0=latency0)
        kept: dict[str, Schedule] = {}
        try:
            res = _solve(base, "cpsat", params, None, None, None, {}, kept)
        except InputError as err:
            return None, {"from_chunks": c0, "skipped": str(err)}
        cached = (res, {k: v for k, v in kept.items() if k.startswith("latency0-")})
        if time_limit_s is None:
            _CHAIN_CACHE[key] = cached
    res, lat0 = cached
    info = {"from_chunks": c0, "status": str(res.status), "from_makespan_ns": res.makespan_ns,
            "from_lower_bound_ns": res.lower_bound_ns,
            "deterministic_time_s": res.meta.get("deterministic_time_total_s")}
    sources = {} if res.schedule is None else {"solve": res.schedule}
    sources.update(lat0)
    best: Schedule | None = None
    found: dict[str, float] = {}
    for name, sched in sources.items():
        split = split_schedule(sched, instance, c // c0)
        if split is None:
            continue
        found[name] = split.makespan_ns
        if best is None or split.makespan_ns < best.makespan_ns * (1 - 1e-12):
            best = split
    if not sources:
        return None, info
    info["makespan_ns"] = None if best is None else best.makespan_ns
    if lat0:
        info["splits"] = found
    return best, info


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


def improve(instance: Instance, evaluations: int = 2000, cpsat_dtime_s: float | None = 0.0,
            time_limit_s: float | None = None, seed: int = 0,
            target_gap: float = TARGET_GAP, chain_dtime_s: float = 0.0,
            chain_chunks: int = CHAIN_CHUNKS, doubling: bool = True,
            latency0: bool = True, seeds: int = 1, sequence: bool = False,
            lb3_nodes: int = LB3_NODE_LIMIT) -> Result:
    """Improve ``instance``'s best practical schedule (see the module docstring).

    ``evaluations``: simulator runs of the local searches (per seed);
    ``cpsat_dtime_s``:
    CP-SAT's deterministic time (0: no CP-SAT; ``None``: CP-SAT limited by
    the wall clock only, which needs ``time_limit_s``); ``time_limit_s``: an
    optional wall-clock cap (the searches get half of it when CP-SAT runs);
    ``seed``, ``seeds``: the local search runs with seeds ``seed`` ...
    ``seed + seeds - 1``, each with the whole budget, and the best (the
    first among equals) goes on; ``target_gap``: the local searches stop (or
    do not start) once the makespan
    is within this relative distance of the lower bound (CP-SAT still runs);
    ``chain_dtime_s`` (CP-SAT's deterministic time at C0; 0: no chain) and
    ``chain_chunks`` (the largest C0): the doubling chain's start;
    ``doubling``: at latency 0 raise the lower bound to LB3(2C) where higher
    (:func:`solvers.doubling.doubling_bound`; ``meta["doubling"]`` says so);
    ``latency0``: with latency, CP-SAT's solves (the chain's and step 3)
    use the latency-0 instance's answers replayed (:mod:`solvers.latency0`);
    ``sequence``: the list schedules of LB3's route mix
    (:func:`solvers.sequence.best_sequence`) are made once, before the
    search, whatever the budget; where the shortest beats the start (the
    portfolio's, or the chain's split), the search runs from it too, with the
    same budget per seed, and the best of all runs wins (the first among
    equals: never worse than without it). ``meta["sequence"]``: each rule's
    makespan, whether it was searched from and whether it won. ``lb3_nodes``: the
    LB3 MIP's node limit (:class:`solvers.params.SolverParams`), for the doubling
    bound's LB3(2C) too.

    The local search runs in rounds of ``ROUND_EVALUATIONS`` x 2^k evaluations
    (k = 0, 1, ...; the last one cut by the budget), each from the best so
    far: with more evaluations the same searches run first, so the search's
    answer is never worse (and CP-SAT only ever replaces it by a shorter one).
    """
    from themis.planning.portfolio import best_plan

    if isinstance(evaluations, bool) or not isinstance(evaluations, int) or evaluations < 0:
        raise InputError("evaluations must be an integer >= 0", "evaluations", evaluations)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise InputError("must be an integer >= 1", "seeds", seeds)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError("must be an integer >= 0", "seed", seed)
    if cpsat_dtime_s is not None and not cpsat_dtime_s >= 0:
        raise InputError("CP-SAT deterministic time must be >= 0", "cpsat-dtime",
                         cpsat_dtime_s)
    if time_limit_s is not None and not 0 < time_limit_s < float("inf"):
        raise InputError("time limit must be a positive number of seconds", "time-limit",
                         time_limit_s)
    if isinstance(chain_dtime_s, bool) or not isinstance(chain_dtime_s, int | float) \
            or not 0 <= chain_dtime_s < float("inf"):
        raise InputError("chain deterministic time must be >= 0", "chain-dtime", chain_dtime_s)
    if isinstance(chain_chunks, bool) or not isinstance(chain_chunks, int) or chain_chunks < 2:
        raise InputError("must be an integer >= 2", "chain-chunks", chain_chunks)
    if cpsat_dtime_s is None and time_limit_s is None:
        raise InputError("CP-SAT without a deterministic time needs a time limit",
                         "time-limit", time_limit_s)
    use_cpsat = cpsat_dtime_s is None or cpsat_dtime_s > 0
    t0 = time.perf_counter()
    end = None if time_limit_s is None else t0 + time_limit_s
    deadline = None if time_limit_s is None else \
        t0 + (0.5 if use_cpsat else 1.0) * time_limit_s
    coll, net, tm = instance.collective, instance.network, instance.timing
    if isinstance(target_gap, bool) or not isinstance(target_gap, int | float) \
            or not 0 <= target_gap < 1:
        raise InputError("must be a relative gap in [0, 1)", "target-gap", target_gap)
    # Under a wall-clock limit the LB3 MIP's safety net takes at most 30% of it (as in
    # solve; LB3 then falls back to LB2, labelled), so that the limit bounds the run.
    t_lb = time.perf_counter()
    bnds = bounds(instance, node_limit=lb3_nodes) if time_limit_s is None else \
        bounds(instance, node_limit=lb3_nodes,
               safety_s=min(LB3_SAFETY_S, max(0.05, 0.3 * time_limit_s)))
    bounds_s = time.perf_counter() - t_lb
    lb = bnds.lb_ns
    start = best_plan(coll, net, tm, intra_names())
    start_ns = start.makespan_ns
    assert start_ns is not None, "best_plan simulates its choice"
    skipped: dict[str, str] = {}

    def no_time(share: float, need_s: float, what: str) -> bool:
        """Under the wall-clock limit: whether ``what`` (about ``need_s``, allowed
        ``share`` of the time left) does not fit; ``skipped`` then says why."""
        if end is None or time_limit_s is None:
            return False
        short = time_short(end - time.perf_counter(), time_limit_s, share, need_s)
        if short:
            skipped[what] = f"not enough time left ({short})"
        return bool(short)

    chained, chain_info = (None, {}) if chain_dtime_s <= 0 else \
        (None, {"skipped": "time limit"}) if no_time(0.5, bounds_s, "chain") else _chain(
            instance, chain_dtime_s, chain_chunks, seed,
            None if end is None else max(0.05, 0.5 * (end - time.perf_counter())), latency0)
    # The doubling bound, as :func:`solvers.solve` uses it: at latency 0 (durations
    # linear in size) LB3 at 2C is a valid bound for C too, often higher
    # (after the chain, whose CP-SAT solve it must not change).
    dbl_ns, dbl_k = (0.0, 0) if not doubling or not linear_in_size(instance) \
        or no_time(1.0, 2 * bounds_s, "doubling_bound") else \
        doubling_bound(instance, bnds.ag_order, (2,), node_limit=lb3_nodes,
                       **({} if end is None else
                          {"safety_s": min(LB3_SAFETY_S,
                                           max(0.05, 0.3 * (end - time.perf_counter())))}))
    doubled = dbl_ns > lb
    if doubled:
        lb = dbl_ns
    # The list schedules of LB3's mix: a second start where shorter than the first
    # (the portfolio's, or the chain's split); the searches from both run, the best wins.
    seq_spans: dict[str, float] = {}
    starts: list[Schedule | None] = [chained]
    if sequence and bnds.route_counts is not None:
        from solvers.sequence import best_sequence

        seq, seq_spans = best_sequence(instance, bnds.route_counts.rs)
        first_ns = start_ns if chained is None else min(start_ns, chained.makespan_ns)
        if seq is not None and seq.makespan_ns < first_ns * (1 - 1e-12):
            starts.append(seq)

    def timed_out() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    # 1-2. routes, then dimension orders, in rounds; the best over the seeds.
    target = lb * (1 + target_gap)
    runs: list[tuple[_Found, _Clock, dict]] = []
    for first in starts:
        for s_ in range(seed, seed + seeds):
            clock = _Clock(evaluations, deadline)
            found, info = _search(instance, start, clock, s_, target, first, timed_out)
            runs.append((found, clock, info))
    pick = min(range(len(runs)), key=lambda i: (runs[i][0].schedule.makespan_ns, i))
    found, clock, info = runs[pick]
    best, intra = found.schedule, found.intra or (start.intra or "fifo")
    if timed_out():
        clock.stopped_by = "time_limit"
    meta: dict = {"start": start.label, "start_ns": start.makespan_ns,
                  "search_ns": best.makespan_ns, "evaluations": clock.used,
                  "intra": intra, "rounds": info["rounds"]}
    if seeds > 1:
        meta["seeds"] = {str(seed + i): r[0].schedule.makespan_ns
                         for i, r in enumerate(runs[:seeds])}
        meta["seed"] = seed + pick % seeds
    if chain_info:
        meta["chain"] = chain_info
    if seq_spans:
        meta["sequence"] = {"candidates": seq_spans, "searched": len(starts) > 1,
                            "used": pick >= seeds}
        if len(starts) > 1:
            meta["sequence"]["search_ns"] = min(r[0].schedule.makespan_ns
                                                for r in runs[seeds:])
    if dbl_k:
        meta["doubling"] = {"bound_ns": dbl_ns, "bound_factor": dbl_k, "used": doubled}
    status = Status.FEASIBLE
    solver_ns = None
    # 3. CP-SAT warm-started from the best schedule.
    if use_cpsat and best.makespan_ns > lb * (1 + PROOF_TOL) and \
            not (cpsat_dtime_s is None and no_time(1.0, bounds_s, "cpsat")):
        left = None if end is None else max(0.05, end - time.perf_counter())
        res = _cpsat(instance, best, bnds, cpsat_dtime_s, left, seed, latency0)
        if res is not None:
            meta["cpsat"] = {"status": res.status, "makespan_ns": res.makespan_ns,
                             "lower_bound_ns": res.lower_bound_ns}
            lb = max(lb, res.lower_bound_ns)
            solver_ns = res.makespan_ns
            if res.schedule is not None and res.valid and \
                    res.makespan_ns is not None and res.makespan_ns < best.makespan_ns:
                best = res.schedule
            if res.status == "optimal" and res.makespan_ns is not None and \
                    best.makespan_ns <= res.makespan_ns * (1 + PROOF_TOL):
                status = Status.OPTIMAL
                meta["proof"] = "cpsat"
    if skipped:
        meta["skipped"] = skipped
        clock.stopped_by = "time_limit"
    if clock.stopped_by:
        meta["stopped_by"] = clock.stopped_by
    if status != Status.OPTIMAL and best.makespan_ns <= lb * (1 + PROOF_TOL):
        status = Status.OPTIMAL
        meta["proof"] = "lower bound"
    violations = [str(v) for v in check(best)]
    best.meta.update({"solver": "improve", "status": str(status)})
    # Where the bound comes from: CP-SAT's proof when it beat LB0-LB3, else theirs.
    cpsat_lb = meta.get("cpsat", {}).get("lower_bound_ns") or 0.0
    source = BoundSource.CPSAT if cpsat_lb >= lb and cpsat_lb > bnds.lb_ns else BoundSource.OURS
    return Result(status=status, makespan_ns=best.makespan_ns,
                  lower_bound_ns=min(lb, best.makespan_ns), bound_source=source,
                  lb3_method=str(bnds.lb3_method), runtime_s=time.perf_counter() - t0,
                  solver="improve", ag_order="reverse", schedule=best,
                  valid=not violations, violations=violations, solver_makespan_ns=solver_ns,
                  chunks=len(coll.chunk_sizes()), routes=best.route_histogram(), meta=meta)
