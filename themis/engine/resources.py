"""Resource laws: how a dimension's running stages progress (model.md §5).

A timing model names its law (``Timing.resource_law``); the engine runs it, the
checker replays a schedule's stages through it (:meth:`ResourceLaw.ends_ns`) and the
bounds read which capacity terms it keeps valid (:attr:`ResourceLaw.bound_fields`), so
the three never disagree on what sharing a dimension means. Laws are plug-ins,
registered by name (:func:`register_resource_law`); the bundled two:

* :class:`Exclusive` (``exclusive``) - a stage runs alone at its full duration (k = 1,
  or a timing model without bandwidth sharing). A stage's end is known when it
  starts, so the event loop schedules it itself (:mod:`themis.engine.loop`).
* :class:`Shared` (``shared``) - a stage first spends its fixed (latency) time, then
  sends its bytes at B / n, n the stages of its dimension sending at that time.
  Each dimension has one live event, re-planned whenever its running set changes
  (older ones carry a stale version). With one slot per dimension (k = 1) it is
  :class:`Exclusive` (:func:`law_at`).

A new law subclasses :class:`EventLaw` (its events on the loop's heap, like
:class:`Shared`) and is registered with :func:`register_resource_law`; a timing
model naming it then runs under it in the simulator, the training engine and the
checker, and the bounds keep only the terms its ``bound_fields`` name.

Heap entries are ``(time, scheduled at, tie, code)``; a resource's ties are
``tie_base[d] + a counter``, so ties of one resource never repeat and equal-time
events of one scheduling time are processed by start order, or with
``tie_dim`` by dimension first (see :class:`~themis.engine.rules.Rules`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import ClassVar, Protocol, TypeVar

from themis.engine.rules import SHARED_TOL

#: Tie keys on dimension d start at d << TIE_DIM_SHIFT (``tie_dim``).
TIE_DIM_SHIFT = 44

#: An event heap entry: (time, scheduled at, tie, code).
HeapEntry = tuple[float, float, int, int]


def tie_base(ndims: int, tie_dim: bool) -> list[int]:
    """Per dimension, the first tie key of its events."""
    return [(d << TIE_DIM_SHIFT) if tie_dim else 0 for d in range(ndims)]


class Costs(Protocol):
    """A law's view of the stages: per stage id, its fixed (latency) time, the bytes it
    sends and its duration alone (a :class:`~themis.stages.StageTable`, or the
    checker's :class:`StageCosts`)."""

    @property
    def fixed_ns(self) -> Sequence[float]: ...
    @property
    def sent_bytes(self) -> Sequence[float]: ...
    @property
    def duration_ns(self) -> Sequence[float]: ...


class StageCosts:
    """Plain :class:`Costs` columns (what the checker replays)."""

    def __init__(self, fixed_ns: Sequence[float], sent_bytes: Sequence[float],
                 duration_ns: Sequence[float]) -> None:
        self.fixed_ns, self.sent_bytes, self.duration_ns = fixed_ns, sent_bytes, duration_ns


class ResourceLawName(StrEnum):
    """The bundled laws' names (a registered law may add others)."""

    EXCLUSIVE = "exclusive"
    SHARED = "shared"


class ResourceLaw:
    """A resource law (module docstring). One instance runs the dimensions of one
    event loop: ``ResourceLaw(costs, ndims, heap, tie_dim, bandwidth_bytes_per_ns,
    time_tol_ns, busy, sent)`` (``busy`` / ``sent``: per-dimension loads to keep, or
    ``None``)."""

    #: Its registered name.
    name: ClassVar[str] = ""
    #: Whether a stage lasts exactly its duration alone (its end known when it starts:
    #: the event loop schedules it, the checker compares each stage's length with it).
    exact_durations: ClassVar[bool] = False
    #: The per-dimension capacity terms a lower bound may use under the law: ``load``
    #: (at most k stages at once, each at least its time alone) and ``byte`` (a
    #: dimension sends at most B bytes per ns).
    bound_fields: ClassVar[tuple[str, ...]] = ("load",)

    tie_base: list[int]

    def __init__(self, costs: Costs, ndims: int, heap: list[HeapEntry], tie_dim: bool,
                 bandwidth_bytes_per_ns: Sequence[float] | None = None,
                 time_tol_ns: float = 0.0, busy: list[float] | None = None,
                 sent: list[float] | None = None) -> None:
        raise NotImplementedError

    @classmethod
    def at_slots(cls, active_chunks: int) -> str:
        """The law a run with ``active_chunks`` slots per dimension is under (a law that
        is :class:`Exclusive` with one slot says so, for the engine's fast path)."""
        return cls.name

    @classmethod
    def ends_ns(cls, starts_ns: Sequence[float], costs: Costs,
                bandwidth_bytes_per_ns: float) -> list[float]:
        """Each stage's end on one dimension, given every start (the checker's replay)."""
        raise NotImplementedError

    def inflight(self, t: float, costs: Costs, start: Sequence[float],
                 out: list[float]) -> None:
        """Take from ``out`` (per dimension) the bytes running stages have sent by ``t``."""
        raise NotImplementedError


_LAWS: dict[str, type[ResourceLaw]] = {}
_L = TypeVar("_L", bound=type[ResourceLaw])


def register_resource_law(name: str) -> Callable[[_L], _L]:
    """Register a :class:`ResourceLaw` subclass under ``name`` (a timing model's
    ``resource_law`` names it)."""
    def deco(cls: _L) -> _L:
        cls.name = str(name)
        _LAWS[str(name)] = cls
        return cls
    return deco


def resource_law(name: str) -> type[ResourceLaw]:
    """The law registered as ``name``."""
    try:
        return _LAWS[name]
    except KeyError:
        raise ValueError(f"unknown resource law {name!r}; known: "
                         f"{', '.join(_LAWS)}") from None


def resource_law_names() -> list[str]:
    """The registered laws, bundled first."""
    return list(_LAWS)


def law_at(name: str, active_chunks: int) -> str:
    """The law a dimension of ``active_chunks`` slots runs under a timing whose law is
    ``name`` (``shared`` with one slot is ``exclusive``)."""
    return resource_law(name).at_slots(active_chunks)


@register_resource_law(ResourceLawName.EXCLUSIVE)
class Exclusive(ResourceLaw):
    """Stages run alone: a stage started at t ends at t + its duration.

    The event loop pushes these ends itself, with tie keys ``tie_base[d] +``
    the start order and code = the stage id. ``running`` holds each
    dimension's running stages when the loop keeps loads.
    """

    exact_durations = True
    bound_fields = ("load",)

    def __init__(self, costs: Costs, ndims: int, heap: list[HeapEntry], tie_dim: bool,
                 bandwidth_bytes_per_ns: Sequence[float] | None = None,
                 time_tol_ns: float = 0.0, busy: list[float] | None = None,
                 sent: list[float] | None = None) -> None:
        self.tie_base = tie_base(ndims, tie_dim)
        self.running: list[set[int]] = [set() for _ in range(ndims)]

    @classmethod
    def ends_ns(cls, starts_ns: Sequence[float], costs: Costs,
                bandwidth_bytes_per_ns: float) -> list[float]:
        """Start plus duration."""
        return [t + d for t, d in zip(starts_ns, costs.duration_ns, strict=True)]

    def inflight(self, t: float, table: Costs, start: Sequence[float],
                 out: list[float]) -> None:
        """Take from ``out`` the part of each running stage's bytes sent by ``t``
        (its share of its time elapsed)."""
        for d, run in enumerate(self.running):
            for sid in run:
                dur = table.duration_ns[sid]
                if dur > 0:
                    out[d] -= table.sent_bytes[sid] * min(1.0, (t - start[sid]) / dur)


class EventLaw(ResourceLaw):
    """A law whose stage ends the law itself plans on the loop's heap: the loop calls
    :meth:`begin` for each stage it starts on a dimension, :meth:`after_dispatch` once
    it started what it could there, :meth:`complete` on each of the law's events
    (``None`` for a stale one, else the dimension and the stages that end) and
    :meth:`after_event` after serving the dimensions. :meth:`ends_ns` replays the
    same calls for the checker."""

    def begin(self, sid: int, d: int, t: float) -> None:
        """Stage ``sid`` starts on ``d`` at ``t``."""
        raise NotImplementedError

    def after_dispatch(self, d: int) -> None:
        """The loop started what it could on ``d`` at this time."""
        raise NotImplementedError

    def complete(self, t: float, code: int) -> tuple[int, list[int]] | None:
        """The dimension and the stages (ascending) that end at ``t`` with the event
        ``code``, or ``None`` for a stale event."""
        raise NotImplementedError

    def after_event(self, d: int) -> None:
        """The loop processed an event of ``d``."""
        raise NotImplementedError

    @classmethod
    def ends_ns(cls, starts_ns: Sequence[float], costs: Costs,
                bandwidth_bytes_per_ns: float) -> list[float]:
        """Run the stages on one dimension from the given starts, as the loop would
        (ends of a time before starts of that time); ``nan`` for a stage that never
        ends (cannot happen with a law that ends every stage)."""
        heap: list[HeapEntry] = []
        law = cls(costs, 1, heap, False, [bandwidth_bytes_per_ns])
        order = sorted(range(len(starts_ns)), key=starts_ns.__getitem__)
        ends = [math.nan] * len(starts_ns)
        i = 0
        while i < len(order) or heap:
            nxt = starts_ns[order[i]] if i < len(order) else math.inf
            if heap and heap[0][0] <= nxt:
                t, _, _, code = heapq.heappop(heap)
                got = law.complete(t, code)
                if got is not None:
                    for sid in got[1]:
                        ends[sid] = t
                    law.after_event(0)
                continue
            while i < len(order) and starts_ns[order[i]] == nxt:
                law.begin(order[i], 0, nxt)
                i += 1
            law.after_dispatch(0)
        return ends


@register_resource_law(ResourceLawName.SHARED)
class Shared(EventLaw):
    """Bandwidth shared equally among a dimension's sending stages.

    A running stage is ``[fixed_end_ns, remaining_bytes]``; between events the
    set of sending stages is constant, so the bytes fall linearly. A stage is
    sending at ``t`` once ``fixed_end <= t + time_tol_ns``; it is done when
    also its remaining bytes are at most :data:`SHARED_TOL` of its total (or
    would take less time at its share than ``t`` can resolve: ``t + rest <= t``,
    late in a long run).
    Codes are ``version * ndims + d``. With ``busy`` and ``sent`` (per-dimension
    loads), the time each dimension has a stage running is added to ``busy``,
    and each stage's bytes to ``sent`` when it starts.
    """

    TOL = SHARED_TOL
    exact_durations = False
    bound_fields = ("load", "byte")

    def __init__(self, costs: Costs, ndims: int, heap: list[HeapEntry], tie_dim: bool,
                 bandwidth_bytes_per_ns: Sequence[float] | None = None,
                 time_tol_ns: float = 0.0, busy: list[float] | None = None,
                 sent: list[float] | None = None) -> None:
        if bandwidth_bytes_per_ns is None:
            raise ValueError("the shared resource law needs each dimension's bandwidth")
        table = costs
        self._fixed = table.fixed_ns
        self._sent = table.sent_bytes
        self._heap = heap
        self._nd = ndims
        self._bw = list(bandwidth_bytes_per_ns)
        self._tol_ns = time_tol_ns
        self._busy = busy
        self._sent_d = sent
        self.tie_base = tie_base(ndims, tie_dim)
        self._seq = 0
        self.running: list[dict[int, list[float]]] = [{} for _ in range(ndims)]
        self._last_t = [0.0] * ndims
        self._version = [0] * ndims
        self._dirty = [False] * ndims

    @classmethod
    def at_slots(cls, active_chunks: int) -> str:
        """One stage at a time has the whole bandwidth: :class:`Exclusive`."""
        return cls.name if active_chunks > 1 else ResourceLawName.EXCLUSIVE.value

    def _advance(self, d: int, t: float) -> None:
        run = self.running[d]
        last = self._last_t[d]
        if run and t > last:
            if self._busy is not None:
                self._busy[d] += t - last
            lim = last + self._tol_ns
            sending = [v for v in run.values() if v[0] <= lim]
            if sending:
                per = (t - last) * self._bw[d] / len(sending)
                for v in sending:
                    v[1] -= per
        self._last_t[d] = t

    def _reschedule(self, d: int) -> None:
        self._version[d] += 1
        run = self.running[d]
        if not run:
            return
        lim = self._last_t[d] + self._tol_ns
        sending = [v for v in run.values() if v[0] <= lim]
        nxt = min((v[0] for v in run.values() if v[0] > lim), default=float("inf"))
        if sending:
            now, n, bw = self._last_t[d], len(sending), self._bw[d]
            at = now + max(min(v[1] for v in sending), 0.0) * n / bw
            if at <= now:
                self._unstick(d, n)
            nxt = min(nxt, at)
        self._seq += 1
        heapq.heappush(self._heap, (nxt, nxt, self.tie_base[d] + self._seq,
                                    self._version[d] * self._nd + d))

    def _unstick(self, d: int, n: int) -> None:
        """Sending stages whose rest would take less time than the dimension's clock
        can add to it (late in a long run) have sent it: otherwise such a stage is
        re-planned at the same time for ever. (Nothing else changes: a stage whose
        bytes are sent to the tolerance keeps its count.)"""
        now, bw, lim, tol = self._last_t[d], self._bw[d], self._last_t[d] + self._tol_ns, self.TOL
        for sid, v in self.running[d].items():
            if v[0] <= lim and v[1] > tol * max(self._sent[sid], 1.0) \
                    and now + v[1] * n / bw <= now:
                v[1] = 0.0

    def begin(self, sid: int, d: int, t: float) -> None:
        """Stage ``sid`` starts on ``d`` at ``t``."""
        if not self._dirty[d]:
            self._advance(d, t)
            self._dirty[d] = True
        self.running[d][sid] = [t + self._fixed[sid], self._sent[sid]]
        if self._sent_d is not None:
            self._sent_d[d] += self._sent[sid]

    def after_dispatch(self, d: int) -> None:
        """Reschedule ``d``'s event if stages started on it."""
        if self._dirty[d]:
            self._dirty[d] = False
            self._reschedule(d)

    def complete(self, t: float, code: int) -> tuple[int, list[int]] | None:
        """The dimension and the stages (ascending) that end at ``t``, or ``None``
        for a stale event."""
        d = code % self._nd
        if code // self._nd != self._version[d]:
            return None
        self._advance(d, t)
        run = self.running[d]
        sent, tol = self._sent, self.TOL
        lim = t + self._tol_ns
        done = sorted(sid for sid, v in run.items()
                      if v[0] <= lim and v[1] <= tol * max(sent[sid], 1.0))
        for sid in done:
            del run[sid]
        return d, done

    def after_event(self, d: int) -> None:
        """Reschedule the dimension whose event was processed."""
        self._reschedule(d)

    def inflight(self, t: float, table: Costs, start: Sequence[float],
                 out: list[float]) -> None:
        """Take from ``out`` the bytes each running stage has sent (as of its
        dimension's last event)."""
        for d, run in enumerate(self.running):
            for sid, v in run.items():
                out[d] -= self._sent[sid] - max(v[1], 0.0)
