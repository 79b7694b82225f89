"""The scheduling instance the exact solvers and the comparisons share.

One all-reduce of ``size_bytes`` in ``chunks`` chunks on ``network``, alpha-beta
timing, k = 1 (model.md §7). Policies are run on it through the simulator, the
solvers optimize it, and both are scored against its lower bounds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.timing import Timing, make_timing, resolve_algorithms
from topologies.network import Network

if TYPE_CHECKING:  # pragma: no cover
    from themis.policies import InterPolicy
    from themis.simulator import SimResult


@dataclass(frozen=True)
class Instance:
    """One all-reduce on a network with alpha-beta timing and k = 1."""

    network: Network
    size_bytes: int
    chunks: int
    endpoint_delay_ns: float = 0.0
    algorithms: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # Validate early with clear errors.
        Collective("all-reduce", self.size_bytes, self.chunks)
        algos = resolve_algorithms(self.network, self.algorithms)
        object.__setattr__(self, "algorithms", algos)
        make_timing("alpha-beta", self.network, algos, self.endpoint_delay_ns)

    @property
    def collective(self) -> Collective:
        """The all-reduce."""
        return Collective("all-reduce", self.size_bytes, self.chunks)

    @cached_property
    def timing(self) -> Timing:
        """The alpha-beta timing bound to this network."""
        return make_timing("alpha-beta", self.network, self.algorithms, self.endpoint_delay_ns)

    @property
    def dims(self) -> tuple[int, ...]:
        """The dimensions a chunk crosses (size > 1)."""
        return self.network.active_dims

    def to_dict(self) -> dict:
        """JSON-ready description (``docs/json.md``): the network, the size, the split
        (``splits``, ``chunk_count``, ``chunk_sizes``), endpoint delay and algorithms."""
        out = self._key_dict()
        del out["chunks"]
        chunking = self.collective.chunking()
        return {"dims": out.pop("dims"), "size_bytes": out.pop("size_bytes"), **chunking,
                **out}

    def _key_dict(self) -> dict:
        """The description :meth:`key` hashes (its ``chunks`` is the splits, C: kept as it
        always was, so result databases keep their keys)."""
        net = self.network
        dims = []
        for i, d in enumerate(net.dims):
            row: dict = {"topology": d.kind, "npus": d.npus, "bandwidth_GBps": d.bandwidth_GBps,
                         "latency_ns": d.latency_ns}
            # NIC / router latencies count in alpha-beta; listed only when nonzero, so
            # the keys of networks without them are what they always were.
            if net.nic_latency(i):
                row["nic_latency_ns"] = net.nic_latency(i)
            if d.kind == "Switch" and net.router_latency(i):
                row["router_latency_ns"] = net.router_latency(i)
            dims.append(row)
        return {
            "dims": dims,
            "size_bytes": self.size_bytes,
            "chunks": self.chunks,
            "endpoint_delay_ns": self.endpoint_delay_ns,
            "algorithms": list(self.algorithms or ()),
        }

    def key(self) -> str:
        """A stable short hash identifying the instance (for result databases)."""
        text = json.dumps(self._key_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def label(self) -> str:
        """Human label, e.g. ``4x4x4 64MiB C=8``."""
        from topologies.units import format_size

        return f"{self.network.name or self.network.shape()} {format_size(self.size_bytes)} " \
               f"C={self.chunks}"

    def simulate(self, policy: str | InterPolicy = "themis", intra: str | None = "scf",
                 timing: str = "alpha-beta") -> SimResult:
        """Run a policy through the simulator on this instance (k = 1).

        ``timing`` names any registered timing model (the instance's own problem
        stays alpha-beta). ``astra-sim-1.0`` runs as ``themis simulate --timing
        astra-sim-1.0`` does without a system file: ASTRA-sim 1.0's baseline,
        Themis and round-robin and its plan shapes, FIFO or its SmallestFirst
        queue, this endpoint delay and these algorithms; ``astra-sim-2`` as
        ``themis simulate --timing astra-sim-2`` does without a system file (2.x's
        chunking and plan shape)."""
        from themis.system_run import run_system
        from topologies.system import SystemConfig

        system = SystemConfig(endpoint_delay_ns=self.endpoint_delay_ns,
                              all_reduce_algorithms=self.algorithms)
        return run_system(self.network, system, self.collective, timing, policy, intra)
