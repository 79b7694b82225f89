"""The one event engine of every simulation (model.md §5).

* :mod:`themis.engine.loop` - :class:`EventLoop`, the event loop: collectives
  issued at their times (before the run, or by its events while it runs),
  per-dimension disciplines, stage ends;
* :mod:`themis.engine.resources` - the resource models :class:`Exclusive`
  (stages alone) and :class:`Shared` (bandwidth shared among sending stages);
* :mod:`themis.engine.rules` - :class:`Rules`, the orders a caller chooses
  (the simulator's, or ASTRA-sim 1.0's event order of the training simulator);
* :mod:`themis.engine.online` - :class:`Engine`, the loop on a growing table of
  collectives issued with priorities and costed by their kind's timing model.

:mod:`themis.simulator` issues its collectives into an :class:`EventLoop`;
:mod:`themis.training` drives an :class:`Engine`.
"""

from themis.engine.loop import EventLoop
from themis.engine.online import Engine
from themis.engine.resources import Exclusive, Shared
from themis.engine.rules import Rules, ServeOrder

__all__ = ["Engine", "EventLoop", "Exclusive", "Rules", "ServeOrder", "Shared",
]
