"""The exact optimum of a Chakra-trace iteration under ASTRA-sim 2.x's slots.

Each rank class of an ET run (:func:`themis.training.et_program.et_programs`: its program
graph, what the system-file runner runs for each collective, its iteration bound) is solved
with :func:`~solvers.iteration.model.solve_program` and ``slots`` (one compute node and one
collective at a time, a collective holding its slot from its issue to its end) in two exact
steps. Under the slots a collective always runs alone, and an optimal schedule never gets
worse when a collective gets faster (every start kept, everything still fits), so:

1. each distinct collective alone (:func:`collective_problem`, a one-node program): its
   chunks on any alternative (route and plan shape the run kind executes), every
   dimension's stage order free; a collective 2.x flattens to one ring keeps its time;
2. each rank class's slot schedule (:func:`slot_problem`) with every collective at that
   optimum: the order of both slots, every node after its dependencies.

That covers every schedule of the ET semantics whatever the policy, discipline and issue
order, so the optimum is at most every policy's end (the slots' issue order is 2.x's
ascending ids) and at least the iteration bound; the largest over the classes is the
iteration's. (One model of both steps together gives the same optima and was tried first:
its search crept down one ns at a time over a compute-long horizon, 760 s against 0.5 s.)

The model is exact only where every stage time is a whole ns (``astra-sim-2``,
``astra-sim-1.0``): an ET run rounds each collective's time up to a whole ns, which a
model of fractional stage times (``alpha-beta``) would not see; such a timing is refused in
one line, as is bandwidth sharing. The answer is re-timed independently
(:func:`replay_et`): each collective's chunks alone in the training engine with the chosen
routes and stage orders, then each slot's nodes in the model's order, every node as early
as its dependencies and its slot allow.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Mapping
from dataclasses import replace

from solvers.iteration.model import (
    DETERMINISTIC_S,
    MAX_INTERVALS,
    IterationProblem,
    IterationResult,
    Options,
    check_size,
    solve_program,
)
from solvers.result import Status
from themis.disciplines.replay import Replay
from themis.engine.resources import resource_law
from themis.plans import Plan
from themis.program import Node, NodeKind, Program
from themis.training.et_bound import CollectiveModel, model_bound_ns
from themis.training.et_program import ETProgram, et_programs
from themis.training.et_run import ETResult
from topologies.chakra.trace import Trace
from topologies.errors import InputError
from topologies.network import Network

__all__ = ["collective_problem", "replay_et", "slot_problem", "solve_et"]


#: A distinct collective: kind, chunk sizes, dimensions, network.
_Key = tuple


def _key(model: CollectiveModel) -> _Key:
    return (model.kind, model.sizes, model.dims, model.network)


def collective_problem(model: CollectiveModel, timing: str) -> IterationProblem:
    """One collective alone (a one-node program): its chunks on every alternative, each
    dimension's order free, its own bound as the floor and its run as hint and cap;
    refuses (one line naming ``--timing``) stage times that are not whole ns and
    bandwidth sharing."""
    if not resource_law(model.law).exact_durations:
        raise InputError("the exact iteration model has no bandwidth sharing (alpha-beta "
                         "with k > 1); use --timing astra-sim-2 or k = 1", "--timing", timing)
    plans = model.alts.plans(model.kind, model.dims)
    per: list[Options] = [[(p, [(d, t) for d, t, _ in model.alts.steps(model.kind, p, size)])
                           for p in plans] for size in model.sizes]
    if any(not float(t).is_integer() for opts in per for _, st in opts for _, t in st):
        raise InputError("the exact model on Chakra traces needs whole-ns stage times, as "
                         "2.x's slots hold each collective for a whole number of ns (the "
                         "astra-sim-2 and astra-sim-1.0 timings); this timing's are "
                         "fractional", "--timing", timing)
    ndims = model.network.ndims
    program = Program((Node(0, NodeKind.COLLECTIVE, model.kind, collective=model.kind,
                            size_bytes=max(1, int(sum(model.sizes))),
                            mask=tuple(d in model.dims for d in range(ndims))),))
    return IterationProblem(
        program, [per], [list(model.sizes)], [0.0], model.active_chunks,
        float(model_bound_ns(model)),
        lambda plans, orders, _starts: _collective_ns(
            model, plans[0], {d: [(j, step) for _, j, step in keys]
                              for d, keys in orders.items()}),
        slots=True, hint_stages=[(d, 0, j, start) for d, j, start in model.run_stages],
        hint_end_ns=float(math.ceil(model.run_ns - 1e-9)),
        too_large=("chunks (--chunks) or nodes", "--solve", True))


def slot_problem(prog: ETProgram, times_ns: Mapping[int, float]) -> IterationProblem:
    """A rank class's slot schedule with every collective at a fixed time (``times_ns``
    per collective index; those of :attr:`ETProgram.fixed_ns` kept), its iteration bound
    as the floor (valid when each time is at least the collective's own bound) and its
    run as hint and cap (valid when each time is at most the run's)."""
    fixed = {c: float(prog.fixed_ns.get(c, times_ns.get(c, 0)))
             for c, _ in enumerate(prog.program.collectives)}
    bare = replace(prog, models={}, fixed_ns={c: int(t) for c, t in fixed.items()})
    n = len(fixed)
    return IterationProblem(
        prog.program, [[] for _ in range(n)], [[] for _ in range(n)], [0.0] * n, 1,
        float(prog.bound_ns), lambda plans, orders, starts: replay_et(bare, [], {}, starts),
        fixed_ns=fixed, slots=True,
        hint_starts={i: float(t) for i, t in prog.issue_ns.items()},
        hint_end_ns=float(prog.end_ns))


def solve_et(traces: Mapping[int, Trace], network: Network, result: ETResult,
             timing: str, files: Mapping[int, str] | None = None,
             groups: Mapping[str, list[int]] | None = None,
             deterministic_s: float = DETERMINISTIC_S, max_intervals: int = MAX_INTERVALS,
             time_limit_s: float | None = None) -> IterationResult:
    """The optimum of the iteration ``result`` ran (:func:`~themis.training.et_run.
    simulate_et` of ``traces`` on ``network`` under ``timing``, with ``bound=True``; its
    run hints the searches and caps them), in two exact steps (module docstring): each
    distinct collective's optimum alone, then each rank class's slot schedule with those
    times. Every collective model is built and the optional stage intervals of the
    distinct collectives (their sum) checked against ``max_intervals`` before anything is
    solved. Each search has ``deterministic_s``; ``time_limit_s`` is wall clock for the
    whole call. Status: ``optimal`` only when every step is proven (or the end meets the
    bound), else ``feasible`` with incumbent and bound."""
    t0 = time.perf_counter()
    progs = et_programs(traces, network, result, files, groups)
    distinct: dict[_Key, CollectiveModel] = {}
    for prog in progs:
        for model in prog.models.values():
            distinct.setdefault(_key(model), model)
    problems = {key: collective_problem(model, timing) for key, model in distinct.items()}
    merged = [opts for pb in problems.values() for opts in pb.options]
    n_int = check_size(merged, max_intervals, ("chunks (--chunks) or nodes", "--solve", True))

    def left() -> float | None:
        return None if time_limit_s is None else \
            max(time_limit_s - (time.perf_counter() - t0), 1e-3)

    alone = {key: solve_program(pb, deterministic_s, max_intervals, left())
             for key, pb in problems.items()}
    unproven = [a for a in alone.values() if a.status != Status.OPTIMAL]
    # A collective without a schedule at its limit keeps its run's time (a schedule).
    best = {key: a.makespan_ns if a.makespan_ns is not None else
            float(math.ceil(distinct[key].run_ns - 1e-9)) for key, a in alone.items()}

    def why(stopped_by: str) -> str:
        return f"the time limit ({time_limit_s:g} s)" if stopped_by == "wall" else \
            f"the deterministic budget ({deterministic_s:g} s)"

    answers = []
    for prog in progs:
        times = {c: best[_key(m)] for c, m in prog.models.items()}
        answer = solve_program(slot_problem(prog, times), deterministic_s, max_intervals,
                               left())
        if answer.makespan_ns is None:  # nothing within the limit: the run is a schedule
            answer.makespan_ns = answer.solver_makespan_ns = float(prog.end_ns)
            answer.status = Status.FEASIBLE
            answer.reason = (f"{why(answer.stopped_by)} ended the search: the run's own "
                             "end and the bound")
        if unproven and prog.models:
            # the collectives' incumbents may not be their optima: a bound from the slot
            # schedule with each collective at its proven lower bound instead
            lows = {c: float(math.ceil(alone[_key(m)].lower_bound_ns - 1e-6))
                    for c, m in prog.models.items()}
            low = solve_program(replace(slot_problem(prog, lows), hint_end_ns=None),
                                deterministic_s, max_intervals, left())
            answer.lower_bound_ns = max(float(prog.bound_ns), low.lower_bound_ns)
            if answer.status == Status.OPTIMAL and (answer.makespan_ns or 0) > \
                    answer.lower_bound_ns:
                answer.status = Status.FEASIBLE
                answer.reason = (f"{why(unproven[0].stopped_by)} ended a collective's "
                                 "search: incumbent and bound")
            answer.stopped_by = unproven[0].stopped_by
        answers.append(answer)
    out = _combine(answers, time.perf_counter() - t0)
    out.collectives = sum(len(p.program.collectives) for p in progs)
    out.chunks = sum(len(pb.options[0]) for pb in problems.values())
    out.intervals = n_int
    return out


def _combine(answers: list[IterationResult], runtime_s: float) -> IterationResult:
    """One result for the rank classes: the largest end and bound (the iteration ends when
    its slowest class does), optimal when every class is or the end meets the bound."""
    if len(answers) == 1:
        answers[0].runtime_s = runtime_s
        return answers[0]
    ends = [a.makespan_ns for a in answers]
    makespan = None if any(e is None for e in ends) else max(e for e in ends if e is not None)
    solver_ends = [a.solver_makespan_ns for a in answers]
    solver = None if any(e is None for e in solver_ends) else \
        max(e for e in solver_ends if e is not None)
    bound = max(a.lower_bound_ns for a in answers)
    if makespan is None:
        status = Status.INFEASIBLE if any(a.status == Status.INFEASIBLE for a in answers) \
            else Status.UNKNOWN
    elif all(a.status == Status.OPTIMAL for a in answers) or makespan <= bound:
        status = Status.OPTIMAL
    else:
        status = Status.FEASIBLE
    worst = next((a for a in answers if a.status != Status.OPTIMAL), answers[0])
    out = IterationResult(status, makespan, solver, bound,
                          max(a.iteration_bound_ns for a in answers),
                          max(a.scaling_error_ns for a in answers),
                          sum(a.collectives for a in answers), sum(a.chunks for a in answers),
                          sum(a.intervals for a in answers))
    if status != Status.OPTIMAL:
        out.reason, out.stopped_by = worst.reason, worst.stopped_by
    out.runtime_s = runtime_s
    return out


def replay_et(prog: ETProgram, plans: list[list[Plan]],
              orders: dict[int, list[tuple[int, int, int]]], starts: dict[int, int]
              ) -> float | None:
    """The end of an answer re-timed: each collective's chunks alone in the training
    engine on ``plans`` with each dimension's stages in ``orders`` (rounded up to a whole
    ns, as an ET run does); then every node as early as its dependencies and the node
    before it on its slot allow, each slot in the order of the model's ``starts``.
    ``None`` if a collective's orders deadlock."""
    program = prog.program
    colls = program.collectives
    index = {n.id: c for c, n in enumerate(colls)}
    took: dict[int, int] = {}
    for c, _ in enumerate(colls):
        model = prog.models.get(c)
        if model is None:
            took[c] = prog.fixed_ns[c]
            continue
        ns = _collective_ns(model, plans[c], {d: [(j, step) for cc, j, step in keys if cc == c]
                                              for d, keys in orders.items()})
        if ns is None:
            return None
        took[c] = ns
    slot_of = {n.id: ("collective" if n.kind is NodeKind.COLLECTIVE else
                      "compute" if n.kind is NodeKind.COMPUTE and n.duration_ns else "")
               for n in program.nodes}
    after: dict[int, list[int]] = {n.id: [] for n in program.nodes}
    left = {n.id: len(set(n.deps)) for n in program.nodes}
    for n in program.nodes:
        for d in set(n.deps):
            after[d].append(n.id)
    for slot in ("compute", "collective"):  # each slot's nodes in the model's order
        seq = sorted((starts.get(i, 0), i) for i, s in slot_of.items() if s == slot)
        for (_, a), (_, b) in zip(seq, seq[1:], strict=False):
            after[a].append(b)
            left[b] += 1
    ready = [i for i, k in left.items() if k == 0]
    heapq.heapify(ready)
    start = dict.fromkeys(ready, 0)
    end: dict[int, int] = {}
    while ready:
        i = heapq.heappop(ready)
        node = program.nodes[i]
        own = took[index[i]] if node.kind is NodeKind.COLLECTIVE else node.duration_ns
        end[i] = start[i] + own
        for u in after[i]:
            start[u] = max(start.get(u, 0), end[i])
            left[u] -= 1
            if left[u] == 0:
                heapq.heappush(ready, u)
    if len(end) != len(program.nodes):  # pragma: no cover - the model's order is a schedule
        return None
    return float(max(end.values(), default=0))


def _collective_ns(model: CollectiveModel, plans: list[Plan],
                   orders: dict[int, list[tuple[int, int]]]) -> int | None:
    """One collective's chunks alone on ``plans``, each dimension's stages in ``orders``
    ((chunk, step)), in the training engine; its end rounded up to a whole ns."""
    from themis.engine import Engine

    proto = model.engine
    engine = Engine(model.network, proto.timings, "fifo", model.active_chunks, proto.rules,
                    model.law)
    first: list[int] = []
    total = 0
    for p in plans:
        first.append(total)
        total += len(p)
    engine.queues = [Replay(engine.table, [first[j] + step for j, step in orders.get(d, [])])
                     for d in range(engine.ndims)]
    done: list[float] = []
    sizes = [int(s) if float(s).is_integer() else s for s in model.sizes]
    engine.at(0.0, lambda: engine.issue(model.kind, sizes, plans, 0,  # type: ignore[arg-type]
                                        lambda cid, t: done.append(t)))
    engine.run()
    if not done:
        return None
    return math.ceil(done[0] - 1e-9)
