"""An independent checker for any :class:`~themis.schedule.Schedule`.

It trusts nothing the producer computed: stage plans are checked against the
collective and route (the plan shapes the timing model allows), sizes and
durations are recomputed from the network and the timing model (each chunk's
plan walked with :func:`themis.stages.chain`), capacity is checked with a
sweep over each dimension, and under a resource law that is not exclusive
(bandwidth sharing) each dimension's ends are replayed from its starts through
the engine's own law (:mod:`themis.engine.resources`), not a copy of it. It
returns the violations found (an empty list means the schedule is valid).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from themis.engine.resources import ResourceLaw, StageCosts, law_at, resource_law
from themis.plans import PlanShape, is_permutation, stage_plan
from themis.schedule import Schedule, Stage
from themis.stages import chain
from themis.timing import Timing, make_timing

#: Relative tolerance on times and sizes (schedules are floats; solvers re-time).
REL_TOL = 1e-9
ABS_TOL_NS = 1e-6


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``kind`` is a short code, ``message`` says where."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class ScheduleInvalid(AssertionError):
    """Raised by :func:`assert_valid` with all violations in the message."""


def _close(a: float, b: float, scale: float = 0.0) -> bool:
    return abs(a - b) <= max(ABS_TOL_NS, REL_TOL * max(abs(a), abs(b), scale))


def _valid_plans(schedule: Schedule, tm: Timing, kind: str, route: tuple[int, ...]) -> list:
    """The stage plans a chunk with this route may legally follow: the timing
    model's plan shapes (localBWAware only in a schedule marked so)."""
    if kind != "all-reduce":
        return [stage_plan(kind, route)]
    return [stage_plan(kind, route, shape=shape) for shape in tm.plan_shapes
            if shape is not PlanShape.LOCAL_BW_AWARE or schedule.local_bw_aware]


