"""Every policy and every exact solver on one instance, scored: a one-instance sweep in memory.

:func:`compare` builds the same methods a sweep builds for one instance
(:func:`reports.methods.method_grid`: the bounds of each AG variant, each
policy under each discipline, each solver), runs them with
:func:`reports.methods.run_method` and scores them with
:func:`reports.scoring.score` (each row against its own AG variant's best and
lower bound), exactly as ``themis report`` scores a sweep.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from reports.methods import (
    DEFAULT_INTRAS,
    DEFAULT_POLICIES,
    canonical_ag_order,
    canonical_intra,
    canonical_policy,
    canonical_solver,
    canonical_timing,
    check_method,
    method_grid,
    run_method,
)
from reports.records import DEFAULT_TIMING, AgOrder, Kind, MethodResult, Status
from reports.scoring import Reference, score, timing_references

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.instance import Instance


@dataclass
class Comparison:
    """The results of :func:`compare` and the instance's references.

    ``rows``: the policy and solver results; ``bounds``: the bound results (one
    per AG variant); ``references``: per variant, the best makespan, the best
    valid lower bound and whether the best is proven optimal (alpha-beta, the
    model the solvers and bounds are of); ``timings``: the timing models the
    policies ran under; ``timing_references``: per timing other than
    alpha-beta, its best policy makespan (the rows of that timing are scored
    against it, without a bound).
    """

    instance: Instance
    ag_order: AgOrder
    rows: list[MethodResult]
    bounds: list[MethodResult]
    references: dict[AgOrder, Reference]
    timings: tuple[str, ...] = (DEFAULT_TIMING,)
    timing_references: dict[str, Reference] = field(default_factory=dict)

    @property
    def reference(self) -> Reference:
        """The references of the solvers' variant (``ag_order``)."""
        return self.references[self.ag_order]

    @property
    def lower_bound_ns(self) -> float | None:
        """The best lower bound valid for ``ag_order``."""
        return self.reference.lower_bound_ns

    @property
    def best_ns(self) -> float | None:
        """The best makespan feasible for ``ag_order``."""
        return self.reference.best_ns

    @property
    def best_proven(self) -> bool:
        """``best_ns`` is certified optimal for ``ag_order``."""
        return self.reference.proven

    def row(self, method: str) -> MethodResult:
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
            "ag_order": str(self.ag_order),
            "references": {str(v): {"best_ns": r.best_ns, "lower_bound_ns": r.lower_bound_ns,
                                    "best_proven": r.proven}
                           for v, r in self.references.items()},
            "timings": list(self.timings),
            "timing_references": {t: {"best_ns": r.best_ns}
                                  for t, r in self.timing_references.items()},
            "instance": self.instance.to_dict(),
            "rows": [r.to_dict() for r in self.rows],
            "bounds": [{"ag_order": str(b.ag_order), "lower_bound_ns": b.lower_bound_ns,
                        **{f"lb{k}_ns": getattr(b, f"lb{k}_ns") for k in range(4)}}
                       for b in self.bounds],
        }


