"""The one stage-plan builder: a chunk's (phase, dimension) sequence (model.md §3).

An all-reduce has three plan shapes (:class:`PlanShape`); a reduce-scatter or
all-gather has one. A timing model says which shapes it runs
(``Timing.plan_shapes``), and the checker accepts exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from topologies.errors import InputError

#: A chunk's stage plan: its (phase, dimension) stages in order.
Plan = tuple[tuple[str, int], ...]
#: A chunk's route: the dimensions it crosses, in order.
Route = tuple[int, ...]


def is_permutation(route: Sequence[int], dims: Iterable[int]) -> bool:
    """Whether ``route`` crosses each dimension of ``dims`` exactly once (the one
    route-permutation test: policies, planners, the simulator and the checker)."""
    return sorted(route) == sorted(dims)


def check_routes(routes: Iterable[Sequence[int]], dims: Iterable[int], *,
                 producer: str | None = None, key: str = "route",
                 what: str = "dimensions") -> None:
    """Raise an :class:`InputError` for the first of ``routes`` that is not a
    permutation of ``dims``: "policy P produced a route ..." when a policy
    (``producer``) made it, else "a route must be a permutation of the {what} ..."
    naming the route as the user writes it (``2,0,1``) under ``key``."""
    want = sorted(dims)
    for r in routes:
        if not is_permutation(r, want):
            if producer is not None:
                raise InputError(f"policy {producer} produced a route that is not a "
                                 f"permutation of {want}", key, tuple(r))
            raise InputError(f"a route must be a permutation of the {what} {want}", key,
                             ",".join(map(str, r)))


class StagePhase(StrEnum):
    """What one stage does on its dimension (equal to its plain-string name)."""

    #: reduce-scatter: the chunk leaves the dimension P times smaller
    RS = "RS"
    #: all-gather: the chunk leaves the dimension P times larger
    AG = "AG"
    #: a whole all-reduce on one dimension (the size is kept)
    AR = "AR"
    #: an all-to-all on one dimension: every NPU sends 1/P of the chunk to every
    #: other NPU of the dimension in parallel (the size is kept; a training run's
    #: ASTRA-sim ``direct`` all-to-all, workloads.md §2)
    A2A = "A2A"


_RS, _AG, _AR, _A2A = StagePhase.RS, StagePhase.AG, StagePhase.AR, StagePhase.A2A


class PlanShape(StrEnum):
    """How an all-reduce chunk crosses its route."""

    #: RS along the route, then AG back (or along a given AG order).
    RS_AG = "rs-ag"
    #: RS on all but the route's last dimension, one AR there, AG back
    #: (ASTRA-sim's baseline with ``collective-optimization: localBWAware``).
    LOCAL_BW_AWARE = "local-bw-aware"
    #: A whole all-reduce on every dimension in turn (ASTRA-sim 1.0 without localBWAware).
    AR_PER_DIM = "ar-per-dim"


class AgOrder(StrEnum):
    """The AG variant (model.md §7): AG along the reversed RS route, or free AG orders.

    A schedule with reverse AG orders is feasible for both variants, one with
    free orders only for ``free``; a bound for ``free`` is valid for both, one
    for ``reverse`` only for ``reverse``. The one list of AG orders: the
    solvers, the sweeps and the command line take their names from it.
    """

    REVERSE = "reverse"
    FREE = "free"


def stage_plan(
    kind: str,
    route: Sequence[int],
    ag_route: Sequence[int] | None = None,
    shape: PlanShape | str = PlanShape.RS_AG,
) -> Plan:
    """The (phase, dim) sequence of a chunk of a ``kind`` collective along ``route``.

    reduce-scatter: RS along ``route``; all-gather: AG along ``route``;
    all-to-all: A2A along ``route``; all-reduce: per ``shape`` (see
    :class:`PlanShape`); ``ag_route`` (RS_AG only) is the AG order, by default
    the reverse of ``route``.
    """
    route = tuple(route)
    if kind == "reduce-scatter":
        return tuple((_RS, d) for d in route)
    if kind == "all-gather":
        return tuple((_AG, d) for d in route)
    if kind == "all-to-all":
        return tuple((_A2A, d) for d in route)
    if kind != "all-reduce":
        raise ValueError(f"unknown collective {kind!r}")
    shape = PlanShape(shape)
    if shape is not PlanShape.RS_AG and ag_route is not None:
        raise ValueError(f"the {shape} plan fixes the AG order")
    if shape is PlanShape.AR_PER_DIM:
        return tuple((_AR, d) for d in route)
    if shape is PlanShape.LOCAL_BW_AWARE:
        head = route[:-1]
        return (tuple((_RS, d) for d in head) + ((_AR, route[-1]),)
                + tuple((_AG, d) for d in reversed(head)))
    ag = tuple(reversed(route)) if ag_route is None else tuple(ag_route)
    return tuple((_RS, d) for d in route) + tuple((_AG, d) for d in ag)
