"""The exact optimum of a small training iteration: one CP-SAT model of the whole loop.

No queue discipline, priority or policy: the best any scheduler could reach in
the project's model (issue 18 §2). The loop (:mod:`solvers.iteration.trace`)
is precedence: the thread's time after a wait is at least its time before plus
the delays since, and at least ``F_c`` for every awaited collective c; a
collective is released at the thread's time when it is issued. Every chunk
takes exactly one alternative (a route and stage-plan shape the simulator can
run, :class:`themis.training.bound.Alternatives`), whose stages are optional
intervals chained in plan order after the release; each dimension runs one
stage at a time (``NoOverlap``) or k (``Cumulative``); ``F_c >= `` every chunk's
end ``+ u_c``; the makespan is at least the thread's end and every ``F_c``.

Times are integer ticks. When every duration is a whole number of ns (the
``astra-sim-1.0`` timing) a tick is 1 ns and the model is exact; otherwise a
tick is the longest stage / ``resolution`` and every duration is rounded up, so
the solution stays feasible with exact durations and ``scaling_error_ns`` (one
tick per rounded item) bounds how far the scaled optimum can be above the exact
one. The answer is replayed in the training engine (the routes and every
dimension's stage order, :mod:`themis.disciplines.replay`): its end is the
reported makespan. Status as in ``solve``: ``optimal`` only when CP-SAT proved
the scaled optimum (then within ``scaling_error_ns`` of the exact one),
``feasible`` with an incumbent at a limit, ``unknown`` without one.
The window bound (:mod:`themis.training.bound`) is the makespan's lower bound
in the model (valid: the scaled optimum is not below the exact one), which
proves many cases at once. Deterministic: one worker and a deterministic-time
budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from solvers.iteration.trace import Issue, Trace, program_trace
from solvers.result import Status
from themis.plans import Plan
from themis.program import NodeKind, Program
from topologies.errors import InputError

#: Largest model built: optional stage intervals (chunks x alternatives x stages).
MAX_INTERVALS = 2000
#: Ticks of the longest stage when durations are not whole ns.
RESOLUTION = 1000
#: Default CP-SAT deterministic-time budget (s, one worker).
DETERMINISTIC_S = 20.0


@dataclass
class IterationResult:
    """The exact model's answer for one iteration (see the module docstring)."""

    status: Status
    makespan_ns: float | None
    solver_makespan_ns: float | None
    lower_bound_ns: float
    iteration_bound_ns: float
    scaling_error_ns: float
    collectives: int
    chunks: int
    intervals: int
    plans: list[list[Plan]] = field(default_factory=list, repr=False)
    orders: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict, repr=False)
    reason: str = ""
    stopped_by: str = ""
    runtime_s: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready (plans and orders as lists)."""
        return {"status": str(self.status), "makespan_ns": self.makespan_ns,
                "solver_makespan_ns": self.solver_makespan_ns,
                "lower_bound_ns": self.lower_bound_ns,
                "iteration_bound_ns": self.iteration_bound_ns,
                "scaling_error_ns": self.scaling_error_ns, "collectives": self.collectives,
                "chunks": self.chunks, "intervals": self.intervals, "reason": self.reason,
                "stopped_by": self.stopped_by, "runtime_s": self.runtime_s,
                "routes": [[[d for _, d in p] for p in ps] for ps in self.plans]}


#: One chunk's alternatives: (plan, [(dimension, duration ns)]).
Options = list[tuple[Plan, list[tuple[int, float]]]]
#: A replay of an answer: (plans per collective, per-dimension orders, node starts in
#: ticks) -> the end it gives (``None`` if the orders deadlock).
ReplayFn = Callable[[list[list[Plan]], dict[int, list[tuple[int, int, int]]], dict[int, int]],
                    float | None]


@dataclass
class IterationProblem:
    """What the exact model solves: a program graph (:class:`themis.program.Program`) and,
    per collective node in order, each chunk's alternatives or a fixed time.

    ``options[c][j]``: the alternatives of chunk j of collective c (none for a collective
    in ``fixed_ns``, whose time no schedule changes, e.g. a communicator group 2.x
    flattens); ``updates[c]``: its finish delay. ``slots``: ASTRA-sim 2.x's slots (one
    compute node and one collective at a time, a collective holding its slot from its
    issue to its end, :mod:`themis.training.et_run`); otherwise compute nodes run as
    the program orders them (one thread: :func:`~solvers.iteration.trace.program_trace`)
    and collectives overlap. ``bound_ns``: a lower bound of the makespan (the window
    bound). ``hint``: a known schedule's stages ``(dim, collective, chunk, start ns)``,
    its node starts (ns) and end (a cap when every duration is whole ns). ``replay``
    re-times an answer."""

    program: Program
    options: list[list[Options]]
    #: Each chunk's size (chunks of one size are interchangeable).
    sizes: list[list[float]]
    updates: list[float]
    k: int
    bound_ns: float
    replay: ReplayFn
    fixed_ns: dict[int, float] = field(default_factory=dict)
    slots: bool = False
    hint_stages: list[tuple[int, int, int, float]] = field(default_factory=list)
    hint_starts: dict[int, float] = field(default_factory=dict)
    hint_end_ns: float | None = None
    #: The refusal of a model above the cap: (what to reduce, field, value).
    too_large: tuple[str, str, object] = ("chunks or layers", "chunks", None)


def check_size(options: list[list[Options]], max_intervals: int,
               too_large: tuple[str, str, object]) -> int:
    """The optional stage intervals of ``options``; refuses more than ``max_intervals``
    in one line (``too_large``: what to reduce, the field and its value)."""
    n_int = sum(len(st) for per in options for opts in per for _, st in opts)
    if n_int > max_intervals:
        nchunks = sum(len(per) for per in options)
        what, key, value = too_large
        raise InputError(f"too large for the exact iteration model ({n_int} optional stage "
                         f"intervals over {len(options)} collectives and {nchunks} chunks, at "
                         f"most {max_intervals}); use fewer {what}", key, value)
    return n_int


def solve_program(problem: IterationProblem, deterministic_s: float = DETERMINISTIC_S,
                  max_intervals: int = MAX_INTERVALS, time_limit_s: float | None = None,
                  t0: float | None = None) -> IterationResult:
    """The optimum of ``problem`` (:class:`IterationProblem`): the CP-SAT model of the module
    docstring over its program graph, with 2.x's slots when ``problem.slots``; limits and
    status as :func:`solve_iteration` (``t0``: when the call's wall clock started)."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter() if t0 is None else t0
    options, k = problem.options, problem.k
    n_int = check_size(options, max_intervals, problem.too_large)
    nchunks = sum(len(per) for per in options)
    lb_iter = problem.bound_ns
    found = problem.updates
    fixed = problem.fixed_ns
    slots = problem.slots
    trace: Trace | None = None if slots else program_trace(problem.program)

    durations = [t for per in options for opts in per for _, st in opts for _, t in st]
    if trace is not None:
        delays = [float(cast(float, v)) for op, v in trace.ops if op == "delay"]
    else:
        delays = [float(n.duration_ns) for n in problem.program.nodes
                  if n.kind is not NodeKind.COLLECTIVE]
    updates = [float(u) for u in found]
    fixed_list = [float(v) for v in fixed.values()]
    exact = all(float(v).is_integer() for v in durations + delays + updates + fixed_list)
    tick = 1.0 if exact else max(durations + [1.0]) / RESOLUTION

    def ticks(ns: float) -> int:
        return int(round(ns)) if exact else math.ceil(ns / tick - 1e-12)

    rounded = 0 if exact else len(durations) + len(delays) + len(updates) + len(fixed_list)
    horizon = (sum(ticks(v) for v in delays) + sum(ticks(v) for v in updates)
               + sum(ticks(v) for v in fixed_list)
               + sum(max(sum(ticks(t) for _, t in st) for _, st in opts)
                     for per in options for opts in per) + 1)

    m = cp_model.CpModel()
    on_dim: dict[int, list] = {}
    finish = [m.new_int_var(0, horizon, f"F{c}") for c in range(len(found))]
    choice: list[list[list]] = []
    starts: list[list[list[list]]] = []
    release: dict[int, tuple[Any, int]] = {}
    thread: Any = None
    offset = 0
    node_start: dict[int, Any] = {}
    ends: list[tuple[Any, int]] = []  # slots: every node's end (var or None, ticks)
    if trace is not None:
        for op, value in trace.ops:
            if op == "delay":
                offset += ticks(float(cast(float, value)))
            elif op == "issue":
                release[cast(Issue, value).index] = (thread, offset)
            else:
                p = m.new_int_var(0, horizon, "P")
                if thread is not None:
                    m.add(p >= thread + offset)
                else:
                    m.add(p >= offset)
                for c in cast(list[int], value):
                    m.add(p >= finish[c])
                thread, offset = p, 0
    else:
        ends = _slot_precedence(m, problem, finish, fixed, horizon, ticks, release, node_start)
    for c, (per, update_ns) in enumerate(zip(options, found, strict=True)):
        base, off = release[c]
        u = ticks(float(update_ns))
        c_choice, c_starts = [], []
        if c in fixed:  # one fixed time (no stages to choose)
            m.add(finish[c] >= (base + off if base is not None else off) + ticks(fixed[c]) + u)
        sizes = problem.sizes[c]
        for j, opts in enumerate(per):
            bools = [m.new_bool_var(f"b{c}_{j}_{a}") for a in range(len(opts))]
            m.add_exactly_one(bools)
            j_starts = []
            for a, (_, st) in enumerate(opts):
                prev = None
                a_starts = []
                for d, t in st:
                    dur = ticks(t)
                    sv = m.new_int_var(0, horizon, "s")
                    iv = m.new_optional_fixed_size_interval_var(sv, dur, bools[a], "i")
                    on_dim.setdefault(d, []).append(iv)
                    if prev is None:
                        if base is None:
                            m.add(sv >= off).only_enforce_if(bools[a])
                        else:
                            m.add(sv >= base + off).only_enforce_if(bools[a])
                    else:
                        m.add(sv >= prev[0] + prev[1]).only_enforce_if(bools[a])
                    prev = (sv, dur)
                    a_starts.append((sv, dur, d))
                assert prev is not None
                m.add(finish[c] >= prev[0] + prev[1] + u).only_enforce_if(bools[a])
                j_starts.append(a_starts)
            c_choice.append(bools)
            c_starts.append(j_starts)
        # Chunks of one size are interchangeable: their alternatives in order.
        for j in range(1, len(per)):
            if sizes[j] == sizes[j - 1]:
                m.add(sum(a * v for a, v in enumerate(c_choice[j - 1]))
                      <= sum(a * v for a, v in enumerate(c_choice[j])))
        choice.append(c_choice)
        starts.append(c_starts)
    # The window bound holds for the exact optimum, which the scaled one is not below
    # (and, with whole-ns durations, every schedule's end is a whole number of ns).
    floor = max(0, math.ceil(lb_iter / tick - 1e-6))
    end = m.new_int_var(min(floor, horizon), horizon, "M")
    if exact and problem.hint_end_ns is not None:
        # the hint's schedule is one of the model's: the optimum is at most its end
        m.add(end <= int(round(problem.hint_end_ns)))
    _add_hint(m, problem.hint_stages, options, choice, starts, ticks)
    for i, v in node_start.items():
        if i in problem.hint_starts:
            m.add_hint(v, ticks(problem.hint_starts[i]))
    if trace is not None:
        m.add(end >= (thread + offset if thread is not None else offset))
    for var, ticks_after in ends:
        m.add(end >= (var + ticks_after if var is not None else ticks_after))
    for f in finish:
        m.add(end >= f)
    for ivs in on_dim.values():
        if k == 1:
            m.add_no_overlap(ivs)
        else:
            m.add_cumulative(ivs, [1] * len(ivs), k)
    m.minimize(end)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = float(deterministic_s)
    solver.parameters.random_seed = 0
    left_s = None if time_limit_s is None else time_limit_s - (time.perf_counter() - t0)
    if left_s is not None:
        solver.parameters.max_time_in_seconds = max(left_s, 1e-3)
    code = solver.solve(m)
    # What stopped an unproven search: the wall clock only if it was set and the
    # deterministic budget was not used up.
    stopper = "wall" if left_s is not None and \
        solver.response_proto.deterministic_time < 0.999 * float(deterministic_s) \
        else "deterministic"
    bound_ns = max(0.0, solver.best_objective_bound * tick - rounded * tick) \
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE) else 0.0
    result = IterationResult(Status.UNKNOWN, None, None, max(lb_iter, bound_ns), lb_iter,
                             rounded * tick, len(found), nchunks, n_int)
    if code == cp_model.INFEASIBLE:
        result.status, result.reason = Status.INFEASIBLE, "the model has no schedule (a bug)"
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        result.stopped_by = stopper if code == cp_model.UNKNOWN else ""
        result.reason = result.reason or (
            "no schedule within the deterministic budget" if stopper == "deterministic"
            else f"no schedule within the time limit ({time_limit_s:g} s)")
        result.runtime_s = time.perf_counter() - t0
        return result
    result.solver_makespan_ns = solver.objective_value * tick
    plans: list[list[Plan]] = []
    keyed: dict[int, list[tuple[int, int, int, int, int]]] = {}
    for c, per in enumerate(options):
        cp: list[Plan] = []
        for j, opts in enumerate(per):
            a = next(a for a, v in enumerate(choice[c][j]) if solver.boolean_value(v))
            cp.append(opts[a][0])
            for step, (sv, dur, d) in enumerate(starts[c][j][a]):
                keyed.setdefault(d, []).append((solver.value(sv), solver.value(sv) + dur,
                                                c, j, step))
        plans.append(cp)
    orders = {d: [(c, j, step) for _, _, c, j, step in sorted(v)] for d, v in keyed.items()}
    result.plans, result.orders = plans, orders
    result.makespan_ns = problem.replay(plans, orders,
                                        {i: solver.value(v) for i, v in node_start.items()})
    optimal = code == cp_model.OPTIMAL
    if optimal:
        result.lower_bound_ns = max(result.lower_bound_ns,
                                    min(result.makespan_ns or math.inf,
                                        result.solver_makespan_ns) - rounded * tick)
    result.status = Status.OPTIMAL if optimal else Status.FEASIBLE
    if not optimal:
        result.stopped_by = stopper
        result.reason = (f"the deterministic budget ({deterministic_s:g} s) ended the search: "
                         "incumbent and bound" if stopper == "deterministic" else
                         f"the time limit ({time_limit_s:g} s) ended the search: incumbent "
                         "and bound")
    result.runtime_s = time.perf_counter() - t0
    return result


