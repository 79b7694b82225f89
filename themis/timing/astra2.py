"""The ``astra-sim-2`` timing model (model.md §4).

Reproduces what the ASTRA-sim 2.x analytical, congestion-unaware backend
(astra-sim master ``518bd51``, analytical ``e8c5119``) charges for one
collective, as ``shared/reference/astra-sim-2.x/timing.md`` reads its source:

* one message of m bytes to a partner at distance delta costs
  ``N(m, delta) = floor(h * L + m / beta)`` ns (one truncation of one double
  expression), ``beta = B * 2^30 / 10^9`` bytes/ns with B the YAML bandwidth of
  the dimension for *every* topology kind, ``h`` = Ring ``min(delta, n - delta)``,
  Switch 2, FullyConnected 1;
* a reduce step costs ``P(m) = 3 * floor((m / (X * 10^9)) * 10^9)`` with X the
  system file's ``local-mem-bw`` (GB/s; missing: P = 0);
* ring, halvingDoubling and direct stage formulas (timing.md §4) with sizes
  floored as integers; stages never share bandwidth (no congestion model).

2.x also chunks differently from the project's rule: ``c = floor(S / splits)``
(raised to the NPU count when smaller, except for an all-gather) and
``ceil(S / c)`` chunks *all* of size c. :meth:`AstraSim2Timing.chunked` gives the
collective that chunking really runs; the simulator applies it. Running a 2.x
system file (its phase lists, queues and refusals) is :mod:`themis.astra2_run`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from themis.collective import Collective
from themis.plans import PlanShape
from themis.timing.base import (
    Meaning,
    StageCost,
    direct_all_reduce_ns,
    phase_bytes,
    register_timing,
    whole_bytes,
)
from topologies.errors import InputError
from topologies.network import Network

#: Name the model is registered under.
NAME = "astra-sim-2"

#: ASTRA-sim 2.x runs at most this many dimensions (a Chakra ET's ``involved_dims``).
MAX_DIMS = 4
#: The algorithms this model times.
ALGORITHMS: tuple[str, ...] = ("ring", "halvingDoubling", "direct")
#: P(m) = REDUCE_NS * floor(m / (X * 1e9) * 1e9).
REDUCE_NS = 3



@dataclass(frozen=True)
class _Dim:
    """Precomputed constants of one dimension."""

    kind: str
    n: int
    k: int  # log2 n for halvingDoubling, else 0
    algorithm: str
    latency: float
    beta: float  # bytes per ns


#: What a run under ASTRA-sim 2.x means: its own baseline (ascending dimensions, an
#: all-gather descending), the plan shapes of ``collective-optimization`` as 1.0
#: (timing.md §5); chunking is the timing's own (:meth:`AstraSim2Timing.chunked`).
MEANING = Meaning(
    own_policies=frozenset({"baseline"}), system_shapes=True, training=False,
    runner="astra-2",
    below_ideal="the astra-sim-2 timing, like ASTRA-sim 2.x's analytical backend, is "
                "congestion-free: every message gets the dimension's full bandwidth (direct "
                "sends its n - 1 at once, active chunks do not share)")


@register_timing(NAME, MEANING)
@dataclass(frozen=True)
class AstraSim2Timing:
    """ASTRA-sim 2.x analytical (congestion-unaware) timing, whole ns (module docstring).

    ``local_mem_bw_GBps`` is the system file's ``local-mem-bw`` (0: no reduce
    cost, as 2.x without the key). Stages never share bandwidth. Refuses, with
    one line each, what 2.x cannot run: endpoint delay 0 (2.x aborts), more
    than 4 dimensions (2.x drops the rest), halvingDoubling on a dimension
    whose size is not a power of two (2.x deadlocks) and doubleBinaryTree (not
    modelled yet).
    """

    network: Network
    algorithms: tuple[str, ...]
    endpoint_delay_ns: float = 10.0
    local_mem_bw_GBps: float = 0.0
    name: str = NAME
    resource_law: str = "exclusive"
    #: Every shape is timed; 2.x itself builds ``ar-per-dim`` (collective-optimization
    #: baseline) and ``local-bw-aware`` (localBWAware) plans (:mod:`themis.astra2_run`).
    plan_shapes: ClassVar[tuple[PlanShape, ...]] = tuple(PlanShape)
    _dims: tuple[_Dim, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        net = self.network
        if self.endpoint_delay_ns == 0:
            raise InputError("ASTRA-sim 2.x aborts with endpoint-delay 0 (an event-queue "
                             "assertion): give a positive endpoint delay (2.x's default is 10)",
                             "endpoint-delay", self.endpoint_delay_ns)
        if net.ndims > MAX_DIMS:
            raise InputError(f"ASTRA-sim 2.x runs at most {MAX_DIMS} dimensions and silently "
                             f"skips the rest; this network has {net.ndims}", "topology",
                             [d.kind for d in net.dims])
        x = self.local_mem_bw_GBps
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) \
                or x < 0:
            raise InputError("must be a number of GB/s > 0 (leave it out for no reduce cost)",
                             "local-mem-bw", x)
        dims = []
        for i, (d, algo) in enumerate(zip(net.dims, self.algorithms, strict=True)):
            n = d.npus
            k = 0
            if algo == "doubleBinaryTree":
                raise InputError("doubleBinaryTree is not modelled yet by the astra-sim-2 "
                                 "timing (it times ring, halvingDoubling and direct)",
                                 f"algorithms[{i}]", algo)
            if algo not in ALGORITHMS:
                raise InputError(f"the astra-sim-2 timing supports {', '.join(ALGORITHMS)}",
                                 f"algorithms[{i}]", algo)
            if algo == "halvingDoubling" and n > 1:
                if n & (n - 1):
                    raise InputError(
                        "halvingDoubling needs a power-of-two dimension size "
                        f"(dimension {i} has {n}); ASTRA-sim 2.x deadlocks on it",
                        f"algorithms[{i}]", algo)
                k = n.bit_length() - 1
            beta = d.bandwidth_GBps * (1 << 30) / 1e9
            dims.append(_Dim(d.kind, n, k, algo, d.latency_ns, beta))
        object.__setattr__(self, "_dims", tuple(dims))

    @property
    def options(self) -> dict[str, float]:
        """The factory options beyond network, algorithms and endpoint delay (recorded
        in a schedule so the checker rebuilds the same model)."""
        return {"local_mem_bw_GBps": self.local_mem_bw_GBps} if self.local_mem_bw_GBps else {}

    # -- building blocks ---------------------------------------------------------
    @staticmethod
    def _hops(dm: _Dim, delta: int) -> int:
        if dm.kind == "Ring":
            return min(delta, dm.n - delta)
        if dm.kind == "Switch":
            return 2
        return 1

    def message_ns(self, dim: int, m: int, delta: int = 1) -> int:
        """N(m, delta) on ``dim``: ``floor(h * L + m / beta)``."""
        return self._n(self._dims[dim], m, delta)

    def _n(self, dm: _Dim, m: int, delta: int) -> int:
        return math.floor(self._hops(dm, delta) * dm.latency + m / dm.beta)

    def _n_star(self, dm: _Dim, m: int) -> int:
        """N*(m): the slowest of the n - 1 parallel messages of ``direct``."""
        return max(self._n(dm, m, s) for s in range(1, dm.n))

    def reduce_ns(self, m: int) -> int:
        """P(m) = 3 * floor((m / (X * 1e9)) * 1e9), 0 without ``local-mem-bw``."""
        x = self.local_mem_bw_GBps
        if not x:
            return 0
        return REDUCE_NS * math.floor((m / (x * 1e9)) * 1e9)

    # -- the Timing protocol -----------------------------------------------------
    def stage(self, phase: str, dim: int, input_bytes: float) -> StageCost:
        """Cost of a ``phase`` stage on ``dim`` with ``input_bytes`` (timing.md §4)."""
        dm = self._dims[dim]
        D = whole_bytes(input_bytes, "stage input bytes", "astra-sim-2")
        n = dm.n
        if phase == "A2A":
            return self._all_to_all(dm, dim, D)
        out, sent = phase_bytes(phase, D, n)
        if n <= 1:
            return StageCost(0.0, 0.0, 0.0, float(D))
        d = self.endpoint_delay_ns
        beta = dm.beta
        if dm.algorithm == "ring":
            if phase == "AG":
                dur = n * d + (n - 1) * self._n(dm, D, 1)
                wire = (n - 1) * D / beta
            else:
                part = D // n
                msg, red = self._n(dm, part, 1), self.reduce_ns(part)
                if phase == "RS":
                    dur = n * d + (n - 1) * (msg + red)
                    wire = (n - 1) * part / beta
                else:
                    dur = (2 * n - 1) * d + 2 * (n - 1) * msg + (n - 1) * red
                    wire = 2 * (n - 1) * part / beta
        elif dm.algorithm == "direct":
            if phase == "AG":
                dur = 2 * d + self._n_star(dm, D)
                wire = D / beta
            else:
                part = D // n
                msg, red = self._n_star(dm, part), self.reduce_ns(part)
                if phase == "RS":
                    dur = 2 * d + msg + red
                    wire = part / beta
                else:
                    # AllToAll::run, as in 1.0: round 2 starts at the first processing
                    # end after the last arrival (on a Ring before the farthest packet
                    # is processed).
                    per_partner = [self._n(dm, part, s) for s in range(1, n)]
                    dur = direct_all_reduce_ns(per_partner, d, red)[0]
                    wire = 2 * part / beta
        else:  # halvingDoubling, n = 2^k
            k = dm.k
            if phase == "AG":
                dur = (k + 1) * d
                wire = 0.0
                for j in range(k):
                    dur += self._n(dm, D << j, n >> (j + 1))
                    wire += (D << j) / beta
            else:
                msgs = red = 0
                wire = 0.0
                m = D
                for j in range(1, k + 1):
                    m //= 2
                    msgs += self._n(dm, m, 1 << (j - 1))
                    wire += m / beta
                    if j >= 2:
                        red += self.reduce_ns(m)
                if phase == "RS":
                    dur = (k + 1) * d + msgs + red
                else:
                    # The doubling half starts from 2 floor(m_k / 2) (2.x's
                    # HalvingDoubling.cc keeps 1.0's integer msg_size halving and
                    # doubling; astra10.py, docs/astra-sim-1.0-timing.md).
                    dur = (2 * k + 1) * d + msgs + red
                    a = 2 * (m // 2)
                    for i in range(k):
                        dur += self._n(dm, a << i, n >> (i + 1))
                        wire += (a << i) / beta
        dur = float(dur)
        return StageCost(dur, max(dur - wire, 0.0), float(sent), float(out))

    def _all_to_all(self, dm: _Dim, dim: int, D: int) -> StageCost:
        """An all-to-all phase (``ComType::All_to_All``; the chunk keeps its size, every
        message is D // n, nothing is reduced):

        * ``direct`` (``AllToAll.cc``, window n - 1): the n - 1 messages leave at once
          after one endpoint hop and the phase ends one hop after the last arrives:
          ``2d + N*(D // n)``;
        * ``ring`` (``Ring.cc``, ``Normal`` injection: one packet in flight):
          ``n (n - 1) / 2`` messages to the ring neighbour one after the other, each
          received then re-injected after one hop: ``d + n (n - 1) / 2 x (N(D // n) + d)``;
        * ``halvingDoubling`` has no all-to-all (2.x exits with "unknown communication
          type"): refused in one line.
        """
        n = dm.n
        if n <= 1:
            return StageCost(0.0, 0.0, 0.0, float(D))
        d = self.endpoint_delay_ns
        part = D // n
        if dm.algorithm == "direct":
            dur = 2 * d + self._n_star(dm, part)
            wire = part / dm.beta
        elif dm.algorithm == "ring":
            steps = n * (n - 1) // 2
            dur = d + steps * (self._n(dm, part, 1) + d)
            wire = steps * part / dm.beta
        else:
            raise InputError(f"ASTRA-sim 2.x has no {dm.algorithm} all-to-all (it exits with "
                             "\"unknown communication type\"): give ring or direct",
                             f"all-to-all-implementation[{dim}]", dm.algorithm)
        dur = float(dur)
        return StageCost(dur, max(dur - wire, 0.0), float((n - 1) * part), float(D))

    def all_gather_input(self, chunk_bytes: float) -> float:
        """An all-gather chunk's first stage gets each NPU's shard: chunk // N."""
        n = math.prod(self.network.dims[i].npus for i in self.network.active_dims)
        return float(int(chunk_bytes) // n)

    # -- chunking ----------------------------------------------------------------
    def chunked(self, collective: Collective) -> Collective:
        """The collective ASTRA-sim 2.x really runs for ``collective`` (timing.md §5).

        2.x cuts S (for an all-gather each NPU's shard, S // N) into chunks of
        ``c = floor(S / splits)`` and runs ``ceil(S / c)`` chunks, *all* of size c;
        when c is below the NPU count N (not for an all-gather) ``Sys::
        determine_chunk_size`` raises it to N and rewrites S = splits x N, so exactly
        ``splits`` chunks of N bytes run. The result is
        the project's collective with exactly those chunks (its size the chunks' sum,
        for an all-gather times N), so policies, the simulator and the checker see
        2.x's chunks; a collective already chunked this way is returned unchanged.
        """
        return Collective(collective.kind, *astra2_chunking(collective, self.network))


def astra2_chunking(collective: Collective, network: Network) -> tuple[int, int]:
    """(size in bytes, chunk count) of the collective ASTRA-sim 2.x runs (see
    :meth:`AstraSim2Timing.chunked`)."""
    npus = network.npus
    splits = collective.chunks
    if collective.kind == "all-gather":
        shard = collective.size_bytes // npus
        c = shard // splits
        if c < 1:
            raise InputError(f"ASTRA-sim 2.x would cut each NPU's shard ({shard} bytes of "
                             f"{npus} NPUs) into chunks of 0 bytes", "chunks", splits)
        count = -(-shard // c)
        return count * c * npus, count
    c = collective.size_bytes // splits
    if c < npus:
        # Sys::determine_chunk_size raises the chunk to N and, taking the size by
        # reference, rewrites S = splits x N: exactly `splits` chunks of N bytes.
        return splits * npus, splits
    count = -(-collective.size_bytes // c)
    return count * c, count
