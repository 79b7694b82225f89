"""Every policy and every exact solver on one instance, scored against the best and a bound.

:func:`compare` runs each inter-dimension policy under each intra-dimension
discipline through the simulator (alpha-beta, k = 1), each solver of
:mod:`solvers`, and the lower bounds, then scores every row (model.md §8):

- ``gap = (makespan - best) / best`` with ``best`` the best makespan found;
- ``gap_bound = (makespan - LB) / LB``, the certified upper bound on the gap to
  the optimum, with ``LB`` the best valid lower bound (LB0-LB3, and what the
  solvers proved).

Which results may serve as ``best`` and ``LB`` depends on the AG variant
(model.md §7): a schedule with reverse AG orders (every policy, and the
solvers run with ``ag_order="reverse"``) is feasible for both variants, one
with free AG orders only for ``free``; a lower bound for ``free`` is valid for
both variants, one for ``reverse`` only for ``reverse``. :func:`reference`
applies these rules, for :func:`compare` and for the sweep reports alike.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from topologies.errors import InputError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.instance import Instance
    from themis.schedule import Schedule

#: Policies, disciplines, solvers and AG variants by their canonical names.
POLICIES: tuple[str, ...] = ("baseline", "round-robin", "themis")
INTRAS: tuple[str, ...] = ("fifo", "scf")
SOLVERS: tuple[str, ...] = ("cpsat", "cbc", "highs")
AG_ORDERS: tuple[str, ...] = ("reverse", "free")

#: Relative tolerance under which two makespans count as equal.
REL_TOL = 1e-6
#: A makespan within this relative distance above a valid lower bound counts as
#: proven optimal (the LP/MILP bounds are lowered by 1e-6 for solver tolerances).
LB_TOL = 1e-5


# -- names ---------------------------------------------------------------------------
def canonical_name(value: object, kind: str, field_name: str, file: str = "") -> str:
    """The canonical policy / intra / solver / ag_order name of ``value``.

    ``kind`` is one of ``policy``, ``intra``, ``solver``, ``ag_order``. ASTRA-sim
    spellings are accepted for policies (``ascending``, ``offlineGreedy``,
    ``roundRobin``) and disciplines (``FIFO``, ``smallestFirst``). Anything else
    raises an :class:`InputError` naming ``field_name`` and the value.
    """
    from topologies.system import INTER_ALIASES, INTRA_ALIASES

    tables: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
        "policy": (INTER_ALIASES, POLICIES),
        "intra": (INTRA_ALIASES, INTRAS),
        "solver": ({s: s for s in SOLVERS} | {"cp-sat": "cpsat", "ortools": "cpsat"}, SOLVERS),
        "ag_order": ({a: a for a in AG_ORDERS}, AG_ORDERS),
    }
    aliases, allowed = tables[kind]
    key = aliases.get(value.strip().lower()) if isinstance(value, str) else None
    if key not in allowed:
        raise InputError(f"unknown {kind.replace('_', ' ')} (expected one of "
                         f"{', '.join(allowed)})", field_name, value, file)
    return key


def parse_names(text: str, kind: str, flag: str) -> tuple[str, ...]:
    """A comma-separated CLI list (``--policies baseline,themis``) -> canonical names.

    An empty string is an empty list; duplicates are dropped.
    """
    out: list[str] = []
    for part in text.split(","):
        if not part.strip():
            if text.strip():
                raise InputError(f"empty entry in the {kind} list", flag, text)
            continue
        name = canonical_name(part, kind, flag)
        if name not in out:
            out.append(name)
    return tuple(out)


def policy_method(policy: str, intra: str) -> str:
    """The method name of a policy run, e.g. ``themis/scf``."""
    return f"{policy}/{intra}"


# -- scoring ---------------------------------------------------------------------------
class Scored(Protocol):
    """What :func:`reference` reads from a result row."""

    kind: str
    ag_order: str
    status: str
    makespan_ns: float | None
    lower_bound_ns: float | None
    valid: bool


def relative_gap(value: float | None, ref: float | None) -> float | None:
    """``(value - ref) / ref``, or ``None`` when either is missing."""
    if value is None or ref is None or ref <= 0:
        return None
    return (value - ref) / ref


def reference(rows: Iterable[Scored], variant: str = "reverse"
              ) -> tuple[float | None, float | None, bool]:
    """``(best_ns, lower_bound_ns, proven)`` of one instance for an AG ``variant``.

    ``best_ns``: the least makespan among valid schedules feasible for the
    variant; ``lower_bound_ns``: the largest lower bound valid for it;
    ``proven``: ``best_ns`` is certified optimal: a solver proved optimality
    for the variant at that makespan (within :data:`REL_TOL`), or it meets the
    lower bound (within :data:`LB_TOL`).
    """
    best: float | None = None
    lb: float | None = None
    optimal: list[float] = []
    for r in rows:
        feasible = r.kind == "policy" or r.ag_order == "reverse" or variant == "free"
        bound_valid = r.ag_order == "free" or variant == "reverse"
        if (r.kind != "bound" and feasible and r.valid and r.makespan_ns is not None
                and r.status not in ("error", "infeasible")):
            best = r.makespan_ns if best is None else min(best, r.makespan_ns)
            if r.kind == "solver" and r.status == "optimal" and r.ag_order == variant:
                optimal.append(r.makespan_ns)
        if bound_valid and r.kind != "policy" and r.lower_bound_ns is not None:
            lb = r.lower_bound_ns if lb is None else max(lb, r.lower_bound_ns)
    proven = best is not None and (
        any(abs(m - best) <= REL_TOL * best for m in optimal)
        or (lb is not None and best <= lb * (1 + LB_TOL)))
    return best, lb, proven


# -- compare ---------------------------------------------------------------------------
@dataclass
class Row:
    """One method's result on the instance.

    ``status``: ``simulated`` for a policy, the solver's status otherwise
    (``optimal``, ``feasible``, ``unknown``, ``infeasible``; ``invalid`` if the
    checker rejected its schedule, ``error`` if it raised: see ``message``).
    """

    method: str
    kind: str
    makespan_ns: float | None
    status: str
    runtime_s: float
    ag_order: str = "reverse"
    lower_bound_ns: float | None = None
    valid: bool = True
    gap: float | None = None
    gap_bound: float | None = None
    message: str = ""
    schedule: Schedule | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON row of ``themis compare --json``."""
        out: dict[str, Any] = {
            "method": self.method, "kind": self.kind, "makespan_ns": self.makespan_ns,
            "status": self.status, "gap": self.gap, "gap_bound": self.gap_bound,
            "runtime_s": self.runtime_s,
        }
        if self.message:
            out["message"] = self.message
        return out


