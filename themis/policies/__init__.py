"""Inter-dimension policies, picked by name. A new policy is one module here.

Each module is imported below, by name, so its ``@register_policy`` runs on
``import themis.policies``. Policies that simulate their candidates
(``portfolio``) are planners: they live in :mod:`themis.planning`, above the
simulator, and register on ``import themis``. :func:`policy_names` lists the
bundled policies in :data:`~themis.policies.base.BUNDLED_ORDER` (``baseline``,
``fixed``, ``themis``, ``guarded``, ``lb-mix``, ``portfolio``,
``round-robin``), which the solvers' default hints follow, then any other
registered policy in registration order. A new policy adds its import here.
"""

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

# isort: off
# The registration order; new modules go last.
from themis.policies.baseline import Baseline
from themis.policies.fixed import FixedRoute, parse_route
from themis.policies.greedy import Themis
from themis.policies.guarded import Guarded
from themis.policies.lb_mix import LbMix
from themis.policies.round_robin import RoundRobin
# isort: on

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
