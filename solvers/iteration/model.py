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
from dataclasses import dataclass, field
from typing import Any, cast

from solvers.iteration.trace import Issue, Trace, record
from solvers.result import Status
from themis.disciplines.replay import Replay
from themis.engine import Engine
from themis.plans import Plan
from themis.timing import make_timing
from themis.training.bound import Alternatives, iteration_bound
from themis.training.config import CollectiveRecord, Phase, TrainingConfig
from themis.training.dims import TRANSFORMERS, logical_network
from themis.training.loops import drive
from themis.training.runner import Run
from themis.training.shapes import CollectiveShapes
from themis.training.simulate import KindTimings, scale_workload, simulate_training
from topologies.errors import InputError
from topologies.network import Network
from topologies.workload import Workload

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


@dataclass
class _Setup:
    wl: Workload
    lnet: Network
    cfg: TrainingConfig
    timings: KindTimings
    b: int
    astra: bool


def _setup(workload: Workload, network: Network, cfg: TrainingConfig) -> _Setup:
    group = workload.model_parallel_npu_group if workload.parallelism in TRANSFORMERS else None
    lnet, b, split = logical_network(network, group)
    return _Setup(scale_workload(workload, cfg), lnet, cfg, KindTimings(cfg, lnet, split), b,
                  cfg.run_kind.astra_events)


def _engine(s: _Setup) -> Engine:
    kind = s.cfg.run_kind
    return Engine(s.lnet, s.timings, kind.priority_queue("fifo"), s.cfg.active_chunks,
                  kind.rules())


def solve_iteration(workload: Workload, network: Network, cfg: TrainingConfig,
                    deterministic_s: float = DETERMINISTIC_S,
                    max_intervals: int = MAX_INTERVALS,
                    time_limit_s: float | None = None) -> IterationResult:
    """The optimum of ``workload``'s iteration on ``network`` under ``cfg`` (timing,
    chunks, k, passes, scales); refuses (:class:`InputError`) models above
    ``max_intervals`` optional intervals and bandwidth sharing (alpha-beta, k > 1).

    The search stops at ``deterministic_s`` (the same result on any machine) or,
    when given, at ``time_limit_s`` wall-clock seconds for the whole call (model
    build included), whichever comes first; ``stopped_by`` says which
    (``deterministic`` or ``wall``)."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    s = _setup(workload, network, cfg)
    k = cfg.active_chunks
    if k > 1 and make_timing(cfg.timing, s.lnet, None, cfg.endpoint_delay_ns).shares_bandwidth:
        raise InputError("the exact iteration model has no bandwidth sharing (alpha-beta with "
                         "k > 1); use --timing astra-sim-1.0 or k = 1",
                         "active-chunks-per-dimension", k)
    engine = _engine(s)
    alts = Alternatives(engine, cfg.run_kind)
    shapes = CollectiveShapes(s.wl, s.lnet, s.b, cfg)
    found: list[tuple[str, list[int], tuple[int, ...], int]] = []  # kind, sizes, dims, layer

    def issue_fn(run, i: int, phase: Phase, highest: bool) -> bool:
        shape = shapes.shape(run, i, phase, highest)
        if shape is None:
            return False
        kind, _, sizes, _, dims, _ = shape
        found.append((kind, sizes, dims, i))
        return True

    trace: Trace = record(s.wl, cfg.passes, issue_fn)
    # Alternatives of every chunk: (plan, [(dim, duration ns)]).
    options: list[list[list[tuple[Plan, list[tuple[int, float]]]]]] = []
    n_int = 0
    for kind, sizes, dims, _ in found:
        kind_plans = alts.plans(kind, dims)
        per = []
        for size in sizes:
            opts = [(p, [(d, t) for d, t, _ in alts.steps(kind, p, float(size))])
                    for p in kind_plans]
            n_int += sum(len(st) for _, st in opts)
            per.append(opts)
        options.append(per)
    nchunks = sum(len(sz) for _, sz, _, _ in found)
    if n_int > max_intervals:
        raise InputError(f"too large for the exact iteration model ({n_int} optional stage "
                         f"intervals over {len(found)} collectives and {nchunks} chunks, at most "
                         f"{max_intervals}); use fewer chunks or layers", "chunks", cfg.chunks)
    lb_iter = iteration_bound(s.wl, s.lnet, s.b, cfg, s.timings, False)
    hint = _best_policy(workload, network, cfg)

    durations = [t for per in options for opts in per for _, st in opts for _, t in st]
    delays = [float(cast(float, v)) for op, v in trace.ops if op == "delay"]
    updates = [float(s.wl.layers[i].update_ns) for *_, i in found]
    exact = all(float(v).is_integer() for v in durations + delays + updates)
    tick = 1.0 if exact else max(durations + [1.0]) / RESOLUTION

    def ticks(ns: float) -> int:
        return int(round(ns)) if exact else math.ceil(ns / tick - 1e-12)

    rounded = 0 if exact else len(durations) + len(delays) + len(updates)
    horizon = (sum(ticks(v) for v in delays) + sum(ticks(v) for v in updates)
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
    for c, (_, sizes, _, layer) in enumerate(found):
        base, off = release[c]
        u = ticks(float(s.wl.layers[layer].update_ns))
        c_choice, c_starts = [], []
        for j, opts in enumerate(options[c]):
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
        for j in range(1, len(sizes)):
            if sizes[j] == sizes[j - 1]:
                m.add(sum(a * v for a, v in enumerate(c_choice[j - 1]))
                      <= sum(a * v for a, v in enumerate(c_choice[j])))
        choice.append(c_choice)
        starts.append(c_starts)
    # The window bound holds for the exact optimum, which the scaled one is not below
    # (and, with whole-ns durations, every schedule's end is a whole number of ns).
    floor = max(0, math.ceil(lb_iter / tick - 1e-6))
    end = m.new_int_var(min(floor, horizon), horizon, "M")
    if exact:  # the best policy's schedule is one of the model's: the optimum is at most it
        m.add(end <= int(round(hint.end_ns)))
    _add_hint(m, hint, options, choice, starts, ticks)
    m.add(end >= (thread + offset if thread is not None else offset))
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
    result.makespan_ns = replay_iteration(workload, network, cfg, plans, orders)
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


#: Policies / disciplines whose best schedule hints the model (and caps it when exact).
HINT_POLICIES: tuple[tuple[str, str], ...] = (
    ("baseline", "fifo"), ("themis", "scf"), ("themis-running", "scf"),
    ("themis-running", "fifo"), ("lb-mix", "scf"))


def _best_policy(workload: Workload, network: Network, cfg: TrainingConfig):
    """The simulated run of :data:`HINT_POLICIES` that ends first."""
    runs = [simulate_training(workload, network, cfg.with_(policy=p, intra=i), bound=False)
            for p, i in HINT_POLICIES]
    return min(runs, key=lambda r: r.end_ns)


def _add_hint(m, run, options, choice, starts, ticks) -> None:
    """Hint every chunk's alternative and stage starts from a simulated ``run``."""
    stages: dict[tuple[int, int], list[tuple[int, float]]] = {}
    for d, c, j, start, _ in run.timeline.stages:
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


