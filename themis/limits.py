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


#: Most chunk steps (passes x collectives per pass x chunks x dimensions) a training run
#: is allowed: the simulator keeps every stage of every chunk (about 750 bytes each, some
#: 50,000 a second on one core), so this is a few minutes and a few GB; 2.6 times a
#: 20,000-layer data-parallel iteration of 64 chunks on 3 dimensions.
MAX_TRAINING_STEPS = 10_000_000


def training_steps(passes: int, collectives_per_pass: int, chunks: int, dims: int) -> int:
    """The estimated chunk steps of a training run (see :data:`MAX_TRAINING_STEPS`)."""
    return passes * max(1, collectives_per_pass) * chunks * max(1, dims)


def check_training_steps(passes: int, collectives_per_pass: int, chunks: int, dims: int,
                         field: str, value: object, file: str = "") -> None:
    """Refuse, before it starts, a training run estimated above
    :data:`MAX_TRAINING_STEPS` chunk steps (``field`` = ``value`` is named: the
    option or spec key that makes it so large)."""
    steps = training_steps(passes, collectives_per_pass, chunks, dims)
    if steps > MAX_TRAINING_STEPS:
        raise InputError(
            f"about {_estimate(steps)} chunk steps to simulate ({passes:,} "
            f"pass{'es' if passes != 1 else ''} x "
            f"{max(1, collectives_per_pass):,} collectives x {chunks:,} chunks x "
            f"{max(1, dims)} dimensions), more than the {MAX_TRAINING_STEPS:,} a training run "
            "is allowed (memory and time grow with them); use fewer passes or chunks",
            field, value, file)


__all__ = ["MAX_ENUMERATED_ROUTES", "MAX_TRAINING_STEPS", "check_route_enumeration",
           "check_training_steps", "route_count", "training_steps"]