@dataclass
class Comparison:
    """The rows of :func:`compare` and the instance's references.

    ``lower_bound_ns``: the best valid lower bound; ``best_ns``: the best
    makespan found; ``best_proven``: it is certified optimal; ``bounds``: the
    :class:`solvers.Bounds` (LB0-LB3), if the solvers package is installed.
    """

    instance: Instance
    ag_order: str
    rows: list[Row]
    lower_bound_ns: float | None
    best_ns: float | None
    best_proven: bool
    bounds: Any = None

    def row(self, method: str) -> Row:
        """The row of ``method`` (``KeyError`` if there is none)."""
        for r in self.rows:
            if r.method == method:
                return r
        raise KeyError(method)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``themis compare --json``."""
        return {
            "lower_bound_ns": self.lower_bound_ns,
            "best_ns": self.best_ns,
            "best_proven": self.best_proven,
            "ag_order": self.ag_order,
            "instance": self.instance.to_dict(),
            "rows": [r.to_dict() for r in self.rows],
        }


def compare(
    instance: Instance,
    policies: Sequence[str] = POLICIES,
    intra: Sequence[str] = INTRAS,
    solvers: Sequence[str] = SOLVERS,
    time_limit_s: float = 10,
    ag_order: str = "reverse",
    threads: int | None = None,
) -> Comparison:
    """Run every policy x discipline, every solver and the bounds on ``instance``.

    Policies always use reverse AG orders; the solvers solve the ``ag_order``
    variant and the rows are scored for it (see :func:`reference`). A solver
    that raises gives a row with status ``error`` (and the message) rather than
    stopping the comparison.
    """
    policies = [canonical_name(p, "policy", "policies") for p in policies]
    intra = [canonical_name(q, "intra", "intra") for q in intra]
    solvers = [canonical_name(s, "solver", "solvers") for s in solvers]
    ag_order = canonical_name(ag_order, "ag_order", "ag_order")
    rows: list[Row] = []
    for p in policies:
        for q in intra:
            res = instance.simulate(p, q)
            rows.append(Row(policy_method(p, q), "policy", res.makespan_ns, "simulated",
                            res.wall_s, schedule=res.schedule))
    for s in solvers:
        rows.append(solver_row(instance, s, time_limit_s, ag_order, threads))
    bounds_obj = None
    try:
        from solvers import bounds
    except ImportError:  # the solvers package is optional for policy-only comparisons
        bound_row = Row("ideal", "bound", None, "bound", 0.0, ag_order="free",
                        lower_bound_ns=_ideal_ns(instance))
    else:
        t0 = time.perf_counter()
        bounds_obj = bounds(instance, ag_order=ag_order)
        bound_row = Row("bound", "bound", None, "bound", time.perf_counter() - t0,
                        ag_order=ag_order, lower_bound_ns=bounds_obj.lb_ns)
    best, lb, proven = reference(rows + [bound_row], ag_order)
    for r in rows:
        r.gap = relative_gap(r.makespan_ns, best)
        r.gap_bound = relative_gap(r.makespan_ns, lb)
    return Comparison(instance, ag_order, rows, lb, best, proven, bounds_obj)


def solver_row(instance: Instance, solver: str, time_limit_s: float, ag_order: str,
               threads: int | None) -> Row:
    """Run one solver and turn its result into a :class:`Row`."""
    from solvers import solve

    t0 = time.perf_counter()
    try:
        res = solve(instance, solver=solver, time_limit_s=time_limit_s, ag_order=ag_order,
                    threads=threads)
    except InputError:
        raise
    except Exception as err:  # a solver failing must not lose the other rows
        return Row(solver, "solver", None, "error", time.perf_counter() - t0,
                   ag_order=ag_order, valid=False, message=f"{type(err).__name__}: {err}")
    status = res.status
    valid = bool(res.valid) if res.schedule is not None else True
    if res.schedule is not None and not res.valid:
        status = "invalid"
    return Row(solver, "solver", res.makespan_ns, status, float(res.runtime_s),
               ag_order=ag_order, lower_bound_ns=res.lower_bound_ns, valid=valid,
               schedule=res.schedule)


def _ideal_ns(instance: Instance) -> float:
    from themis.metrics import ideal_ns

    return ideal_ns(instance.network, [instance.collective])


def format_comparison(comp: Comparison) -> str:
    """The text table of ``themis compare``."""
    from reports.formatting import format_table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.2f}%"

    rows = [[r.method, "-" if r.makespan_ns is None else r.makespan_ns / 1e3, r.status,
             pct(r.gap), pct(r.gap_bound), f"{r.runtime_s:.3f}"] for r in comp.rows]
    table = format_table(["method", "makespan (us)", "status", "gap", "gap bound",
                          "runtime (s)"], rows)
    lb = "-" if comp.lower_bound_ns is None else f"{comp.lower_bound_ns / 1e3:,.3f} us"
    best = "-" if comp.best_ns is None else f"{comp.best_ns / 1e3:,.3f} us"
    proven = "proven optimal" if comp.best_proven else "not proven optimal"
    head = f"{comp.instance.label()} ({comp.instance.network.describe()}), " \
           f"AG order {comp.ag_order}"
    notes = [f"{r.method}: {r.message}" for r in comp.rows if r.message]
    return "\n".join([head, table, f"best {best} ({proven}); lower bound {lb}"] + notes)


__all__ = [
    "AG_ORDERS", "INTRAS", "LB_TOL", "POLICIES", "REL_TOL", "SOLVERS", "Comparison", "Row",
    "canonical_name",
    "compare", "format_comparison", "parse_names", "policy_method", "reference",
    "relative_gap", "solver_row",
]
