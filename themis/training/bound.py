"""The iteration lower bound (issue 11 item 3); see :func:`iteration_bound`."""

from __future__ import annotations


def iteration_bound(workload, network, b, config, timings) -> float | None:
    """Not computed yet."""
    return None
