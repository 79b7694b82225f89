"""The training-only policy names: routers that see the run, and whole-iteration planners.

Two registries, one name space (``TrainingConfig.policy``, ``themis train
--policy``), beside the per-collective policies of :mod:`themis.policies`:

* a **router** (:func:`register_router`) routes each collective when it is
  issued, seeing the running :class:`~themis.engine.Engine` (what is in flight
  on every dimension): ``themis-running`` (:mod:`themis.training.running`),
  ``online-mix`` (:mod:`themis.training.online_mix`). It is made once per run,
  ``factory(network, engine, astra, local_bw_aware, shape)``, and answers
  :meth:`Router.choose`;
* an **iteration planner** (:func:`register_iteration_planner`) runs whole
  iterations and returns the best: ``auto`` (:mod:`themis.planning`, a layer
  above the training simulator, imported when this registry first needs it).
  :func:`~themis.training.simulate_training` hands a run whose policy is a
  planner's name to it.

Modules register on import. Both packages are imported on first need
(:mod:`themis.plugins`): every function here that looks a name up or lists names
imports them first. The lists follow :data:`BUNDLED_ROUTERS` and
:data:`BUNDLED_PLANNERS`, then other names in registration order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from themis.plans import Plan, PlanShape, Route
from themis.plugins import load_plugins
from topologies.network import Network

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.engine import Engine
    from themis.runkind import RunKind



class Router(Protocol):
    """Routes one collective at its issue, seeing the run so far."""

    def choose(self, kind: str, mask: tuple[bool, ...], sizes: Sequence[int],
               now: float) -> tuple[list[Route], list[Plan] | None]:
        """One route per chunk (``sizes``: the chunks' bytes, an all-gather's per-NPU
        input) and their stage plans, or ``None`` for the run's plan shape."""
        ...


RouterFactory = Callable[[Network, "Engine", "RunKind", PlanShape], Router]
_ROUTERS: dict[str, RouterFactory] = {}
#: ``planner(workload, network, config, bound, progress) -> TrainingResult``.
IterationPlanner = Callable[..., Any]
_PLANNERS: dict[str, IterationPlanner] = {}


def register_router(name: str) -> Callable[[RouterFactory], RouterFactory]:
    """Register a router factory ``(network, engine, astra, local_bw_aware, shape)``."""

    def deco(factory: RouterFactory) -> RouterFactory:
        load_plugins("router", name, named_only=True)  # a bundled one first, then this
        _ROUTERS[name] = factory
        return factory

    return deco


def register_iteration_planner(name: str) -> Callable[[IterationPlanner], IterationPlanner]:
    """Register a whole-iteration planner under ``name``."""

    def deco(planner: IterationPlanner) -> IterationPlanner:
        load_plugins("planner", name, named_only=True)  # a bundled one first, then this
        _PLANNERS[name] = planner
        return planner

    return deco


#: The bundled routers and planners in the order every list of them follows, whichever
#: module is imported first; other registered names follow in registration order.
BUNDLED_ROUTERS: tuple[str, ...] = ("themis-running", "online-mix")
BUNDLED_PLANNERS: tuple[str, ...] = ("global-mix", "global-online", "auto")


def _ordered(names: Sequence[str], bundled: Sequence[str]) -> list[str]:
    rank = {name: i for i, name in enumerate(bundled)}
    return sorted(names, key=lambda n: rank.get(n, len(rank)))


def router_names() -> list[str]:
    """Registered routers: :data:`BUNDLED_ROUTERS`, then others in registration order
    (plug-ins imported first)."""
    load_plugins("router")
    return _ordered(list(_ROUTERS), BUNDLED_ROUTERS)


def iteration_planner_names() -> list[str]:
    """Registered whole-iteration planners: :data:`BUNDLED_PLANNERS`, then others in
    registration order (plug-ins imported first)."""
    load_plugins("planner")
    return _ordered(list(_PLANNERS), BUNDLED_PLANNERS)


def training_policy_names() -> list[str]:
    """Every training-only policy name: routers, then iteration planners."""
    return router_names() + iteration_planner_names()


def training_key(name: object) -> str | None:
    """The registered training-only name ``name`` spells (case and spaces ignored),
    else ``None`` (a per-collective policy or a route)."""
    key = str(name).strip().lower()
    if key not in _ROUTERS and key not in _PLANNERS:
        load_plugins("router", key)  # a plug-in not imported yet may register it
        load_plugins("planner", key)
    return key if key in _ROUTERS or key in _PLANNERS else None


def make_router(name: str, network: Network, engine: Engine, kind: RunKind,
                shape: PlanShape) -> Router:
    """A new router ``name`` for one run of kind ``kind`` (its plan shape ``shape``)."""
    if name not in _ROUTERS:
        load_plugins("router", name)
    return _ROUTERS[name](network, engine, kind, shape)


def iteration_planner(name: object) -> IterationPlanner | None:
    """The planner registered as ``name``, or ``None``."""
    key = training_key(name)
    return _PLANNERS.get(key) if key is not None else None


__all__ = ["BUNDLED_PLANNERS", "BUNDLED_ROUTERS", "IterationPlanner", "Route", "Router",
           "iteration_planner",
           "iteration_planner_names", "make_router", "register_iteration_planner",
           "register_router", "router_names", "training_key", "training_policy_names"]