def compare(
    instance: Instance,
    policies: Sequence[str] = DEFAULT_POLICIES,
    intra: Sequence[str] = DEFAULT_INTRAS,
    solvers: Sequence[str] | None = None,
    time_limit_s: float = 10,
    ag_order: str = AgOrder.REVERSE,
    threads: int | None = None,
    solver_params: Mapping[str, Any] | None = None,
    timings: Sequence[str] = (DEFAULT_TIMING,),
    deadline: float | None = None,
) -> Comparison:
    """Run every policy x discipline x timing, every solver and the bounds on ``instance``.

    ``deadline`` (a :func:`time.monotonic` instant): the whole comparison's wall-clock
    end. The bounds and policies run first (their work is bounded up front); then each
    solver gets an equal share of what is left (at most ``time_limit_s``), so time a
    solver does not use goes to the next; a solver reached after the deadline is not
    started, and its row says so (status ``unknown``, stopped by ``wall``).

    The solvers get the bounds and the policies' schedules computed here (their
    default hints, not simulated twice). Policies always use reverse AG orders
    and are simulated with each of ``timings`` (registered timing models);
    solvers and bounds are of the alpha-beta model; the solvers solve the
    ``ag_order`` variant (``solvers=None``: every registered solver,
    :func:`solvers.backend_names`). Every
    row is scored against its own variant (see :mod:`reports.scoring`). A
    solver that raises gives a row with status ``error`` (and the message)
    rather than stopping the comparison; a name or route that is not valid is
    an :class:`InputError`.
    """
    from solvers.hints import hint_name

    if solvers is None:
        from solvers import backend_names

        solvers = backend_names()
    policies = [canonical_policy(p, "policies") for p in policies]
    intra = [canonical_intra(q, "intra") for q in intra]
    solvers = [canonical_solver(s, "solvers") for s in solvers]
    variant = canonical_ag_order(ag_order, "ag_order")
    timings = tuple(dict.fromkeys(canonical_timing(t, "timing") for t in timings))
    methods = method_grid(policies, intra, solvers, [variant], time_limit_s, threads,
                          solver_params, timings=timings)
    for m in methods:
        check_method(instance, m)
    results: list[MethodResult] = []
    bounds: dict[AgOrder, Any] = {}
    simulations: dict[str, Any] = {}  # the policies' schedules, the solvers' hints
    solvers_left = sum(m.kind == Kind.SOLVER for m in methods)
    for m in methods:  # bounds, then policies, then solvers: the solvers reuse both
        if m.kind == Kind.SOLVER and deadline is not None:
            share_s = (deadline - time.monotonic()) / solvers_left
            solvers_left -= 1
            if share_s <= 0:
                results.append(m.result(Status.UNKNOWN, valid=False, stopped_by="wall",
                                        reason="not started: the command's --time-limit "
                                               "was used up"))
                continue
            m = replace(m, time_limit_s=min(m.time_limit_s or share_s, share_s))
        r = run_method(instance, m, bounds=bounds.get(m.ag_order), simulations=simulations)
        if m.kind == Kind.BOUND and r.detail is not None:
            bounds[m.ag_order] = r.detail
        # Only alpha-beta schedules are the solvers' hints (their model).
        if m.kind == Kind.POLICY and r.schedule is not None and m.timing == DEFAULT_TIMING:
            simulations[hint_name(m.name, m.intra)] = r.schedule
        results.append(r)
    refs = score(results)
    refs.setdefault(variant, refs[AgOrder.REVERSE])
    return Comparison(instance, variant, [r for r in results if r.kind != Kind.BOUND],
                      [r for r in results if r.kind == Kind.BOUND], refs, timings,
                      timing_references(results))


def format_comparison(comp: Comparison) -> str:
    """The text table of ``themis compare``."""
    from reports.formatting import format_table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.2f}%"

    def us(x: float | None) -> str:
        return "-" if x is None else f"{x / 1e3:,.3f} us"

    timed = comp.timings != (DEFAULT_TIMING,)
    rows = [[r.name, *([r.timing] if timed else []),
             "-" if r.makespan_ns is None else r.makespan_ns / 1e3, str(r.status),
             pct(r.gap), pct(r.gap_bound), f"{r.runtime_s or 0:.3f}"] for r in comp.rows]
    table = format_table(["method", *(["timing"] if timed else []), "makespan (us)", "status",
                          "gap", "gap bound", "runtime (s)"], rows)
    head = f"{comp.instance.label()} ({comp.instance.network.describe()}), " \
           f"AG order {comp.ag_order}"
    lines = [head, table]
    for v, ref in comp.references.items():
        proven = "proven optimal" if ref.proven else "not proven optimal"
        which = f"{v} variant: " if len(comp.references) > 1 else ""
        lines.append(f"{which}best {us(ref.best_ns)} ({proven}); lower bound "
                     f"{us(ref.lower_bound_ns)}" + (" (alpha-beta)" if timed else ""))
    for t, ref in comp.timing_references.items():
        lines.append(f"{t}: best policy {us(ref.best_ns)} (its rows' gaps are to it; the "
                     "solvers and bounds are of the alpha-beta model)")
    lines += [f"{r.name}: {r.error}" for r in comp.rows if r.error]
    lines += [f"{r.name}: {r.reason}" for r in comp.rows
              if not r.error and r.status == Status.UNKNOWN and r.reason]
    return "\n".join(lines)


__all__ = ["Comparison", "compare", "format_comparison"]