def check(schedule: Schedule, timing: Timing | None = None) -> list[Violation]:
    """All violations of ``schedule`` (empty if valid). See the module docstring."""
    out: list[Violation] = []
    net = schedule.network
    try:
        tm = timing or make_timing(schedule.timing, net, schedule.algorithms,
                                   schedule.endpoint_delay_ns, **schedule.timing_options)
    except Exception as err:  # an unknown timing or bad algorithms: report, don't crash
        return [Violation("timing", f"cannot build timing {schedule.timing!r}: {err}")]
    k = schedule.active_chunks
    active = sorted(net.active_dims)
    timing_of = _collective_timings(schedule, tm)
    if isinstance(timing_of, Violation):
        return [timing_of]
    try:  # the engine's own resource law: how stages running together progress
        law = resource_law(law_at(tm.resource_law, k))
    except ValueError as err:
        return [Violation("timing", f"timing {schedule.timing!r}: {err}")]
    exact = law.exact_durations

    # -- collectives and chunk plans ---------------------------------------------------
    if len(schedule.issue_ns) != len(schedule.collectives):
        out.append(Violation("collectives", "one issue time per collective is required"))
    plans: dict[tuple[int, int], tuple] = {}
    seen_chunks: dict[int, list] = defaultdict(list)
    for cp in schedule.chunks:
        key = (cp.collective, cp.chunk)
        if key in plans:
            out.append(Violation("chunks", f"chunk {key} appears twice"))
            continue
        if not 0 <= cp.collective < len(schedule.collectives):
            out.append(Violation("chunks", f"chunk {key} names no collective"))
            continue
        coll = schedule.collectives[cp.collective]
        seen_chunks[cp.collective].append(cp)
        span = active if schedule.spans is None else _span(schedule, cp.collective, active)
        if not is_permutation(cp.route, span):
            out.append(Violation("route", f"chunk {key}: route {cp.route} is not a "
                                          f"permutation of dimensions {span}"))
        phases = tuple(cp.phases)
        ok = phases in _valid_plans(schedule, timing_of(cp.collective), coll.kind,
                                    tuple(cp.route))
        if not ok and coll.kind == "all-reduce" and schedule.ag_order == "free":
            n = len(span)
            rs, ag = phases[:n], phases[n:]
            ok = (len(phases) == 2 * n and tuple(d for _, d in rs) == tuple(cp.route)
                  and all(p == "RS" for p, _ in rs) and all(p == "AG" for p, _ in ag)
                  and sorted(d for _, d in ag) == span)
        if not ok:
            out.append(Violation("plan", f"chunk {key}: stages {phases} do not follow "
                                         f"route {cp.route} for a {coll.kind}"))
        plans[key] = phases
    for ci, coll in enumerate(schedule.collectives):
        sizes = sorted((c.chunk, c.size_bytes) for c in seen_chunks.get(ci, []))
        want = list(enumerate(schedule.expected_chunk_sizes(ci)))
        if sizes != want:
            out.append(Violation("chunks", f"collective {ci}: chunks and sizes {sizes[:4]}... "
                                           f"differ from the chunking of {coll}"))

    # -- stages of each chunk: presence, order, sizes, durations ---------------------
    by_chunk: dict[tuple[int, int], list[Stage]] = defaultdict(list)
    for s in schedule.stages:
        by_chunk[(s.collective, s.chunk)].append(s)
    for key in by_chunk.keys() - plans.keys():
        out.append(Violation("stages", f"stages of unknown chunk {key}"))
    sizes_of = {(c.collective, c.chunk): c.size_bytes for c in schedule.chunks}
    for key, phases in plans.items():
        stages = sorted(by_chunk.get(key, []), key=lambda s: s.step)
        if [s.step for s in stages] != list(range(len(phases))):
            out.append(Violation("stages", f"chunk {key}: steps {[s.step for s in stages]} "
                                           f"but the plan has {len(phases)} stages"))
            continue
        coll = schedule.collectives[key[0]]
        prev_end = schedule.issue_ns[key[0]] if key[0] < len(schedule.issue_ns) else 0.0
        costs = chain(timing_of(key[0]), coll.kind, sizes_of[key], phases)
        for s, (phase, d), (m, cost) in zip(stages, phases, costs, strict=True):
            where = f"chunk {key} step {s.step}"
            if (s.phase, s.dim) != (phase, d):
                out.append(Violation("plan", f"{where}: ran {s.phase} on {s.dim}, "
                                             f"plan says {phase} on {d}"))
            if not _close(s.input_bytes, m):
                out.append(Violation("size", f"{where}: input {s.input_bytes} bytes, "
                                             f"expected {m}"))
            if not _close(s.output_bytes, cost.output_bytes):
                out.append(Violation("size", f"{where}: output {s.output_bytes}, "
                                             f"expected {cost.output_bytes}"))
            if not _close(s.sent_bytes, cost.sent_bytes):
                out.append(Violation("size", f"{where}: sent {s.sent_bytes}, "
                                             f"expected {cost.sent_bytes}"))
            if not (math.isfinite(s.start_ns) and math.isfinite(s.end_ns)):
                out.append(Violation("time", f"{where}: non-finite time"))
                break
            if s.start_ns < prev_end - max(ABS_TOL_NS, REL_TOL * abs(prev_end)):
                out.append(Violation("precedence", f"{where}: starts at {s.start_ns} before "
                                                   f"its predecessor ends at {prev_end}"))
            if exact and not _close(s.end_ns - s.start_ns, cost.duration_ns, s.end_ns):
                out.append(Violation("duration", f"{where}: lasts {s.end_ns - s.start_ns} ns, "
                                                 f"the timing model says {cost.duration_ns}"))
            if not exact and s.end_ns - s.start_ns < cost.duration_ns * (1 - REL_TOL) - ABS_TOL_NS:
                out.append(Violation("duration", f"{where}: lasts {s.end_ns - s.start_ns} ns, "
                                                 f"less than alone ({cost.duration_ns})"))
            prev_end = s.end_ns

    # -- capacity per dimension ---------------------------------------------------------
    per_dim: dict[int, list[Stage]] = defaultdict(list)
    for s in schedule.stages:
        per_dim[s.dim].append(s)
    for d, stages in per_dim.items():
        if d not in active:
            out.append(Violation("dimension", f"stages on dimension {d}, which has no links"))
            continue
        events = []
        for s in stages:
            events.append((s.start_ns, 1))
            # An end within tolerance of a start counts as before it.
            events.append((s.end_ns - max(ABS_TOL_NS, REL_TOL * abs(s.end_ns)), 0))
        events.sort()
        running = 0
        for t, kind in events:
            running += 1 if kind else -1
            if running > k:
                out.append(Violation("capacity", f"dimension {d} runs {running} stages "
                                                 f"at {t} ns (k = {k})"))
                break

    if not exact:
        out.extend(_check_law_ends(schedule, law, timing_of, per_dim))
    return out


