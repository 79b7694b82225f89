"""The inter-dimension policy protocol and its registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from themis.collective import Collective
from topologies.errors import InputError
from topologies.network import Network

Route = tuple[int, ...]


class InterPolicy(Protocol):
    """Chooses each chunk's route (order of the dimensions it crosses).

    ``routes`` is called once when a collective is issued and returns one
    route per chunk (a permutation of ``network.active_dims``).
    """

    name: str

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """One route per chunk of ``collective``, in chunk order."""
        ...


PolicyFactory = Callable[..., InterPolicy]
_POLICIES: dict[str, PolicyFactory] = {}


def register_policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory under ``name`` (used by :func:`make_policy`)."""

    def deco(factory: PolicyFactory) -> PolicyFactory:
        _POLICIES[name] = factory
        return factory

    return deco


def policy_names() -> list[str]:
    """Registered policy names."""
    return list(_POLICIES)


def make_policy(name: str | InterPolicy, **options: object) -> InterPolicy:
    """A policy by name (``baseline``, ``round-robin``, ``themis``, ``fixed``).

    A policy object passes through unchanged. Aliases of ASTRA-sim
    (``ascending``, ``offlineGreedy``, ``roundRobin``) are accepted.
    """
    if not isinstance(name, str):
        return name
    from topologies.system import INTER_ALIASES

    key = INTER_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in _POLICIES:
        raise InputError(f"unknown policy (expected one of {', '.join(_POLICIES)})",
                         "policy", name)
    return _POLICIES[key](**options)

