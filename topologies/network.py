"""Dimensions and networks (model.md §2).

A network is an ordered tuple of dimensions, dimension 0 innermost. All NPUs
are symmetric, so one NPU's links along a dimension are one resource.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from topologies.errors import InputError
from topologies.units import (
    MAX_BANDWIDTH_GBPS,
    MAX_LATENCY_NS,
    MIN_BANDWIDTH_GBPS,
    GBps_to_bytes_per_ns,
)


def npu_id(coords: Sequence[int], sizes: Sequence[int]) -> int:
    """ASTRA-sim's NPU id of ``coords`` (dimension 0 fastest)."""
    result, stride = 0, 1
    for c, p in zip(coords, sizes, strict=True):
        result += c * stride
        stride *= p
    return result


def npu_coords(npu: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """The coordinates of NPU ``npu`` (inverse of :func:`npu_id`)."""
    coords = []
    for p in sizes:
        npu, c = divmod(npu, p)
        coords.append(c)
    return tuple(coords)


#: Topology kinds and the hops a message crosses in the alpha-beta model.
KIND_HOPS: dict[str, int] = {"Ring": 1, "FullyConnected": 1, "Switch": 2}

#: Default collective algorithm by topology kind.
DEFAULT_ALGORITHM: dict[str, str] = {
    "Ring": "ring",
    "FullyConnected": "direct",
    "Switch": "halvingDoubling",
}

_KIND_ALIASES = {
    "ring": "Ring",
    "fullyconnected": "FullyConnected",
    "fully_connected": "FullyConnected",
    "fc": "FullyConnected",
    "switch": "Switch",
}


def canonical_kind(name: object, field_name: str = "topology") -> str:
    """Map a topology name (any case, ASTRA-sim spellings) to its canonical kind."""
    if isinstance(name, str) and name.strip().lower() in _KIND_ALIASES:
        return _KIND_ALIASES[name.strip().lower()]
    raise InputError(
        f"unknown topology (expected one of {', '.join(KIND_HOPS)})", field_name, name
    )


#: Why a bandwidth outside the accepted range is refused.
BANDWIDTH_RANGE = (f"bandwidth out of range ({MIN_BANDWIDTH_GBPS:g} to {MAX_BANDWIDTH_GBPS:g} "
                   "GB/s): stage times would not be finite or meaningful")
#: Why a latency above the accepted maximum is refused.
LATENCY_RANGE = (f"latency too large (at most {MAX_LATENCY_NS:g} ns): times would not be "
                 "meaningful")


def _number(value: object, field_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError("not a number", field_name, value)
    if not math.isfinite(float(value)):
        raise InputError("not a finite number", field_name, value)
    return float(value)


def _latency(value: object, field_name: str) -> float:
    lat = _number(value, field_name)
    if lat < 0:
        raise InputError("latency must not be negative", field_name, value)
    if lat > MAX_LATENCY_NS:
        raise InputError(LATENCY_RANGE, field_name, value)
    return lat


@dataclass(frozen=True)
class Dimension:
    """One network dimension: ``npus`` NPUs per group connected as ``kind``.

    ``bandwidth_GBps`` is the per-NPU bandwidth along the dimension (all its
    links together, GB/s with 1 GB = 2^30 bytes); ``latency_ns`` the per-hop
    latency. ``links`` is the ASTRA-sim 1.0 links-count (needed by the
    ``astra-sim-1.0`` timing); when ``None`` the 2.x convention applies: Ring =
    2 links, Switch = 1 link, FullyConnected = npus - 1 links.
    ``nic_latency_ns`` / ``router_latency_ns`` are this dimension's ASTRA-sim 1.0
    ``nic-latency`` / ``router-latency`` entries; ``None`` means the network's
    value (:meth:`Network.nic_latency`).
    """

    kind: str
    npus: int
    bandwidth_GBps: float
    latency_ns: float = 0.0
    links: int | None = None
    nic_latency_ns: float | None = None
    router_latency_ns: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", canonical_kind(self.kind))
        if isinstance(self.npus, bool) or not isinstance(self.npus, int):
            raise InputError("NPU count must be an integer", "npus", self.npus)
        if self.npus < 1:
            raise InputError("NPU count must be at least 1", "npus", self.npus)
        bw = _number(self.bandwidth_GBps, "bandwidth")
        if bw <= 0:
            raise InputError("bandwidth must be positive", "bandwidth", self.bandwidth_GBps)
        if not MIN_BANDWIDTH_GBPS <= bw <= MAX_BANDWIDTH_GBPS:
            raise InputError(BANDWIDTH_RANGE, "bandwidth", self.bandwidth_GBps)
        lat = _number(self.latency_ns, "latency")
        if lat < 0:
            raise InputError("latency must not be negative", "latency", self.latency_ns)
        if lat > MAX_LATENCY_NS:
            raise InputError(LATENCY_RANGE, "latency", self.latency_ns)
        object.__setattr__(self, "bandwidth_GBps", bw)
        object.__setattr__(self, "latency_ns", lat)
        if self.links is not None:
            if isinstance(self.links, bool) or not isinstance(self.links, int) or self.links < 1:
                raise InputError("links count must be a positive integer", "links", self.links)
        for name in ("nic_latency_ns", "router_latency_ns"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _latency(getattr(self, name), name))

    @property
    def links_count(self) -> int:
        """Links per NPU along this dimension (explicit, or the 2.x convention)."""
        if self.links is not None:
            return self.links
        return {"Ring": 2, "Switch": 1}.get(self.kind, max(self.npus - 1, 1))

    @property
    def link_bandwidth_GBps(self) -> float:
        """Bandwidth of one link (``bandwidth_GBps / links_count``)."""
        return self.bandwidth_GBps / self.links_count

    @property
    def bandwidth_bytes_per_ns(self) -> float:
        """Per-NPU bandwidth in bytes per ns."""
        return GBps_to_bytes_per_ns(self.bandwidth_GBps)

    @property
    def hops(self) -> int:
        """Hops one message crosses in the alpha-beta model."""
        return KIND_HOPS[self.kind]

    @property
    def default_algorithm(self) -> str:
        """The algorithm used when none is given (model.md §4).

        A Switch whose size is not a power of two cannot run halvingDoubling,
        so it defaults to ``direct`` instead.
        """
        algo = DEFAULT_ALGORITHM[self.kind]
        if algo == "halvingDoubling" and self.npus & (self.npus - 1):
            return "direct"
        return algo


@dataclass(frozen=True)
class Network:
    """An ordered list of dimensions (dimension 0 innermost).

    ``nic_latency_ns`` and ``router_latency_ns`` are the optional ASTRA-sim 1.0
    keys as one value for every dimension; a dimension's own value (set when a
    file gives different values per dimension) takes precedence. Read them
    with :meth:`nic_latency` and :meth:`router_latency` (model.md §4 says how
    each timing model counts them).
    """

    dims: tuple[Dimension, ...]
    nic_latency_ns: float = 0.0
    router_latency_ns: float = 0.0
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        dims = tuple(self.dims)
        if not dims:
            raise InputError("a network needs at least one dimension", "dimensions", 0)
        for d in dims:
            if not isinstance(d, Dimension):
                raise InputError("not a Dimension", "dimensions", d)
        object.__setattr__(self, "dims", dims)
        for name in ("nic_latency_ns", "router_latency_ns"):
            value = _number(getattr(self, name), name)
            if value < 0:
                raise InputError("latency must not be negative", name, value)
            object.__setattr__(self, name, value)
        if self.npus < 2:
            raise InputError("a network needs at least 2 NPUs", "npus", self.npus)

    @classmethod
    def build(
        cls,
        kinds: list[str] | tuple[str, ...],
        npus: list[int] | tuple[int, ...],
        bandwidths_GBps: list[float] | tuple[float, ...],
        latencies_ns: list[float] | tuple[float, ...] | None = None,
        name: str = "",
    ) -> Network:
        """Build a network from per-dimension lists (the 2.x YAML shape)."""
        latencies = list(latencies_ns) if latencies_ns is not None else [0.0] * len(kinds)
        lengths = {len(kinds), len(npus), len(bandwidths_GBps), len(latencies)}
        if len(lengths) != 1:
            raise InputError(
                "per-dimension lists differ in length "
                f"(topology {len(kinds)}, npus {len(npus)}, bandwidth {len(bandwidths_GBps)}, "
                f"latency {len(latencies)})",
                "dimensions",
            )
        dims = []
        for i, (k, p, b, a) in enumerate(zip(kinds, npus, bandwidths_GBps, latencies, strict=True)):
            try:
                dims.append(Dimension(k, p, b, a))
            except InputError as err:
                err.field = f"{err.field}[{i}]"
                err.args = (err.message,)
                raise
        return cls(tuple(dims), name=name)

    def nic_latency(self, dim: int) -> float:
        """The NIC latency (ns) of dimension ``dim``: its own, else the network's."""
        own = self.dims[dim].nic_latency_ns
        return self.nic_latency_ns if own is None else own

    def router_latency(self, dim: int) -> float:
        """The router latency (ns) of dimension ``dim``: its own, else the network's."""
        own = self.dims[dim].router_latency_ns
        return self.router_latency_ns if own is None else own

    @property
    def latencies_per_dim(self) -> bool:
        """Whether some dimension has its own NIC or router latency."""
        return any(d.nic_latency_ns is not None or d.router_latency_ns is not None
                   for d in self.dims)

    @property
    def npus(self) -> int:
        """Total NPUs: the product of the dimension sizes."""
        return math.prod(d.npus for d in self.dims)

    @property
    def ndims(self) -> int:
        """Number of dimensions (including any of size 1)."""
        return len(self.dims)

    @property
    def active_dims(self) -> tuple[int, ...]:
        """Indices of dimensions with more than one NPU (those a chunk crosses)."""
        return tuple(i for i, d in enumerate(self.dims) if d.npus > 1)

    @property
    def total_bandwidth_GBps(self) -> float:
        """Sum of the active dimensions' bandwidths."""
        return sum(self.dims[i].bandwidth_GBps for i in self.active_dims)

    def shape(self) -> str:
        """A short label like ``Switch8x Ring4`` -> ``8x4``."""
        return "x".join(str(d.npus) for d in self.dims)

    def describe(self) -> str:
        """Human label: kinds, sizes and bandwidths."""
        return " x ".join(
            f"{d.kind}{d.npus}@{d.bandwidth_GBps:g}GB/s" for d in self.dims
        )
