"""One way to run a method on an instance: :class:`Method` and :func:`run_method`.

A method is a policy under an intra-dimension discipline (simulated, k = 1,
alpha-beta or any registered timing model), an exact solver for one AG variant,
or the lower bounds LB0-LB3 of one AG variant (solvers and bounds are of the
alpha-beta model they solve). ``themis compare`` and ``themis sweep`` both build methods here and
run them with :func:`run_method`, which returns the one result record
:class:`reports.records.MethodResult`.

Names come from the registries, so anything ``themis simulate`` accepts works
here too: every registered policy (``themis.policies.register_policy``,
including the user's own), ASTRA-sim's aliases, and fixed routes such as
``2,0,1`` (one route for every chunk; ``2,0,1;0,1,2`` cycles through routes);
every discipline :func:`themis.disciplines.canonical_intra` accepts; every solver
of the registry (:func:`solvers.backend_names`, including a backend the user
registers with :func:`solvers.backend.register_backend`); the AG orders of
:class:`themis.plans.AgOrder`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reports.records import DEFAULT_TIMING, AgOrder, Kind, MethodResult, Status
from topologies.errors import InputError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.instance import Instance
    from themis.policies import InterPolicy

#: The policies and disciplines run when none are named (a default choice, not a
#: list of what exists: that is the registry).
DEFAULT_POLICIES: tuple[str, ...] = ("baseline", "round-robin", "themis")
DEFAULT_INTRAS: tuple[str, ...] = ("fifo", "scf")


def every_policy() -> tuple[str, ...]:
    """Every registered policy (not ``fixed``, which needs a route), the defaults first.

    What ``themis compare`` and ``themis spec`` run when no policies are named;
    read from the registry (:func:`themis.policies.policy_names`), never listed here.
    """
    from themis.policies import policy_names

    names = [n for n in policy_names() if n != "fixed"]
    return tuple(n for n in DEFAULT_POLICIES if n in names) + tuple(
        n for n in names if n not in DEFAULT_POLICIES)


def every_intra() -> tuple[str, ...]:
    """Every registered (public) discipline, the defaults first (see :func:`every_policy`)."""
    from themis.disciplines import discipline_names

    names = discipline_names()
    return tuple(n for n in DEFAULT_INTRAS if n in names) + tuple(
        n for n in names if n not in DEFAULT_INTRAS)

#: Other spellings of solver names.
SOLVER_ALIASES: dict[str, str] = {"cp-sat": "cpsat", "ortools": "cpsat"}

#: Policies whose schedule a sweep stores (solvers' schedules are always stored).
SCHEDULED_POLICIES: tuple[str, ...] = ("themis", "baseline")


# -- names -------------------------------------------------------------------------
def is_route(text: object) -> bool:
    """A fixed route (``2,0,1``, ``0,1;1,0``) rather than a policy name."""
    from themis.policies.base import is_route as themis_is_route

    return isinstance(text, str) and themis_is_route(text)


def policy_choices() -> list[str]:
    """Registered policies that run by their name alone (``fixed`` needs a route)."""
    from themis.policies import make_policy, policy_names

    out = []
    for name in policy_names():
        try:
            make_policy(name)
        except (InputError, TypeError):
            continue
        out.append(name)
    return out


def make_policy_object(name: str) -> InterPolicy:
    """The policy object of a canonical name or a fixed route."""
    from themis.policies import make_policy

    return make_policy(name)


def canonical_policy(value: object, field_name: str, file: str = "") -> str:
    """The canonical name of a policy (``offlineGreedy`` -> ``themis``) or route text,
    as :func:`themis.policies.canonical_policy` gives it (the names simulate accepts)."""
    from themis.policies.base import canonical_policy as themis_canonical

    try:
        if not isinstance(value, str):
            raise InputError("not a name", field_name, value)
        name = themis_canonical(value)
        if is_route(name):
            make_policy_object(name)  # a route's syntax is checked here
            return name
    except InputError as err:
        if is_route(value):
            raise InputError(err.reason, field_name, value, file) from None
        name = None
    if name not in policy_choices():
        raise InputError(f"unknown policy (expected one of {', '.join(policy_choices())}, "
                         "or a fixed route like 2,0,1)", field_name, value, file)
    return name


def canonical_intra(value: object, field_name: str, file: str = "") -> str:
    """The canonical name of an intra-dimension discipline (``smallestFirst`` -> ``scf``)."""
    from themis.disciplines import canonical_intra as themis_canonical

    try:
        if not isinstance(value, str):
            raise InputError("must be a name", field_name, value)
        return themis_canonical(value)
    except InputError as err:
        raise InputError(err.reason, field_name, value, file) from None


#: The offline improvement (``solvers.improve``), run like a solver (reverse AG orders).
IMPROVE = "improve"


def canonical_solver(value: object, field_name: str, file: str = "") -> str:
    """The canonical name of an exact solver (or ``improve``)."""
    from solvers import backend_names

    names = backend_names()
    key = value.strip() if isinstance(value, str) else None
    if key is not None and key not in names:  # a registered name as it is, else lower case
        key = key.lower()
        key = SOLVER_ALIASES.get(key, key)
    if key not in names and key != IMPROVE:
        raise InputError(f"unknown solver (expected one of {', '.join(names)}, or "
                         f"{IMPROVE})", field_name, value, file)
    return key


def canonical_timing(value: object, field_name: str, file: str = "") -> str:
    """A registered timing model's name (:func:`themis.timing.timing_names`)."""
    from themis.timing import timing_names

    names = timing_names()
    key = value.strip().lower() if isinstance(value, str) else None
    if key not in names:
        raise InputError(f"unknown timing model (expected one of {', '.join(names)})",
                         field_name, value, file)
    return key


