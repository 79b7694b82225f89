"""The intra-dimension discipline protocol and its registry (model.md §5).

A discipline holds the stages waiting on one dimension; ``pop`` returns the
next one to start, or ``None`` if none may start now. A discipline is one
module of this package: a class taking the run's
:class:`~themis.stages.StageTable` (plus options), decorated with
:func:`register_discipline`. The simulator builds one instance per dimension.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import ClassVar, Protocol

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


#: A PriorityDiscipline heap entry packs (key rank, tie, stage id) into one int.
SID_BITS = 28
TIE_BITS = 32
SID_MASK = (1 << SID_BITS) - 1
#: The tie field of the first push when equal keys start newest first (it counts down).
TIE_TOP = ((1 << TIE_BITS) - 1) << SID_BITS


class PriorityDiscipline:
    """A discipline that starts the waiting stage with the smallest key.

    A subclass defines :meth:`keys` (one number per stage of the table) and
    whether equal keys start newest first (:attr:`newest_first`, as SCF) or
    oldest first. :meth:`push` / :meth:`pop` keep a heap of (key, tie, sid); a
    table that grows after the queue was made (the training engine adds chunks
    as collectives are issued) has its keys re-read when a new stage is pushed.

    The simulator does not call :meth:`push` / :meth:`pop` on these queues: it
    runs them inline (:meth:`themis.engine.EventLoop.run`, when the run's table does not
    grow) on heaps of single ints
    ``rank + tie + sid`` (:meth:`shifted_ranks`), in exactly the same order.
    """

    __slots__ = ("_keys", "_seq", "_table", "heap")

    #: Among equal keys, the most recently queued stage first (else the oldest).
    newest_first: ClassVar[bool] = True

    def __init__(self, table: StageTable) -> None:
        self._table = table
        self._keys: Sequence[float] = self.keys(table)
        self.heap: list[tuple[float, int, int]] = []
        self._seq = 0

    @classmethod
    def keys(cls, table: StageTable) -> Sequence[float]:
        """The key of every stage of ``table`` (smaller starts first)."""
        raise NotImplementedError

    @classmethod
    def grown_keys(cls, table: StageTable, keys: Sequence[float]) -> Sequence[float]:
        """The keys of every stage of ``table``, which grew since ``keys`` were read
        (by whole chunks). By default all are read again; a subclass whose keys are
        costly (LRW) extends ``keys`` instead, so a growing table costs O(new stages)."""
        return cls.keys(table)

    @classmethod
    def shifted_ranks(cls, table: StageTable) -> list[int]:
        """Per stage, the rank of its key among the table's distinct keys, shifted
        above the tie and stage-id fields of an int heap entry (see the class)."""
        if len(table) > SID_MASK:
            raise ValueError(f"at most {SID_MASK} stages per run")
        keys = cls.keys(table)
        shift = TIE_BITS + SID_BITS
        order = {k: r << shift for r, k in enumerate(sorted(set(keys)))}
        return list(map(order.__getitem__, keys))

    def push(self, sid: int) -> None:
        """Queue ``sid`` under its key."""
        keys = self._keys
        if sid >= len(keys):
            keys = self._keys = self.grown_keys(self._table, keys)
        self._seq += 1
        heapq.heappush(self.heap, (keys[sid], -self._seq if self.newest_first else self._seq,
                                   sid))

    def pop(self) -> int | None:
        """The waiting stage with the smallest (key, tie)."""
        return heapq.heappop(self.heap)[2] if self.heap else None

    def __len__(self) -> int:
        return len(self.heap)


DisciplineFactory = Callable[..., Discipline]
_REGISTRY: dict[str, DisciplineFactory] = {}
_PUBLIC: list[str] = []
#: Public names left out of the default set (``default=False``), in registration order.
_OPT_IN: list[str] = []


def register_discipline(
    name: str, public: bool = True, default: bool = True
) -> Callable[[DisciplineFactory], DisciplineFactory]:
    """Register ``factory(table: StageTable, **options)`` under ``name``.

    ``public`` names are what users pick with ``--intra``; internal ones such as
    ``astra-scf`` and ``replay`` are still made by :func:`make_discipline`. A
    public name with ``default`` (the usual case) is also in the default set of
    :func:`discipline_names`: what comparisons, sweeps and the planners that
    choose a discipline run when none is named. ``default=False`` (``feed``)
    keeps a newer discipline out of those sets, so their results do not change,
    while its name works everywhere a discipline is accepted.
    """

    def deco(factory: DisciplineFactory) -> DisciplineFactory:
        _REGISTRY[name] = factory
        if public and default and name not in _PUBLIC:
            _PUBLIC.append(name)
        elif public and not default and name not in _OPT_IN:
            _OPT_IN.append(name)
        return factory

    return deco


def discipline_names(internal: bool = False, opt_in: bool = False) -> list[str]:
    """Registered discipline names: the default set; with ``opt_in`` the public names
    registered with ``default=False`` too (after it); with ``internal``, every name."""
    if internal:
        return list(_REGISTRY)
    return list(_PUBLIC) + ([n for n in _OPT_IN if n not in _PUBLIC] if opt_in else [])


def canonical_intra(name: str) -> str:
    """The registered name for any accepted spelling (``FIFO``, ``smallestFirst``...).

    ASTRA-sim's spellings (:data:`topologies.system.INTRA_ALIASES`) are accepted;
    a registered name (such as the internal ``astra-scf``) passes as it is.
    """
    from topologies.system import INTRA_ALIASES, unmodelled_scheduling

    if name in _REGISTRY:
        return name
    why = unmodelled_scheduling(name, inter=False)
    if why:
        raise InputError(why, "intra", name)
    key = str(name).strip().lower()
    key = INTRA_ALIASES.get(key, key)
    if key not in _REGISTRY:
        raise InputError("unknown intra-dimension discipline (expected one of "
                         f"{', '.join(discipline_names(opt_in=True))})", "intra", name)
    return key


def make_discipline(name: str, table: StageTable, **options: object) -> Discipline:
    """A new (empty) queue of discipline ``name`` over ``table``'s stages."""
    return _REGISTRY[canonical_intra(name)](table, **options)
