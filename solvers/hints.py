"""The schedules a solve starts from: hints (warm starts), upper bounds and the fallback.

By default the hint is the best simulation of every registered policy under
every registered queue discipline (so new policies, such as ``portfolio``,
join by registering), plus schedules on LB3's route counts. A caller may pass
its own schedules instead (``solve(..., hint=...)``); they are checked to be
valid schedules of the instance.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solvers.common import Assignment, ProblemData, assignment_from_schedule
from themis.checker import check
from themis.instance import Instance
from themis.policies import make_policy, policy_names
from themis.schedule import Schedule
from themis.simulator import SimResult, intra_names, simulate
from topologies.errors import InputError

#: Policies that need options (routes) and cannot run by name alone.
_NEEDS_OPTIONS = frozenset({"fixed"})


def hint_methods() -> list[tuple[str, str | None]]:
    """(policy, discipline) pairs of the default hint: every registered one by name.

    A policy that chooses its discipline itself (``chooses_intra``, such as
    ``portfolio``) runs once with ``None`` (its own choice among all), and
    first, so that a short time limit still gets it.
    """
    first: list[tuple[str, str | None]] = []
    rest: list[tuple[str, str | None]] = []
    for p in policy_names():
        if p in _NEEDS_OPTIONS:
            continue
        try:
            chooses = bool(getattr(make_policy(p), "chooses_intra", False))
        except Exception:  # a policy that cannot be built by name is no hint
            continue
        if chooses:
            first.append((p, None))
        else:
            rest += [(p, q) for q in intra_names()]
    return first + rest  # planning policies first: the strongest when time is short


def hint_name(policy: str, intra: str | None) -> str:
    """The name of a default hint candidate: ``policy/intra`` (as ``compare`` names its
    rows), or ``policy`` for a policy that chooses its discipline itself."""
    return policy if intra is None else f"{policy}/{intra}"


def simulated_hints(instance: Instance, deadline: float = float("inf"),
                    known: Mapping[str, Schedule] | None = None
                    ) -> tuple[dict[str, Schedule], dict[str, str]]:
    """Schedules of every registered policy x discipline, and the errors of those that failed.

    Past ``deadline`` (a ``time.perf_counter()`` value) no further simulation
    starts once one schedule exists (the rest are listed as skipped). ``known``:
    schedules the caller already simulated on this instance, by :func:`hint_name`;
    they are taken as they are instead of being simulated again (the candidates,
    their order and so the chosen hint stay the same).
    """
    known = known or {}
    out: dict[str, Schedule] = {}
    errors: dict[str, str] = {}
    for policy, intra in hint_methods():
        name = hint_name(policy, intra)
        if name in known:
            out[name] = known[name]
            continue
        if out and time.perf_counter() > deadline:
            errors[name] = "skipped: out of time"
            continue
        try:
            out[name] = instance.simulate(policy, intra).schedule
        except Exception as err:  # a broken policy must not stop the solve
            errors[name] = f"{type(err).__name__}: {err}"
    return out, errors


def _interleave(groups: list[list[int]]) -> list[int]:
    out: list[int] = []
    groups = [list(g) for g in groups if g]
    while groups:
        for g in groups:
            out.append(g.pop(0))
        groups = [g for g in groups if g]
    return out


def seeded(data: ProblemData, rs_counts: dict[tuple[int, int], int],
           ag_counts: dict[tuple[int, int], int]) -> dict[str, SimResult]:
    """Simulations whose routes follow given per-class route counts (e.g. LB3's).

    Chunks of each class get the routes grouped or interleaved, the queues
    run FIFO or SCF: four candidate schedules.
    """
    out: dict[str, SimResult] = {}
    for arrangement in ("grouped", "interleaved"):
        route = [0] * data.nchunks
        ag = [0] * data.nchunks
        for k in range(len(data.classes)):
            members = [c for c in range(data.nchunks) if data.class_of[c] == k]
            for counts, target, n in ((rs_counts, route, len(data.perms)),
                                      (ag_counts, ag, len(data.ag_perms))):
                groups = [[i] * counts.get((k, i), 0) for i in range(n)]
                seq = (_interleave(groups) if arrangement == "interleaved"
                       else [i for g in groups for i in g])
                if len(seq) != len(members):
                    return out  # counts do not match the chunks: no seed
                for c, i in zip(members, seq, strict=True):
                    target[c] = i
        if not data.free:
            ag = list(route)
        plans = [data.plan(r, q) for r, q in zip(route, ag, strict=True)]
        for intra in ("fifo", "scf"):
            out[f"lb3-routes-{arrangement}/{intra}"] = simulate(
                data.instance.network, data.instance.collective, intra=intra,
                timing=data.instance.timing, plans=[plans], ag_order=data.ag_order)
    return out


def validate_hint(instance: Instance, data: ProblemData, schedule: object,
                  field: str = "hint") -> Schedule:
    """``schedule`` if it is a valid schedule of ``instance`` for ``data``'s AG variant."""
    if not isinstance(schedule, Schedule):
        raise InputError("not a Schedule", field, type(schedule).__name__)
    tm = instance.timing
    same = (schedule.network == instance.network and schedule.collectives == [
        instance.collective] and schedule.timing == tm.name
        and tuple(schedule.algorithms) == tuple(tm.algorithms)
        and schedule.endpoint_delay_ns == tm.endpoint_delay_ns
        and schedule.active_chunks == 1 and not schedule.local_bw_aware)
    if not same:
        raise InputError("not a schedule of this instance (network, collective, timing, "
                         "k = 1)", field, schedule.meta.get("policy", "schedule"))
    n = len(data.dims)
    for cp in schedule.chunks:
        ok = tuple(sorted(cp.route)) == tuple(sorted(data.dims)) and len(cp.phases) == 2 * n
        if ok and not data.free:
            ok = cp.phases == data.plan(data.perms.index(tuple(cp.route)))
        if not ok:
            raise InputError(f"chunk {cp.chunk}'s plan is not an all-reduce plan of the "
                             f"{data.ag_order} AG variant", field, list(cp.phases))
    problems = check(schedule)
    if problems:
        raise InputError(f"fails the checker: {problems[0]}", field,
                         schedule.meta.get("policy", "schedule"))
    return schedule


@dataclass
class Hint:
    """The best starting schedule, in the models' terms.

    ``schedule`` is exact (a simulation or the caller's checked schedule) and
    is also the fallback answer; ``assignment`` its routes and orders with
    identical chunks relabeled for the models' symmetry breaking;
    ``times_ns[(c, phase, d)]`` the (start, end) of each stage under the
    relabeled chunk numbers; ``name`` where it came from.
    """

    name: str
    schedule: Schedule
    assignment: Assignment
    times_ns: dict[tuple[int, str, int], tuple[float, float]]
    new_of_old: list[int]

    @property
    def makespan_ns(self) -> float:
        """The hint's makespan."""
        return self.schedule.makespan_ns


def make_hint(data: ProblemData, name: str, schedule: Schedule, symmetry: bool) -> Hint:
    """The :class:`Hint` of ``schedule`` (see :func:`assignment_from_schedule`)."""
    sym = data.dims[0] if symmetry else None
    assignment, new_of_old = assignment_from_schedule(data, schedule, sym)
    times = {(new_of_old[s.chunk], s.phase, s.dim): (s.start_ns, s.end_ns)
             for s in schedule.stages}
    return Hint(name, schedule, assignment, times, new_of_old)


def best_hint(data: ProblemData, candidates: dict[str, Schedule],
              symmetry: bool) -> Hint | None:
    """The :class:`Hint` of the shortest candidate (first one among equals)."""
    if not candidates:
        return None
    name = min(candidates, key=lambda k: candidates[k].makespan_ns)
    return make_hint(data, name, candidates[name], symmetry)


def candidate_schedules(hint: Schedule | Sequence[Schedule]) -> list[Schedule]:
    """The caller's hint as a list."""
    return [hint] if isinstance(hint, Schedule) else list(hint)
