"""The planner layer: policies that simulate their candidates.

A planner is a client of the simulator (:mod:`themis.simulator`), never a part
of it: the simulator takes rules and plans only, and reaches a planner through
the policy registry (:func:`themis.policies.make_policy`), where the planners
register on ``import themis`` (the package imports this one last).

- :mod:`~themis.planning.evaluate` - a candidate's makespan as the run applies it;
- :mod:`~themis.planning.local_search` - local search over routes;
- :mod:`~themis.planning.portfolio` - the ``portfolio`` policy.
"""

from themis.planning.evaluate import run_makespan_ns
from themis.planning.local_search import SearchResult, evaluator, local_search
from themis.planning.portfolio import Portfolio, best_plan, clear_cache

__all__ = ["Portfolio", "SearchResult", "best_plan", "clear_cache", "evaluator", "local_search",
           "run_makespan_ns"]
