"""The one result record of a method on an instance: compare, the database and the report.

:class:`MethodResult` is what :func:`reports.methods.run_method` returns, what
``themis compare`` prints, what a sweep stores (:meth:`MethodResult.to_row`,
one row of the ``results`` table together with the instance's
:class:`InstanceInfo` columns) and what the report reads back
(:meth:`MethodResult.from_row`). Kinds, statuses and AG variants are string
enums, so they compare equal to (and are stored as) their plain names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from themis.plans import AgOrder

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.instance import Instance
    from themis.schedule import Schedule


class Kind(StrEnum):
    """What a method is: a simulated policy, an exact solver or the lower bounds."""

    POLICY = "policy"
    SOLVER = "solver"
    BOUND = "bound"


class Status(StrEnum):
    """A result's status.

    ``simulated`` (a policy), the solver's honest status (``optimal`` only when
    proven, ``feasible`` with a bound, ``unknown``, ``infeasible``), ``invalid``
    (the checker rejected the schedule), ``bound`` (a lower-bound task),
    ``error`` (the method raised: see :attr:`MethodResult.error`).
    """

    SIMULATED = "simulated"
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    UNKNOWN = "unknown"
    INFEASIBLE = "infeasible"
    INVALID = "invalid"
    BOUND = "bound"
    ERROR = "error"


#: The timing model of rows that do not name one (solvers and bounds always: they
#: solve and bound the alpha-beta model).
DEFAULT_TIMING = "alpha-beta"


def task_key(instance_key: str, method: str, ag_order: str) -> str:
    """A task's UNIQUE key in a sweep database: ``<instance key>:<method>:<ag_order>``."""
    return f"{instance_key}:{method}:{ag_order}"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class InstanceInfo:
    """The columns that describe an instance (the same for all its rows)."""

    instance_key: str
    network: str            # as written in the spec (path or preset name)
    network_label: str      # the network's name (file stem) or shape
    shape: str              # NPUs per dimension, e.g. 4x4x4
    topology: str           # e.g. Ring4@4GB/s x Switch4@1GB/s
    dims: int               # D: dimensions a chunk crosses
    npus: int
    size_bytes: int
    chunks: int
    endpoint_delay_ns: float

    @classmethod
    def of(cls, instance: Instance, network: str) -> InstanceInfo:
        """The description of ``instance``, named ``network`` in the spec."""
        net = instance.network
        return cls(instance.key(), network, net.name or net.shape(), net.shape(),
                   net.describe(), len(instance.dims), net.npus, instance.size_bytes,
                   instance.chunks, float(instance.endpoint_delay_ns))

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> InstanceInfo:
        """Read back from a database row."""
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    def to_row(self) -> dict[str, Any]:
        """The database columns."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def label(self) -> str:
        """E.g. ``small-2d 64MiB C=4, delay 10 ns``."""
        from topologies.units import format_size

        delay = f", delay {self.endpoint_delay_ns:g} ns" if self.endpoint_delay_ns else ""
        return f"{self.network_label} {format_size(self.size_bytes)} C={self.chunks}{delay}"


#: Columns of MethodResult stored as JSON text in the database.
_JSON_FIELDS = ("dim_utilization", "dim_bytes", "routes", "versions")
#: Fields that are not database columns.
_NOT_STORED = ("schedule", "detail", "best_ns", "best_lower_bound_ns", "proven_optimal", "gap",
               "gap_bound")


@dataclass
class MethodResult:
    """One method's result on one instance (and, once scored, its gaps).

    ``method``: ``themis/scf``, ``2,0,1/fifo``, ``cpsat``, ``bound``;
    ``ag_order``: the variant it solved (policies: ``reverse``; a bound: the
    variant it is valid for). Scores (set by :func:`reports.scoring.score`)
    are against the best makespan and the best lower bound of the row's own
    AG variant.
    """

    method: str
    kind: Kind
    status: Status
    ag_order: AgOrder = AgOrder.REVERSE
    policy: str | None = None
    intra: str | None = None
    #: The timing model the row's makespan was timed with (policies may run under any
    #: registered one; solvers and bounds are of the alpha-beta model).
    timing: str = DEFAULT_TIMING
    makespan_ns: float | None = None
    lower_bound_ns: float | None = None
    lb0_ns: float | None = None
    lb1_ns: float | None = None
    lb2_ns: float | None = None
    lb3_ns: float | None = None
    lb3_method: str | None = None     # optimal | node-limit | lp (deterministic, see solvers)
    ideal_ns: float | None = None
    bw_utilization: float | None = None
    dim_utilization: list[float] | None = None
    dim_bytes: list[float] | None = None
    routes: dict[str, int] | None = None
    runtime_s: float | None = None
    time_limit_s: float | None = None
    threads: int | None = None
    solver_params: str | None = None  # JSON of the solver parameters asked for
    choice: str | None = None  # a planning policy's winning candidate (portfolio), improve's start
    stopped_by: str | None = None     # wall | deterministic | nodes: what ended a search
    #: A solver row: how far its model's times can be from the exact ones (a rounded
    #: time grid); its "optimal" means optimal within this. 0 on the exact grid.
    scaling_error_ns: float | None = None
    reason: str | None = None         # why a solver's status is not its plain answer
    valid: bool = True
    error: str | None = None
    versions: dict[str, str] | None = None
    host: str | None = None
    finished_at: str | None = None
    schedule: Schedule | None = field(default=None, repr=False, compare=False)
    detail: Any = field(default=None, repr=False, compare=False)  # solvers.Bounds / Result
    best_ns: float | None = None
    best_lower_bound_ns: float | None = None
    proven_optimal: bool | None = None
    gap: float | None = None
    gap_bound: float | None = None

    @property
    def name(self) -> str:
        """The display name: ``themis/scf``, ``cpsat``, ``cpsat (free)``, ``bound (free)``."""
        if self.kind != Kind.POLICY and self.ag_order != AgOrder.REVERSE:
            return f"{self.method} ({self.ag_order})"
        return self.method

    @property
    def reproducible(self) -> bool:
        """Not ended by a wall-clock limit (a solver stopped by one depends on the machine)."""
        return self.stopped_by != "wall"

    @property
    def ok(self) -> bool:
        """Finished without error."""
        return self.status != Status.ERROR

    def to_row(self) -> dict[str, Any]:
        """The database columns of the result (without the instance's and the schedule)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name in _NOT_STORED:
                continue
            v = getattr(self, f.name)
            if f.name in _JSON_FIELDS and v is not None:
                v = _dumps(v)
            elif isinstance(v, StrEnum):
                v = str(v)
            elif f.name == "valid":
                v = int(v)
            out[f.name] = v
        return out

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> MethodResult:
        """Read back a database row (unknown columns are ignored)."""
        kw: dict[str, Any] = {}
        for f in fields(cls):
            if f.name in _NOT_STORED or f.name not in row:
                continue
            v = row[f.name]
            if f.name in _JSON_FIELDS and v is not None:
                v = json.loads(v)
            kw[f.name] = v
        kw["kind"] = Kind(kw["kind"])
        kw["status"] = Status(kw["status"])
        kw["ag_order"] = AgOrder(kw.get("ag_order") or AgOrder.REVERSE)
        kw["valid"] = bool(kw.get("valid", 1))
        kw["timing"] = kw.get("timing") or DEFAULT_TIMING
        return cls(**kw)

    def scores(self) -> dict[str, Any]:
        """The score columns of results.csv."""
        return {"best_ns": self.best_ns, "best_lower_bound_ns": self.best_lower_bound_ns,
                "proven_optimal": None if self.proven_optimal is None
                else int(self.proven_optimal),
                "gap": self.gap, "gap_bound": self.gap_bound}

    def to_dict(self) -> dict[str, Any]:
        """The JSON row of ``themis compare --json``."""
        out: dict[str, Any] = {
            "method": self.method, "kind": str(self.kind), "ag_order": str(self.ag_order),
            "timing": self.timing,
            "makespan_ns": self.makespan_ns, "status": str(self.status), "gap": self.gap,
            "gap_bound": self.gap_bound, "runtime_s": self.runtime_s,
        }
        if self.lower_bound_ns is not None:
            out["lower_bound_ns"] = self.lower_bound_ns
        if self.kind == Kind.SOLVER:  # the wall clock it had, what stopped it and why
            out.update(time_limit_s=self.time_limit_s, stopped_by=self.stopped_by,
                       reason=self.reason)
        if self.error:
            out["message"] = self.error
        return out


#: The columns of MethodResult.scores(), in results.csv order.
SCORE_COLUMNS: tuple[str, ...] = ("best_ns", "best_lower_bound_ns", "proven_optimal", "gap",
                                  "gap_bound")

__all__ = ["DEFAULT_TIMING", "SCORE_COLUMNS", "AgOrder", "InstanceInfo", "Kind", "MethodResult",
           "Status",
           "task_key"]
