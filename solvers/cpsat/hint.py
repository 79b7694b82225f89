"""A schedule as a CP-SAT hint: routes, AG orders and start ticks of every stage.

The hint schedule is replayed by the simulator with the scaled durations
(:class:`~solvers.cpsat.scaling.TickTiming`), which keeps its per-dimension
orders and gives a feasible schedule of the scaled model. With symmetry
breaking, the hint is mirrored in time if it idles longer before the first
stage of the symmetry dimension than after its last one, then its identical
chunks are relabeled so their RS stages on that dimension run in chunk
order: the hint then satisfies the model's symmetry-breaking constraints.
"""

from __future__ import annotations

from dataclasses import dataclass

from solvers.common import ProblemData, chunk_relabeling
from solvers.cpsat.scaling import Scaled, TickTiming
from themis.schedule import Schedule
from themis.simulator import replay


@dataclass
class TickHint:
    """Routes, AG orders and start ticks ``times[(c, phase, d)]``; ``ub`` its makespan."""

    route: list[int]
    ag: list[int]
    times: dict[tuple[int, str, int], int]
    ub: int


def hint_ticks(data: ProblemData, schedule: Schedule, scaled: Scaled,
               symmetry: bool) -> TickHint:
    """The :class:`TickHint` of ``schedule`` (see the module docstring)."""
    timed = replay(schedule, timing=TickTiming(data, scaled)).schedule
    n = len(data.dims)
    route = [0] * data.nchunks
    ag = [0] * data.nchunks
    for cp in timed.chunks:
        route[cp.chunk] = data.perms.index(tuple(cp.route))
        ag[cp.chunk] = (data.ag_perms.index(tuple(d for _, d in cp.phases[n:]))
                        if data.free else route[cp.chunk])
    times = {(s.chunk, s.phase, s.dim): round(s.start_ns) for s in timed.stages}
    ub = round(timed.makespan_ns)
    hint = TickHint(route, ag, times, ub)
    return _symmetric(data, hint, scaled) if symmetry else hint


def _symmetric(data: ProblemData, h: TickHint, scaled: Scaled) -> TickHint:
    nch, sym = data.nchunks, data.dims[0]

    def dur(c: int, ph: str, d: int, route: list[int], ag: list[int]) -> int:
        return scaled.rs(data, c, route[c], d) if ph == "RS" else scaled.ag(data, c, ag[c], d)

    route, ag, times = h.route, h.ag, h.times
    head = min(times[c, "RS", sym] for c in range(nch))
    last = max(times[c, "AG", sym] + dur(c, "AG", sym, route, ag) for c in range(nch))
    if head + last > h.ub:
        mirrored = {}
        for c in range(nch):
            for d in data.dims:
                mirrored[c, "RS", d] = h.ub - times[c, "AG", d] - dur(c, "AG", d, route, ag)
                mirrored[c, "AG", d] = h.ub - times[c, "RS", d] - dur(c, "RS", d, route, ag)
        new_route = [data.perms.index(tuple(reversed(data.ag_perms[q]))) for q in ag]
        new_ag = [data.ag_perms.index(tuple(reversed(data.perms[r]))) for r in route]
        route, ag, times = new_route, new_ag, mirrored
    new_of_old = chunk_relabeling(data, [times[c, "RS", sym] for c in range(nch)])
    route2, ag2, times2 = [0] * nch, [0] * nch, {}
    for old, new in enumerate(new_of_old):
        route2[new], ag2[new] = route[old], ag[old]
        for d in data.dims:
            for ph in ("RS", "AG"):
                times2[new, ph, d] = times[old, ph, d]
    return TickHint(route2, ag2, times2, h.ub)


def add_hint(m, data: ProblemData, v, scaled: Scaled, h: TickHint) -> None:
    """Hint every variable of ``v`` (a :class:`~solvers.cpsat.variables.Variables`)."""
    sym = data.dims[0]
    for c in range(data.nchunks):
        r, q = h.route[c], h.ag[c]
        for rr, lit in enumerate(v.x[c]):
            m.add_hint(lit, rr == r)
        if data.free:
            for qq, lit in enumerate(v.y[c]):
                m.add_hint(lit, qq == q)
        for d in data.dims:
            for ph, p, sv in (("RS", scaled.rs(data, c, r, d), v.rs[c, d]),
                              ("AG", scaled.ag(data, c, q, d), v.ag[c, d])):
                t = h.times[c, ph, d]
                m.add_hint(sv.start, t)
                m.add_hint(sv.end, t + p)
                if not isinstance(sv.size, int):
                    m.add_hint(sv.size, p)
        m.add_hint(v.done[c], max(h.times[c, "RS", d] + scaled.rs(data, c, r, d)
                                  for d in data.dims))
    m.add_hint(v.makespan, h.ub)
    if "head" in v.extra:
        m.add_hint(v.extra["head"], min(h.times[c, "RS", sym] for c in range(data.nchunks)))
        m.add_hint(v.extra["last"], max(h.times[c, "AG", sym] + scaled.ag(data, c, h.ag[c], sym)
                                        for c in range(data.nchunks)))
