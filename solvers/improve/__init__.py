"""Offline improvement of one instance's schedule: local search, then warm-started CP-SAT.

:func:`improve` starts from the ``portfolio`` policy's best plan (every
candidate under every discipline), then

1. local search over the chunks' routes with the simulator as the evaluator
   (:func:`themis.planning.local_search.local_search`; one chunk's route
   changed, two chunks' routes swapped, perturbations), under the winning
   discipline;
2. local search over the per-dimension stage orders of the best schedule
   (adjacent stages of one dimension swapped, each trial replayed semi-actively);
3. optionally CP-SAT, warm-started from the best schedule
   (:func:`solvers.solve` with ``hint=``), on a deterministic budget.

Before 1, with ``chain_dtime_s`` > 0, the **doubling chain**
(:mod:`solvers.doubling`): CP-SAT solves the instance at the largest chunk
count C0 = C / 2^j <= ``chain_chunks`` (itself hinted up its own chain,
C0/8, C0/4, C0/2), and that schedule split into C / C0 pieces per chunk is a
candidate start; at latency 0 a proven C0 optimum split is no longer than it,
often within 0.2% of LB3 at C = 64-256. ``meta["chain"]`` says what it found.

Budgets that reproduce on any machine: ``evaluations`` (simulator runs for 1
and 2) and ``cpsat_dtime_s`` (CP-SAT's deterministic time, one worker). A
wall-clock ``time_limit_s`` may cap everything too (for interactive use; a
result that depends on it says so in ``meta["stopped_by"]``).

**Never worse with more evaluations.** Steps 1 and 2 run in rounds of
``ROUND_EVALUATIONS`` x 2^k evaluations (k = 0, 1, ...): round 0 is the search
above (each discipline, then the best one, then the orders), round k >= 1 a
route search from the best routes (seed ``seed + 1000 k``) and an order search
from the best schedule. Every sub-budget is a fixed share of its round's size,
never of ``evaluations``, which only cuts the last round short; the local
searches are anytime (their moves do not depend on their budget), so a larger
budget makes the same evaluations first and the answer, the best so far, is
never worse (``meta["rounds"]``). Up to ``ROUND_EVALUATIONS`` (the default
budget) this is the single search it always was. ``seeds`` > 1 runs steps 1-2
with seeds ``seed`` ... ``seed + seeds - 1``, each with the whole budget, and
keeps the best (the first among equals; ``meta["seeds"]``, ``meta["seed"]``).
CP-SAT (step 3) only ever replaces that answer by a shorter one; its own
result is not monotone in its deterministic time (a different budget splits
differently between its phases).

The result is a :class:`solvers.Result`: never worse than the start, the
schedule checked by :func:`themis.checker.check`, status ``optimal`` only when
CP-SAT proved it or the makespan meets a lower bound (LB0-LB3 or the solver's),
else ``feasible``.

The package: :mod:`.local` (the local search), :mod:`.chain` (the doubling chain and
CP-SAT warm starts), :mod:`.run` (``improve`` and its parameters).
"""

from __future__ import annotations

from solvers.improve.chain import CHAIN_CHUNKS, chain_base
from solvers.improve.local import ROUND_EVALUATIONS, ROUTE_SHARE
from solvers.improve.run import DEFAULT_EVALUATIONS, PARAM_KEYS, TARGET_GAP, check_params, improve

__all__ = ["CHAIN_CHUNKS", "DEFAULT_EVALUATIONS", "PARAM_KEYS", "ROUND_EVALUATIONS",
           "ROUTE_SHARE", "TARGET_GAP", "chain_base", "check_params", "improve"]