def _slot_precedence(m, problem: IterationProblem, finish: list, fixed: dict[int, float],
                     horizon: int, ticks: Callable[[float], int],
                     release: dict[int, tuple[Any, int]], node_start: dict[int, Any]
                     ) -> list[tuple[Any, int]]:
    """ASTRA-sim 2.x's slots over the program graph: every node starts after its
    dependencies end; compute nodes one at a time (their durations), collectives one at a
    time, each holding its slot from its issue (its release) to its finish. Fills
    ``release`` (collective index -> (start var, 0)) and ``node_start``; returns every
    node's end as (var, ticks after it)."""
    index = {n.id: c for c, n in enumerate(problem.program.collectives)}
    end_of: dict[int, tuple[Any, int]] = {}
    compute, comm = [], []
    for n in problem.program.nodes:
        deps = [end_of[d] for d in n.deps]
        dur = ticks(float(n.duration_ns)) if n.kind is not NodeKind.COLLECTIVE else 0
        if n.kind is NodeKind.DELAY and len(deps) <= 1:
            var, off = deps[0] if deps else (None, 0)
            end_of[n.id] = (var, off + dur)
            continue
        sv = m.new_int_var(0, horizon, f"S{n.id}")
        node_start[n.id] = sv
        for var, off in deps:
            m.add(sv >= (var + off if var is not None else off))
        if n.kind is NodeKind.COLLECTIVE:
            c = index[n.id]
            release[c] = (sv, 0)
            size = m.new_int_var(0, horizon, f"H{c}")
            comm.append(m.new_interval_var(sv, size, finish[c], f"slot{c}"))
            end_of[n.id] = (finish[c], 0)
        elif n.kind is NodeKind.COMPUTE:
            if dur:
                compute.append(m.new_fixed_size_interval_var(sv, dur, f"c{n.id}"))
            end_of[n.id] = (sv, dur)
        else:
            end_of[n.id] = (sv, dur)
    if len(compute) > 1:
        m.add_no_overlap(compute)
    if len(comm) > 1:
        m.add_no_overlap(comm)
    return list(end_of.values())


def _add_hint(m, hint_stages, options, choice, starts, ticks) -> None:
    """Hint every chunk's alternative and stage starts from a simulated run's stages
    ``(dim, collective, chunk, start ns)``."""
    stages: dict[tuple[int, int], list[tuple[int, float]]] = {}
    for d, c, j, start in hint_stages:
        stages.setdefault((c, j), []).append((d, start))
    for (c, j), got in stages.items():
        if c >= len(options) or j >= len(options[c]):
            continue
        dims = [d for d, _ in got]
        match = [a for a, (_, st) in enumerate(options[c][j]) if [d for d, _ in st] == dims]
        if not match:
            continue
        a = match[0]
        for b, v in enumerate(choice[c][j]):
            m.add_hint(v, b == a)
        for (sv, _, _), (_, start) in zip(starts[c][j][a], got, strict=True):
            m.add_hint(sv, ticks(start))


__all__ = ["IterationProblem", "IterationResult", "check_size", "solve_program"]
