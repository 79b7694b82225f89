"""A discrete-event simulator of collectives through per-dimension queues.

One NPU's view (model.md §2, §5): each dimension is a resource that runs at
most k stages at once; stages wait in a per-dimension queue ordered by an
intra-dimension discipline (:mod:`themis.disciplines`). The collectives are
issued at their issue times into the one event loop of :mod:`themis.engine`
(under the resource law the timing model names, :mod:`themis.engine.resources`:
stages alone, or bandwidth shared), under the simulator's
:meth:`Rules.simulator <themis.engine.rules.Rules.simulator>`.
The cost depends on the number of stages, never on the number of NPUs.

:func:`run` takes a :class:`SimConfig`; :func:`simulate` is the same call with
the configuration's fields as keywords.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat

from themis.collective import Collective
from themis.disciplines import Discipline, canonical_intra, discipline_names, make_discipline
from themis.engine import EventLoop, Rules, law_at, resource_law
from themis.engine.npu_lists import NpuLists
from themis.engine.rules import tie_readers
from themis.metrics import Metrics, compute_metrics
from themis.plans import Plan, PlanShape, check_routes, stage_plan
from themis.policies import InterPolicy, make_policy
from themis.policies.base import PLAIN_RUN, PolicyChoice, RunModel, choose
from themis.schedule import ChunkPlan, Schedule, Stage
from themis.stages import Block, StageTable, block_cache, chunk_block
from themis.timing import Timing, make_timing
from topologies.errors import InputError
from topologies.network import Network

#: How same-time completions on different dimensions are ordered:
#: ``start`` - in the order the stages started; ``dim`` - ascending dimension.
TIE_ORDERS = ("start", "dim")

_new_chunk_plan = partial(tuple.__new__, ChunkPlan)
_new_stage = partial(tuple.__new__, Stage)

__all__ = ["TIE_ORDERS", "Plan", "SimConfig", "SimResult", "build_plans", "intra_names",
           "makespan_ns", "policy_choice", "policy_routes", "replay", "run", "simulate"]


@dataclass(frozen=True)
class SimConfig:
    """How to simulate: policy, discipline, timing and the dimension resources.

    ``policy`` picks routes (loads reset per collective): a registered name, a
    fixed route such as ``"2,0,1"`` or a policy object. ``intra`` is a
    discipline name; ``None`` lets a planning policy (one with ``plan``, e.g.
    ``portfolio``) choose it among all (the first collective's choice), else FIFO.
    ``timing`` is a timing name (bound to the network with ``algorithms`` and
    ``endpoint_delay_ns``) or a timing object.
    ``active_chunks`` is k, the stages a dimension runs at once.
    ``local_bw_aware`` gives the route's last dimension one AR stage (ASTRA-sim's
    baseline with ``collective-optimization: localBWAware``). ``ag_order`` is
    recorded in the schedule (``free`` lets the checker accept any AG order).
    """

    policy: str | InterPolicy = "themis"
    intra: str | None = "fifo"
    timing: str | Timing = "alpha-beta"
    algorithms: Sequence[str] | None = None
    endpoint_delay_ns: float = 0.0
    active_chunks: int = 1
    local_bw_aware: bool = False
    tie_order: str = "start"
    ag_order: str = "reverse"

    def __post_init__(self) -> None:
        k = self.active_chunks
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError("active chunks per dimension must be an integer >= 1",
                             "active-chunks", k)
        if self.tie_order not in TIE_ORDERS:
            raise InputError(f"unknown tie order (expected {' or '.join(TIE_ORDERS)})",
                             "tie-order", self.tie_order)


def intra_names() -> tuple[str, ...]:
    """The disciplines a planning policy may choose from (internal ones excluded)."""
    return tuple(discipline_names())


@dataclass
class SimResult:
    """A simulation's schedule, its metrics and the wall time it took."""

    schedule: Schedule
    metrics: Metrics
    wall_s: float
    routes: list[list[tuple[int, ...]]] = field(default_factory=list)

    @property
    def makespan_ns(self) -> float:
        """End of the last stage."""
        return self.metrics.makespan_ns


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: the event loop and the Stage records
    allocate many small tuples and no cycles, and collections triggered by them
    would cost more than the simulation itself."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def policy_routes(
    policy: InterPolicy, collective: Collective, network: Network,
    timing: Timing | None = None, intra_options: Sequence[str] = (), active_chunks: int = 1,
    run_model: RunModel = PLAIN_RUN,
) -> list[tuple[int, ...]]:
    """``policy``'s routes, checked to be permutations of the active dimensions."""
    return policy_choice(policy, collective, network, timing, intra_options,
                         active_chunks, run_model).routes


