"""Running ASTRA-sim 1.0 system files.

:func:`simulate_astra` maps a :class:`~topologies.system.SystemConfig` to the
right :func:`~themis.simulator.simulate` call: the ``astra-sim-1.0`` timing
(:mod:`themis.timing.astra10`), the policies of :mod:`themis.policies` with
``astra=True`` (ASTRA-sim 1.0's variants) and the plan shape ASTRA builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.plans import PlanShape, stage_plan
from themis.policies.base import PLAIN_RUN, InterPolicy, make_policy
from themis.runkind import RunKind
from themis.timing.astra10 import NAME
from topologies.errors import InputError
from topologies.network import Network
from topologies.system import INTER_ALIASES, INTRA_ALIASES, SystemConfig

if TYPE_CHECKING:  # pragma: no cover
    from themis.simulator import SimResult


# -- running a system file ----------------------------------------------------------
#: Endpoint delay when a system file leaves it out: ASTRA-sim 1.0's own default
#: (``Sys::Sys`` sets ``communication_delay = 10``; see ``topologies.system.ASTRA_DEFAULTS``).
DEFAULT_ENDPOINT_DELAY_NS = 10.0


def astra_shape(inter: str, local_bw_aware: bool) -> PlanShape:
    """The all-reduce plan shape ASTRA-sim 1.0 builds for policy ``inter``
    (:meth:`themis.runkind.RunKind.shape`, the one rule)."""
    return RunKind.of(NAME, local_bw_aware=local_bw_aware).shape(inter)


def simulate_astra(
    network: Network,
    system: SystemConfig,
    collective: Collective,
    policy: InterPolicy | None = None,
) -> SimResult:
    """Simulate ``collective`` as ASTRA-sim 1.0 runs it with ``system``.

    ``system`` is a :class:`~topologies.system.SystemConfig`; fields left
    ``None`` become: endpoint delay :data:`DEFAULT_ENDPOINT_DELAY_NS`, 1 active
    chunk, ``baseline`` / ``FIFO``, no localBWAware, boost-mode 0, each
    dimension's default algorithm. The chunk count is the collective's own
    (``system.chunks`` is the caller's business). What is run:

    * timing ``astra-sim-1.0`` with ``system``'s algorithms for the collective kind;
    * routes from ``baseline``, ``themis`` or ``round-robin`` with ``astra=True``,
      stage plans of the :class:`~themis.plans.PlanShape` ASTRA builds
      (localBWAware per ``collective-optimization``);
    * intra ``FIFO`` -> ``fifo``, ``SCF`` -> ``astra-scf`` (all-reduce stages by arrival);
    * tie order ``dim`` for ``boost-mode: 1``, ``start`` otherwise.

    ``policy`` (e.g. a :class:`~themis.policies.FixedRoute`) overrides
    ``system.inter``: its routes are used as they are, with the plans of a
    non-Themis policy (localBWAware: one AR stage on the route's last dimension).

    Returns a :class:`~themis.simulator.SimResult`; its times are whole ns,
    ASTRA-sim 1.0's printed "all passes finished" time minus the workload's
    1 ns update. Raises :class:`~topologies.errors.InputError` for a policy or
    discipline ASTRA-sim 1.0 does not have, or a network the timing rejects.
    """
    # late import: the simulator imports the timing registry
    from themis.simulator import policy_choice, simulate

    kind = collective.kind
    raw_inter = (system.inter or "baseline").strip().lower()
    raw_intra = (system.intra or "fifo").strip().lower()
    inter = INTER_ALIASES.get(raw_inter, raw_inter)
    intra = INTRA_ALIASES.get(raw_intra, raw_intra)
    if policy is not None:
        inter = "given"
    elif inter in ("themis", "round-robin", "baseline"):
        policy = make_policy(inter, astra=True)
    else:
        raise InputError("the astra-sim-1.0 timing runs baseline, themis or round-robin",
                         "inter-dimension-scheduling", system.inter)
    assert policy is not None
    if intra not in ("fifo", "scf"):
        raise InputError("the astra-sim-1.0 timing runs FIFO or SCF",
                         "intra-dimension-scheduling", system.intra)
    endpoint = (system.endpoint_delay_ns if system.endpoint_delay_ns is not None
                else DEFAULT_ENDPOINT_DELAY_NS)
    run = RunKind.of(NAME, local_bw_aware=bool(system.local_bw_aware),
                     boost_mode=bool(system.boost_mode), endpoint_delay_ns=endpoint)
    shape = run.shape(policy.name)
    # A planning policy (guarded, lb-mix, portfolio) scores its routes as this run
    # applies them: this timing, plan shape, queue and tie order; and the portfolio
    # also scores what this run gives ASTRA-sim's baseline and Themis, so it is
    # never slower than either.
    timing = run.make_timing(network, system.algorithms_for(kind))
    # ASTRA-sim's chunking (each input in chunks of floor(S / splits) while bytes remain):
    # the policies route, and the simulator runs, the chunks ASTRA-sim runs.
    collective = timing.chunked(collective)  # type: ignore[attr-defined]
    run_model = PLAIN_RUN
    if hasattr(policy, "plan"):
        run_model = run.run_model(collective, network, policy.name)
    choice = policy_choice(policy, collective, network, timing, (intra,),
                           system.active_chunks or 1, run_model)
    routes = choice.routes
    shape = choice.shape or shape
    plans = [stage_plan(kind, r, shape=shape) for r in routes]
    res = simulate(
        network,
        collective,
        intra=run.queue(intra),
        timing=NAME,
        algorithms=system.algorithms_for(kind),
        endpoint_delay_ns=endpoint,
        active_chunks=system.active_chunks or 1,
        local_bw_aware=shape is PlanShape.LOCAL_BW_AWARE and kind == "all-reduce",
        tie_order=run.tie_order,
        plans=[plans],
    )
    res.schedule.meta["policy"] = policy.name
    if choice.label and choice.label != policy.name:
        res.schedule.meta["policy_choice"] = choice.label
    res.routes = [list(routes)]
    return res
