"""Fixtures of the reports tests."""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@pytest.fixture
def backwards_policy(monkeypatch: pytest.MonkeyPatch) -> str:
    """A user policy registered with ``register_policy`` for one test (the registry is
    restored afterwards): every chunk takes the active dimensions in descending order."""
    from themis.plugins import load_plugins
    from themis.policies import base, register_policy

    load_plugins()  # the lazily imported planners register into the real registry
    monkeypatch.setattr(base, "_POLICIES", dict(base._POLICIES))

    @register_policy("backwards")
    @dataclass
    class Backwards:
        name: str = "backwards"

        def routes(self, collective, network):
            return [tuple(reversed(network.active_dims))] * len(collective.chunk_sizes())

    return "backwards"
