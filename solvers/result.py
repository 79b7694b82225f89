"""The result every exact solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from themis.schedule import Schedule

#: The statuses a :class:`Result` may carry.
STATUSES: tuple[str, ...] = ("optimal", "feasible", "infeasible", "unknown")


@dataclass
class Result:
    """What an exact solver found for one instance and AG variant.

    ``status``: ``optimal`` (the solver proved it; the makespan is optimal up
    to ``scaling_error_ns``), ``feasible`` (a schedule, not proven optimal),
    ``infeasible`` (the model has no schedule: a bug for this problem) or
    ``unknown`` (no schedule found in time).
    ``makespan_ns`` is the makespan of ``schedule`` after exact re-timing by
    the simulator; ``solver_makespan_ns`` what the solver's own model said.
    ``lower_bound_ns`` is a proven lower bound on the optimum (ours, LB0-LB3,
    or the solver's, whichever is larger). ``valid`` is the checker's verdict
    on ``schedule`` (``None`` without a schedule) and ``violations`` its
    findings. ``scaling_error_ns`` bounds how far the integer-scaled model can
    be from the exact one (0 for models in exact arithmetic).
    """

    status: str
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

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    @property
    def gap(self) -> float | None:
        """(makespan - lower bound) / lower bound, or ``None`` without a makespan."""
        if self.makespan_ns is None or self.lower_bound_ns <= 0:
            return None
        return (self.makespan_ns - self.lower_bound_ns) / self.lower_bound_ns

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (the schedule itself is left out)."""
        return {
            "status": self.status,
            "makespan_ns": self.makespan_ns,
            "lower_bound_ns": self.lower_bound_ns,
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
            "meta": dict(self.meta),
        }
