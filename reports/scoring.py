"""Scoring the results of one instance against its references (model.md §8).

- ``gap = (makespan - best) / best`` with ``best`` the best makespan found;
- ``gap_bound = (makespan - LB) / LB``, the certified upper bound on the gap to
  the optimum, with ``LB`` the best valid lower bound (LB0-LB3, and what the
  solvers proved).

Every result is scored against the references of its own AG variant (model.md
§7): a policy and a ``reverse`` solver against the reverse variant's, a
``free`` solver against the free variant's. A schedule with reverse AG orders
is feasible for both variants, one with free orders only for ``free``; a lower
bound for ``free`` is valid for both variants, one for ``reverse`` only for
``reverse``. :func:`reference` applies these rules.

A policy row timed with another model than alpha-beta (``timing``, e.g.
``astra-sim-1.0``) is scored against the best row of the same timing only, and
has no ``gap_bound``: the solvers and the bounds are of the alpha-beta model,
and another model's makespans are neither feasible for it nor bounded by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reports.records import DEFAULT_TIMING, AgOrder, Kind, MethodResult, Status

#: Relative tolerance under which two makespans count as equal.
REL_TOL = 1e-6
#: A makespan within this relative distance above a valid lower bound counts as
#: proven optimal (the LP/MILP bounds are lowered by 1e-6 for solver tolerances).
LB_TOL = 1e-5


@dataclass(frozen=True)
class Reference:
    """The references of one instance for one AG variant."""

    variant: AgOrder
    best_ns: float | None
    lower_bound_ns: float | None
    proven: bool


def relative_gap(value: float | None, ref: float | None) -> float | None:
    """``(value - ref) / ref``, or ``None`` when either is missing."""
    if value is None or ref is None or ref <= 0:
        return None
    return (value - ref) / ref


def reference(rows: Iterable[MethodResult], variant: str = AgOrder.REVERSE,
              timing: str = DEFAULT_TIMING) -> Reference:
    """The references of one instance's results for an AG ``variant`` and a ``timing``
    (the rows of other timings are left out; only alpha-beta has lower bounds).

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
        if r.timing != timing:
            continue
        feasible = r.kind == Kind.POLICY or r.ag_order == AgOrder.REVERSE \
            or variant == AgOrder.FREE
        bound_valid = r.ag_order == AgOrder.FREE or variant == AgOrder.REVERSE
        if (r.kind != Kind.BOUND and feasible and r.valid and r.makespan_ns is not None
                and r.status not in (Status.ERROR, Status.INFEASIBLE)):
            best = r.makespan_ns if best is None else min(best, r.makespan_ns)
            if r.kind == Kind.SOLVER and r.status == Status.OPTIMAL and r.ag_order == variant:
                optimal.append(r.makespan_ns)
        if bound_valid and r.kind != Kind.POLICY and r.lower_bound_ns is not None \
                and r.status != Status.ERROR:
            lb = r.lower_bound_ns if lb is None else max(lb, r.lower_bound_ns)
    proven = best is not None and (
        any(abs(m - best) <= REL_TOL * best for m in optimal)
        or (lb is not None and best <= lb * (1 + LB_TOL)))
    return Reference(AgOrder(variant), best, lb, proven)


def variant_of(r: MethodResult) -> AgOrder:
    """The AG variant a result is scored for: reverse for policies, its own otherwise."""
    return AgOrder.REVERSE if r.kind == Kind.POLICY else AgOrder(r.ag_order)


def score(rows: Sequence[MethodResult]) -> dict[AgOrder, Reference]:
    """Score one instance's results in place, each against its own variant.

    Returns the alpha-beta references of every variant present (reverse always);
    rows of another timing are scored against :func:`timing_references`.
    """
    variants = {AgOrder.REVERSE} | {variant_of(r) for r in rows}
    refs = {v: reference(rows, v) for v in sorted(variants, key=list(AgOrder).index)}
    others = timing_references(rows)
    for r in rows:
        ref = refs[variant_of(r)] if r.timing == DEFAULT_TIMING else others[r.timing]
        r.best_ns = ref.best_ns
        r.best_lower_bound_ns = ref.lower_bound_ns
        r.proven_optimal = ref.proven
        r.gap = relative_gap(r.makespan_ns, ref.best_ns)
        r.gap_bound = relative_gap(r.makespan_ns, ref.lower_bound_ns)
    return refs


def timing_references(rows: Sequence[MethodResult]) -> dict[str, Reference]:
    """Per timing other than alpha-beta present in ``rows``: its best policy makespan
    (reverse AG orders, no lower bound)."""
    timings = sorted({r.timing for r in rows} - {DEFAULT_TIMING})
    return {t: reference(rows, AgOrder.REVERSE, t) for t in timings}


__all__ = ["LB_TOL", "REL_TOL", "Reference", "reference", "relative_gap", "score",
           "timing_references", "variant_of"]