def policy_choice(
    policy: InterPolicy, collective: Collective, network: Network,
    timing: Timing | None = None, intra_options: Sequence[str] = (), active_chunks: int = 1,
    run_model: RunModel = PLAIN_RUN,
) -> PolicyChoice:
    """``policy``'s :class:`PolicyChoice`, its routes checked to be permutations of
    the active dimensions. With ``timing`` a planning policy's ``plan`` is used
    (it sees the run's timing, the disciplines it may pick, k and ``run_model``,
    how the run applies its routes)."""
    if timing is None:
        choice = PolicyChoice(policy.routes(collective, network), None, policy.name)
    else:
        choice = choose(policy, collective, network, timing, intra_options, active_chunks,
                        run_model)
    routes = [tuple(r) for r in choice.routes]
    check_routes(sorted(set(routes)), network.active_dims, producer=policy.name)
    return dataclasses.replace(choice, routes=routes)


def build_plans(
    collective: Collective,
    network: Network,
    policy: InterPolicy,
    local_bw_aware: bool = False,
    choice: PolicyChoice | None = None,
) -> tuple[list[tuple[int, ...]], list[Plan]]:
    """Routes chosen by ``policy`` (or given by ``choice``) and their stage plans, per chunk
    (of the choice's plan shape if it has one)."""
    routes = choice.routes if choice is not None else policy_routes(policy, collective, network)
    shape = PlanShape.LOCAL_BW_AWARE if local_bw_aware else PlanShape.RS_AG
    if choice is not None and choice.shape is not None:
        shape = choice.shape
    memo: dict[tuple[int, ...], Plan] = {}
    plans = []
    for r in routes:
        p = memo.get(r)
        if p is None:
            p = memo[r] = stage_plan(collective.kind, r, shape=shape)
        plans.append(p)
    return routes, plans


def _routes_of_plans(kind: str, cplans: Sequence[Plan]) -> list[tuple[int, ...]]:
    """The route each given plan follows (its RS/AR dimensions; AG for an all-gather)."""
    if kind == "all-gather":
        return [tuple(d for _, d in p) for p in cplans]
    return [tuple(d for ph, d in p if ph in ("RS", "AR")) or tuple(d for _, d in p)
            for p in cplans]


def simulate(
    network: Network,
    collectives: Collective | Sequence[Collective],
    config: SimConfig | None = None,
    *,
    issue_ns: Sequence[float] | None = None,
    plans: Sequence[Sequence[Plan]] | None = None,
    dim_orders: Mapping[int, Sequence[tuple[int, int, int]]] | None = None,
    **options: object,
) -> SimResult:
    """Simulate one or more collectives; ``options`` are :class:`SimConfig` fields.

    Same as :func:`run` with ``config`` (default ``SimConfig()``) updated by ``options``.
    """
    if options:
        try:
            config = (SimConfig(**options) if config is None  # type: ignore[arg-type]
                      else dataclasses.replace(config, **options))  # type: ignore[arg-type]
        except TypeError as err:
            raise InputError(f"unknown simulation option ({err})", "options",
                             ", ".join(sorted(options))) from None
    return run(network, collectives, config or SimConfig(), issue_ns=issue_ns, plans=plans,
               dim_orders=dim_orders)


