"""Inter-dimension policies, picked by name. A new policy is one module here."""

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
from themis.policies.baseline import Baseline
from themis.policies.fixed import FixedRoute, parse_route
from themis.policies.greedy import Themis
from themis.policies.guarded import Guarded
from themis.policies.lb_mix import LbMix
from themis.policies.portfolio import Portfolio
from themis.policies.round_robin import RoundRobin

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

# Policy modules added later (one file each) register themselves on import.
import importlib as _importlib  # noqa: E402
import pkgutil as _pkgutil  # noqa: E402

for _mod in _pkgutil.iter_modules(__path__):
    if _mod.name not in ("base", "baseline", "fixed", "greedy", "round_robin"):
        _importlib.import_module(f"{__name__}.{_mod.name}")
