"""``simulate_training``: one NPU's training timeline of a workload on a network.

``run_program`` is the training engine: it runs a :class:`~themis.program.Program`
(every workload form compiles to one) on the engine with the run's planner.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from itertools import repeat

from themis.collective import Collective
from themis.engine import Engine, law_at
from themis.plans import Plan
from themis.program import Node, Program
from themis.schedule import ChunkPlan, Schedule, Stage
from themis.timing import make_timing
from themis.timing.base import Timing
from themis.training.bound import iteration_bound
from themis.training.compile10 import compile_workload
from themis.training.config import (
    CollectiveRecord,
    DimStats,
    Timeline,
    TrainingConfig,
    TrainingResult,
)
from themis.training.dims import (
    TRANSFORMERS,
    logical_network,
    scaled,
    split_algorithms,
)
from themis.training.execute import Execution
from themis.training.planner import Planner, involved, route_of
from themis.training.routing import RouterFactory, iteration_planner
from topologies.errors import InputError
from topologies.network import Network
from topologies.workload import CommType, Layer, Workload


class KindTimings(dict):
    """Timing models per collective kind, made on first use (each kind has its algorithms)."""

    def __init__(self, cfg: TrainingConfig, network: Network, split: int | None) -> None:
        super().__init__()
        self.cfg, self.network, self.split = cfg, network, split

    def __missing__(self, kind: str) -> Timing:
        cfg = self.cfg
        algos = split_algorithms(cfg.algorithms_for(kind), self.split)
        if kind == "all-to-all":
            if algos is None:
                algos = ("direct",) * self.network.ndims
            if cfg.run_kind.meaning.direct_all_to_all_only and any(
                    a != "direct" for a in algos):
                raise InputError("ASTRA-sim 1.0's all-to-all is reproduced for the direct "
                                 "algorithm only", "all-to-all-implementation", "_".join(algos))
        tm = make_timing(cfg.timing, self.network, algos, cfg.endpoint_delay_ns)
        self[kind] = tm
        return tm


#: The largest float32 (ASTRA-sim 1.0 keeps the scales and scaled values as C floats).
FLOAT32_MAX = 3.4028234663852886e38
_SIZES = ("fwd_size_bytes", "ig_size_bytes", "wg_size_bytes")
_COMPUTES = ("fwd_compute_ns", "ig_compute_ns", "wg_compute_ns")


def check_scales(wl: Workload, cfg: TrainingConfig, comm_field: str = "comm_scale",
                 compute_field: str = "compute_scale") -> None:
    """Refuse scales whose products leave the accepted ranges (sizes up to 1 PiB,
    compute up to 1e12 ns) or ASTRA-sim's float32, naming the scale's field (the
    CLI passes its flags), its value and the first layer value it takes too far."""
    from topologies.units import MAX_LATENCY_NS, MAX_SIZE_BYTES

    exact = cfg.run_kind.meaning.float32
    for field, scale, cols, limit, what in (
            (comm_field, cfg.comm_scale, _SIZES, MAX_SIZE_BYTES, "1 PiB"),
            (compute_field, cfg.compute_scale, _COMPUTES, MAX_LATENCY_NS,
             f"{MAX_LATENCY_NS:g} ns")):
        if not (math.isfinite(scale) and scale > 0):
            raise InputError("must be a positive number", field, scale)
        if exact and scale > FLOAT32_MAX:
            raise InputError(f"more than ASTRA-sim 1.0's float32 holds ({FLOAT32_MAX:.4g})",
                             field, scale)
        for i, layer in enumerate(wl.layers):
            for col in cols:
                value = getattr(layer, col)
                if value * scale > limit:
                    name = col.rsplit("_", 1)[0]
                    raise InputError(
                        f"{wl.file or wl.name}: layer {i} ({layer.name}) {name} {value} "
                        f"x {scale:g} = {value * scale:.4g} is more than {what}, the largest "
                        "accepted", field, scale)


def scale_workload(wl: Workload, cfg: TrainingConfig) -> Workload:
    """Compute times and sizes times the scales (float32 under ``astra-sim-1.0``)."""
    exact = cfg.run_kind.meaning.float32
    cs, ms = cfg.compute_scale, cfg.comm_scale

    def one(layer: Layer) -> Layer:
        return replace(
            layer,
            fwd_compute_ns=scaled(layer.fwd_compute_ns, cs, exact),
            ig_compute_ns=scaled(layer.ig_compute_ns, cs, exact),
            wg_compute_ns=scaled(layer.wg_compute_ns, cs, exact),
            fwd_size_bytes=scaled(layer.fwd_size_bytes, ms, exact),
            ig_size_bytes=scaled(layer.ig_size_bytes, ms, exact),
            wg_size_bytes=scaled(layer.wg_size_bytes, ms, exact))

    return replace(wl, layers=tuple(one(layer) for layer in wl.layers))


def expected_collectives(wl: Workload, passes: int) -> int:
    """About how many collectives a run issues: one per layer phase with a type, per pass
    (a progress estimate; recomputed layers and skipped dimensions make it inexact)."""
    per_pass = sum(t is not CommType.NONE for layer in wl.layers
                   for t in (layer.fwd_type, layer.ig_type, layer.wg_type))
    return max(1, per_pass * passes)


def check_size(workload: Workload, network: Network, cfg: TrainingConfig,
               fields: tuple[str, str] = ("passes", "chunks"), file: str = "") -> None:
    """Refuse, before anything runs, a run of more chunk steps than
    :data:`themis.limits.MAX_TRAINING_STEPS` (naming ``fields[0]`` = the passes when
    there are several, else ``fields[1]`` = the chunks)."""
    from themis.limits import check_training_steps

    field, value = (fields[0], cfg.passes) if cfg.passes > 1 else (fields[1], cfg.chunks)
    check_training_steps(cfg.passes, expected_collectives(workload, 1), cfg.chunks,
                         len(network.dims), field, value,
                         file or workload.file or workload.name)


def prepare(workload: Workload, network: Network, cfg: TrainingConfig
            ) -> tuple[Workload, Network, int, dict[str, Timing], str]:
    """What a run of ``workload`` under ``cfg`` works on: the scaled workload, the logical
    network, the model-parallel split factor b, the timing models per collective kind
    and the resource law its stages run under (the timing's, at k slots:
    :func:`~themis.engine.resources.law_at`)."""
    group = workload.model_parallel_npu_group if workload.parallelism in TRANSFORMERS else None
    try:
        lnet, b, split = logical_network(network, group)
    except InputError as err:
        raise err.in_file(workload.file or workload.name) from None
    check_scales(workload, cfg)
    wl = scale_workload(workload, cfg)
    timings = KindTimings(cfg, lnet, split)
    law = law_at(make_timing(cfg.timing, lnet, None, cfg.endpoint_delay_ns).resource_law,
                 cfg.active_chunks)
    return wl, lnet, b, timings, law


def simulate_training(workload: Workload, network: Network,
                      config: TrainingConfig | None = None, bound: bool = True,
                      progress: Callable[[int, int, int], None] | None = None,
                      plans: Sequence[Sequence[Plan]] | None = None,
                      router: RouterFactory | None = None) -> TrainingResult:
    """Run ``workload`` on ``network`` as ASTRA-sim 1.0 runs it (workloads.md): the
    workload's loop compiled to a program (:mod:`themis.training.compile10`) and run by
    :func:`run_program`, the training engine.

    Returns the end time, pass ends, per-layer compute / comm / exposed,
    every collective, per-dimension busy time, a timeline and (with
    ``bound``) the iteration lower bound of :mod:`themis.training.bound`.
    Raises :class:`~topologies.errors.InputError` for inputs ASTRA-sim
    cannot run (an ALLREDUCEALLTOALL collective, a collective smaller than
    the chunk count, a non-direct all-to-all under ``astra-sim-1.0``...).
    ``progress(issued, ended, total)``, if given, is called as each collective
    is issued and as each ends (``total`` is :func:`expected_collectives`,
    raised to the issued count).

    ``plans`` (collective i in issue order: one stage plan per chunk) replaces the
    policy: every chunk runs its given plan (a whole-iteration planner's answer).
    ``router`` (a :data:`~themis.training.routing.RouterFactory`) replaces the policy
    by a planner's own router (the policy then only names the run). A policy that
    names a whole-iteration planner (``auto``, :mod:`themis.training.routing`)
    hands the run to it.
    """
    t0 = time.perf_counter()
    cfg = config or TrainingConfig()
    check_size(workload, network, cfg)
    if plans is None and router is None:
        planned = iteration_planner(cfg.policy)
        if planned is not None:
            return planned(workload, network, cfg, bound=bound, progress=progress)
    wl, lnet, b, timings, law = prepare(workload, network, cfg)
    result = run_program(
        lambda: compile_workload(wl, lnet, b, cfg), lnet, cfg, timings, law,
        layer_names=[layer.name for layer in wl.layers],
        parallelism=str(workload.parallelism), plans=plans, router=router,
        progress=progress, expected=expected_collectives(wl, cfg.passes), bound=bound)
    result.workload = workload.name
    result.wall_s = time.perf_counter() - t0
    return result


def run_program(program: Program | Callable[[], Program], lnet: Network,
                cfg: TrainingConfig, timings: dict[str, Timing], law: str, *,
                layer_names: Sequence[str] = (), parallelism: str = "",
                plans: Sequence[Sequence[Plan]] | None = None,
                router: RouterFactory | None = None,
                progress: Callable[[int, int, int], None] | None = None,
                expected: int = 1, bound: bool = True) -> TrainingResult:
    """The training engine: ``program`` (:mod:`themis.program`, on the logical network
    ``lnet``; or a function making it once the policy is checked) under ``cfg``'s
    policy (or the given ``plans`` / ``router``), with ``timings`` per collective kind
    and the resource law ``law`` (see :func:`simulate_training`). ``layer_names``
    name the statistics keys' layers; ``expected`` estimates the collectives for
    ``progress``."""
    kind = cfg.run_kind
    engine = Engine(lnet, timings, kind.priority_queue(cfg.intra), cfg.active_chunks,
                    kind.rules(law), law)
    planner = Planner(lnet, cfg.policy, kind, engine, cfg.intra, router) \
        if plans is None else None
    if callable(program):
        program = program()
    check_program(program, lnet)
    ended = [0]

    def done(run: Execution, rec: CollectiveRecord, node: Node, t: float) -> None:
        run.collective_done(rec, node, t)
        if progress is not None:
            ended[0] += 1
            progress(run.injected, ended[0], max(expected, run.injected))

    issued: list[tuple] = []  # per collective: kind, size, dims, chunk sizes, routes, plans

    def issue(run: Execution, node: Node) -> CollectiveRecord:
        now = engine.now
        if planner is not None:
            planner.note_issue(now)
        ckind, size = str(node.collective), node.size_bytes
        mask = tuple(node.mask or ())
        dims = involved(lnet, mask)
        sizes = kind.chunk_sizes(size, cfg.chunks)
        if planner is not None:
            routes, cplans = planner.choose(ckind, mask, sizes, now)
        else:
            cplans = given_plans(plans, len(issued), ckind, dims, len(sizes))
            routes = [route_of(ckind, p) for p in cplans]
        issued.append((ckind, size, dims, sizes, routes, cplans))
        rec = CollectiveRecord(len(engine.pending), node.layer, node.phase, ckind, size, dims,
                               now, chunks=len(sizes), priority=node.priority)
        engine.issue(ckind, sizes, cplans, node.priority,
                     lambda cid, t: done(run, rec, node, t))
        if progress is not None:
            progress(len(engine.pending), ended[0], max(expected, len(engine.pending)))
        return rec

    run = Execution(program, engine, issue)
    run.run()
    if run.end_ns is None:
        raise RuntimeError("the training loop never finished (a wait nothing answers)")
    end = run.end_ns
    k = cfg.active_chunks
    dims = [DimStats(d, dm.kind, dm.npus, engine.busy[d], engine.busy[d] / (end * k) if end else 0,
                     engine.sent[d]) for d, dm in enumerate(lnet.dims)]
    table = engine.table
    timeline = Timeline(run.compute, lambda: list(zip(
        table.dim, engine.coll, engine.chunk, engine.start, engine.end, strict=True)))
    if plans is not None and len(issued) != len(plans):
        raise InputError(f"the run issued {len(issued)} collectives", "plans", len(plans))
    result = TrainingResult(
        workload=program.name, parallelism=parallelism, end_ns=end,
        pass_end_ns=run.pass_end_ns, compute_ns=run.compute_total,
        layers=run.layer_stats(list(layer_names)),
        dims=dims, collectives=run.records, timeline=timeline, config=cfg,
        logical_npus=tuple(d.npus for d in lnet.dims),
        schedule=_schedule(engine, lnet, cfg, timings, issued, plans is not None))
    if bound:
        phase = getattr(progress, "phase", None)
        if callable(phase):  # a long run says what it does after its last collective
            phase("the iteration bound")
        result.lower_bound_ns = iteration_bound(program, lnet, cfg, timings, law)
    return result


def check_program(program: Program, lnet: Network) -> None:
    """Refuse what the training engine does not run: a collective spanning an NPU group
    rather than a dimension mask, or a mask of another length than ``lnet``'s dimensions."""
    for n in program.collectives:
        where = f"{program.name or 'program'}: node {n.id} ({n.name or n.collective})"
        if n.mask is None:
            raise InputError(f"{where}: the training engine runs collectives over "
                             "dimension masks; an NPU group is not run yet", "group",
                             list(n.group or ()))
        if len(n.mask) != lnet.ndims:
            raise InputError(f"{where}: the mask has {len(n.mask)} dimensions, the network "
                             f"{lnet.ndims}", "mask", list(n.mask))


def iteration_lower_bound(workload: Workload, network: Network,
                          config: TrainingConfig | None = None) -> float:
    """The iteration bound of :mod:`themis.training.bound` alone, without a simulation.

    The same value as ``simulate_training(workload, network, config).lower_bound_ns``
    for every policy and discipline of ``config`` (the bound depends on neither)."""
    cfg = config or TrainingConfig()
    wl, lnet, b, timings, law = prepare(workload, network, cfg)
    return iteration_bound(compile_workload(wl, lnet, b, cfg), lnet, cfg, timings, law)


def given_plans(plans: Sequence[Sequence[Plan]] | None, c: int, kind: str,
                dims: tuple[int, ...], n: int) -> list[Plan]:
    """Collective ``c``'s given plans, checked: one per chunk, each crossing exactly
    ``dims`` in a shape of ``kind``."""
    if plans is None or c >= len(plans):
        raise InputError(f"no plans for collective {c}", "plans", 0 if plans is None
                         else len(plans))
    out: list[Plan] = [tuple((str(ph), int(d)) for ph, d in p) for p in plans[c]]
    if len(out) != n:
        raise InputError(f"collective {c} has {n} chunks", "plans", len(out))
    for p in out:
        if sorted(route_of(kind, p)) != sorted(dims):
            raise InputError(f"collective {c} ({kind}) crosses dimensions {list(dims)}",
                             "plans", p)
    return out


_new_chunk_plan = partial(tuple.__new__, ChunkPlan)


def _schedule(engine: Engine, lnet: Network, cfg: TrainingConfig, timings: dict[str, Timing],
              issued: list[tuple], given: bool = False) -> Schedule:
    """The run as a :class:`Schedule` on the logical network (stages built on first use).

    Collective i spans the dimensions it crossed; an all-gather is recorded by its
    output (the file's per-NPU size times the NPUs it spans), so its chunks are
    the per-NPU chunks times N, as the checker's chunking of the shard gives."""
    colls: list[Collective] = []
    chunks: list[ChunkPlan] = []
    for ci, (kind, size, dims, sizes, routes, plans) in enumerate(issued):
        npus = 1
        if kind == "all-gather":
            for d in dims:
                npus *= lnet.dims[d].npus
        colls.append(Collective(kind, size * npus, cfg.chunks))
        n = len(sizes)
        chunks.extend(map(_new_chunk_plan, zip(repeat(ci, n), range(n),
                                               sizes if npus == 1 else [npus * c for c in sizes],
                                               routes, plans, strict=True)))
    default = make_timing(cfg.timing, lnet, None, cfg.endpoint_delay_ns).algorithms
    kind_algorithms = {kind: tuple(tm.algorithms) for kind, tm in timings.items()
                       if tuple(tm.algorithms) != tuple(default)}
    table, start, end = engine.table, engine.start, engine.end

    def make_stages() -> list[Stage]:
        coll, chunk, step = table.key_columns()
        return [Stage(*row) for row in zip(coll, chunk, step, table.phase, table.dim,
                                           table.input_bytes, table.output_bytes,
                                           table.sent_bytes, start, end, strict=True)]

    return Schedule.deferred(
        make_stages, network=lnet, timing=cfg.timing, algorithms=tuple(default),
        endpoint_delay_ns=float(cfg.endpoint_delay_ns), active_chunks=cfg.active_chunks,
        collectives=colls, issue_ns=list(engine.issue_ns), chunks=chunks,
        local_bw_aware=cfg.local_bw_aware,
        meta={"policy": str(cfg.policy) if not given else "given", "intra": engine.intra},
        spans=[tuple(dims) for _, _, dims, _, _, _ in issued],
        chunking=cfg.run_kind.chunking,
        kind_algorithms=kind_algorithms)