@dataclass
class _Events:
    """What one run of the event loop produced (before any Schedule is built)."""

    timing: Timing
    collectives: list[Collective]
    issue_ns: list[float]
    policy: InterPolicy | None
    intra: str
    choices: list[PolicyChoice]
    chunk_plans: list[ChunkPlan]
    routes: list[list[tuple[int, ...]]]
    table: StageTable
    start: list[float]
    end: list[float]


def _rules(tm: Timing, tie_dim: bool, law: str) -> Rules:
    """The engine's rules for a run under ``tm``: the simulator's, except under a timing
    whose event order is ASTRA-sim 1.0's (:class:`themis.timing.base.Meaning`
    ``event_order``) with stages alone: then the training engine's
    (:meth:`Rules.astra <themis.engine.rules.Rules.astra>`, the rules
    :meth:`themis.runkind.RunKind.rules` gives a training run; ``tie_dim`` is its boost
    mode), so one collective means the same run in ``simulate`` and in ``train``: the
    old dimension's queue restarted before the next one at a same-tick hand-over
    (``Sys::proceed_to_next_vnet_baseline``), same-tick ends by their final message or
    last event, and with boost mode 1 by the per-NPU event lists
    (:mod:`themis.engine.npu_lists`). Loads are not kept (they change no time)."""
    from themis.timing import timing_meaning

    exact = resource_law(law).exact_durations
    name = getattr(tm, "name", "")
    if exact and name and timing_meaning(name).event_order == "astra":
        return dataclasses.replace(Rules.astra(tie_dim), loads=False)
    return Rules.simulator(tie_dim, exact)


def _astra_lists(loop: EventLoop, tm: Timing, network: Network, table: StageTable) -> None:
    """What :attr:`Rules.final_message_ties` and :attr:`Rules.npu_lists` read, per stage of
    ``table`` (as :class:`~themis.engine.Engine` records them for a training run): the
    final message's (or last event's) time and the per-NPU lists with each stage's
    message steps."""
    last_of, steps_of = tie_readers(tm, loop.rules)
    stages = list(zip(map(str, table.phase), table.dim, table.input_bytes, strict=True))
    if last_of is not None:
        loop.last_msg[:] = [float(last_of(p, d, m)) for p, d, m in stages]
    if steps_of is not None:
        steps = [steps_of(p, d, m) for p, d, m in stages]
        lists = NpuLists([d.npus for d in network.dims], table.dim, table.last, steps)
        lists.delta = int(tm.endpoint_delay_ns)
        loop.npu_lists = lists


def run(
    network: Network,
    collectives: Collective | Sequence[Collective],
    config: SimConfig,
    *,
    issue_ns: Sequence[float] | None = None,
    plans: Sequence[Sequence[Plan]] | None = None,
    dim_orders: Mapping[int, Sequence[tuple[int, int, int]]] | None = None,
) -> SimResult:
    """Simulate one or more collectives and return schedule and metrics.

    ``issue_ns[i]`` is when collective i is issued (default 0). ``plans``
    gives every chunk's (phase, dim) sequence directly, per collective,
    instead of ``config.policy``. ``dim_orders`` (dimension -> [(collective,
    chunk, step), ...]) replays a fixed per-dimension stage order instead of
    the ``config.intra`` discipline.
    """
    t0 = time.perf_counter()
    ev = _run_events(network, collectives, config, issue_ns, plans, dim_orders)
    return _result(network, config, ev, t0)


def makespan_ns(
    network: Network,
    collectives: Collective | Sequence[Collective],
    config: SimConfig,
    *,
    issue_ns: Sequence[float] | None = None,
    plans: Sequence[Sequence[Plan]] | None = None,
) -> float:
    """The makespan :func:`run` would report, without building the Schedule or its
    metrics (what a planner scoring candidates reads)."""
    ev = _run_events(network, collectives, config, issue_ns, plans, None)
    last_end = float(max(ev.end)) if ev.end else 0.0
    return last_end - min(ev.issue_ns, default=0.0)


