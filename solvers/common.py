"""Shared data of the exact models: chunks, routes, stage durations, references.

Every exact model (CP-SAT, the MILPs, the LP/MILP bounds) works on the same
description of an :class:`~themis.instance.Instance` (model.md §7): the active
dimensions, the chunk sizes (grouped into classes of equal size), the
permutations of the dimensions, and the duration of every stage as a function
of the chunk's route. Durations are computed exactly as the simulator computes
them (sizes divided stage after stage, ``timing.stage`` per stage), so a model
and a replay agree to the last bit on what a stage costs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property

from solvers.params import AG_ORDERS
from themis.instance import Instance
from themis.limits import check_route_enumeration
from themis.schedule import Schedule, stage_plan
from themis.stages import chain
from topologies.errors import InputError

Perm = tuple[int, ...]


def check_ag_order(ag_order: str) -> str:
    """Validate ``ag_order`` (``reverse`` or ``free``)."""
    if ag_order not in AG_ORDERS:
        raise InputError(f"unknown AG order (expected {' or '.join(AG_ORDERS)})", "ag-order",
                         ag_order)
    return ag_order


def _chain(instance: Instance, size: float, plan: tuple[tuple[str, int], ...]) -> list[float]:
    """Durations of a chunk's stages along ``plan`` (:func:`themis.stages.chain`)."""
    return [c.duration_ns for _, c in chain(instance.timing, "all-reduce", size, plan)]


@dataclass
class ProblemData:
    """Everything a model needs to know about an instance (see module docstring).

    ``rs[k][r][d]`` is the RS duration on dimension ``d`` of a chunk of class
    ``k`` whose RS route is ``perms[r]``. ``ag[k][q][d]`` is the AG duration on
    ``d`` when the AG order is ``ag_perms[q]``: in the ``reverse`` variant
    ``ag_perms[q]`` is ``reversed(perms[q])`` (the route and its AG order are one
    choice), in the ``free`` variant it is any permutation chosen separately.
    """

    instance: Instance
    ag_order: str = "reverse"
    dims: tuple[int, ...] = field(init=False)
    sizes: list[int] = field(init=False)
    classes: list[int] = field(init=False)
    class_of: list[int] = field(init=False)
    class_count: list[int] = field(init=False)
    perms: list[Perm] = field(init=False)
    ag_perms: list[Perm] = field(init=False)
    rs: list[list[dict[int, float]]] = field(init=False)
    ag: list[list[dict[int, float]]] = field(init=False)

    def __post_init__(self) -> None:
        check_ag_order(self.ag_order)
        inst = self.instance
        self.dims = tuple(inst.dims)
        self.sizes = list(inst.collective.chunk_sizes())
        self.classes = sorted(set(self.sizes), reverse=True)
        self.class_of = [self.classes.index(s) for s in self.sizes]
        self.class_count = [self.class_of.count(k) for k in range(len(self.classes))]
        check_route_enumeration(len(self.dims), "the exact model", inst.network.name)
        self.perms = [tuple(p) for p in itertools.permutations(self.dims)]
        free = self.ag_order == "free"
        self.ag_perms = list(self.perms) if free else [tuple(reversed(p)) for p in self.perms]
        self.rs, self.ag = [], []
        n = len(self.dims)
        for size in self.classes:
            rs_k, ag_k = [], []
            for r, perm in enumerate(self.perms):
                durs = _chain(inst, size, stage_plan("all-reduce", perm))
                rs_k.append(dict(zip(perm, durs[:n], strict=True)))
                if not free:
                    ag_k.append(dict(zip(self.ag_perms[r], durs[n:], strict=True)))
            if free:
                base = self.perms[0]
                for q in self.ag_perms:
                    durs = _chain(inst, size, stage_plan("all-reduce", base, q))
                    ag_k.append(dict(zip(q, durs[n:], strict=True)))
            self.rs.append(rs_k)
            self.ag.append(ag_k)

    # -- sizes -------------------------------------------------------------------
    @property
    def free(self) -> bool:
        """Whether each chunk picks its AG order freely."""
        return self.ag_order == "free"

    @property
    def nchunks(self) -> int:
        """Number of chunks (a remainder chunk included)."""
        return len(self.sizes)

    @property
    def nstages(self) -> int:
        """Total number of stages (2 per chunk and dimension)."""
        return 2 * len(self.dims) * self.nchunks

    @cached_property
    def max_duration_ns(self) -> float:
        """The longest stage of any chunk on any route."""
        return max(max(v.values()) for part in (self.rs, self.ag) for k in part for v in k)

    # -- per-route figures (used by the bounds) ----------------------------------
    def rs_prefix(self, k: int, r: int, d: int) -> float:
        """RS time a class-``k`` chunk on route ``r`` spends before reaching ``d``."""
        perm = self.perms[r]
        return sum(self.rs[k][r][e] for e in perm[: perm.index(d)])

    def ag_suffix(self, k: int, q: int, d: int) -> float:
        """AG time left after the AG stage on ``d`` (AG order ``ag_perms[q]``)."""
        perm = self.ag_perms[q]
        return sum(self.ag[k][q][e] for e in perm[perm.index(d) + 1:])

    def rs_chain(self, k: int, r: int) -> float:
        """Sum of a class-``k`` chunk's RS durations on route ``r``."""
        return sum(self.rs[k][r].values())

    def ag_chain(self, k: int, q: int) -> float:
        """Sum of a class-``k`` chunk's AG durations in AG order ``q``."""
        return sum(self.ag[k][q].values())

    def plan(self, r: int, q: int | None = None) -> tuple[tuple[str, int], ...]:
        """The stage plan of route ``r`` (and AG order ``q`` in the free variant)."""
        ag = None if q is None or not self.free else self.ag_perms[q]
        return stage_plan("all-reduce", self.perms[r], ag)


