"""The ``astra-sim-1.0`` timing model (model.md §4).

Reproduces what the ASTRA-sim 1.0 analytical, congestion-unaware backend (tag
``tutorial-asplos2023``) charges, with the integer arithmetic of
``shared/reference/astra-sim-1.0/timing.md``:

* one message of m bytes to a partner at ring distance s costs
  ``N(m, s) = L * hops(s) + floor(m / BW) + 2 * nic (+ router on a Switch)``
  whole ns, ``BW = scalar * link-bandwidth`` (scalar from the links-count),
  nic and router the entries of the message's own dimension;
* a reduce step costs ``R(m) = 3 * floor(m / 500000)``;
* ring, halvingDoubling and direct stage formulas for RS, AG and AR phases,
  sizes divided with floor.

Running ASTRA-sim system files (its policies and plans) is
:mod:`themis.astra_run`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

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
from topologies.network import Dimension, Network

if TYPE_CHECKING:  # pragma: no cover
    from fractions import Fraction

    from themis.collective import Collective

#: Name the model is registered under.
NAME = "astra-sim-1.0"

#: Bytes per ns of 1 GB/s: ASTRA-sim's "GB" is 2^30 bytes.
_GB = 1 << 30
_NS_PER_S = 10**9
#: R(m) = REDUCE_NS * floor(m / REDUCE_BYTES).
REDUCE_NS = 3
REDUCE_BYTES = 500000


def _exact(x: float) -> Fraction:
    """A decimal reading of a float (``6.25`` -> 25/4, ``0.1`` -> 1/10)."""
    from fractions import Fraction  # late: a small simulate need not import it

    return Fraction(repr(float(x)))


def link_bandwidth_exact(dim: Dimension) -> Fraction:
    """One link's bandwidth in GB/s, as an exact fraction."""
    return _exact(dim.bandwidth_GBps) / dim.links_count


def bandwidth_scalar(dim: Dimension) -> int:
    """How many links' bandwidth one message gets (timing.md table)."""
    links = dim.links_count
    if dim.kind == "Ring":
        return links if links % 2 == 0 else links - 1
    if dim.kind == "FullyConnected":
        return links // max(dim.npus - 1, 1)
    return links


def themis_bandwidth(dim: Dimension) -> float:
    """The bandwidth (GB/s) ASTRA-sim 1.0's Themis sees for a dimension."""
    links = dim.links_count
    if dim.kind == "Ring":
        eff = links - links % 2
    elif dim.kind == "FullyConnected":
        eff = links - links % max(dim.npus - 1, 1)
    else:
        eff = links
    return float(eff * link_bandwidth_exact(dim))



@dataclass(frozen=True)
class _Dim:
    """Precomputed constants of one dimension."""

    kind: str
    n: int
    k: int  # log2 n for halvingDoubling, else 0
    algorithm: str
    bw_num: int  # floor(m / BW) = m * bw_num // bw_den
    bw_den: int
    latency: float
    nic: float  # 2 * nic-latency of this dimension
    router: float  # its router-latency on a Switch, else 0
    #: BW in bytes/ns as ASTRA-sim computes it in double precision: the link bandwidth
    #: X (GB/s) as ``(double)X * (1 << 30) / 1e9``, then times the scalar.
    bw: float = 0.0


#: What a run under ASTRA-sim 1.0 means (``Sys::generate_collective``, its queues,
#: its same-tick order and float sizes; workloads.md §4).
MEANING = Meaning(
    own_policies=frozenset({"baseline", "themis", "round-robin"}),
    system_shapes=True,
    queues=(("scf", "astra-scf"),),
    priority_queues=(("fifo", "fifo-priority"), ("scf", "astra-scf-priority")),
    input_chunking=True,
    event_order="astra",
    float32=True,
    direct_all_to_all_only=True,
    boost_mode=True,
    runner="astra-1.0",
    disciplines=("fifo", "scf"),
    below_ideal="the astra-sim-1.0 timing, like ASTRA-sim 1.0's analytical backend, is "
                "congestion-free: direct on a Ring sends to every peer at once, each message "
                "at the full link bandwidth",
)


