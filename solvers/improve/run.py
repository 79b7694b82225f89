"""``improve``: the parameters a sweep may give it, and the whole run (module docstring of
:mod:`solvers.improve`)."""

from __future__ import annotations

import time

from solvers.bounds import LB3_NODE_LIMIT, LB3_SAFETY_S, bounds
from solvers.doubling import doubling_bound, linear_in_size
from solvers.improve.chain import CHAIN_CHUNKS, _chain, _cpsat
from solvers.improve.local import _Clock, _Found, _search
from solvers.result import PROOF_TOL, BoundSource, Result, Status
from solvers.solve import time_short
from themis.checker import check
from themis.instance import Instance
from themis.schedule import Schedule
from themis.simulator import intra_names
from topologies.errors import InputError

#: By default the searches stop once the makespan is within this relative distance of
#: the lower bound (nothing worth a simulation is left; the bounds are deterministic).
TARGET_GAP = 1e-4


#: The parameters :func:`improve` takes from a sweep spec's ``improve`` table.
PARAM_KEYS: tuple[str, ...] = ("evaluations", "cpsat_dtime_s", "seed", "target_gap",
                               "chain_dtime_s", "chain_chunks", "doubling", "latency0",
                               "seeds", "sequence", "lb3_nodes")
DEFAULT_EVALUATIONS = 2000


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
