"""One entry point for a collective run as a system file and a timing say: the timing's
registered runner (its :class:`~themis.timing.base.Meaning` ``runner``) decides.

- ``astra-2``: :func:`themis.astra2_run.simulate_astra2` (2.x's chunks, plan shape, defaults);
- ``astra-1.0``: :func:`themis.astra_run.simulate_astra`, ASTRA-sim 1.0's own variants of
  baseline, Themis and round-robin, any other policy's routes on its timing;
- none (alpha-beta, or a user's timing): :func:`themis.simulator.simulate` with the file's
  algorithms for the collective and its endpoint delay (0 when it has none).

Every collective run under a system file goes through here: ``themis simulate``,
:meth:`themis.instance.Instance.simulate`, ``design`` and Chakra traces. The system file
carries the run's values (endpoint delay, active chunks, algorithms); a command's flags
are applied to it before the call.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.timing.base import timing_meaning
from topologies.network import Network
from topologies.system import SystemConfig

if TYPE_CHECKING:  # pragma: no cover
    from themis.policies.base import InterPolicy
    from themis.simulator import SimResult

__all__ = ["run_system"]


def run_system(network: Network, system: SystemConfig | None, collective: Collective,
               timing: str, policy: str | InterPolicy, intra: str | None = "fifo",
               network_file: str = "") -> SimResult:
    """``collective`` on ``network`` under ``timing`` with ``system``'s values, routed by
    ``policy`` with discipline ``intra`` (``None``: a planning policy's choice).

    ``system``'s endpoint delay and active chunks apply (``None``: the timing's
    default, 10 ns under ASTRA-sim 2.x and 0 elsewhere; one active chunk);
    ``network_file`` names the network in ASTRA-sim 2.x's refusals.
    """
    system = system or SystemConfig()
    runner = timing_meaning(timing).runner
    if runner == "astra-2":
        from themis.astra2_run import simulate_astra2

        return simulate_astra2(network, system, collective, policy=policy, intra=intra,
                               network_file=network_file)
    if runner == "astra-1.0":
        from themis.astra_run import simulate_astra
        from themis.policies import make_policy
        from themis.runkind import RunKind

        pol = make_policy(policy) if isinstance(policy, str) else policy
        own = RunKind.of(timing).own(pol.name)
        cfg = dataclasses.replace(system, chunks=collective.chunks, intra=intra or "fifo",
                                  inter=pol.name if own else system.inter)
        return simulate_astra(network, cfg, collective, policy=None if own else pol)
    from themis.simulator import simulate

    return simulate(network, collective, policy=policy, intra=intra, timing=timing,
                    algorithms=system.algorithms_for(collective.kind),
                    endpoint_delay_ns=system.endpoint_delay_ns or 0.0,
                    active_chunks=system.active_chunks or 1)