@register_timing(NAME, MEANING)
@dataclass(frozen=True)
class AstraSim10Timing:
    """ASTRA-sim 1.0 analytical backend timing (timing.md), whole ns.

    Stages never share bandwidth (no congestion model). Input sizes must be
    whole bytes; outputs are RS ``floor(D/n)``, AG ``D*n``, AR ``D``.
    """

    network: Network
    algorithms: tuple[str, ...]
    endpoint_delay_ns: float = 0.0
    name: str = NAME
    resource_law: str = "exclusive"
    #: ASTRA-sim 1.0 without localBWAware runs a whole all-reduce on every dimension.
    plan_shapes: ClassVar[tuple[PlanShape, ...]] = tuple(PlanShape)
    _dims: tuple[_Dim, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        net = self.network
        dims = []
        for i, (d, algo) in enumerate(zip(net.dims, self.algorithms, strict=True)):
            n = d.npus
            k = 0
            if n > 1:
                if algo == "halvingDoubling":
                    if n & (n - 1):
                        raise InputError(
                            "halvingDoubling needs a power-of-two dimension size "
                            f"(dimension {i} has {n}); ASTRA-sim 1.0 deadlocks on it",
                            f"algorithms[{i}]", algo)
                    k = n.bit_length() - 1
                elif algo not in ("ring", "direct"):
                    raise InputError(
                        "the astra-sim-1.0 timing supports ring, halvingDoubling and direct",
                        f"algorithms[{i}]", algo)
            scalar = bandwidth_scalar(d)
            if scalar < 1:
                raise InputError(
                    f"a message on this {d.kind} dimension gets no bandwidth in ASTRA-sim 1.0 "
                    f"(links-count {d.links_count} with {n} NPUs gives scalar 0)",
                    f"links-count[{i}]", d.links_count)
            lb = link_bandwidth_exact(d)
            # HierarchicalTopology::send charges the message's own dimension's entries.
            nic = 2 * net.nic_latency(i)
            router = net.router_latency(i) if d.kind == "Switch" else 0.0
            bw = float(lb) * float(_GB) / 1e9 * float(scalar)
            dims.append(_Dim(d.kind, n, k, algo, _NS_PER_S * lb.denominator,
                             scalar * lb.numerator * _GB, d.latency_ns, nic, router, bw))
        object.__setattr__(self, "_dims", tuple(dims))

    # -- building blocks ---------------------------------------------------------
    @staticmethod
    def _hops(dm: _Dim, s: int) -> int:
        if dm.kind == "Ring":
            return min(s, dm.n - s)
        if dm.kind == "Switch":
            return 2
        return 1

    def _message(self, dm: _Dim, m: int, s: int) -> tuple[int, int]:
        """N(m, s) and its serialization part, in ASTRA-sim's operation order.

        ``HierarchicalTopology::send`` accumulates into an ``int``: the link latency
        (hops x L) truncated, then ``+= m / BW`` with the division in double precision
        (``Topology::serializationLatency``; BW is a double, see :class:`_Dim`) and the
        sum truncated, then ``+= 2 * nic`` and the router's latency, each truncated. The
        double division can land one unit below an exact integer (e.g. 128 MiB or more
        at 64-256 GB/s), which the truncation keeps (issue 22, deviation 2)."""
        ser_f = float(m) / dm.bw
        t = math.floor(dm.latency * self._hops(dm, s))
        t = math.floor(float(t) + ser_f)
        ser = math.floor(ser_f)
        t = math.floor(t + dm.nic)
        if dm.router:
            t = math.floor(t + dm.router)
        return t, ser

    def _direct(self, dm: _Dim, m: int) -> tuple[int, int]:
        """N*(m): the slowest of the n - 1 parallel messages."""
        return max(self._message(dm, m, s) for s in range(1, dm.n))

    def direct_all_reduce(self, dm: _Dim, m: int, red: int) -> tuple[float, float]:
        """A direct all-reduce stage of messages of ``m`` bytes: its time and its final
        message's time, from ASTRA-sim's packet flow (``AllToAll.cc``, ``Ring.cc``).

        Round 1 sends the n - 1 messages at d; each arrival is processed d + R
        later. The first processing end after the last arrival starts round 2,
        and every processing end from then on sends one round-2 message (as
        many at once as have been processed), to partners in ring order 1, 2,
        ..., n - 1; the stage ends d after the last round-2 arrival. When the
        partners are all equally far this is 3d + 2N*(m) + R (timing.md); on a
        Ring, round 2 can start before the farthest packet is processed, so the
        stage is shorter by up to the latency of a few hops (checked against 52
        single-collective ASTRA-sim 1.0 runs: Ring 4-16, 1-100 ns per hop,
        endpoint delay 1-40 ns, with and without R).
        """
        msgs = [self._message(dm, m, s)[0] for s in range(1, dm.n)]
        return direct_all_reduce_ns(msgs, self.endpoint_delay_ns, red)

    # -- the Timing protocol -----------------------------------------------------
    def stage(self, phase: str, dim: int, input_bytes: float) -> StageCost:
        """Cost of a ``phase`` stage on ``dim`` with ``input_bytes`` (timing.md).

        ``A2A`` (ASTRA-sim's ``direct`` all-to-all, ``AllToAll.cc``) is timed as
        a direct all-gather of D // n: 2d + N*(D/n), no reduction; the chunk
        keeps its size.
        """
        dm = self._dims[dim]
        D = whole_bytes(input_bytes, "stage input bytes", "astra-sim-1.0")
        n = dm.n
        if phase == "A2A":
            c = self.stage("AG", dim, D // n if n > 1 else D)
            return StageCost(c.duration_ns, c.fixed_ns, c.sent_bytes, float(D))
        out, sent = phase_bytes(phase, D, n)
        if n <= 1:
            return StageCost(0.0, 0.0, 0.0, float(D))
        d = self.endpoint_delay_ns
        if dm.algorithm == "ring":
            if phase == "AG":
                msg, ser = self._message(dm, D, 1)
                dur = n * d + (n - 1) * msg
                wire = (n - 1) * ser
            else:
                msg, ser = self._message(dm, D // n, 1)
                red = REDUCE_NS * ((D // n) // REDUCE_BYTES)
                if phase == "RS":
                    dur = n * d + (n - 1) * (msg + red)
                    wire = (n - 1) * ser
                else:
                    dur = (2 * n - 1) * d + 2 * (n - 1) * msg + (n - 1) * red
                    wire = 2 * (n - 1) * ser
        elif dm.algorithm == "direct":
            if phase == "AG":
                msg, ser = self._direct(dm, D)
                dur = 2 * d + msg
                wire = ser
            else:
                msg, ser = self._direct(dm, D // n)
                red = REDUCE_NS * ((D // n) // REDUCE_BYTES)
                if phase == "RS":
                    dur = 2 * d + msg + red
                    wire = ser
                else:
                    dur = self.direct_all_reduce(dm, D // n, red)[0]
                    wire = 2 * ser
        else:  # halvingDoubling
            k = dm.k
            if phase == "AG":
                dur = (k + 1) * d
                wire = 0
                for j in range(k):
                    msg, ser = self._message(dm, D << j, n >> (j + 1))
                    dur += msg
                    wire += ser
            else:
                msgs = 0
                wire = 0
                red = 0
                m = D
                for j in range(1, k + 1):
                    m //= 2
                    msg, ser = self._message(dm, m, 1 << (j - 1))
                    msgs += msg
                    wire += ser
                    if j >= 2:
                        red += REDUCE_NS * (m // REDUCE_BYTES)
                if phase == "RS":
                    dur = (k + 1) * d + msgs + red
                else:
                    # The doubling half starts from 2 floor(m_k / 2), not m_k:
                    # HalvingDoubling.cc halves its integer msg_size once more after
                    # the last halving step, then doubles it at the turn (an odd m_k
                    # loses a byte, each doubling message 2^i bytes).
                    dur = (2 * k + 1) * d + msgs + red
                    a = 2 * (m // 2)
                    for i in range(k):
                        msg, ser = self._message(dm, a << i, n >> (i + 1))
                        dur += msg
                        wire += ser
        dur = float(dur)
        return StageCost(dur, dur - float(wire), float(sent), float(out))

    def last_event_ns(self, phase: str, dim: int, input_bytes: float) -> float:
        """How long before a stage's end its last event was registered in the NPU's
        event list (``Sys::register_event``): the reduce time R(D/n) of a ring
        reduce-scatter's last step when it is not 0, else the endpoint delay (the last
        memory-bus hop, ``MemBus::send_from_NPU_to_MA``). Read from the binary with
        trace prints: a ring all-gather of 131,104 bytes and a ring reduce-scatter of
        3,211,392 bytes ending at 1,279,555 ns had their lists created at 1,279,545 and
        1,279,552. With boost mode 0, ASTRA-sim releases the stage ends of one tick in
        that order (:attr:`~themis.engine.rules.Rules.final_event_ties`)."""
        dm = self._dims[dim]
        if dm.n <= 1:
            return 0.0
        if phase == "RS" and dm.algorithm == "ring":
            red = REDUCE_NS * ((int(input_bytes) // dm.n) // REDUCE_BYTES)
            if red:
                return float(red)
        return float(self.endpoint_delay_ns)

    def npu_steps(self, phase: str, dim: int, input_bytes: float
                  ) -> tuple[tuple[int, int, int, int, bool], ...]:
        """The message steps of a stage on one NPU, as ASTRA-sim 1.0's algorithms run them
        (``Ring.cc``, ``HalvingDoubling.cc``): per step ``(kind, offset, message ns,
        reduce ns, processed)``. Kind 0 sends to the next NPU of the dimension's ring and
        receives from the previous one; kind 1 exchanges with the partner at ring index
        ``index ^ offset``; kind 2 (direct) sends to and receives from every other NPU at
        once, its message the stage's time less two endpoint delays. Each step's message
        is sent at one of the NPU's events; its arrival is followed by the endpoint delay
        (``MemBus``), then, if the packet is ``processed`` (a reduction), by the reduce
        time (``PacketBundle::call``; 0 ns registers on the running list), then by the next
        send or, after the last step, the stage's exit. With the endpoint delay d before
        the first send, ``d + sum(message + d + reduce)`` is the stage's duration
        (:meth:`stage`). Read by :class:`themis.engine.npu_lists.NpuLists`."""
        dm = self._dims[dim]
        n = dm.n
        D = int(input_bytes)
        if n <= 1:
            return ()
        d = int(self.endpoint_delay_ns)
        if phase == "A2A" or dm.algorithm == "direct":
            dur = int(self.stage(phase, dim, input_bytes).duration_ns)
            return ((2, 0, dur - 2 * d, 0, False),)
        if dm.algorithm == "ring":
            if phase == "AG":
                msg = self._message(dm, D, 1)[0]
                return ((0, 0, msg, 0, False),) * (n - 1)
            msg = self._message(dm, D // n, 1)[0]
            red = REDUCE_NS * ((D // n) // REDUCE_BYTES)
            rs = ((0, 0, msg, red, True),) * (n - 1)
            return rs if phase == "RS" else rs + ((0, 0, msg, 0, False),) * (n - 1)
        k = dm.k
        if phase == "AG":
            return tuple((1, n >> (j + 1), self._message(dm, D << j, n >> (j + 1))[0], 0, False)
                         for j in range(k))
        sizes = []
        m = D
        for _ in range(k + 1):
            m //= 2
            sizes.append(m)
        steps = []
        for j in range(1, k + 1):
            red = REDUCE_NS * (sizes[j] // REDUCE_BYTES) if j < k else 0
            steps.append((1, 1 << (j - 1), self._message(dm, sizes[j - 1], 1 << (j - 1))[0],
                          red, True))
        if phase == "AR":
            a = 2 * (sizes[k - 1] // 2)
            steps.extend((1, n >> (i + 1), self._message(dm, a << i, n >> (i + 1))[0], 0, False)
                         for i in range(k))
        return tuple(steps)

    def last_message_ns(self, phase: str, dim: int, input_bytes: float) -> float:
        """The duration of a stage's final message: ASTRA-sim 1.0 processes stage
        ends of the same tick in the order their final message was scheduled
        (stage end minus this; workloads.md §4).

        ring: the last of the n - 1 neighbour messages, N(D/n) (all-gather
        N(D)); direct: the slowest of the parallel messages, N*(D/n) (all-gather
        N*(D), all-to-all N*(D/n)), an all-reduce the round-2 message that
        arrives last (:meth:`direct_all_reduce`); halvingDoubling: reduce-scatter
        the last halving step N(D / 2^k, 2^(k-1)), all-gather the last doubling
        step N(2^(k-1) D, 1), all-reduce the last doubling step N(2^(k-1) a, 1) with
        a = 2 floor(m_k / 2) (:meth:`stage`).
        """
        dm = self._dims[dim]
        n = dm.n
        if n <= 1:
            return 0.0
        d = int(input_bytes)
        if phase == "A2A":
            phase, d = "AG", d // n
        part = d if phase == "AG" else d // n
        if dm.algorithm == "ring":
            return float(self._message(dm, part, 1)[0])
        if dm.algorithm == "direct":
            if phase == "AR":
                return float(self.direct_all_reduce(dm, part, 0)[1])
            return float(self._direct(dm, part)[0])
        k = dm.k
        if phase == "RS":
            return float(self._message(dm, d >> k, 1 << (k - 1))[0])
        if phase == "AG":
            return float(self._message(dm, d << (k - 1), 1)[0])
        return float(self._message(dm, (d >> (k + 1)) << k, 1)[0])  # 2^(k-1) * 2 floor(m_k/2)

    def chunked(self, collective: Collective) -> Collective:
        """The collective ASTRA-sim 1.0 runs for ``collective`` (issue 22, deviation 3).

        ``Sys::generate_collective`` streams each NPU's input in chunks of
        c = floor(S / splits) while bytes remain, the last one the rest: n = floor(S / c)
        chunks of c and one of S mod c. As the project's collective that is ``n`` splits
        of S (floor(S / n) = c always, since n >= splits). An all-gather's input is its
        shard S / N, so its chunks are N times the shard's; that is the project's
        collective with n splits when N x (shard mod c) < n (always when the shard
        divides evenly), else the collective is returned as it is (the remainder chunk
        then differs by under N x c bytes; left out). A collective too small for its
        splits (c = 0) is returned as it is."""
        from themis.collective import Collective

        size, splits = collective.size_bytes, collective.chunks
        if collective.kind == "all-gather":
            npus = math.prod(self.network.dims[i].npus for i in self.network.active_dims)
            shard = size // npus
            c = shard // splits
            if c == 0 or shard * npus != size:
                return collective
            n, rest = divmod(shard, c)
            return Collective(collective.kind, size, n) if npus * rest < n else collective
        c = size // splits
        if c == 0:
            return collective
        return Collective(collective.kind, size, size // c)

    def all_gather_input(self, chunk_bytes: float) -> float:
        """ASTRA's all-gather size is each NPU's shard: chunk // N."""
        n = math.prod(self.network.dims[i].npus for i in self.network.active_dims)
        return float(int(chunk_bytes) // n)
