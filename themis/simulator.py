"""A discrete-event simulator of collectives through per-dimension queues.

One NPU's view (model.md §2, §5): each dimension is a resource that runs at
most k stages at once; stages wait in a per-dimension queue ordered by an
intra-dimension discipline. Events sit in a heap keyed by (time, tie, sequence)
so that equal-time completions are processed in a deterministic order. The
cost depends on the number of stages, never on the number of NPUs.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from themis.collective import Collective
from themis.disciplines import Discipline, canonical_intra, make_discipline
from themis.metrics import Metrics, compute_metrics
from themis.plans import PlanShape, stage_plan
from themis.policies import InterPolicy, make_policy
from themis.schedule import ChunkPlan, Schedule, Stage
from themis.stages import StageTable, chain
from themis.timing import Timing, make_timing
from topologies.errors import InputError
from topologies.network import Network

#: How same-time completions on different dimensions are ordered:
#: ``start`` - in the order the stages started; ``dim`` - ascending dimension.
TIE_ORDERS = ("start", "dim")

Plan = tuple[tuple[str, int], ...]


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


def policy_routes(
    policy: InterPolicy, collective: Collective, network: Network
) -> list[tuple[int, ...]]:
    """``policy``'s routes, checked to be permutations of the active dimensions."""
    routes = policy.routes(collective, network)
    active = sorted(network.active_dims)
    for r in routes:
        if sorted(r) != active:
            raise InputError(f"policy {policy.name} produced a route that is not a "
                             f"permutation of {active}", "route", r)
    return routes


def build_plans(
    collective: Collective,
    network: Network,
    policy: InterPolicy,
    local_bw_aware: bool = False,
) -> tuple[list[tuple[int, ...]], list[Plan]]:
    """Routes chosen by ``policy`` and the resulting stage plans, per chunk."""
    routes = policy_routes(policy, collective, network)
    shape = PlanShape.LOCAL_BW_AWARE if local_bw_aware else PlanShape.RS_AG
    return routes, [stage_plan(collective.kind, r, shape=shape) for r in routes]


