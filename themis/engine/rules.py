"""The engine's rules: where its two kinds of caller order the same events differently.

The engine has one event loop and one way of serving a dimension; a few
orders that a model has to fix are the caller's choice, because the
simulator of collectives (:mod:`themis.simulator`) and the training
simulator (:mod:`themis.training`, ASTRA-sim 1.0's event order, workloads.md
§4) fixed them differently and their numbers must stay what they are:

* ``tie_dim``: stage ends (and bandwidth-sharing events) of the same time and
  scheduling time are processed by dimension, then by start order (ASTRA's
  boost mode, the simulator's ``tie_order="dim"``), else by start order;
* ``serve``: which dimensions are served after an event ended stages, in what
  order (:class:`ServeOrder`);
* ``final_message_ties``: a stage end counts as scheduled when its final
  message was (its end minus the timing model's ``last_message_ns``), so among
  ends of one time the one whose final message was scheduled first goes first
  (ASTRA-sim 1.0's same-tick rule; a timing model without ``last_message_ns``
  gives 0 and keeps the tie order);
* ``final_event_ties``: with ``final_message_ties``, a stage end counts as scheduled
  when its *last internal event* was (its end minus the timing model's
  ``last_event_ns``) rather than its final message: ASTRA-sim 1.0 with boost mode 0,
  where every NPU runs every stage and the stage ends of a tick are released from one
  NPU's event list, which holds them in the order they were registered;
* ``npu_lists``: the stage ends of a tick are ended in the order ASTRA-sim 1.0's per-NPU
  event lists release them, and the workload's events run in those lists' order
  (:mod:`themis.engine.npu_lists`; boost mode 1, where only the NPUs on each dimension's
  line through NPU 0 run its stages; the caller sets :attr:`EventLoop.npu_lists
  <themis.engine.loop.EventLoop.npu_lists>`, :class:`~themis.engine.Engine` does under an
  exclusive resource law);
* ``time_tol_ns``: under bandwidth sharing, a stage has left its fixed
  (latency) part at ``t`` when ``fixed end <= t + time_tol_ns``;
* ``loads``: keep per-dimension busy time, bytes sent and bytes still to send
  (what an online planner reads; :meth:`EventLoop.inflight_sent
  <themis.engine.loop.EventLoop.inflight_sent>`). It changes no time.

:meth:`Rules.simulator` and :meth:`Rules.astra` are the two sets in use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

#: A stage has sent its bytes when its remaining bytes are below this fraction of its
#: total (bandwidth sharing); also the training engine's time tolerance (ns).
SHARED_TOL = 1e-9


class ServeOrder(StrEnum):
    """The dimensions served after an event ended stages (each is served while it
    has a free slot and its discipline offers a stage)."""

    #: The successors' dimensions (in the order of the stages that ended), then the
    #: stage's own dimension.
    NEXT_FIRST = "next-first"
    #: The own dimension, then the successors' (ASTRA-sim 1.0: the chunk is inserted
    #: into its next queue, the old dimension is served, then the new one).
    OWN_FIRST = "own-first"
    #: The own and the successors' dimensions, ascending.
    ASCENDING = "ascending"


@dataclass(frozen=True)
class Rules:
    """The orders the engine leaves to its caller (see the module docstring)."""

    tie_dim: bool = False
    serve: ServeOrder = ServeOrder.NEXT_FIRST
    final_message_ties: bool = False
    final_event_ties: bool = False
    time_tol_ns: float = 0.0
    loads: bool = False
    npu_lists: bool = False

    @classmethod
    def simulator(cls, tie_dim: bool, exact_durations: bool = True) -> Rules:
        """The simulator's rules (:func:`themis.simulator.run`): stages alone (a resource
        law of exact durations) serve the successor's dimension first; under a law whose
        ends the law plans (bandwidth sharing) the touched dimensions are served
        ascending; exact time comparisons; no final-message ties, no loads."""
        return cls(tie_dim=tie_dim,
                   serve=ServeOrder.NEXT_FIRST if exact_durations else ServeOrder.ASCENDING)

    @classmethod
    def astra(cls, tie_dim: bool) -> Rules:
        """ASTRA-sim 1.0's event order (the training simulator, workloads.md §4): own
        dimension first, final-message ties (final-event ties without boost mode, i.e.
        ``tie_dim`` off; with it the per-NPU lists, ``npu_lists``), a time tolerance of
        :data:`SHARED_TOL` ns, loads kept."""
        return cls(tie_dim=tie_dim, serve=ServeOrder.OWN_FIRST, final_message_ties=True,
                   final_event_ties=not tie_dim, time_tol_ns=SHARED_TOL, loads=True,
                   npu_lists=tie_dim)


def tie_readers(timing: Any, rules: Rules
                ) -> tuple[Callable[..., float] | None, Callable[..., Any] | None]:
    """The timing model's per-stage readers ``rules`` need, each called ``(phase, dim,
    input_bytes)``: how long before a stage's end its tie key counts from (with
    ``final_message_ties``: ``last_event_ns`` under ``final_event_ties``, else
    ``last_message_ns``; ``None`` for a model without it) and, with ``npu_lists``, its
    message steps (``npu_steps``; a model without it is a :class:`TypeError`). The
    training engine and the collective simulator both read them here."""
    last_of = None
    if rules.final_message_ties:
        last_of = getattr(timing, "last_event_ns" if rules.final_event_ties
                          else "last_message_ns", None)
    steps_of = None
    if rules.npu_lists:
        steps_of = getattr(timing, "npu_steps", None)
        if steps_of is None:
            raise TypeError(f"timing {timing.name!r} has no npu_steps (Rules.npu_lists)")
    return last_of, steps_of