def _run_events(
    network: Network,
    collectives: Collective | Sequence[Collective],
    config: SimConfig,
    issue_ns: Sequence[float] | None,
    plans: Sequence[Sequence[Plan]] | None,
    dim_orders: Mapping[int, Sequence[tuple[int, int, int]]] | None,
) -> _Events:
    """Choose the plans, build the stage table and run the event loop."""
    colls = [collectives] if isinstance(collectives, Collective) else list(collectives)
    if not colls:
        raise InputError("nothing to simulate", "collectives", 0)
    tm = config.timing if not isinstance(config.timing, str) else make_timing(
        config.timing, network, config.algorithms, config.endpoint_delay_ns)
    # A timing model that chunks its own way (ASTRA-sim 1.0's input stream, 2.x's chunks
    # of at least N bytes) runs the collective it makes; given plans were made for the
    # caller's chunks (a planner scoring candidates of a collective already chunked so,
    # or a training run whose chunks the run kind cut).
    rechunk = getattr(tm, "chunked", None)
    if rechunk is not None and plans is None:
        colls = [rechunk(c) for c in colls]
    issues = [0.0] * len(colls) if issue_ns is None else [float(t) for t in issue_ns]
    if len(issues) != len(colls):
        raise InputError("one issue time per collective", "issue_ns", len(issues))
    pol = make_policy(config.policy) if plans is None else None
    if dim_orders is not None:
        intra_key = "replay"
    elif config.intra is None:
        intra_key = ""  # the first planning policy's choice, else fifo
    else:
        intra_key = canonical_intra(config.intra)
    choices: list[PolicyChoice] = []

    # -- the stage table: chunks with the same plan and size share their costs ------
    chunk_plans: list[ChunkPlan] = []
    all_routes: list[list[tuple[int, ...]]] = []
    keys: list[tuple[int, int]] = []
    chunk_blocks: list[Block] = []
    memo = block_cache(tm)
    # How this run applies a planning policy's routes (it scores them the same way).
    run_model = RunModel(PlanShape.LOCAL_BW_AWARE if config.local_bw_aware else PlanShape.RS_AG,
                         config.tie_order)
    for ci, coll in enumerate(colls):
        if plans is None:
            assert pol is not None
            options = (intra_key,) if intra_key else intra_names()
            choice = policy_choice(pol, coll, network, tm, options, config.active_chunks,
                                   run_model)
            choices.append(choice)
            if not intra_key:
                intra_key = canonical_intra(choice.intra or "fifo")
            routes, cplans = build_plans(coll, network, pol, config.local_bw_aware, choice)
        else:
            cplans = [tuple(p) for p in plans[ci]]
            routes = _routes_of_plans(coll.kind, cplans)
        sizes = coll.chunk_sizes()
        if len(cplans) != len(sizes):
            raise InputError(f"expected {len(sizes)} chunk plans", "plans", len(cplans))
        all_routes.append(list(routes))
        n = len(sizes)
        chunk_plans.extend(map(_new_chunk_plan, zip(repeat(ci, n), range(n), sizes, routes,
                                                    cplans, strict=True)))
        keys.extend(zip(repeat(ci, n), range(n), strict=True))
        kind = coll.kind
        get = memo.get
        chunk_blocks.extend([get((kind, plan, size)) or chunk_block(tm, kind, size, plan, memo)
                             for size, plan in zip(sizes, cplans, strict=True)])
    table, firsts = StageTable.from_blocks(keys, chunk_blocks)
    first_sids: list[list[int]] = [[] for _ in colls]
    for (ci, _), f in zip(keys, firsts, strict=True):
        first_sids[ci].append(f)

    intra_key = intra_key or "fifo"
    ndims = network.ndims
    queues: list[Discipline]
    if dim_orders is not None:
        index: dict[tuple[int, ...], int] = {key: sid for sid, key in enumerate(table.keys())}
        queues = []
        for d in range(ndims):
            try:
                order = [index[tuple(key)] for key in dim_orders.get(d, ())]
            except KeyError as err:
                raise InputError("a dimension order names a stage that does not exist",
                                 "dim_orders", err.args[0]) from None
            queues.append(make_discipline("replay", table, order=order))
    else:
        queues = [make_discipline(intra_key, table) for _ in range(ndims)]

    law = law_at(tm.resource_law, config.active_chunks)
    loop = EventLoop(table, ndims, config.active_chunks,
                     _rules(tm, config.tie_order == "dim", law), law,
                     [d.bandwidth_bytes_per_ns for d in network.dims])
    loop.queues = queues
    if loop.rules.final_message_ties or loop.rules.npu_lists:
        _astra_lists(loop, tm, network, table)
    for t, firsts in zip(issues, first_sids, strict=True):
        loop.issue_at(t, firsts)
    with _gc_paused():
        loop.run()
    start, end = loop.start, loop.end
    if end and min(end) < 0:
        raise RuntimeError("simulation deadlocked: some stages never ran "
                           "(a replayed dimension order that contradicts the routes?)")
    return _Events(tm, colls, issues, pol, intra_key, choices, chunk_plans, all_routes, table,
                   start, end)


