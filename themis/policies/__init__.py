"""Inter-dimension policies, picked by name. A new policy is one module here.

Each module is imported below, by name and in a chosen order, so its
``@register_policy`` runs on ``import themis.policies``; that order is the
order of :func:`policy_names` (``baseline``, ``fixed``, ``themis``, ``guarded``,
``lb-mix``, ``portfolio``, ``round-robin``), which the solvers' default hints
follow. A new policy adds its import here (at the end, so that existing results
keep their order).
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
from themis.policies.portfolio import Portfolio
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
    "Portfolio",
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
