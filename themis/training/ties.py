"""When a stage's final message was scheduled (the same-tick order of workloads.md §4).

ASTRA-sim 1.0 processes stage completions that fall on the same tick in the
order their final message was scheduled, that is stage end minus that
message's time, then by dimension (boost mode) or start order. The final
message of a stage (timing.md's formulas, ``astra-sim-1.0`` timing) is:

* ring: the last of the n - 1 neighbour messages, N(D/n) (all-gather N(D));
* direct: the slowest of the parallel messages, N*(D/n) (all-gather N*(D),
  all-to-all N*(D/n)); all-reduce: the round-2 message that arrives last
  (:meth:`~themis.timing.astra10.AstraSim10Timing.direct_all_reduce`);
* halvingDoubling: reduce-scatter the last halving step N(D / 2^k, 2^(k-1)),
  all-gather the last doubling step N(2^(k-1) D, 1), all-reduce N(D / 2, 1).

This reads the per-dimension message model of
:class:`~themis.timing.astra10.AstraSim10Timing` (its ``_message`` and
``_direct``); other timing models have no message structure and get 0.
"""

from __future__ import annotations

from themis.timing.astra10 import AstraSim10Timing
from themis.timing.base import Timing


def last_message_ns(timing: Timing, phase: str, dim: int, m: float) -> float:
    """The duration of the final message of a ``phase`` stage of input ``m`` on ``dim``."""
    if not isinstance(timing, AstraSim10Timing):
        return 0.0
    dm = timing._dims[dim]  # noqa: SLF001 - the message model lives there
    n = dm.n
    if n <= 1:
        return 0.0
    d = int(m)
    part = d if phase == "AG" else d // n
    if dm.algorithm == "ring":
        return float(timing._message(dm, part, 1)[0])  # noqa: SLF001
    if dm.algorithm == "direct":
        if phase == "AR":
            return float(timing.direct_all_reduce(dm, part, 0)[1])
        return float(timing._direct(dm, part)[0])  # noqa: SLF001
    k = dm.k
    if phase == "RS":
        return float(timing._message(dm, d >> k, 1 << (k - 1))[0])  # noqa: SLF001
    if phase == "AG":
        return float(timing._message(dm, d << (k - 1), 1)[0])  # noqa: SLF001
    return float(timing._message(dm, d // 2, 1)[0])  # noqa: SLF001
