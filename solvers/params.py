"""Typed solver parameters: :class:`SolverParams` (every bad key or value is an InputError)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from themis.plans import AgOrder
from topologies.errors import InputError

#: Branch-and-bound nodes of the LB3 MIP (its deterministic work limit; the default of
#: ``SolverParams.lb3_nodes`` and of :func:`solvers.bounds.bounds`).
LB3_NODE_LIMIT = 2000

#: The AG variants of model.md §7 (the members of :class:`themis.plans.AgOrder`).
AG_ORDERS: tuple[str, ...] = tuple(AgOrder)


def _positive(name: str, value: object, integer: bool = False, optional: bool = True) -> None:
    if value is None and optional:
        return
    ok = not isinstance(value, bool) and isinstance(value, int if integer else int | float)
    number = cast(float, value)  # an int or a float once ``ok``
    if not ok or not number > 0 or (not integer and not math.isfinite(number)):
        what = "an integer >= 1" if integer else "a positive finite number"
        raise InputError(f"must be {what}", name, value)


@dataclass(frozen=True)
class SolverParams:
    """How :func:`solvers.solve` runs (defaults are the tested ones).

    Limits. ``time_limit_s`` is a wall-clock limit on the WHOLE solve: the
    bounds, the hint simulations, model building and the search (each phase
    gets what is left). ``deterministic_time_s`` (CP-SAT only) is CP-SAT's
    ``max_deterministic_time``: with one worker (``threads=1``, the default
    when it is set) the search, and so the result, is the same on any machine
    and load, as long as the wall-clock limit does not stop it first
    (``Result.meta["stopped_by"]`` says which limit did). With ``threads=N > 1``
    and a deterministic time, CP-SAT runs its portfolio of N workers interleaved
    (``interleave_search``: batches of tasks, synchronised between batches), which
    is deterministic for a given N: the same result on any machine with the same N,
    not the same as with another N (:attr:`search`). ``node_limit``
    (CBC and HiGHS only) is the MILP's branch-and-bound node limit, the
    MILPs' deterministic work limit (HiGHS has no deterministic time).
    ``lb3_nodes``: the LB3 MIP's node limit (its deterministic work limit, default
    :data:`solvers.bounds.LB3_NODE_LIMIT`), also for the doubling bound's LB3(2C): a
    higher one proves LB3 where the default stops at its dual bound (D4 C = 64:
    8,209,228.51 ns in 10,738 nodes instead of 8,203,125 after 2,000).

    ``threads``: solver workers (default: the solver's own; 1 with
    ``deterministic_time_s``). ``ag_order``: ``reverse`` or ``free`` (model.md
    §7). ``seed``: the solvers' random seed. ``log``: print the solver's log.

    Model options: ``symmetry`` (break the symmetry of equal chunks and of
    time reversal), ``use_hint`` (warm-start from the hint), ``seed_lb3``
    (add schedules on LB3's route counts to the hints), ``scaled_bound``
    (CP-SAT: LB3 of the integer-scaled model as the makespan's lower bound),
    ``restrict_lb3`` (CP-SAT's coarse phase keeps LB3's route counts),
    ``resolution`` / ``coarse_resolution`` (CP-SAT ticks of the longest stage
    in the fine / coarse model), ``coarse_fraction`` (the coarse phase's share
    of the limits; 0 skips it), ``doubling`` (CP-SAT: the doubling chain's
    C/2 hint and, at latency 0, the doubling bound), ``latency0`` (CP-SAT, with
    per-hop latency or delays: the latency-0 instance's answer and its split
    C/2 answer, replayed on the real network, join the hints; :mod:`solvers.latency0`),
    ``cpsat_parameters`` (any other ``CpSolver.parameters`` field, by name).
    """

    time_limit_s: float = 10.0
    deterministic_time_s: float | None = None
    node_limit: int | None = None
    lb3_nodes: int = LB3_NODE_LIMIT
    threads: int | None = None
    ag_order: str = "reverse"
    seed: int = 0
    log: bool = False
    symmetry: bool = True
    use_hint: bool = True
    seed_lb3: bool = True
    scaled_bound: bool = True
    restrict_lb3: bool = True
    resolution: int = 1_000_000
    coarse_resolution: int = 2_000
    coarse_fraction: float = 0.25
    doubling: bool = True
    latency0: bool = True
    cpsat_parameters: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _positive("time_limit_s", self.time_limit_s, optional=False)
        _positive("deterministic_time_s", self.deterministic_time_s)
        _positive("node_limit", self.node_limit, integer=True)
        _positive("lb3_nodes", self.lb3_nodes, integer=True, optional=False)
        _positive("threads", self.threads, integer=True)
        _positive("resolution", self.resolution, integer=True, optional=False)
        _positive("coarse_resolution", self.coarse_resolution, integer=True, optional=False)
        if self.ag_order not in AG_ORDERS:
            raise InputError(f"unknown AG order (expected {' or '.join(AG_ORDERS)})",
                             "ag_order", self.ag_order)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError("must be an integer >= 0", "seed", self.seed)
        for name in ("log", "symmetry", "use_hint", "seed_lb3", "scaled_bound", "restrict_lb3",
                     "doubling", "latency0"):
            if not isinstance(getattr(self, name), bool):
                raise InputError("must be true or false", name, getattr(self, name))
        cf = self.coarse_fraction
        if isinstance(cf, bool) or not isinstance(cf, int | float) or not 0 <= cf < 1:
            raise InputError("must be a number in [0, 1)", "coarse_fraction", cf)
        if not isinstance(self.cpsat_parameters, Mapping):
            raise InputError("must be a mapping of CpSolver parameter names to values",
                             "cpsat_parameters", self.cpsat_parameters)
        unknown = [k for k in self.cpsat_parameters if not is_cpsat_parameter(k)]
        if unknown:
            raise InputError("not a CpSolver parameter", "cpsat_parameters", unknown[0])
        object.__setattr__(self, "cpsat_parameters", dict(self.cpsat_parameters))

    @property
    def search(self) -> str:
        """How CP-SAT searches (``Result.meta["search"]``): ``one worker`` and
        ``interleaved, N workers`` reproduce on any machine (with a deterministic time);
        ``N workers`` (parallel under a wall-clock limit) and ``default workers`` do not."""
        workers = self.threads or (1 if self.deterministic_time_s is not None else None)
        if workers == 1:
            return "one worker"
        if workers is None:
            return "default workers"
        if self.deterministic_time_s is not None:
            return f"interleaved, {workers} workers"
        return f"{workers} workers"

    @property
    def deterministic(self) -> bool:
        """Whether a deterministic work limit is set (the result is reproducible)."""
        return self.deterministic_time_s is not None or self.node_limit is not None

    def with_overrides(self, overrides: Mapping[str, Any]) -> SolverParams:
        """A copy with ``overrides`` applied (field names; an unknown one is an InputError).

        A key that is no field but a ``CpSolver.parameters`` field (such as
        ``catch_sigint_signal``) goes into ``cpsat_parameters``.
        """
        names = {f.name for f in dataclasses.fields(self)}
        fields = {k: v for k, v in overrides.items() if k in names}
        extra = {k: v for k, v in overrides.items() if k not in names}
        for key in extra:
            if not is_cpsat_parameter(key):
                raise InputError(f"unknown solver parameter (expected one of "
                                 f"{', '.join(sorted(names))})", key, extra[key])
        if extra:
            fields["cpsat_parameters"] = {**self.cpsat_parameters,
                                          **fields.get("cpsat_parameters", {}), **extra}
        return dataclasses.replace(self, **fields)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        out = dataclasses.asdict(self)
        out["cpsat_parameters"] = dict(self.cpsat_parameters)
        return out


def is_cpsat_parameter(name: object) -> bool:
    """Whether ``name`` is a field of CP-SAT's ``SatParameters``."""
    if not isinstance(name, str):
        return False
    from ortools.sat import sat_parameters_pb2

    return name in sat_parameters_pb2.SatParameters.DESCRIPTOR.fields_by_name