def timing_intras(timing: str) -> tuple[str, ...] | None:
    """The disciplines policies run with under ``timing`` (``None``: every one)."""
    from themis.timing import timing_meaning

    return timing_meaning(timing).disciplines


def canonical_ag_order(value: object, field_name: str, file: str = "") -> AgOrder:
    """``reverse`` or ``free``."""
    key = value.strip().lower() if isinstance(value, str) else None
    if key not in set(AgOrder):
        raise InputError(f"unknown AG order (expected one of {', '.join(AgOrder)})",
                         field_name, value, file)
    return AgOrder(key)


_CANONICAL = {"policy": canonical_policy, "intra": canonical_intra,
              "solver": canonical_solver, "ag_order": canonical_ag_order,
              "timing": canonical_timing}


def canonical_name(value: object, kind: str, field_name: str, file: str = "") -> str:
    """The canonical ``policy`` / ``intra`` / ``solver`` / ``ag_order`` / ``timing`` name
    of ``value``."""
    return _CANONICAL[kind](value, field_name, file)


def split_list(text: str, kind: str, flag: str) -> list[str]:
    """A comma-separated CLI list; consecutive numbers form one fixed route
    (``themis,2,0,1`` is Themis and the route 2,0,1)."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip():
        return []
    if any(not p for p in parts):
        raise InputError(f"empty entry in the {kind} list", flag, text)
    out: list[str] = []
    for p in parts:
        if kind == "policy" and is_route(p) and out and is_route(out[-1]):
            out[-1] = f"{out[-1]},{p}"
        else:
            out.append(p)
    return out


def parse_names(text: str, kind: str, flag: str) -> tuple[str, ...]:
    """A comma-separated CLI list (``--policies baseline,themis``) -> canonical names.

    An empty string is an empty list; duplicates are dropped.
    """
    out: list[str] = []
    for part in split_list(text, kind, flag):
        name = canonical_name(part, kind, flag)
        if name not in out:
            out.append(name)
    return tuple(out)


def params_for(params: Mapping[str, Any] | None, solver: str) -> dict[str, Any]:
    """The parameters one solver gets from a spec's ``solver_params``: its shared keys,
    overridden by the sub-table named after the solver (``[solver_params.cpsat]``).
    Sub-tables of other solvers are left out, so a limit of one backend (a CP-SAT
    deterministic time, a HiGHS node limit) never reaches another."""
    from solvers import backend_names

    if not params:
        return {}
    names = backend_names()
    out = {k: v for k, v in params.items() if k not in names}
    out.update(params.get(solver) or {})
    return out


def solver_params_json(params: Mapping[str, Any] | None) -> str | None:
    """Solver parameters as canonical JSON (``None`` when there are none)."""
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":")) if params else None


# -- methods -----------------------------------------------------------------------
@dataclass(frozen=True)
class Method:
    """What to run on an instance. Build with :meth:`policy`, :meth:`solver`, :meth:`bound`.

    ``solver_params``: canonical JSON of the solver's parameters (passed to
    :func:`solvers.solve`), e.g. a deterministic CP-SAT budget. ``timing``: the
    timing model a policy is simulated with (solvers and bounds: alpha-beta).
    """

    kind: Kind
    name: str                       # policy (or route), solver, or "bound"
    intra: str | None = None
    ag_order: AgOrder = AgOrder.REVERSE
    time_limit_s: float | None = None
    threads: int | None = None
    solver_params: str | None = None
    timing: str = DEFAULT_TIMING

    @classmethod
    def policy(cls, policy: str, intra: str, timing: str = DEFAULT_TIMING) -> Method:
        """A policy under a discipline (canonical names), reverse AG orders, simulated
        with the ``timing`` model."""
        return cls(Kind.POLICY, policy, intra, timing=timing)

    @classmethod
    def solver(cls, solver: str, ag_order: str = AgOrder.REVERSE,
               time_limit_s: float = 10.0, threads: int | None = None,
               solver_params: Mapping[str, Any] | None = None) -> Method:
        """An exact solver for one AG variant."""
        return cls(Kind.SOLVER, solver, None, AgOrder(ag_order), float(time_limit_s), threads,
                   solver_params_json(solver_params))

    @classmethod
    def bound(cls, ag_order: str = AgOrder.REVERSE) -> Method:
        """LB0-LB3 for one AG variant."""
        return cls(Kind.BOUND, "bound", None, AgOrder(ag_order))

    @property
    def label(self) -> str:
        """The method column: ``themis/scf``, ``2,0,1/fifo``, ``cpsat``, ``bound``;
        a policy under another timing than alpha-beta names it:
        ``themis/scf@astra-sim-1.0`` (so alpha-beta tasks keep their keys)."""
        if self.kind != Kind.POLICY:
            return self.name
        at = f"@{self.timing}" if self.timing != DEFAULT_TIMING else ""
        return f"{self.name}/{self.intra}{at}"

    @property
    def display(self) -> str:
        """``themis/scf``, ``cpsat (free)``..."""
        if self.kind != Kind.POLICY and self.ag_order != AgOrder.REVERSE:
            return f"{self.label} ({self.ag_order})"
        return self.label

    def keeps_schedule(self) -> bool:
        """Whether a sweep stores this method's schedule."""
        return self.kind == Kind.SOLVER or (self.kind == Kind.POLICY
                                            and self.name in SCHEDULED_POLICIES)

    def result(self, status: Status, **values: Any) -> MethodResult:
        """A result record of this method."""
        return MethodResult(
            method=self.label, kind=self.kind, status=status, ag_order=self.ag_order,
            policy=self.name if self.kind == Kind.POLICY else None, intra=self.intra,
            timing=self.timing,
            time_limit_s=self.time_limit_s, threads=self.threads,
            solver_params=self.solver_params, **values)


