"""The one result shape of the exact solvers: :class:`Result` (and a backend's raw answer)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from solvers.common import Assignment
from themis.schedule import Schedule

#: Relative tolerance under which a makespan at its lower bound counts as proven optimal.
PROOF_TOL = 1e-8


class Status(enum.StrEnum):
    """How much a :class:`Result` proves.

    ``optimal``: proven (by the solver's search or by a lower bound meeting the
    makespan), up to ``scaling_error_ns``; ``feasible``: a valid schedule, not
    proven optimal (time or work limit, a solver failure answered by the hint);
    ``infeasible``: the model has no schedule (a bug for this problem);
    ``unknown``: no schedule at all.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNKNOWN = "unknown"


#: The statuses a :class:`Result` may carry (their string values).
STATUSES: tuple[str, ...] = tuple(s.value for s in Status)


class BoundSource(enum.StrEnum):
    """Where ``Result.lower_bound_ns`` comes from."""

    OURS = "lower bounds"       # LB0-LB3 (see Result.meta["bounds"]["lb3_method"])
    SOLVER = "solver"          # the backend's own proven bound, minus its tolerance
    MAKESPAN = "makespan"      # the solver proved the makespan optimal (minus tolerance)
    CPSAT = "cpsat"            # CP-SAT's proven bound inside another method (improve)


@dataclass
class RawSolution:
    """A backend's answer before re-timing and grading (see :mod:`solvers.grading`).

    ``assignment`` holds the routes and per-dimension orders of the backend's
    best schedule (``None``: it found none); ``solver_makespan_ns`` what its own
    model says that schedule takes; ``bound_ns`` a proven lower bound (already
    lowered by the backend's tolerance; 0 if none); ``scaling_error_ns`` how far
    the backend's model can be from the exact one; ``stopped_by`` the limit that
    ended the search (``wall``, ``deterministic``, ``nodes`` or ``""``).
    """

    status: Status
    assignment: Assignment | None
    solver_makespan_ns: float | None
    bound_ns: float
    scaling_error_ns: float = 0.0
    meta: dict = field(default_factory=dict)
    reason: str = ""
    stopped_by: str = ""
    log: str | None = None


@dataclass
class Result:
    """What an exact solver found for one instance and AG variant.

    ``status`` is a :class:`Status`; ``reason`` says in one line why the
    status is not a plain solver answer (a limit, a crash answered by the hint,
    a downgraded claim; empty otherwise). ``makespan_ns`` is the makespan of
    ``schedule`` after the one exact re-timing by the simulator's replay;
    ``solver_makespan_ns`` what the solver's own model said.
    ``lower_bound_ns`` is a proven lower bound on the optimum of this AG
    variant, ``bound_source`` where it comes from (a :class:`BoundSource`).
    ``valid`` is the checker's verdict on ``schedule`` (``None`` without one)
    and ``violations`` its findings. ``scaling_error_ns`` bounds how far the
    backend's model can be from the exact one (integer ticks for CP-SAT,
    tolerances for the MILPs). ``solver_log`` is kept when the backend failed.
    """

    status: Status
    makespan_ns: float | None
    lower_bound_ns: float
    runtime_s: float
    solver: str
    ag_order: str
    schedule: Schedule | None = None
    valid: bool | None = None
    violations: list[str] = field(default_factory=list)
    scaling_error_ns: float = 0.0
    solver_makespan_ns: float | None = None
    chunks: int = 0
    routes: dict[str, int] = field(default_factory=dict)
    reference_ns: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    bound_source: BoundSource = BoundSource.OURS
    lb3_method: str = ""
    solver_log: str | None = None

    def __post_init__(self) -> None:
        try:
            self.status = Status(self.status)
            self.bound_source = BoundSource(self.bound_source)
        except ValueError as err:
            raise ValueError(f"bad Result field: {err}") from None

    @property
    def gap(self) -> float | None:
        """(makespan - lower bound) / lower bound, or ``None`` without a makespan."""
        if self.makespan_ns is None or self.lower_bound_ns <= 0:
            return None
        return (self.makespan_ns - self.lower_bound_ns) / self.lower_bound_ns

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (no schedule; of a failed solver's log, the last 2000 chars)."""
        return {
            "status": str(self.status),
            "reason": self.reason,
            "makespan_ns": self.makespan_ns,
            "lower_bound_ns": self.lower_bound_ns,
            "bound_source": str(self.bound_source),
            "lb3_method": self.lb3_method,
            "gap": self.gap,
            "runtime_s": self.runtime_s,
            "solver": self.solver,
            "ag_order": self.ag_order,
            "valid": self.valid,
            "violations": list(self.violations),
            "scaling_error_ns": self.scaling_error_ns,
            "solver_makespan_ns": self.solver_makespan_ns,
            "chunks": self.chunks,
            "routes": dict(self.routes),
            "reference_ns": dict(self.reference_ns),
            "solver_log_tail": None if self.solver_log is None else self.solver_log[-2000:],
            "meta": dict(self.meta),
        }
