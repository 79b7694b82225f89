"""Inter-dimension policies, picked by name. A new policy is one module here.

Each module is imported by a loader below, by name, when a name it registers is
first looked up or the names are listed (:mod:`themis.plugins`), so its
``@register_policy`` runs before any use and a command imports only the
policies it names. Policies that simulate their candidates (``portfolio``) are
planners: they live in :mod:`themis.planning`, above the simulator, and register
when first needed too (their loader is queued by :mod:`themis`).
:func:`policy_names` lists the bundled policies in
:data:`~themis.policies.base.BUNDLED_ORDER` (``baseline``, ``fixed``, ``themis``,
``guarded``, ``lb-mix``, ``portfolio``, ``round-robin``), which the solvers' default
hints follow, then any other registered policy in registration order. A new policy
adds its loader here.
"""

from typing import TYPE_CHECKING, Any

from themis import plugins
from themis.policies.base import (
    InterPolicy,
    PlanningPolicy,
    PolicyChoice,
    Route,
    canonical_policy,
    choose,
    is_route,
    make_policy,
    policy_names,
    register_policy,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from themis.policies.baseline import Baseline
    from themis.policies.fixed import FixedRoute, parse_route
    from themis.policies.greedy import Themis
    from themis.policies.guarded import Guarded
    from themis.policies.lb_mix import LbMix
    from themis.policies.round_robin import RoundRobin


# The bundled policy modules, imported when a name they register is first looked up
# (themis.plugins); new modules go last.
def _baseline() -> None:
    import themis.policies.baseline  # noqa: F401


def _fixed() -> None:
    import themis.policies.fixed  # noqa: F401


def _greedy() -> None:
    import themis.policies.greedy  # noqa: F401


def _guarded() -> None:
    import themis.policies.guarded  # noqa: F401


def _lb_mix() -> None:
    import themis.policies.lb_mix  # noqa: F401


def _round_robin() -> None:
    import themis.policies.round_robin  # noqa: F401


for _loader, _name in ((_baseline, "baseline"), (_fixed, "fixed"), (_greedy, "themis"),
                       (_guarded, "guarded"), (_lb_mix, "lb-mix"),
                       (_round_robin, "round-robin")):
    plugins.add_loader(_loader, ("policy",), (_name,))


def __getattr__(name: str) -> Any:
    # The policy classes, imported on first use (start-up is part of every run's time).
    if name == "Baseline":
        from themis.policies.baseline import Baseline

        return Baseline
    if name in ("FixedRoute", "parse_route"):
        import themis.policies.fixed

        return getattr(themis.policies.fixed, name)
    if name == "Themis":
        from themis.policies.greedy import Themis

        return Themis
    if name == "Guarded":
        from themis.policies.guarded import Guarded

        return Guarded
    if name == "LbMix":
        from themis.policies.lb_mix import LbMix

        return LbMix
    if name == "RoundRobin":
        from themis.policies.round_robin import RoundRobin

        return RoundRobin
    raise AttributeError(f"module 'themis.policies' has no attribute {name!r}")


__all__ = [
    "Baseline",
    "FixedRoute",
    "Guarded",
    "InterPolicy",
    "LbMix",
    "PlanningPolicy",
    "PolicyChoice",
    "RoundRobin",
    "Route",
    "Themis",
    "canonical_policy",
    "choose",
    "is_route",
    "make_policy",
    "parse_route",
    "policy_names",
    "register_policy",
]