def simulate(
    network: Network,
    collectives: Collective | Sequence[Collective],
    policy: str | InterPolicy = "themis",
    intra: str = "fifo",
    timing: str | Timing = "alpha-beta",
    algorithms: Sequence[str] | None = None,
    endpoint_delay_ns: float = 0.0,
    active_chunks: int = 1,
    local_bw_aware: bool = False,
    tie_order: str = "start",
    issue_ns: Sequence[float] | None = None,
    plans: Sequence[Sequence[Plan]] | None = None,
    dim_orders: dict[int, Sequence[tuple[int, int, int]]] | None = None,
    ag_order: str = "reverse",
) -> SimResult:
    """Simulate one or more collectives and return schedule and metrics.

    ``policy`` picks routes (loads reset per collective); ``plans`` instead
    gives every chunk's (phase, dim) sequence directly, per collective.
    ``dim_orders`` (dimension -> [(collective, chunk, step), ...]) replays a
    fixed per-dimension stage order instead of the ``intra`` discipline.
    ``local_bw_aware`` gives the route's last dimension one AR stage (ASTRA-sim's
    baseline with ``collective-optimization: localBWAware``).
    """
    t0 = time.perf_counter()
    colls = [collectives] if isinstance(collectives, Collective) else list(collectives)
    if not colls:
        raise InputError("nothing to simulate", "collectives", 0)
    if isinstance(active_chunks, bool) or not isinstance(active_chunks, int) or active_chunks < 1:
        raise InputError("active chunks per dimension must be an integer >= 1",
                         "active-chunks", active_chunks)
    if tie_order not in TIE_ORDERS:
        raise InputError(f"unknown tie order (expected {' or '.join(TIE_ORDERS)})",
                         "tie-order", tie_order)
    tm = timing if not isinstance(timing, str) else make_timing(
        timing, network, algorithms, endpoint_delay_ns)
    issues = [0.0] * len(colls) if issue_ns is None else [float(t) for t in issue_ns]
    if len(issues) != len(colls):
        raise InputError("one issue time per collective", "issue_ns", len(issues))
    pol = make_policy(policy) if plans is None else None
    intra_key = canonical_intra(intra) if dim_orders is None else "replay"

    # -- stage arrays ------------------------------------------------------------
    chunk_plans: list[ChunkPlan] = []
    all_routes: list[list[tuple[int, ...]]] = []
    table = StageTable()
    first_sids: list[list[int]] = []
    cost_cache: dict = {}
    for ci, coll in enumerate(colls):
        if plans is None:
            assert pol is not None
            routes, cplans = build_plans(coll, network, pol, local_bw_aware)
        else:
            cplans = [tuple(p) for p in plans[ci]]
            routes = [tuple(d for ph, d in p if ph in ("RS", "AR")) or tuple(d for _, d in p)
                      for p in cplans]
            if coll.kind == "all-gather":
                routes = [tuple(d for _, d in p) for p in cplans]
        sizes = coll.chunk_sizes()
        if len(cplans) != len(sizes):
            raise InputError(f"expected {len(sizes)} chunk plans", "plans", len(cplans))
        all_routes.append(list(routes))
        firsts = []
        for k, (size, plan) in enumerate(zip(sizes, cplans, strict=True)):
            chunk_plans.append(ChunkPlan(ci, k, size, tuple(routes[k]), tuple(plan)))
            firsts.append(table.add_chunk(ci, k, plan, chain(tm, coll.kind, size, plan,
                                                             cost_cache)))
        first_sids.append(firsts)

    ndims = network.ndims
    if dim_orders is not None:
        index = {key: sid for sid, key in enumerate(table.key)}
        queues: list[Discipline] = []
        for d in range(ndims):
            try:
                order = [index[tuple(key)] for key in dim_orders.get(d, ())]
            except KeyError as err:
                raise InputError("a dimension order names a stage that does not exist",
                                 "dim_orders", err.args[0]) from None
            queues.append(make_discipline("replay", table, order=order))
    else:
        queues = [make_discipline(intra_key, table) for _ in range(ndims)]
    s_dim, s_dur, s_fixed, s_sent, s_last = (table.dim, table.duration_ns, table.fixed_ns,
                                             table.sent_bytes, table.last)
    s_in, s_out, s_phase, s_key = (table.input_bytes, table.output_bytes, table.phase,
                                   table.key)
    shared = tm.shares_bandwidth and active_chunks > 1
    runner = _run_shared if shared else _run_exclusive
    start, end = runner(network, tm, active_chunks, tie_order == "dim", queues, issues,
                        first_sids, s_dim, s_dur, s_fixed, s_sent, s_in, s_last)
    if any(e < 0 for e in end):
        raise RuntimeError("simulation deadlocked: some stages never ran "
                           "(a replayed dimension order that contradicts the routes?)")

    stages = [
        Stage(s_key[i][0], s_key[i][1], s_key[i][2], s_phase[i], s_dim[i], s_in[i], s_out[i],
              s_sent[i], start[i], end[i])
        for i in range(len(s_dim))
    ]
    schedule = Schedule(
        network=network,
        timing=tm.name,
        algorithms=tuple(tm.algorithms),
        endpoint_delay_ns=float(tm.endpoint_delay_ns),
        active_chunks=active_chunks,
        collectives=colls,
        issue_ns=issues,
        chunks=chunk_plans,
        stages=stages,
        ag_order=ag_order,
        local_bw_aware=local_bw_aware,
        meta={"policy": getattr(pol, "name", "given"), "intra": intra_key,
              "tie_order": tie_order},
    )
    metrics = compute_metrics(schedule)
    return SimResult(schedule, metrics, time.perf_counter() - t0, all_routes)


def _run_exclusive(network, tm, k, tie_dim, queues, issues, first_sids,
                   s_dim, s_dur, s_fixed, s_sent, s_in, s_last):
    """Event loop when running stages do not interact (k = 1, or no sharing)."""
    n = len(s_dim)
    start = [-1.0] * n
    end = [-1.0] * n
    free = [k] * network.ndims
    heap: list[tuple[float, int, int, int]] = []
    heappush, heappop = heapq.heappush, heapq.heappop
    seq = 0
    # Issue events carry sid = -(collective + 1) and sort before completions.
    for ci, t in enumerate(issues):
        heappush(heap, (t, -1, ci, -(ci + 1)))

    def dispatch(d: int, t: float) -> None:
        nonlocal seq
        q = queues[d]
        while free[d] and len(q):
            sid = q.pop()
            if sid is None:
                return
            free[d] -= 1
            start[sid] = t
            e = t + s_dur[sid]
            heappush(heap, (e, d if tie_dim else 0, seq, sid))
            seq += 1

    while heap:
        t, _, _, sid = heappop(heap)
        if sid < 0:
            for first in first_sids[-sid - 1]:
                d = s_dim[first]
                queues[d].push(first)
                dispatch(d, t)
            continue
        d = s_dim[sid]
        end[sid] = t
        free[d] += 1
        if not s_last[sid]:
            nxt = sid + 1
            d2 = s_dim[nxt]
            queues[d2].push(nxt)
            if d2 != d:
                dispatch(d2, t)
        dispatch(d, t)
    return start, end


