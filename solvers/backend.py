"""The backend contract: a solver is a function ``Problem -> RawSolution``, registered by name.

:func:`solvers.solve` prepares a :class:`Problem` (data, bounds, hint,
parameters, deadline) and calls the backend registered under the solver's
name; the backend builds its model, searches and returns a
:class:`~solvers.result.RawSolution`. Everything after that (re-timing,
checking, grading, fallback to the hint) is :mod:`solvers.grading`'s, so a
backend cannot claim more than it proved. A backend may raise: the failure
becomes a Result with the reason (see :mod:`solvers.solve`).

This module is the contract only (what a backend gets, returns and how it
registers); it imports no backend. :mod:`solvers.registry` imports the bundled
backends (``cpsat``, ``cbc``, ``highs``, in that order) and answers which names
exist, so the backends import this module and nothing imports them back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from solvers.bounds import Bounds
from solvers.common import ProblemData
from solvers.hints import Hint
from solvers.params import SolverParams
from solvers.result import RawSolution
from solvers.retime import Retimer


@dataclass
class Problem:
    """What a backend gets: the instance's data, what is known, and the budget."""

    data: ProblemData
    params: SolverParams
    bounds: Bounds
    hint: Hint | None
    deadline: float  # time.perf_counter() value at which the wall-clock limit ends
    retime: Retimer
    solver: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def lower_bound_ns(self) -> float:
        """Our best lower bound (LB0-LB3) for this AG variant."""
        return self.bounds.lb_ns

    def remaining_s(self) -> float:
        """Wall-clock seconds left (never below 0)."""
        return max(0.0, self.deadline - time.perf_counter())


Backend = Callable[[Problem], RawSolution]
#: A backend's size check: raises InputError when the model is too large to build.
SizeCheck = Callable[[ProblemData], None]


@dataclass(frozen=True)
class BackendInfo:
    """A registered backend: the solve function and its size check."""

    name: str
    run: Backend
    check_size: SizeCheck | None = None
    #: Which deterministic limit it honours: ``deterministic_time_s`` or ``node_limit``.
    work_limit: str = ""


_BACKENDS: dict[str, BackendInfo] = {}


def register_backend(name: str, check_size: SizeCheck | None = None,
                     work_limit: str = "") -> Callable[[Backend], Backend]:
    """Register ``fn(problem) -> RawSolution`` as the solver ``name``."""

    def deco(fn: Backend) -> Backend:
        _BACKENDS[name] = BackendInfo(name, fn, check_size, work_limit)
        return fn

    return deco


def unregister_backend(name: str) -> None:
    """Remove a backend (tests register fakes and remove them again)."""
    _BACKENDS.pop(name, None)