def chunk_relabeling(data: ProblemData, first_start: list[float]) -> list[int]:
    """A relabeling of identical chunks ordering them by ``first_start``.

    Returns ``new_of_old``: within each class of equal-size chunks, the chunk
    with the k-th smallest ``first_start`` gets the class's k-th index.
    """
    new_of_old = list(range(data.nchunks))
    for k in range(len(data.classes)):
        members = [c for c in range(data.nchunks) if data.class_of[c] == k]
        ranked = sorted(members, key=lambda c: (first_start[c], c))
        for new, old in zip(members, ranked, strict=True):
            new_of_old[old] = new
    return new_of_old


@dataclass
class Assignment:
    """Routes and per-dimension stage orders: what a solver's schedule boils down to.

    ``route[c]`` indexes ``data.perms`` and ``ag[c]`` indexes ``data.ag_perms``
    (in the reverse variant ``ag[c] == route[c]``); ``orders[d]`` lists the
    ``(chunk, step)`` keys in the order dimension ``d`` runs them, ``step``
    being the index in the chunk's stage plan.
    """

    route: list[int]
    ag: list[int]
    orders: dict[int, list[tuple[int, int]]]

    def plans(self, data: ProblemData) -> list[tuple[tuple[str, int], ...]]:
        """Every chunk's stage plan."""
        return [data.plan(r, q) for r, q in zip(self.route, self.ag, strict=True)]

    def dim_orders(self) -> dict[int, list[tuple[int, int, int]]]:
        """The orders keyed like the simulator wants them (collective 0)."""
        return {d: [(0, c, j) for c, j in order] for d, order in self.orders.items()}


def step_of(data: ProblemData, r: int, q: int, phase: str, d: int) -> int:
    """Index in the stage plan of the ``phase`` stage on ``d`` (route r, AG order q)."""
    if phase == "RS":
        return data.perms[r].index(d)
    return len(data.dims) + data.ag_perms[q].index(d)


def assignment_from_schedule(data: ProblemData, schedule: Schedule,
                             symmetry_dim: int | None = None) -> tuple[Assignment, list[int]]:
    """The routes and orders of a (reverse-AG or free-AG) schedule of ``data``'s instance.

    With ``symmetry_dim``, identical chunks are relabeled so that their RS
    stages on that dimension run in chunk order (the symmetry breaking the
    models impose), which keeps the result a valid hint. Returns the
    assignment and the relabeling ``new_of_old``.
    """
    n = len(data.dims)
    route_of: dict[int, int] = {}
    ag_of: dict[int, int] = {}
    for cp in schedule.chunks:
        r = data.perms.index(tuple(cp.route))
        ag_dims = tuple(d for _, d in cp.phases[n:])
        route_of[cp.chunk] = r
        ag_of[cp.chunk] = data.ag_perms.index(ag_dims) if data.free else r
    first = [0.0] * data.nchunks
    if symmetry_dim is not None:
        for s in schedule.stages:
            if s.dim == symmetry_dim and s.phase == "RS":
                first[s.chunk] = s.start_ns
    new_of_old = (chunk_relabeling(data, first) if symmetry_dim is not None
                  else list(range(data.nchunks)))
    route = [0] * data.nchunks
    ag = [0] * data.nchunks
    for old, new in enumerate(new_of_old):
        route[new] = route_of[old]
        ag[new] = ag_of[old]
    orders = {d: [(new_of_old[c], j) for _, c, j in keys]
              for d, keys in schedule.dimension_orders().items()}
    return Assignment(route, ag, orders), new_of_old
