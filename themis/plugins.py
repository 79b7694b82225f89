"""Plug-in modules imported when a registry first needs them, not at start-up.

A package whose plug-ins are costly to import (the planners of
:mod:`themis.planning`, the routers of :mod:`themis.training`) adds a loader
with :func:`add_loader` in its ``__init__``: a function importing those
modules by name, in registration order. A registry calls :func:`load_plugins`
before it lists its names or reports a name unknown, so a name registered by a
plug-in is found everywhere a name is accepted, while a command that uses
none of them (``themis simulate``) never imports them.

This module imports nothing: every registry may use it.
"""

from __future__ import annotations

from collections.abc import Callable

_PENDING: list[Callable[[], None]] = []


def add_loader(loader: Callable[[], None]) -> None:
    """Queue ``loader`` (run once, by the next :func:`load_plugins`)."""
    _PENDING.append(loader)


def load_plugins() -> None:
    """Run every queued loader once, in the order they were added (a loader whose
    imports add new loaders runs those too)."""
    while _PENDING:
        _PENDING.pop(0)()


def pending() -> int:
    """How many loaders have not run yet (0 once every plug-in is imported)."""
    return len(_PENDING)


__all__ = ["add_loader", "load_plugins", "pending"]
