"""The one event engine of every simulation (model.md §5).

* :mod:`themis.engine.loop` - :class:`EventLoop`, the event loop: collectives
  issued at their times (before the run, or by its events while it runs),
  per-dimension disciplines, stage ends;
* :mod:`themis.engine.resources` - the resource laws, plug-ins registered by name
  that a timing model names: :class:`Exclusive` (stages alone) and :class:`Shared`
  (bandwidth shared among sending stages); the checker and the bounds read the same
  law (:func:`resource_law`, :func:`law_at`);
* :mod:`themis.engine.rules` - :class:`Rules`, the orders a caller chooses
  (the simulator's, or ASTRA-sim 1.0's event order of the training simulator);
* :mod:`themis.engine.online` - :class:`Engine`, the loop on a growing table of
  collectives issued with priorities and costed by their kind's timing model.

:mod:`themis.simulator` issues its collectives into an :class:`EventLoop`;
:mod:`themis.training` drives an :class:`Engine`.
"""

from themis.engine.loop import EventLoop
from themis.engine.online import Engine
from themis.engine.resources import (
    EventLaw,
    Exclusive,
    ResourceLaw,
    ResourceLawName,
    Shared,
    law_at,
    register_resource_law,
    resource_law,
    resource_law_names,
)
from themis.engine.rules import Rules, ServeOrder

__all__ = ["Engine", "EventLaw", "EventLoop", "Exclusive", "ResourceLaw", "ResourceLawName",
           "Rules", "ServeOrder", "Shared", "law_at", "register_resource_law", "resource_law",
           "resource_law_names"]
