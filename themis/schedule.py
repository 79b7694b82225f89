"""The one schedule type shared by policies, the simulator and the solvers.

A :class:`Schedule` holds what was run (network, timing, collectives), each
chunk's route and stage plan, and one :class:`Stage` per executed stage with
its start and end. :mod:`themis.checker` validates it independently.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from themis.collective import Collective
from themis.plans import Plan, PlanShape, stage_plan
from topologies.errors import InputError
from topologies.files import atomic_write
from topologies.network import Dimension, Network

FORMAT_VERSION = 1

__all__ = ["FORMAT_VERSION", "ChunkPlan", "Chunking", "Plan", "PlanShape", "Schedule", "Stage",
           "astra_chunk_sizes", "span_network", "stage_plan", "write_text_atomic"]


class Stage(NamedTuple):
    """One stage of one chunk on one dimension, as executed."""

    collective: int
    chunk: int
    step: int
    phase: str
    dim: int
    input_bytes: float
    output_bytes: float
    sent_bytes: float
    start_ns: float
    end_ns: float


class ChunkPlan(NamedTuple):
    """A chunk's route and the (phase, dimension) sequence it executes."""

    collective: int
    chunk: int
    size_bytes: int
    route: tuple[int, ...]
    phases: Plan


class Chunking(StrEnum):
    """How a :class:`Schedule` cuts its collectives into chunks (its ``chunking``)."""

    PROJECT = "project"          # C chunks of S // C plus a remainder
    PER_NPU = "per-npu"          # the same rule on each NPU's input (an all-gather's shard)
    ASTRA_INPUT = "astra-sim-1.0"  # chunks of S // C of each NPU's input while bytes remain


