"""Bounds on the work a command does, checked before the work starts.

Some methods enumerate every route of a collective, a permutation of the active
dimensions: ``n`` dimensions give ``n!`` routes, and past a few dimensions that
is more memory and time than any machine has (64 dimensions: about 1.3e89
routes). Such methods refuse the network up front with one line naming the
network, the number of dimensions and the estimate, instead of running out of
memory (exit 2 through :class:`~topologies.errors.InputError`).
"""

from __future__ import annotations

import math

from topologies.errors import InputError

#: Most routes a route-enumerating method (portfolio, lb-mix, bounds, the exact
#: models, ``improve``, the training bound) is allowed to enumerate: 6 active
#: dimensions (120 routes).
MAX_ENUMERATED_ROUTES = 120


def route_count(dims: int) -> int:
    """Routes of a collective over ``dims`` active dimensions: ``dims!``."""
    return math.factorial(dims)


def _estimate(n: int) -> str:
    return f"{n:,}" if n < 10**9 else f"{float(n):.2g}"


def check_route_enumeration(dims: int, what: str, file: str = "") -> None:
    """Refuse enumerating every route over ``dims`` active dimensions for
    ``what`` (a method's name) when there are more than
    :data:`MAX_ENUMERATED_ROUTES` of them."""
    count = route_count(dims)
    if count > MAX_ENUMERATED_ROUTES:
        most = max(d for d in range(1, dims + 1) if route_count(d) <= MAX_ENUMERATED_ROUTES)
        raise InputError(
            f"{what} enumerates every route, {dims}! = {_estimate(count)} routes, more than "
            f"the {MAX_ENUMERATED_ROUTES:,} it can handle (at most {most} active dimensions); "
            "use a fixed-route policy (themis, baseline, a route like 0,1,2) at this size",
            "active dimensions", dims, file)


__all__ = ["MAX_ENUMERATED_ROUTES", "check_route_enumeration", "route_count"]