def _run_shared(network, tm, k, tie_dim, queues, issues, first_sids,
                s_dim, s_dur, s_fixed, s_sent, s_in, s_last):
    """Event loop with bandwidth shared equally among a dimension's running stages.

    A stage first spends its fixed (latency) time, then sends its bytes at
    B / (number of stages of that dimension currently sending).
    """
    n = len(s_dim)
    start = [-1.0] * n
    end = [-1.0] * n
    ndims = network.ndims
    bw = [d.bandwidth_bytes_per_ns for d in network.dims]
    free = [k] * ndims
    # per dim: sid -> [fixed_end_ns, remaining_bytes]
    running: list[dict[int, list[float]]] = [{} for _ in range(ndims)]
    last_t = [0.0] * ndims
    version = [0] * ndims
    heap: list[tuple[float, int, int, int, int]] = []
    seq = 0
    for ci, t in enumerate(issues):
        heapq.heappush(heap, (t, -1, ci, -(ci + 1), 0))

    def advance(d: int, t: float) -> None:
        run = running[d]
        sending = [v for v in run.values() if v[0] <= last_t[d]]
        if sending and t > last_t[d]:
            # Stages whose fixed time ends inside (last_t, t] are handled by events,
            # so between events the set of sending stages is constant.
            per = (t - last_t[d]) * bw[d] / len(sending)
            for v in sending:
                v[1] -= per
        last_t[d] = t

    def reschedule(d: int) -> None:
        nonlocal seq
        version[d] += 1
        run = running[d]
        if not run:
            return
        now = last_t[d]
        sending = [v for v in run.values() if v[0] <= now]
        nxt = min((v[0] for v in run.values() if v[0] > now), default=float("inf"))
        if sending:
            rem = min(v[1] for v in sending)
            nxt = min(nxt, now + max(rem, 0.0) * len(sending) / bw[d])
        heapq.heappush(heap, (nxt, d if tie_dim else 0, seq, d, version[d]))
        seq += 1

    def dispatch(d: int, t: float) -> None:
        q = queues[d]
        changed = False
        while free[d] and len(q):
            sid = q.pop()
            if sid is None:
                break
            if not changed:
                advance(d, t)
                changed = True
            free[d] -= 1
            start[sid] = t
            running[d][sid] = [t + s_fixed[sid], s_sent[sid]]
        if changed:
            reschedule(d)

    while heap:
        t, _, _, d, ver = heapq.heappop(heap)
        if d < 0:
            for first in first_sids[-d - 1]:
                dd = s_dim[first]
                queues[dd].push(first)
                dispatch(dd, t)
            continue
        if ver != version[d]:
            continue
        advance(d, t)
        run = running[d]
        tol = 1e-9
        done = sorted(sid for sid, v in run.items()
                      if v[0] <= t and v[1] <= tol * max(s_sent[sid], 1.0))
        for sid in done:
            del run[sid]
            end[sid] = t
            free[d] += 1
        touched = {d}
        for sid in done:
            if not s_last[sid]:
                nxt = sid + 1
                d2 = s_dim[nxt]
                queues[d2].push(nxt)
                touched.add(d2)
        for dd in sorted(touched):
            dispatch(dd, t)
        reschedule(d)
    return start, end


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
    return simulate(
        schedule.network,
        schedule.collectives,
        timing=timing or schedule.timing,
        algorithms=schedule.algorithms,
        endpoint_delay_ns=schedule.endpoint_delay_ns,
        active_chunks=schedule.active_chunks,
        local_bw_aware=schedule.local_bw_aware,
        issue_ns=schedule.issue_ns,
        plans=per_coll,
        dim_orders=schedule.dimension_orders(),
        ag_order=schedule.ag_order,
    )