@dataclass
class Schedule:
    """A complete schedule of one or more collectives on one network.

    ``timing``, ``algorithms`` and ``endpoint_delay_ns`` name the timing model
    the stage durations follow; ``active_chunks`` is k, the stages a dimension
    may run at once; ``issue_ns[i]`` is when collective i was issued.
    ``timing_options`` are the timing model's further parameters (its
    ``options``, e.g. ``astra-sim-2``'s ``local_mem_bw_GBps``), empty for most.

    A training run (:mod:`themis.training`) adds three things a single
    collective never needs: ``spans[i]``, the dimensions collective i crosses
    (``None``: every active dimension; its chunks see the network with the
    other dimensions at size 1); ``chunking``, ``"project"`` (C chunks of
    S // C plus a remainder), ``"per-npu"`` (the same rule applied to each
    NPU's input, which for an all-gather is its shard S / N) or
    ``"astra-sim-1.0"`` (chunks of S // C while bytes remain, of each NPU's
    input); and
    ``kind_algorithms``, per-dimension algorithms of a collective kind that
    differ from ``algorithms`` (ASTRA-sim's per-kind implementations).
    """

    network: Network
    timing: str
    algorithms: tuple[str, ...]
    endpoint_delay_ns: float
    active_chunks: int
    collectives: list[Collective]
    issue_ns: list[float]
    chunks: list[ChunkPlan]
    stages: list[Stage]
    ag_order: str = "reverse"
    local_bw_aware: bool = False
    meta: dict = field(default_factory=dict)
    timing_options: dict = field(default_factory=dict)
    spans: list[tuple[int, ...]] | None = None
    chunking: Chunking = Chunking.PROJECT
    kind_algorithms: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def deferred(cls, make_stages: Callable[[], list[Stage]], **fields: Any) -> Schedule:
        """A schedule whose :attr:`stages` list is built by ``make_stages`` on first access.

        The simulator returns these: a caller that only needs the metrics (a
        policy comparing candidate plans) never pays for the Stage records.
        After the first access ``stages`` is an ordinary list attribute.
        """
        obj = cls(stages=[], **fields)
        del obj.__dict__["stages"]
        obj.__dict__["_make_stages"] = make_stages
        return obj

    def __getstate__(self) -> dict[str, Any]:
        # Pickling or copying builds deferred stages first (a closure cannot be pickled).
        _ = self.stages
        return dict(self.__dict__)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: the stages of a deferred schedule.
        make = self.__dict__.get("_make_stages") if name == "stages" else None
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        stages = make()
        self.__dict__["stages"] = stages
        del self.__dict__["_make_stages"]
        return stages

    @property
    def makespan_ns(self) -> float:
        """End of the last stage (0 for an empty schedule)."""
        return max((s.end_ns for s in self.stages), default=0.0)

    def span(self, collective: int) -> tuple[int, ...]:
        """The dimensions collective ``collective`` crosses."""
        if self.spans is None:
            return tuple(self.network.active_dims)
        return tuple(self.spans[collective])

    def collective_network(self, collective: int) -> Network:
        """The network as collective ``collective`` sees it: the dimensions outside
        its span at size 1 (the whole network without ``spans``)."""
        if self.spans is None:
            return self.network
        return span_network(self.network, self.spans[collective])

    def expected_chunk_sizes(self, collective: int) -> list[int]:
        """The chunk sizes (all-gather: of the output) the chunking rule gives."""
        coll = self.collectives[collective]
        if self.chunking == Chunking.PROJECT:
            return coll.chunk_sizes()
        npus = 1
        if coll.kind == "all-gather":
            for d in self.span(collective):
                npus *= self.network.dims[d].npus
        shard = coll.size_bytes // npus
        if self.chunking == Chunking.ASTRA_INPUT:
            return [npus * c for c in astra_chunk_sizes(shard, coll.chunks)]
        return [npus * c for c in Collective(coll.kind, shard, coll.chunks).chunk_sizes()]

    def routes(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """(collective, chunk) -> route."""
        return {(c.collective, c.chunk): c.route for c in self.chunks}

    def dimension_orders(self) -> dict[int, list[tuple[int, int, int]]]:
        """Per dimension, the (collective, chunk, step) keys in start order."""
        orders: dict[int, list[tuple[float, float, int, int, int]]] = {}
        for s in self.stages:
            orders.setdefault(s.dim, []).append(
                (s.start_ns, s.end_ns, s.collective, s.chunk, s.step)
            )
        return {
            d: [(c, k, st) for _, _, c, k, st in sorted(v)] for d, v in sorted(orders.items())
        }

    def route_histogram(self) -> dict[str, int]:
        """Route string (e.g. ``"0,1,2"``) -> how many chunks took it."""
        counts = Counter(c.route for c in self.chunks)
        return dict(sorted((",".join(map(str, r)), n) for r, n in counts.items()))

    # -- JSON -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-ready dictionary (see :meth:`from_dict`)."""
        return {
            "format": "themis-schedule",
            "version": FORMAT_VERSION,
            "network": {
                "dims": [
                    {"topology": d.kind, "npus": d.npus, "bandwidth_GBps": d.bandwidth_GBps,
                     "latency_ns": d.latency_ns, "links": d.links}
                    | ({"nic_latency_ns": d.nic_latency_ns} if d.nic_latency_ns is not None
                       else {})
                    | ({"router_latency_ns": d.router_latency_ns}
                       if d.router_latency_ns is not None else {})
                    for d in self.network.dims
                ],
                "nic_latency_ns": self.network.nic_latency_ns,
                "router_latency_ns": self.network.router_latency_ns,
                "name": self.network.name,
            },
            "timing": self.timing,
            **({"timing_options": dict(self.timing_options)} if self.timing_options else {}),
            "algorithms": list(self.algorithms),
            "endpoint_delay_ns": self.endpoint_delay_ns,
            "active_chunks": self.active_chunks,
            "ag_order": self.ag_order,
            "local_bw_aware": self.local_bw_aware,
            "collectives": [
                {"kind": c.kind, "size_bytes": c.size_bytes, "chunks": c.chunks,
                 "issue_ns": t}
                for c, t in zip(self.collectives, self.issue_ns, strict=True)
            ],
            "chunks": [
                {"collective": c.collective, "chunk": c.chunk, "size_bytes": c.size_bytes,
                 "route": list(c.route), "phases": [[p, d] for p, d in c.phases]}
                for c in self.chunks
            ],
            "stage_fields": list(Stage._fields),
            "stages": [list(s) for s in self.stages],
            "meta": self.meta,
            "makespan_ns": self.makespan_ns,
        } | ({"spans": [list(sp) for sp in self.spans]} if self.spans is not None else {}) \
            | ({"chunking": str(self.chunking)} if self.chunking != Chunking.PROJECT else {}) \
            | ({"kind_algorithms": {k: list(v) for k, v in self.kind_algorithms.items()}}
               if self.kind_algorithms else {})

    @classmethod
    def from_dict(cls, data: dict, file: str = "") -> Schedule:
        """Rebuild a schedule written by :meth:`to_dict`."""
        try:
            if data.get("format") != "themis-schedule":
                raise InputError("not a themis schedule file", "format", data.get("format"),
                                 file)
            net = data["network"]
            network = Network(
                tuple(Dimension(d["topology"], d["npus"], d["bandwidth_GBps"], d["latency_ns"],
                                d.get("links"), d.get("nic_latency_ns"),
                                d.get("router_latency_ns")) for d in net["dims"]),
                net.get("nic_latency_ns", 0.0), net.get("router_latency_ns", 0.0),
                net.get("name", ""),
            )
            colls = [Collective(c["kind"], c["size_bytes"], c["chunks"])
                     for c in data["collectives"]]
            return cls(
                network=network,
                timing=data["timing"],
                algorithms=tuple(data["algorithms"]),
                endpoint_delay_ns=float(data["endpoint_delay_ns"]),
                active_chunks=int(data["active_chunks"]),
                collectives=colls,
                issue_ns=[float(c.get("issue_ns", 0.0)) for c in data["collectives"]],
                chunks=[
                    ChunkPlan(c["collective"], c["chunk"], c["size_bytes"], tuple(c["route"]),
                              tuple((p, int(d)) for p, d in c["phases"]))
                    for c in data["chunks"]
                ],
                stages=[Stage(int(s[0]), int(s[1]), int(s[2]), str(s[3]), int(s[4]),
                              float(s[5]), float(s[6]), float(s[7]), float(s[8]), float(s[9]))
                        for s in data["stages"]],
                ag_order=data.get("ag_order", "reverse"),
                local_bw_aware=bool(data.get("local_bw_aware", False)),
                meta=data.get("meta", {}),
                timing_options=dict(data.get("timing_options") or {}),
                spans=([tuple(int(d) for d in sp) for sp in data["spans"]]
                       if data.get("spans") is not None else None),
                chunking=Chunking(data.get("chunking", Chunking.PROJECT)),
                kind_algorithms={str(k): tuple(v)
                                 for k, v in data.get("kind_algorithms", {}).items()},
            )
        except InputError as err:
            raise err.in_file(file) from None
        except (KeyError, TypeError, ValueError, IndexError) as err:
            raise InputError(f"malformed schedule ({type(err).__name__}: {err})", "schedule",
                             None, file) from None

    def to_json(self) -> str:
        """The schedule as JSON text."""
        return json.dumps(self.to_dict())

    def save(self, path: str | os.PathLike) -> None:
        """Write the schedule as JSON, atomically (nothing half-written)."""
        write_text_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike) -> Schedule:
        """Read a schedule JSON file."""
        from topologies.files import read_input_text

        p = Path(path)
        text = read_input_text(p, "schedule")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"cannot read JSON ({err})", "schedule", None, str(p)) from None
        return cls.from_dict(data, str(p))


def astra_chunk_sizes(size_bytes: int, splits: int) -> list[int]:
    """ASTRA-sim 1.0's chunking: chunks of S // C while bytes remain (the last one
    the rest), as its ``Sys::generate_collective`` cuts a stream."""
    c = size_bytes // splits
    if c <= 0:
        return [size_bytes]
    sizes = [c] * (size_bytes // c)
    if size_bytes % c:
        sizes.append(size_bytes % c)
    return sizes


def span_network(network: Network, span: tuple[int, ...] | list[int]) -> Network:
    """``network`` with every dimension outside ``span`` at size 1."""
    keep = set(span)
    return replace(network, dims=tuple(d if i in keep else replace(d, npus=1)
                                       for i, d in enumerate(network.dims)))


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`topologies.files.atomic_write`)."""
    atomic_write(path, text)
