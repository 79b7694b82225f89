"""The planner layer: policies that simulate their candidates.

A planner is a client of the simulator (:mod:`themis.simulator`), never a part
of it: the simulator takes rules and plans only, and reaches a planner through
the policy registry (:func:`themis.policies.make_policy`), where the planners
register when a registry first needs them (the loader :mod:`themis` queues with
:mod:`themis.plugins`).

- :mod:`~themis.planning.evaluate` - a candidate's makespan as the run applies it;
- :mod:`~themis.planning.local_search` - local search over routes;
- :mod:`~themis.planning.portfolio` - the ``portfolio`` policy;
- :mod:`~themis.planning.global_mix` - ``global-mix``, a training iteration routed at
  once by the window LP, and :mod:`~themis.planning.training_auto` - ``auto``, the best
  of a few whole iterations (both registered with :mod:`themis.training.routing`).
"""

from themis.planning.evaluate import run_makespan_ns
from themis.planning.local_search import SearchResult, evaluator, local_search
from themis.planning.portfolio import Portfolio, best_plan, clear_cache

# isort: off
# Whole-iteration planners (themis.training.routing), in registration order; new ones last.
from themis.planning import global_mix  # noqa: F401
from themis.planning import training_auto  # noqa: F401
# isort: on

__all__ = ["Portfolio", "SearchResult", "best_plan", "clear_cache", "evaluator", "local_search",
           "run_makespan_ns"]
