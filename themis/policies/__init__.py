"""Inter-dimension policies, picked by name. A new policy is one module here."""

from themis.policies.base import InterPolicy, Route, make_policy, policy_names, register_policy
from themis.policies.baseline import Baseline
from themis.policies.fixed import FixedRoute, parse_route
from themis.policies.greedy import Themis
from themis.policies.round_robin import RoundRobin

__all__ = [
    "Baseline",
    "FixedRoute",
    "InterPolicy",
    "RoundRobin",
    "Route",
    "Themis",
    "make_policy",
    "parse_route",
    "policy_names",
    "register_policy",
]
