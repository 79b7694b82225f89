"""A route given by the user (one for all chunks, or one per chunk, cycled)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from themis.collective import Collective
from themis.plans import check_routes
from themis.policies.base import Route, register_policy
from topologies.errors import InputError
from topologies.network import Network


def parse_route(text: str) -> Route:
    """Parse ``"2,0,1"`` into ``(2, 0, 1)``."""
    try:
        return tuple(int(x) for x in str(text).split(","))
    except ValueError:
        raise InputError("a route is comma-separated dimension indices", "route", text) from None


@register_policy("fixed")
@dataclass(frozen=True)
class FixedRoute:
    """Every chunk k takes ``routes[k % len(routes)]``."""

    routes_: tuple[Route, ...] = ()
    name: str = "fixed"

    def __init__(self, routes: Sequence[Sequence[int]] | Sequence[int] | str = ()) -> None:
        if isinstance(routes, str):
            parsed: tuple[Route, ...] = tuple(parse_route(r) for r in routes.split(";"))
        elif routes and all(isinstance(x, int) for x in routes):
            parsed = (tuple(routes),)  # type: ignore[arg-type]
        else:
            parsed = tuple(tuple(r) for r in routes)  # type: ignore[arg-type]
        if not parsed:
            raise InputError("needs a route: give the route itself, like 2,0,1", "policy",
                             "fixed")
        object.__setattr__(self, "routes_", parsed)
        object.__setattr__(self, "name", "fixed")

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The given routes, validated as permutations of the active dimensions."""
        check_routes(self.routes_, network.active_dims)
        n = len(collective.chunk_sizes())
        return [self.routes_[k % len(self.routes_)] for k in range(n)]
