"""One entry point for the exact solvers: :func:`solve`.

``solve(instance, solver, params, bounds=..., hint=...)`` prepares the
problem once (data, bounds, hint), runs the backend registered under
``solver`` (:mod:`solvers.registry`) and grades its answer
(:mod:`solvers.grading`): one re-timing by the simulator's replay, the
independent checker, an honest status. Every backend failure is a Result:
an exception, a crash or a limit without an answer gives the hint with
status ``feasible`` (``unknown`` without one) and the reason.

For CP-SAT the hints include the doubling chain's (:func:`chain_hint`, here
because it is this same :func:`solve` at C/2; the splitting and the doubling
bound are :mod:`solvers.doubling`'s).
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solvers.backend import BackendInfo, Problem
from solvers.bounds import LB3_SAFETY_S, Bounds
from solvers.bounds import bounds as compute_bounds
from solvers.common import ProblemData
from solvers.doubling import doubling_bound, linear_in_size, split_schedule, splits, with_chunks
from solvers.grading import grade
from solvers.hints import best_hint, candidate_schedules, seeded, simulated_hints, validate_hint
from solvers.latency0 import replay_on, zero_latency
from solvers.params import SolverParams
from solvers.registry import get_backend
from solvers.result import RawSolution, Result, Status
from solvers.retime import Retimer
from themis.instance import Instance
from themis.schedule import Schedule
from topologies.errors import InputError

_WORK_LIMITS = ("deterministic_time_s", "node_limit")
#: Share of a solve's budget its C/2 sub-solve may use (recursively down the chain).
CHAIN_SHARE = 0.5
#: Smallest chunk count a chain starts from.
CHAIN_MIN_CHUNKS = 2
#: Largest chunk count a solve builds a chain for (beyond it the C/2 proof is out of
#: reach; :func:`solvers.improve.improve` splits the largest proven C instead).
CHAIN_MAX_CHUNKS = 64
#: Share of a solve's budget its latency-0 sub-solve may use (:func:`latency0_hints`).
LATENCY0_SHARE = 0.75


def check_params(solver: str, params: SolverParams | None = None,
                 overrides: dict[str, Any] | None = None) -> SolverParams:
    """``params`` with ``overrides`` as ``solver`` would run them: an
    :class:`InputError` for a bad value, or a work limit the solver does not have."""
    return _params(get_backend(solver), params, dict(overrides or {}))


def _params(backend: BackendInfo, params: SolverParams | None,
            overrides: dict[str, Any]) -> SolverParams:
    if params is None:
        params = SolverParams()
    if not isinstance(params, SolverParams):
        raise InputError("not a SolverParams", "params", type(params).__name__)
    if overrides:
        params = params.with_overrides(overrides)
    for name in _WORK_LIMITS:
        if getattr(params, name) is not None and backend.work_limit != name:
            raise InputError(f"does not apply to the {backend.name} solver (its "
                             f"deterministic limit is {backend.work_limit or 'none'})",
                             name, getattr(params, name))
    return params


def _bounds(instance: Instance, data: ProblemData, given: Bounds | None,
            params: SolverParams) -> Bounds:
    if given is None:
        # The LB3 MIP stops at its deterministic node limit; its wall-clock safety net
        # takes at most 30% of the time limit unless the run must be reproducible.
        safety = LB3_SAFETY_S if params.deterministic else \
            min(LB3_SAFETY_S, max(0.05, 0.3 * params.time_limit_s))
        return compute_bounds(instance, data.ag_order, data=data, safety_s=safety,
                              node_limit=params.lb3_nodes)
    if not isinstance(given, Bounds):
        raise InputError("not a Bounds", "bounds", type(given).__name__)
    if given.ag_order != data.ag_order:
        raise InputError(f"bounds of the {given.ag_order} AG variant given for the "
                         f"{data.ag_order} variant", "bounds", given.ag_order)
    return given


#: An optional phase (a sub-solve, the doubling bound) under a wall-clock limit starts
#: only when the time it may use is at least this many times what the same work took
#: at this level (so that ``--time-limit`` bounds the whole solve; with a
#: deterministic budget every phase runs, as the result must not depend on the machine).
PHASE_MARGIN = 2.0


def time_short(left_s: float, limit_s: float, share: float, need_s: float) -> str:
    """Whether an optional phase that needs about ``need_s`` and may use ``share`` of
    the ``left_s`` seconds left of a ``limit_s`` time limit does not fit (``solve``,
    ``improve``): ``""`` when it fits, else how short the time is."""
    if share * left_s >= PHASE_MARGIN * need_s:
        return ""
    return (f"{max(0.0, left_s):.2f} s of the {limit_s:g} s time limit; it needs about "
            f"{PHASE_MARGIN * need_s / share:.2f} s")


def _no_time_for(params: SolverParams, t0: float, share: float, need_s: float,
                 what: str) -> str:
    """Why an optional phase that needs about ``need_s`` and may use ``share`` of the
    wall clock left is skipped (``""``: it runs)."""
    if params.deterministic:
        return ""
    short = time_short(params.time_limit_s - (time.perf_counter() - t0), params.time_limit_s,
                       share, need_s)
    return f"skipped: not enough time left for {what} ({short})" if short else ""


def _candidates(instance: Instance, data: ProblemData, lb: Bounds,
                hint: Schedule | Sequence[Schedule] | None,
                params: SolverParams, t0: float,
                simulations: Mapping[str, Schedule] | None = None
                ) -> tuple[dict[str, Schedule], dict]:
    """The hint candidates; simulations stop at 30% of the time limit (after one).

    With a deterministic budget every candidate runs (the hint must not depend
    on the machine's speed).
    """
    meta: dict = {}
    soft = float("inf") if params.deterministic else t0 + 0.3 * params.time_limit_s
    if hint is None:
        cands, errors = simulated_hints(instance, soft, simulations)
        if errors:
            meta["hint_errors"] = errors
    else:
        given = candidate_schedules(hint)
        cands = {f"hint[{i}]" if len(given) > 1 else "hint":
                 validate_hint(instance, data, s, f"hint[{i}]" if len(given) > 1 else "hint")
                 for i, s in enumerate(given)}
    if params.seed_lb3 and lb.route_counts is not None and time.perf_counter() < soft:
        for name, run in seeded(data, lb.route_counts.rs, lb.route_counts.ag).items():
            cands[name] = run.schedule
    return cands, meta


def solve(
    instance: Instance,
    solver: str = "cpsat",
    params: SolverParams | None = None,
    *,
    bounds: Bounds | None = None,
    hint: Schedule | Sequence[Schedule] | None = None,
    simulations: Mapping[str, Schedule] | None = None,
    **overrides: Any,
) -> Result:
    """Solve ``instance`` exactly (model.md §7) with the backend ``solver``.

    ``solver``: ``cpsat`` (OR-Tools CP-SAT), ``cbc`` or ``highs`` (the PuLP
    MILP), or any name registered with :func:`solvers.backend.register_backend`.
    ``params``: a :class:`SolverParams` (limits, threads, AG variant, seed,
    log, model options); ``overrides`` replace its fields by keyword
    (``solve(inst, "cpsat", time_limit_s=5, ag_order="free")``); an unknown
    key or a bad value is an :class:`InputError`.

    ``bounds``: the :class:`Bounds` of this instance and AG variant if the
    caller has them (else computed). ``hint``: one or more schedules of this
    instance (checked); the shortest is the warm start, the upper bound and
    the fallback answer. Without one, the hint is the best simulation of
    every registered policy under every discipline; ``simulations`` are such
    schedules the caller already has (by :func:`solvers.hints.hint_name`,
    e.g. ``themis/scf``), reused instead of simulated again. With ``seed_lb3``,
    schedules on LB3's route counts join the candidates. With ``latency0``
    (CP-SAT, an instance with latencies or delays) the latency-0 instance's
    answers replayed on this one join them too (:func:`latency0_hints`).

    ``params.time_limit_s`` bounds the whole call (bounds, hints, model
    building, search). Instances whose model is too large to build are
    refused with an :class:`InputError` (``chunks``).
    """
    return _solve(instance, solver, params, bounds, hint, simulations, overrides, None)


def _solve(instance: Instance, solver: str, params: SolverParams | None,
           bounds: Bounds | None, hint: Schedule | Sequence[Schedule] | None,
           simulations: Mapping[str, Schedule] | None, overrides: dict[str, Any],
           keep: dict[str, Schedule] | None) -> Result:
    """:func:`solve`; ``keep`` (if given) receives every hint candidate by name."""
    t0 = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InputError("not an Instance", "instance", type(instance).__name__)
    backend = get_backend(solver)
    params = _params(backend, params, overrides)
    data = ProblemData(instance, params.ag_order)
    if backend.check_size is not None:
        backend.check_size(data)
    t_lb = time.perf_counter()
    lb = _bounds(instance, data, bounds, params)
    bounds_s = time.perf_counter() - t_lb
    cands, meta = _candidates(instance, data, lb, hint, params, t0, simulations)
    # What one level of preparation (data, bounds, hints) took: a sub-solve repeats it.
    prep_s = time.perf_counter() - t0
    run_params = _latency0(instance, solver, params, cands, meta, t0, prep_s)
    run_params, lb = _doubling(instance, solver, run_params, lb, cands, meta, t0, prep_s,
                               bounds_s)
    if keep is not None:
        keep.update(cands)
    best = best_hint(data, cands, params.symmetry)
    meta.update(bounds=lb.to_dict(), hint=None if best is None else best.name,
                params=params.to_dict(), search=params.search)
    problem = Problem(data, run_params, lb, best, t0 + params.time_limit_s, Retimer(data),
                      solver)
    ref_ns = {name: s.makespan_ns for name, s in cands.items()}
    if problem.remaining_s() <= 0:
        raw = RawSolution(Status.UNKNOWN, None, None, 0.0, stopped_by="wall",
                          reason="the time limit ran out before the search (bounds, hints)")
    else:
        try:
            raw = backend.run(problem)
        except InputError:
            raise
        except Exception as err:  # every backend failure becomes a Result
            raw = RawSolution(Status.UNKNOWN, None, None, 0.0,
                              reason=f"{solver} failed: {type(err).__name__}: {err}",
                              log=traceback.format_exc())
    result = grade(problem, raw, t0, ref_ns, meta)
    result.meta["replays"] = problem.retime.replays
    if "deterministic_time_total_s" in result.meta or "chain_deterministic_time_s" in meta \
            or "latency0_deterministic_time_s" in meta:
        result.meta["deterministic_time_total_s"] = \
            float(result.meta.get("deterministic_time_total_s") or 0.0) + \
            float(meta.get("chain_deterministic_time_s", 0.0)) + \
            float(meta.get("latency0_deterministic_time_s", 0.0))
    return result


def _doubling(instance: Instance, solver: str, params: SolverParams, lb: Bounds,
              cands: dict[str, Schedule], meta: dict, t0: float, prep_s: float = 0.0,
              bounds_s: float = 0.0) -> tuple[SolverParams, Bounds]:
    """The doubling chain's hint and bound (:mod:`solvers.doubling`; CP-SAT only).

    Adds the split C/2 schedule to ``cands``; returns the parameters the
    backend runs with (the deterministic time the chain used is taken off) and
    the bounds (at latency 0 raised to LB3(2C) where that is higher). Under a
    wall-clock limit the C/2 sub-solve is skipped when its share of the time left
    is below ``PHASE_MARGIN`` x ``prep_s`` (this level's preparation), and the
    doubling bound when the time left is below ``PHASE_MARGIN`` x 2 ``bounds_s``
    (the bounds at 2C); ``meta["doubling"]`` says so.
    """
    if not params.doubling or solver != "cpsat" or chain_base_of(instance) is None:
        return params, lb
    why = _no_time_for(params, t0, CHAIN_SHARE, prep_s, "the C/2 sub-solve (doubling)")
    if why:
        meta["doubling"] = {"skipped": why}
        return params, lb
    left = params.time_limit_s - (time.perf_counter() - t0)
    chain = chain_hint(instance, solver, params, left)
    if chain is None:
        return params, lb
    info = chain.to_dict()
    if chain.schedule is not None:
        cands[f"split-C{chain.from_chunks}"] = chain.schedule
    meta["chain_deterministic_time_s"] = chain.deterministic_time_s
    if linear_in_size(instance):
        why = _no_time_for(params, t0, 1.0, 2 * bounds_s, "the doubling bound LB3(2C)")
        if why:
            info["bound_skipped"] = why
        else:
            left = params.time_limit_s - (time.perf_counter() - t0)
            safety = LB3_SAFETY_S if params.deterministic else \
                min(LB3_SAFETY_S, max(0.05, 0.3 * left))
            value, k = doubling_bound(instance, params.ag_order, (2,), safety_s=safety,
                                      node_limit=params.lb3_nodes)
            info["bound_ns"], info["bound_factor"] = value, k
            if value > lb.lb_ns:
                lb = dataclasses.replace(lb, lb_ns=value)
    meta["doubling"] = info
    det = params.deterministic_time_s
    if det is not None:
        params = dataclasses.replace(
            params, deterministic_time_s=max(0.01, det - chain.deterministic_time_s))
    return params, lb


def _latency0(instance: Instance, solver: str, params: SolverParams,
              cands: dict[str, Schedule], meta: dict, t0: float,
              prep_s: float = 0.0) -> SolverParams:
    """The latency-0 hints (:func:`latency0_hints`; CP-SAT only) added to ``cands``;
    returns the parameters the rest runs with (the deterministic time used taken off).
    Under a wall-clock limit the sub-solve is skipped when its share of the time left
    is below ``PHASE_MARGIN`` x ``prep_s`` (``meta["latency0"]`` says so)."""
    if not params.latency0 or solver != "cpsat" or zero_latency(instance) is None:
        return params
    why = _no_time_for(params, t0, LATENCY0_SHARE, prep_s, "the latency-0 sub-solve")
    if why:
        meta["latency0"] = {"skipped": why}
        return params
    left = params.time_limit_s - (time.perf_counter() - t0)
    found, info, used = latency0_hints(instance, solver, params, left)
    if info is None:
        return params
    cands.update(found)
    meta["latency0"] = info
    meta["latency0_deterministic_time_s"] = used
    det = params.deterministic_time_s
    if det is not None:
        params = dataclasses.replace(params, deterministic_time_s=max(0.01, det - used))
    return params


def latency0_hints(instance: Instance, solver: str, params: SolverParams,
                   remaining_s: float) -> tuple[dict[str, Schedule], dict | None, float]:
    """The latency-0 instance's answers replayed on ``instance`` (:mod:`solvers.latency0`).

    The latency-0 instance (:func:`~solvers.latency0.zero_latency`) is solved by
    :func:`solve` with ``LATENCY0_SHARE`` of ``params``' deterministic time (and
    of the wall clock left), its own doubling chain included; its answer and
    its chain's split C/2 answer are replayed on ``instance`` and checked.
    Returns the candidates by name (``latency0-C16``, ``latency0-split-C8``),
    a JSON-ready summary (``None`` when ``instance`` has no latency or the
    sub-solve is refused) and the deterministic time the sub-solve used.
    """
    inst0 = zero_latency(instance)
    if inst0 is None:
        return {}, None, 0.0
    det = params.deterministic_time_s
    sub = dataclasses.replace(
        params, time_limit_s=max(0.05, LATENCY0_SHARE * remaining_s),
        deterministic_time_s=None if det is None else LATENCY0_SHARE * det)
    kept: dict[str, Schedule] = {}
    try:
        res = _solve(inst0, solver, sub, None, None, None, {}, kept)
    except InputError as err:
        return {}, {"skipped": str(err)}, 0.0
    used = float(res.meta.get("deterministic_time_total_s") or 0.0)
    info: dict = {"status": str(res.status), "makespan_ns": res.makespan_ns,
                  "lower_bound_ns": res.lower_bound_ns, "deterministic_time_s": used,
                  "candidates": {}}
    found: dict[str, Schedule] = {}
    c = instance.chunks
    sources = [(f"latency0-C{c}", res.schedule)]
    sources += [(f"latency0-{name}", s) for name, s in kept.items() if name.startswith("split-")]
    for name, sched in sources:
        if sched is None:
            continue
        replayed = replay_on(sched, instance, name)
        if replayed is not None:
            found[name] = replayed
            info["candidates"][name] = replayed.makespan_ns
    return found, info, used


@dataclass(frozen=True)
class ChainHint:
    """The C/2 sub-solve of a chain and its schedule split for C."""

    from_chunks: int
    status: str
    from_makespan_ns: float | None
    schedule: Schedule | None
    deterministic_time_s: float
    levels: int

    def to_dict(self) -> dict:
        """JSON-ready summary (without the schedule)."""
        return {"from_chunks": self.from_chunks, "status": self.status,
                "from_makespan_ns": self.from_makespan_ns,
                "makespan_ns": None if self.schedule is None else self.schedule.makespan_ns,
                "deterministic_time_s": self.deterministic_time_s, "levels": self.levels}


def chain_base_of(instance: Instance) -> Instance | None:
    """The C/2 instance of :func:`chain_hint`, or ``None`` when C has no chain (odd,
    below ``2 x CHAIN_MIN_CHUNKS``, above ``CHAIN_MAX_CHUNKS``, or C/2 does not split)."""
    c = instance.chunks
    if c % 2 or c // 2 < CHAIN_MIN_CHUNKS or c > CHAIN_MAX_CHUNKS:
        return None
    half = with_chunks(instance, c // 2)
    if not splits(half, 2) or len(instance.collective.chunk_sizes()) != c:
        return None
    return half


def chain_hint(instance: Instance, solver: str, params: SolverParams,
               remaining_s: float) -> ChainHint | None:
    """Solve ``instance`` at C/2 (itself with its own chain) and split the answer for C.

    The doubling chain's hint (:mod:`solvers.doubling`): it lives here because
    the C/2 sub-solve is a whole :func:`solve`. ``params`` are the C solve's;
    the sub-solve gets ``CHAIN_SHARE`` of its deterministic time (and of the
    wall clock left), so a whole chain stays within the top solve's budget.
    ``None`` when C is odd, below ``2 x CHAIN_MIN_CHUNKS``, above
    ``CHAIN_MAX_CHUNKS`` or does not split.
    """
    c = instance.chunks
    half = chain_base_of(instance)
    if half is None:
        return None
    det = params.deterministic_time_s
    # The latency-0 hints of C/2 are not solved again: the C solve's latency-0
    # sub-solve has its own chain (its split C/2 answer, replayed, is a candidate).
    sub = dataclasses.replace(
        params, time_limit_s=max(0.05, CHAIN_SHARE * remaining_s),
        deterministic_time_s=None if det is None else CHAIN_SHARE * det, latency0=False)
    res = solve(half, solver, sub)
    used = float(res.meta.get("deterministic_time_total_s") or 0.0)
    levels = 1 + int((res.meta.get("doubling") or {}).get("levels", 0))
    sched = None if res.schedule is None else split_schedule(res.schedule, instance, 2)
    return ChainHint(c // 2, str(res.status), res.makespan_ns, sched, used, levels)
