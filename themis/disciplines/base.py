"""The intra-dimension discipline protocol and its registry (model.md §5).

A discipline holds the stages waiting on one dimension; ``pop`` returns the
next one to start, or ``None`` if none may start now. A discipline is one
module of this package: a class taking the run's
:class:`~themis.stages.StageTable` (plus options), decorated with
:func:`register_discipline`. The simulator builds one instance per dimension.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from themis.stages import StageTable
from topologies.errors import InputError


class Discipline(Protocol):
    """A per-dimension waiting queue of stage ids (indices into a StageTable)."""

    def push(self, sid: int) -> None:
        """Queue stage ``sid`` (it just became ready)."""
        ...

    def pop(self) -> int | None:
        """The stage to start next, or ``None``."""
        ...

    def __len__(self) -> int: ...


DisciplineFactory = Callable[..., Discipline]
_REGISTRY: dict[str, DisciplineFactory] = {}
_PUBLIC: list[str] = []


def register_discipline(
    name: str, public: bool = True
) -> Callable[[DisciplineFactory], DisciplineFactory]:
    """Register ``factory(table: StageTable, **options)`` under ``name``.

    ``public`` names are listed by :func:`discipline_names` (what users pick
    with ``--intra`` and what comparisons run); internal ones such as
    ``astra-scf`` and ``replay`` are still made by :func:`make_discipline`.
    """

    def deco(factory: DisciplineFactory) -> DisciplineFactory:
        _REGISTRY[name] = factory
        if public and name not in _PUBLIC:
            _PUBLIC.append(name)
        return factory

    return deco


def discipline_names(internal: bool = False) -> list[str]:
    """Registered discipline names (with ``internal``, the internal ones too)."""
    return list(_REGISTRY) if internal else list(_PUBLIC)


def canonical_intra(name: str) -> str:
    """The registered name for any accepted spelling (``FIFO``, ``smallestFirst``...).

    ASTRA-sim's spellings (:data:`topologies.system.INTRA_ALIASES`) are accepted;
    a registered name (such as the internal ``astra-scf``) passes as it is.
    """
    from topologies.system import INTRA_ALIASES

    if name in _REGISTRY:
        return name
    key = str(name).strip().lower()
    key = INTRA_ALIASES.get(key, key)
    if key not in _REGISTRY:
        raise InputError("unknown intra-dimension discipline (expected one of "
                         f"{', '.join(_PUBLIC)})", "intra", name)
    return key


def make_discipline(name: str, table: StageTable, **options: object) -> Discipline:
    """A new (empty) queue of discipline ``name`` over ``table``'s stages."""
    return _REGISTRY[canonical_intra(name)](table, **options)