def _result(network: Network, config: SimConfig, ev: _Events, t0: float) -> SimResult:
    """The Schedule (its stage records built when first read) and metrics of a run."""
    table, start, end, tm, choices = ev.table, ev.start, ev.end, ev.timing, ev.choices

    def make_stages() -> list[Stage]:
        coll_col, chunk_col, step_col = table.key_columns()
        with _gc_paused():
            return list(map(_new_stage, zip(coll_col, chunk_col, step_col, table.phase,
                                            table.dim, table.input_bytes, table.output_bytes,
                                            table.sent_bytes, start, end, strict=True)))

    schedule = Schedule.deferred(
        make_stages,
        network=network,
        timing=tm.name,
        algorithms=tuple(tm.algorithms),
        endpoint_delay_ns=float(tm.endpoint_delay_ns),
        active_chunks=config.active_chunks,
        collectives=ev.collectives,
        issue_ns=ev.issue_ns,
        chunks=ev.chunk_plans,
        ag_order=config.ag_order,
        local_bw_aware=config.local_bw_aware,
        meta={"policy": getattr(ev.policy, "name", "given"), "intra": ev.intra,
              "tie_order": config.tie_order},
        timing_options=dict(getattr(tm, "options", None) or {}),
    )
    if choices and choices[0].label and choices[0].label != schedule.meta["policy"]:
        schedule.meta["policy_choice"] = choices[0].label
    if any(c.plan_s for c in choices):
        schedule.meta["plan_s"] = sum(c.plan_s for c in choices)
    metrics = compute_metrics(schedule, (table.dim, start, end, table.sent_bytes))
    return SimResult(schedule, metrics, time.perf_counter() - t0, ev.routes)


def replay(schedule: Schedule, timing: Timing | None = None) -> SimResult:
    """Re-run ``schedule``'s plans with its per-dimension stage orders.

    Each stage starts as soon as its chunk's previous stage and the stage
    before it on its dimension allow (a semi-active schedule), so a replay
    never ends later than the schedule it replays, and exactly as late when
    that schedule has no idle time it could remove.
    """
    per_coll: list[list[Plan]] = [[] for _ in schedule.collectives]
    for c in sorted(schedule.chunks, key=lambda c: (c.collective, c.chunk)):
        per_coll[c.collective].append(c.phases)
    if timing is None and schedule.timing_options:
        timing = make_timing(schedule.timing, schedule.network, schedule.algorithms,
                             schedule.endpoint_delay_ns, **schedule.timing_options)
    config = SimConfig(
        timing=timing or schedule.timing,
        algorithms=schedule.algorithms,
        endpoint_delay_ns=schedule.endpoint_delay_ns,
        active_chunks=schedule.active_chunks,
        local_bw_aware=schedule.local_bw_aware,
        ag_order=schedule.ag_order,
    )
    return run(schedule.network, schedule.collectives, config, issue_ns=schedule.issue_ns,
               plans=per_coll, dim_orders=schedule.dimension_orders())
