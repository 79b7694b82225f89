"""``auto``: the best of a few whole training iterations, never slower than portfolio/scf.

A training-level portfolio. Per-collective planning (``portfolio``) balances
each collective on its own; the iteration can do better when a collective is
routed against the work its neighbours leave on each dimension (``online-mix``,
:mod:`themis.training.online_mix`), or when the whole iteration is routed at
once (``global-mix``, :mod:`themis.planning.global_mix`, or online with the
rest of the iteration forecast, ``global-online``), and when queues serve
first the stages that feed the other dimensions (``feed``). No rule wins
everywhere, so ``auto`` simulates every candidate of :data:`CANDIDATES` (policy
/ discipline, in that order) on the whole iteration and keeps the one that ends
first; ties go to the earlier candidate. ``portfolio/scf`` is the first
candidate, so ``auto`` is never slower than it, by construction.

The result is the winning run (its schedule, records and statistics); its
``config.policy`` is ``auto``, ``config.intra`` the winner's discipline,
``policy_choice`` the winner (``global-mix/feed``...) and ``candidates_ns``
every candidate's end. The iteration bound does not depend on the policy or
the discipline: it is computed once, with the first candidate. Deterministic
(every candidate is; no wall-clock limit).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from themis.training.config import TrainingConfig, TrainingResult
from themis.training.routing import register_iteration_planner
from themis.training.simulate import simulate_training
from topologies.network import Network
from topologies.workload import Workload

NAME = "auto"
#: The candidates (policy, discipline), in order: the first is the guarantee.
CANDIDATES: tuple[tuple[str, str], ...] = (
    ("portfolio", "scf"),
    ("portfolio", "feed"),
    ("online-mix", "feed"),
    ("global-mix", "feed"),
    ("global-online", "feed"),
    ("global-online", "scf"),
)


@register_iteration_planner(NAME)
def auto(workload: Workload, network: Network, config: TrainingConfig, bound: bool = True,
         progress: Callable[[int, int, int], None] | None = None) -> TrainingResult:
    """Simulate every candidate of :data:`CANDIDATES` under ``config`` (its timing, chunks,
    k, passes, scales; its policy and discipline are the candidates') and return the run
    that ends first (see the module docstring)."""
    t0 = time.perf_counter()
    best: TrainingResult | None = None
    ends: dict[str, float] = {}
    lower = None
    for i, (policy, intra) in enumerate(CANDIDATES):
        label = f"{policy}/{intra}"
        res = simulate_training(workload, network, config.with_(policy=policy, intra=intra),
                                bound=bound and i == 0, progress=progress)
        if i == 0:
            lower = res.lower_bound_ns
        ends[label] = res.end_ns
        if best is None or res.end_ns < best.end_ns:
            best = res
            best.policy_choice = label
    assert best is not None
    best.config = best.config.with_(policy=NAME)
    best.lower_bound_ns = lower
    best.candidates_ns = ends
    best.wall_s = time.perf_counter() - t0
    if best.schedule is not None:
        best.schedule.meta["policy"] = NAME
        best.schedule.meta["policy_choice"] = best.policy_choice
    return best