def replay_iteration(workload: Workload, network: Network, cfg: TrainingConfig,
                     plans: list[list[Plan]], orders: dict[int, list[tuple[int, int, int]]]
                     ) -> float | None:
    """The iteration's end in the training engine with every chunk's ``plans`` and every
    dimension running its stages in ``orders`` ((collective, chunk, step) in issue
    order); ``None`` if the orders deadlock."""
    s = _setup(workload, network, cfg)
    engine = _engine(s)
    shapes = CollectiveShapes(s.wl, s.lnet, s.b, cfg)
    first: list[int] = []
    total = 0
    for cp in plans:
        first.append(total)
        total += sum(len(p) for p in cp)

    def sid(c: int, j: int, step: int) -> int:
        return first[c] + sum(len(p) for p in plans[c][:j]) + step

    engine.queues = [Replay(engine.table, [sid(*key) for key in orders.get(d, [])])
                     for d in range(engine.ndims)]
    count = [0]

    def issue(run: Run, i: int, phase: Phase, highest: bool) -> CollectiveRecord | None:
        shape = shapes.shape(run, i, phase, highest)
        if shape is None:
            return None
        kind, size, sizes, _, dims, prio = shape
        c = count[0]
        count[0] += 1
        rec = CollectiveRecord(c, i, str(phase), kind, size, dims, engine.now)
        engine.issue(kind, sizes, plans[c], prio,
                     lambda cid, t: run.collective_done(rec, i, phase, t))
        return rec

    run = Run.for_workload(s.wl, issue, engine, cfg.scheduling_policy)
    drive(run, s.wl, cfg.passes)
    return run.end_ns


__all__ = ["IterationResult", "replay_iteration", "solve_iteration"]