def method_grid(policies: Sequence[str], intras: Sequence[str], solvers: Sequence[str] = (),
                ag_orders: Sequence[str] = (AgOrder.REVERSE,), time_limit_s: float | None = None,
                threads: int | None = None,
                solver_params: Mapping[str, Any] | None = None,
                improve_params: Mapping[str, Any] | None = None,
                timings: Sequence[str] = (DEFAULT_TIMING,)) -> list[Method]:
    """The methods of one instance (canonical names), in the order they are shown.

    The bounds of every AG variant a result is scored for (reverse, the
    policies' variant, and each of ``ag_orders``), each policy under each
    discipline and each of ``timings``, each solver for each AG variant;
    ``improve`` (a solver name here) runs once, for reverse AG orders, with
    ``improve_params``.
    """
    variants = [AgOrder.REVERSE] + [AgOrder(a) for a in ag_orders if a != AgOrder.REVERSE]
    out = [Method.bound(a) for a in variants]
    out += [Method.policy(p, q, tm) for tm in timings for p in policies for q in intras]
    out += [Method.solver(s, a, time_limit_s or 10.0, threads, params_for(solver_params, s))
            for s in solvers if s != IMPROVE for a in ag_orders]
    if IMPROVE in solvers:
        out.append(Method.solver(IMPROVE, AgOrder.REVERSE, time_limit_s or 10.0, None,
                                 improve_params))
    return out


def check_method(instance: Instance, method: Method) -> None:
    """Raise an :class:`InputError` if ``method`` cannot run on ``instance`` (a route that
    is not a permutation of its dimensions)."""
    if method.kind == Kind.POLICY and is_route(method.name):
        make_policy_object(method.name).routes(instance.collective, instance.network)
    allowed = timing_intras(method.timing) if method.kind == Kind.POLICY else None
    if allowed is not None and method.intra not in allowed:
        raise InputError(f"the {method.timing} timing runs the disciplines "
                         f"{', '.join(allowed)} only", "intra", method.intra)


