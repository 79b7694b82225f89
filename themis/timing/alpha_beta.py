"""The ``alpha-beta`` timing model (model.md §4)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from themis.plans import PlanShape
from themis.timing.base import Meaning, StageCost, algorithm_steps, register_timing
from topologies.network import Network


@register_timing("alpha-beta", Meaning(affine_exact=True))
@dataclass(frozen=True)
class AlphaBetaTiming:
    """``T = steps * (hops * a + 2 * nic + router + e) + (P - 1)/P * M / B`` (model.md §4).

    ``nic`` and ``router`` are the dimension's ASTRA-sim 1.0 NIC and router
    latencies (0 unless a 1.0 network file gives them): every message leaves
    one NIC and enters one, and on a Switch crosses its router (the router
    latency of other kinds does not count). Sizes divide exactly (floats). An
    ``AR`` stage costs an RS plus an AG on the same dimension. Stages running
    together share the bandwidth.
    """

    network: Network
    algorithms: tuple[str, ...]
    endpoint_delay_ns: float = 0.0
    name: str = "alpha-beta"
    resource_law: str = "shared"
    plan_shapes: ClassVar[tuple[PlanShape, ...]] = (PlanShape.RS_AG, PlanShape.LOCAL_BW_AWARE)

    def stage(self, phase: str, dim: int, input_bytes: float) -> StageCost:
        """Cost of one stage alone (see class docstring); an ``A2A`` stage costs an
        AG of 1/P of the chunk and keeps its size."""
        d = self.network.dims[dim]
        p = d.npus
        if phase == "A2A":
            c = self.stage("AG", dim, input_bytes / p)
            return StageCost(c.duration_ns, c.fixed_ns, c.sent_bytes, input_bytes)
        steps = algorithm_steps(self.algorithms[dim], p)
        per_step = d.hops * d.latency_ns + self.endpoint_delay_ns
        nic = self.network.nic_latency(dim)
        router = self.network.router_latency(dim) if d.kind == "Switch" else 0.0
        if nic or router:
            per_step += 2 * nic + router
        if phase == "RS":
            out = input_bytes / p
            big = input_bytes
            rounds = 1
        elif phase == "AG":
            out = input_bytes * p
            big = out
            rounds = 1
        elif phase == "AR":
            out = input_bytes
            big = input_bytes
            rounds = 2
        else:
            raise ValueError(f"unknown phase {phase!r}")
        sent = rounds * (p - 1) / p * big
        fixed = rounds * steps * per_step
        return StageCost(fixed + sent / d.bandwidth_bytes_per_ns, fixed, sent, out)

    def last_message_ns(self, phase: str, dim: int, input_bytes: float) -> float:
        """No message structure: same-tick stage ends keep the engine's tie order."""
        return 0.0

    def all_gather_input(self, chunk_bytes: float) -> float:
        """An all-gather chunk starts as 1/N of its output size."""
        n = math.prod(self.network.dims[i].npus for i in self.network.active_dims)
        return chunk_bytes / n
