"""Plug-in modules imported when a registry first needs them, not at start-up.

A package whose plug-ins cost start-up time (the bundled policies and timing
models, the routers of :mod:`themis.training`, the planners of
:mod:`themis.planning`) queues loaders with :func:`add_loader` in its
``__init__``: functions importing those modules by name, each declaring the
registries it adds to and, optionally, the names it registers there. A registry
calls :func:`load_plugins` before it lists its names (every loader adding to it
runs) and when a name is not registered yet (the loaders declaring that name
run; if none does, every loader adding to the registry), so a name registered
by a plug-in is found everywhere a name is accepted, while a command imports
only the plug-ins it uses.

This module imports nothing: every registry may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

#: Queued loaders: (function, registries it adds to, names it registers).
_PENDING: list[tuple[Callable[[], None], frozenset[str], frozenset[str]]] = []


def add_loader(loader: Callable[[], None], registries: Iterable[str],
               names: Iterable[str] = ()) -> None:
    """Queue ``loader`` (run once), which adds to ``registries`` the ``names`` (if
    declared; a loader declaring none runs whenever its registries are searched)."""
    _PENDING.append((loader, frozenset(registries), frozenset(names)))


def load_plugins(registry: str | None = None, name: str | None = None,
                 named_only: bool = False) -> None:
    """Run queued loaders once, in the order they were queued: those declaring
    ``name`` in ``registry`` if any does, else (unless ``named_only``) every one adding
    to ``registry`` (and any they queue), every loader when no registry is given.

    A registry's ``register`` calls it with ``named_only`` before it registers a name:
    the bundled plug-in of that name registers first, so a user's registration of
    the same name replaces it, as when every plug-in was imported at start-up."""
    if registry is not None and name is not None:
        named = [entry for entry in _PENDING if registry in entry[1] and name in entry[2]]
        if named or named_only:
            for entry in named:
                _run(entry)
            return
    while True:
        todo = [entry for entry in _PENDING if registry is None or registry in entry[1]]
        if not todo:
            return
        _run(todo[0])


def _run(entry: tuple[Callable[[], None], frozenset[str], frozenset[str]]) -> None:
    if entry in _PENDING:  # not run already by a loader before it
        _PENDING.remove(entry)
        entry[0]()


def pending() -> int:
    """How many loaders have not run yet (0 once every plug-in is imported)."""
    return len(_PENDING)


__all__ = ["add_loader", "load_plugins", "pending"]