def _span(schedule: Schedule, ci: int, active: list[int]) -> list[int]:
    """Collective ``ci``'s dimensions (those of its span the network has links on)."""
    if not 0 <= ci < len(schedule.spans or ()):
        return active
    return sorted(d for d in schedule.span(ci) if d in active)


def _collective_timings(schedule: Schedule, tm: Timing):
    """``ci -> timing`` of each collective (its span's network view and its kind's
    algorithms), or a :class:`Violation` when one cannot be built."""
    if schedule.spans is None and not schedule.kind_algorithms:
        return lambda ci: tm
    made: dict[tuple, Timing] = {}
    kinds = [c.kind for c in schedule.collectives]
    try:
        for ci, kind in enumerate(kinds):
            algos = schedule.kind_algorithms.get(kind, schedule.algorithms)
            span = tuple(schedule.span(ci)) if schedule.spans is not None \
                and ci < len(schedule.spans) else None
            key = (span, tuple(algos))
            if key not in made:
                net = schedule.collective_network(ci) if span is not None \
                    else schedule.network
                made[key] = make_timing(schedule.timing, net, algos, schedule.endpoint_delay_ns)
    except Exception as err:  # bad per-kind algorithms: report, don't crash
        return Violation("timing", f"cannot build timing {schedule.timing!r}: {err}")
    keys = [(tuple(schedule.span(ci)) if schedule.spans is not None
             and ci < len(schedule.spans) else None,
             tuple(schedule.kind_algorithms.get(kind, schedule.algorithms)))
            for ci, kind in enumerate(kinds)]
    return lambda ci: made[keys[ci]] if 0 <= ci < len(keys) else tm


def _check_law_ends(schedule: Schedule, law: type[ResourceLaw], timing_of,
                    per_dim) -> list[Violation]:
    """Recompute each dimension's ends from its start times under the run's resource law
    (the engine's own law, :meth:`ResourceLaw.ends_ns`: under ``shared`` each stage
    spends its fixed time, then sends its bytes at B / n(t), n(t) the stages of its
    dimension sending at time t) and compare them with the schedule's."""
    out = []
    for d, stages in per_dim.items():
        bw = schedule.network.dims[d].bandwidth_bytes_per_ns
        cost = [timing_of(s.collective).stage(s.phase, d, s.input_bytes) for s in stages]
        ends = law.ends_ns([s.start_ns for s in stages],
                           StageCosts([c.fixed_ns for c in cost], [c.sent_bytes for c in cost],
                                      [c.duration_ns for c in cost]), bw)
        for s, e in zip(stages, ends, strict=True):
            if not math.isnan(e) and not _close(e, s.end_ns):
                out.append(Violation("duration", f"chunk {(s.collective, s.chunk)} step {s.step}"
                                                 f" on {d}: ends at {s.end_ns}, resource law "
                                                 f"{law.name!r} gives {e}"))
    return out


def assert_valid(schedule: Schedule, timing: Timing | None = None) -> None:
    """Raise :class:`ScheduleInvalid` listing every violation, if any."""
    violations = check(schedule, timing)
    if violations:
        head = "; ".join(map(str, violations[:10]))
        more = f" (+{len(violations) - 10} more)" if len(violations) > 10 else ""
        raise ScheduleInvalid(f"{len(violations)} violation(s): {head}{more}")
