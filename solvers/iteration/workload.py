"""A 1.0 workload's exact iteration: its compiled program, every chunk's alternatives and
the window bound as an :class:`~solvers.iteration.model.IterationProblem`
(:func:`iteration_problem`), solved by :func:`~solvers.iteration.model.solve_program`
(:func:`solve_iteration`), and an answer replayed in the training engine
(:func:`replay_iteration`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

from solvers.iteration.model import (
    DETERMINISTIC_S,
    MAX_INTERVALS,
    IterationProblem,
    IterationResult,
    Options,
    check_size,
    solve_program,
)
from themis.disciplines.replay import Replay
from themis.engine import Engine, law_at, resource_law
from themis.plans import Plan
from themis.program import Node, Program
from themis.timing import make_timing
from themis.training.bound import Alternatives, iteration_bound
from themis.training.compile10 import compile_workload
from themis.training.config import CollectiveRecord, TrainingConfig
from themis.training.dims import TRANSFORMERS, logical_network
from themis.training.execute import Execution
from themis.training.planner import involved
from themis.training.simulate import KindTimings, scale_workload, simulate_training
from topologies.errors import InputError
from topologies.network import Network
from topologies.workload import Workload

#: Policies / disciplines whose best schedule hints the model (and caps it when exact).
HINT_POLICIES: tuple[tuple[str, str], ...] = (
    ("baseline", "fifo"), ("themis", "scf"), ("themis-running", "scf"),
    ("themis-running", "fifo"), ("lb-mix", "scf"))



@dataclass
class _Setup:
    wl: Workload
    lnet: Network
    cfg: TrainingConfig
    timings: KindTimings
    b: int
    astra: bool

    @cached_property
    def program(self) -> Program:
        """The (scaled) workload's training program on the logical network."""
        return compile_workload(self.wl, self.lnet, self.b, self.cfg)


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
    t0 = time.perf_counter()
    problem = iteration_problem(workload, network, cfg, max_intervals)
    return solve_program(problem, deterministic_s, max_intervals, time_limit_s, t0)


def iteration_problem(workload: Workload, network: Network, cfg: TrainingConfig,
                      max_intervals: int = MAX_INTERVALS) -> IterationProblem:
    """The :class:`IterationProblem` of ``workload``'s iteration (its compiled program, one
    thread, no slots; the window bound; the best of :data:`HINT_POLICIES` as hint and cap);
    refusals as :func:`solve_iteration`."""
    s = _setup(workload, network, cfg)
    k = cfg.active_chunks
    law = law_at(make_timing(cfg.timing, s.lnet, None, cfg.endpoint_delay_ns).resource_law, k)
    if not resource_law(law).exact_durations:
        raise InputError("the exact iteration model has no bandwidth sharing (alpha-beta with "
                         "k > 1); use --timing astra-sim-1.0 or k = 1",
                         "active-chunks-per-dimension", k)
    engine = _engine(s)
    alts = Alternatives(engine, cfg.run_kind)
    # Per collective node: kind, chunk sizes, dimensions, finish delay (the layer's update).
    found: list[tuple[str, list[int], tuple[int, ...], int]] = [
        (str(n.collective), cfg.run_kind.chunk_sizes(n.size_bytes, cfg.chunks),
         involved(s.lnet, tuple(n.mask or ())), n.finish_delay_ns)
        for n in s.program.collectives]
    # Alternatives of every chunk: (plan, [(dim, duration ns)]).
    options: list[list[Options]] = []
    for kind, sizes, dims, _ in found:
        kind_plans = alts.plans(kind, dims)
        per = []
        for size in sizes:
            opts = [(p, [(d, t) for d, t, _ in alts.steps(kind, p, float(size))])
                    for p in kind_plans]
            per.append(opts)
        options.append(per)
    check_size(options, max_intervals, ("chunks or layers", "chunks", cfg.chunks))
    lb_iter = iteration_bound(s.program, s.lnet, cfg, s.timings, law)
    hint = _best_policy(workload, network, cfg)
    problem = IterationProblem(
        s.program, options, [[float(x) for x in sz] for _, sz, _, _ in found],
        [float(u) for *_, u in found], k, lb_iter,
        lambda plans, orders, _starts: replay_iteration(workload, network, cfg, plans, orders),
        hint_stages=[(d, c, j, start) for d, c, j, start, _ in hint.timeline.stages],
        hint_end_ns=float(hint.end_ns))
    return problem


def _best_policy(workload: Workload, network: Network, cfg: TrainingConfig):
    """The simulated run of :data:`HINT_POLICIES` that ends first."""
    runs = [simulate_training(workload, network, cfg.with_(policy=p, intra=i), bound=False)
            for p, i in HINT_POLICIES]
    return min(runs, key=lambda r: r.end_ns)


def replay_iteration(workload: Workload, network: Network, cfg: TrainingConfig,
                     plans: list[list[Plan]], orders: dict[int, list[tuple[int, int, int]]]
                     ) -> float | None:
    """The iteration's end in the training engine with every chunk's ``plans`` and every
    dimension running its stages in ``orders`` ((collective, chunk, step) in issue
    order); ``None`` if the orders deadlock."""
    s = _setup(workload, network, cfg)
    engine = _engine(s)
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

    def issue(run: Execution, node: Node) -> CollectiveRecord:
        kind, size = str(node.collective), node.size_bytes
        sizes = cfg.run_kind.chunk_sizes(size, cfg.chunks)
        dims = involved(s.lnet, tuple(node.mask or ()))
        c = count[0]
        count[0] += 1
        rec = CollectiveRecord(c, node.layer, node.phase, kind, size, dims, engine.now)
        engine.issue(kind, sizes, plans[c], node.priority,
                     lambda cid, t: run.collective_done(rec, node, t))
        return rec

    run = Execution(s.program, engine, issue)
    run.run()
    return run.end_ns


__all__ = ["iteration_problem", "replay_iteration", "solve_iteration"]
