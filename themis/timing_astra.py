"""The ``astra-sim-1.0`` timing model and how to run it (model.md §4).

Reproduces what the ASTRA-sim 1.0 analytical, congestion-unaware backend (tag
``tutorial-asplos2023``) charges, with the integer arithmetic of
``shared/reference/astra-sim-1.0/timing.md``:

* one message of m bytes to a partner at ring distance s costs
  ``N(m, s) = L * hops(s) + floor(m / BW) + 2 * nic (+ router on a Switch)``
  whole ns, ``BW = scalar * link-bandwidth`` (scalar from the links-count);
* a reduce step costs ``R(m) = 3 * floor(m / 500000)``;
* ring, halvingDoubling and direct stage formulas for RS, AG and AR phases,
  sizes divided with floor.

Besides the timing model this module holds what it takes to reproduce ASTRA-sim
1.0 runs: its inter-dimension policies (:class:`AstraThemis`,
:class:`AstraBaseline`, :class:`AstraRoundRobin`) and :func:`simulate_astra`,
which maps a :class:`~topologies.system.SystemConfig` to the right
:func:`~themis.simulator.simulate` call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.policies.base import InterPolicy, Route
from themis.timing import StageCost, register_timing
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.system import INTER_ALIASES, INTRA_ALIASES, SystemConfig

if TYPE_CHECKING:  # pragma: no cover
    from themis.simulator import SimResult

#: Name the model is registered under.
NAME = "astra-sim-1.0"

MiB = 1048576
#: Bytes per ns of 1 GB/s: ASTRA-sim's "GB" is 2^30 bytes.
_GB = 1 << 30
_NS_PER_S = 10**9
#: R(m) = REDUCE_NS * floor(m / REDUCE_BYTES).
REDUCE_NS = 3
REDUCE_BYTES = 500000


def _exact(x: float) -> Fraction:
    """A decimal reading of a float (``6.25`` -> 25/4, ``0.1`` -> 1/10)."""
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


def _whole(x: float, field_name: str) -> int:
    """``x`` as an int if it is integral (sizes must be whole bytes)."""
    i = int(x)
    if i != x:
        raise InputError("the astra-sim-1.0 timing needs whole numbers", field_name, x)
    return i


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
    extra: float  # 2 * nic (+ router)


@register_timing(NAME)
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
    shares_bandwidth: bool = False
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
            extra = 2 * net.nic_latency_ns + (net.router_latency_ns if d.kind == "Switch" else 0)
            dims.append(_Dim(d.kind, n, k, algo, _NS_PER_S * lb.denominator,
                             scalar * lb.numerator * _GB, d.latency_ns, extra))
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
        """N(m, s) and its serialization part floor(m / BW)."""
        ser = m * dm.bw_num // dm.bw_den
        t = math.floor(dm.latency * self._hops(dm, s))
        t = t + ser
        t = math.floor(t + dm.extra)
        return t, ser

    def _direct(self, dm: _Dim, m: int) -> tuple[int, int]:
        """N*(m): the slowest of the n - 1 parallel messages."""
        return max(self._message(dm, m, s) for s in range(1, dm.n))

    # -- the Timing protocol -----------------------------------------------------
    def stage(self, phase: str, dim: int, input_bytes: float) -> StageCost:
        """Cost of a ``phase`` stage on ``dim`` with ``input_bytes`` (timing.md)."""
        dm = self._dims[dim]
        D = _whole(input_bytes, "stage input bytes")
        n = dm.n
        if phase == "RS":
            out = D // n
            sent = (n - 1) * out
        elif phase == "AG":
            out = D * n
            sent = (n - 1) * D
        elif phase == "AR":
            out = D
            sent = 2 * (n - 1) * (D // n)
        else:
            raise ValueError(f"unknown phase {phase!r}")
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
                    dur = 3 * d + 2 * msg + red
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
                    dur = (2 * k + 1) * d + 2 * msgs + red
                    wire *= 2
        dur = float(dur)
        return StageCost(dur, dur - float(wire), float(sent), float(out))

    def all_gather_input(self, chunk_bytes: float) -> float:
        """ASTRA's all-gather size is each NPU's shard: chunk // N."""
        n = math.prod(self.network.dims[i].npus for i in self.network.active_dims)
        return float(int(chunk_bytes) // n)


# -- ASTRA-sim 1.0's inter-dimension policies --------------------------------------
def _involved(network: Network) -> list[bool]:
    return [d.npus > 1 for d in network.dims]


def _recommended_chunk(collective: Collective, network: Network) -> int:
    """ASTRA's recommended chunk size: of the shard for an all-gather."""
    if collective.kind == "all-gather":
        n = math.prod(network.dims[i].npus for i in network.active_dims)
        return collective.chunk_bytes // n
    return collective.chunk_bytes


@dataclass(frozen=True)
class AstraBaseline:
    """ASTRA-sim 1.0's ``baseline``: 0..D-1 (all-gather: D-1..0) for every chunk."""

    name: str = "baseline"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """The same route for every chunk."""
        active = network.active_dims
        route = tuple(reversed(active)) if collective.kind == "all-gather" else active
        return [route] * len(collective.chunk_sizes())


@dataclass(frozen=True)
class AstraRoundRobin:
    """ASTRA-sim 1.0's ``roundRobin``: chunk k rotates the dimension list by k mod D.

    The list is 0..D-1 (reversed for an all-gather) over all dimensions,
    including those of size 1, which are then skipped.
    """

    name: str = "round-robin"

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Rotated routes, in chunk order."""
        ndims = network.ndims
        base = list(range(ndims))
        if collective.kind == "all-gather":
            base.reverse()
        inv = _involved(network)
        out = []
        for k in range(len(collective.chunk_sizes())):
            r = k % ndims
            out.append(tuple(d for d in base[r:] + base[:r] if inv[d]))
        return out


@dataclass(frozen=True)
class AstraThemis:
    """ASTRA-sim 1.0's Themis (``OfflineGreedy::get_chunk_scheduling``), quirks included.

    Loads are doubles in "MiB at B_0" over every dimension (size-1 ones too,
    with load 0), reset per collective; the persistent list is stable-sorted
    by load (reversed for an all-gather); chunk sizes are unsigned integers
    (``/=`` floors). Reduce-scatter gap: last entry of the list minus the first
    involved one, in bytes of the first. All-gather gap: the least-loaded
    involved entry l (last involved in the list) against the first involved
    one, in bytes of l, then integer-divided by the size of every involved
    entry from the first one up to l (l excluded), as the source's loop does.
    A gap worth fewer than ``recommended // 16`` bytes falls back to route
    0..D-1; the loads are then added in index order, for an all-gather through
    the reversed list (dimension i's term lands on the entry of D-1-i).
    """

    name: str = "themis"
    threshold_divisor: int = 16

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """Routes for every chunk, in chunk order at issue time."""
        return self.routes_with_loads(collective, network)[0]

    def routes_with_loads(
        self, collective: Collective, network: Network
    ) -> tuple[list[Route], dict[int, float]]:
        """Routes and the final load of every dimension."""
        dims = network.dims
        ndims = len(dims)
        size = [d.npus for d in dims]
        bw = [themis_bandwidth(d) for d in dims]
        inv = _involved(network)
        gather = collective.kind == "all-gather"
        rec = _recommended_chunk(collective, network)
        threshold = rec // self.threshold_divisor
        active = network.active_dims
        entries = [[0.0, i] for i in range(ndims)]  # [load, dim], the persistent list

        def term(d: int, cs: int) -> float:
            ratio = bw[d] / bw[0]
            if gather:
                return ((cs / MiB) * float(size[d] - 1)) / ratio
            return ((cs / MiB) * ((size[d] - 1) / size[d])) / ratio

        routes: list[Route] = []
        for _ in collective.chunk_sizes():
            entries.sort(key=lambda e: e[0])
            if gather:
                entries.reverse()
            cs = rec
            route: list[int] = []
            checked = False
            fallback = False
            for ptr, e in enumerate(entries):
                d = e[1]
                if not inv[d]:
                    continue
                if not checked:
                    checked = True
                    if not gather:
                        diff = abs(entries[-1][0] - e[0])
                        gap = int(((diff * (bw[d] / bw[0])) / ((size[d] - 1) / size[d])) * MiB)
                    else:
                        li = ndims - 1
                        while not inv[entries[li][1]]:
                            li -= 1
                        ld = entries[li][1]
                        diff = abs(entries[li][0] - e[0])
                        gap = int(((diff * (bw[ld] / bw[0])) / float(size[ld] - 1)) * MiB)
                        li -= 1
                        while ptr <= li:
                            if inv[entries[li][1]]:
                                gap //= size[entries[li][1]]
                            li -= 1
                    if gap < threshold:
                        fallback = True
                        break
                route.append(d)
                e[0] += term(d, cs)
                cs = cs * size[d] if gather else cs // size[d]
            if fallback:
                entries.sort(key=lambda e: e[1])
                if gather:
                    entries.reverse()
                cs = rec
                for i in range(ndims):
                    if not inv[i]:
                        continue
                    entries[i][0] += term(i, cs)
                    cs = cs * size[i] if gather else cs // size[i]
                routes.append(tuple(active))
            else:
                routes.append(tuple(route))
        return routes, {d: load for load, d in entries}


# -- running a system file ----------------------------------------------------------
#: Endpoint delay when a system file leaves it out: the value every ASTRA-sim
#: tutorial system file sets (ASTRA-sim's own built-in default was not checked).
DEFAULT_ENDPOINT_DELAY_NS = 10.0


def astra_plans(
    kind: str, routes: list[Route], local_bw_aware: bool, themis: bool
) -> list[tuple[tuple[str, int], ...]]:
    """Per-chunk stage plans as ASTRA-sim 1.0 builds them (``Sys::generate_collective``).

    reduce-scatter: RS along the route; all-gather: AG along the route. An
    all-reduce with ``collective-optimization: localBWAware`` runs RS along the
    route then AG back for Themis (``themis``), and otherwise RS on all but the
    route's last dimension, one AR there, AG back. Without localBWAware ASTRA
    runs a whole all-reduce (AR) on every dimension of the route in turn.
    """
    out = []
    for r in routes:
        if kind == "reduce-scatter":
            out.append(tuple(("RS", d) for d in r))
        elif kind == "all-gather":
            out.append(tuple(("AG", d) for d in r))
        elif not local_bw_aware:
            out.append(tuple(("AR", d) for d in r))
        elif themis:
            out.append(tuple(("RS", d) for d in r) + tuple(("AG", d) for d in reversed(r)))
        else:
            out.append(tuple(("RS", d) for d in r[:-1]) + (("AR", r[-1]),)
                       + tuple(("AG", d) for d in reversed(r[:-1])))
    return out


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
    * routes from :class:`AstraBaseline`, :class:`AstraThemis` or
      :class:`AstraRoundRobin`, stage plans from :func:`astra_plans`
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
    from themis.simulator import policy_routes, simulate

    kind = collective.kind
    raw_inter = (system.inter or "baseline").strip().lower()
    raw_intra = (system.intra or "fifo").strip().lower()
    inter = INTER_ALIASES.get(raw_inter, raw_inter)
    intra = INTRA_ALIASES.get(raw_intra, raw_intra)
    if policy is not None:
        inter = "given"
    elif inter == "themis":
        policy = AstraThemis()
    elif inter == "round-robin":
        policy = AstraRoundRobin()
    elif inter == "baseline":
        policy = AstraBaseline()
    else:
        raise InputError("the astra-sim-1.0 timing runs baseline, themis or round-robin",
                         "inter-dimension-scheduling", system.inter)
    assert policy is not None
    if intra not in ("fifo", "scf"):
        raise InputError("the astra-sim-1.0 timing runs FIFO or SCF",
                         "intra-dimension-scheduling", system.intra)
    routes = policy_routes(policy, collective, network)
    lbw = system.local_bw_aware
    plans = astra_plans(kind, routes, lbw, inter == "themis")
    endpoint = (system.endpoint_delay_ns if system.endpoint_delay_ns is not None
                else DEFAULT_ENDPOINT_DELAY_NS)
    res = simulate(
        network,
        collective,
        intra="astra-scf" if intra == "scf" else "fifo",
        timing=NAME,
        algorithms=system.algorithms_for(kind),
        endpoint_delay_ns=endpoint,
        active_chunks=system.active_chunks or 1,
        local_bw_aware=lbw and kind == "all-reduce" and inter != "themis",
        tie_order="dim" if system.boost_mode else "start",
        plans=[plans],
    )
    res.schedule.meta["policy"] = policy.name
    res.routes = [list(routes)]
    return res