def run_method(instance: Instance, method: Method, catch_sigint: bool = True,
               metrics: bool = True, bounds: Any = None,
               simulations: Mapping[str, Any] | None = None) -> MethodResult:
    """Run ``method`` on ``instance``; a failure is a result with status ``error``.

    An :class:`InputError` (the user's input is wrong, e.g. a route that is not
    a permutation of the dimensions) is raised. ``catch_sigint=False`` keeps
    Ctrl-C from ending a CP-SAT search early as if the time limit had passed
    (sweeps: the truncated result would be recorded as done). ``metrics`` adds
    the utilization columns of the schedule. ``bounds``: the
    :class:`solvers.Bounds` of the instance for a solver's AG variant, if the
    caller has them (the solver then does not compute them again);
    ``simulations``: policy schedules of the instance the caller already has, by
    hint name (``themis/scf``), which a solver reuses for its default hints
    instead of simulating them again (:func:`solvers.solve`).
    """
    from themis.metrics import ideal_ns

    t0 = time.perf_counter()
    ideal = ideal_ns(instance.network, [instance.collective])
    try:
        if method.kind == Kind.POLICY:
            policy = make_policy_object(method.name)
            res = (instance.simulate(policy, method.intra) if method.timing == DEFAULT_TIMING
                   else instance.simulate(policy, method.intra, timing=method.timing))
            # A planning policy served from its cache reports its original planning time.
            out = method.result(Status.SIMULATED, makespan_ns=res.makespan_ns,
                                runtime_s=max(res.wall_s, res.schedule.meta.get("plan_s", 0.0)),
                                schedule=res.schedule,
                                choice=res.schedule.meta.get("policy_choice"))
        elif method.kind == Kind.SOLVER:
            out = _run_solver(instance, method, catch_sigint, bounds, simulations)
        else:
            from solvers import bounds

            b = bounds(instance, ag_order=str(method.ag_order))
            out = method.result(Status.BOUND, lower_bound_ns=b.lb_ns, lb0_ns=b.lb0_ns,
                                lb1_ns=b.lb1_ns, lb2_ns=b.lb2_ns, lb3_ns=b.lb3_ns,
                                lb3_method=str(b.lb3_method),
                                runtime_s=time.perf_counter() - t0, detail=b)
    except InputError:
        raise
    except Exception as err:  # a method failing must not lose the other results
        return method.result(Status.ERROR, ideal_ns=ideal, valid=False,
                             error=f"{type(err).__name__}: {err}"[:4000],
                             runtime_s=time.perf_counter() - t0)
    out.ideal_ns = ideal
    if metrics and out.schedule is not None:
        from themis.metrics import compute_metrics

        m = compute_metrics(out.schedule)
        out.bw_utilization = m.bw_utilization
        out.dim_utilization = [d.utilization for d in m.dims]
        out.dim_bytes = [d.bytes for d in m.dims]
        out.routes = dict(m.routes)
    return out


def _run_solver(instance: Instance, method: Method, catch_sigint: bool,
                bounds: Any, simulations: Mapping[str, Any] | None = None) -> MethodResult:
    extra: dict[str, Any] = json.loads(method.solver_params) if method.solver_params else {}
    if method.name == IMPROVE:
        from solvers.improve import improve

        # Deterministic budgets only (evaluations, CP-SAT deterministic time): the
        # method's wall-clock time limit is not passed on.
        res = improve(instance, **extra)
    else:
        res = _solve(instance, method, extra, catch_sigint, bounds, simulations)
    valid = bool(res.valid) if res.schedule is not None else True
    status = Status(res.status) if valid else Status.INVALID
    return method.result(status, makespan_ns=res.makespan_ns,
                         lower_bound_ns=res.lower_bound_ns, valid=valid,
                         runtime_s=float(res.runtime_s), schedule=res.schedule,
                         choice=res.meta.get("start") if method.name == IMPROVE else None,
                         stopped_by=str(res.meta.get("stopped_by") or "") or None,
                         # improve's schedules are simulated (exact times): no grid
                         scaling_error_ns=None if method.name == IMPROVE else
                         float(getattr(res, "scaling_error_ns", 0.0) or 0.0),
                         reason=getattr(res, "reason", "") or None, detail=res)


def _solve(instance: Instance, method: Method, extra: dict[str, Any], catch_sigint: bool,
           bounds: Any, simulations: Mapping[str, Any] | None = None) -> Any:
    """:func:`solvers.solve` with the method's limit, AG variant, threads and parameters."""
    import solvers

    params = solvers.SolverParams(time_limit_s=method.time_limit_s or 10.0,
                                  ag_order=str(method.ag_order))
    if method.threads is not None:
        extra["threads"] = method.threads
    if method.name == "cpsat" and not catch_sigint:
        extra.setdefault("catch_sigint_signal", False)
    return solvers.solve(instance, method.name, params.with_overrides(extra), bounds=bounds,
                         simulations=simulations)


__all__ = ["DEFAULT_INTRAS", "DEFAULT_POLICIES", "IMPROVE",
           "SCHEDULED_POLICIES", "Method",
           "canonical_ag_order", "canonical_intra", "canonical_name", "canonical_policy",
           "canonical_solver", "canonical_timing", "check_method", "every_intra",
           "every_policy", "is_route", "make_policy_object", "method_grid",
           "parse_names", "policy_choices", "run_method", "split_list", "timing_intras"]
