"""Training iterations of Chakra execution traces (ETs) as ASTRA-sim 2.x runs them.

ASTRA-sim 2.x gives every NPU one compute slot and one communication slot
(``../shared/reference/astra-sim-2.x/training/README.md``, measured on the real
binary): ready nodes (every dependency ended) issue in ascending node id, each
when its slot is free; a ``COMP_NODE`` takes ``duration_micros`` x 1000 ns (1 ns
when that is 0: held-out runs of the binary, ``Workload::issue_replay``); a
``COMM_COLL_NODE`` holds the communication slot for exactly the time the same
collective takes alone (the ``astra-sim-2`` timing through
:func:`themis.astra2_run.simulate_astra2`, with the system file's splits,
plan shape and 2.x's chunking: an ``ALL_REDUCE`` of size 0, a converted
``NONE``, is inflated to splits x NPUs bytes); other nodes (metadata, a
PyTorch ``c10d`` control node without ``comm_type``) end as they issue. The
iteration ends when the last node ends. Ranks whose graphs are the same up to
their node-id offset (what chakra's converter writes) are simulated once;
ranks that differ are simulated each, and the run ends at the latest.

A collective whose ``pg_name`` names a group smaller than the system runs under
``astra-sim-2`` as 2.x flattens it, one 1-D ring over its members
(:mod:`themis.astra2_group`; members whose links differ end at different times,
so their ranks form classes of their own); other timings run such a group
hierarchically over the dimensions it spans, as with ``involved_dim``.

What is not modelled yet is refused in one line naming the file, node and
attribute: point-to-point sends and receives, memory nodes with a duration,
and collectives 2.x does not have (reduce, gather, scatter, broadcast,
barrier).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.runkind import RunKind
from themis.timing.base import timing_meaning
from themis.training.et_bound import (
    CollectiveModel,
    SlotNode,
    collective_bound_ns,
    collective_model,
    slot_bound_ns,
)
from themis.training.et_nodes import classify, npu_sizes
from topologies.chakra.et import Node
from topologies.chakra.trace import Trace, same_up_to_offset
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.system import SystemConfig

if TYPE_CHECKING:  # pragma: no cover
    from themis.simulator import SimResult

NS_PER_MICRO = 1000
#: What a ``COMP_NODE`` of 0 us takes in 2.x (``Workload::issue_replay`` starts from a
#: runtime of 1 ns and replaces it only when ``duration_micros`` is not 0).
ZERO_COMPUTE_NS = 1


@dataclass(frozen=True)
class NodeRun:
    """One node of a simulated rank: id, name, what it is, when it issued and ended (ns)."""

    id: int
    name: str
    kind: str  # "compute", "collective" or "control"
    issue_ns: int
    end_ns: int
    collective: str = ""
    size_bytes: int = 0
    #: A collective's ``involved_dim`` mask and the group 2.x flattens (as
    #: :func:`~themis.training.et_nodes.classify` read them for the run).
    mask: tuple[bool, ...] | None = None
    group: str | None = None


def nodes_end_ns(nodes: Sequence[NodeRun]) -> int:
    """When a rank class's iteration ends: its last node's end (0 without nodes)."""
    return max((n.end_ns for n in nodes), default=0)


@dataclass
class ETResult:
    """The end of an ET iteration and every node of each simulated rank class."""

    end_ns: int
    compute_ns: int
    exposed_comm_ns: int
    ranks: int
    #: Per class of identical ranks: its ranks and its nodes in issue order.
    classes: list[tuple[list[int], list[NodeRun]]] = field(default_factory=list)
    #: No order of the nodes ends earlier, with these durations, one compute and one
    #: communication slot and the dependencies: the largest of the compute slot's total,
    #: the communication slot's total and the longest dependency chain, over the ranks.
    lower_bound_ns: int = 0
    #: With ``bound=True``: no policy or discipline ends earlier (the slot windows over
    #: each collective's own bound, :mod:`themis.training.et_bound`).
    iteration_bound_ns: int | None = None
    #: With ``bound=True``: each rank class's iteration bound (``classes``' order).
    class_bounds_ns: list[int] = field(default_factory=list)
    #: How the run timed its collectives (what the exact model and bound read).
    timer: _Collectives | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON fields (``docs/json.md``)."""
        return {
            "end_ns": self.end_ns, "compute_ns": self.compute_ns,
            "exposed_comm_ns": self.exposed_comm_ns, "ranks": self.ranks,
            "lower_bound_ns": self.lower_bound_ns,
            **({} if self.iteration_bound_ns is None else
               {"iteration_bound_ns": self.iteration_bound_ns}),
            "rank_classes": [
                {"ranks": ranks, "end_ns": nodes_end_ns(nodes),
                 "nodes": [{"id": n.id, "name": n.name, "kind": n.kind, "issue_ns": n.issue_ns,
                            "end_ns": n.end_ns,
                            **({"collective": n.collective, "size_bytes": n.size_bytes}
                               if n.kind == "collective" else {})} for n in nodes]}
                for ranks, nodes in self.classes],
        }


class _Collectives:
    """Each distinct collective's 2.x time alone, simulated once."""

    def __init__(self, network: Network, system: SystemConfig, file: str,
                 policy: str | None = None, intra: str | None = "fifo",
                 timing: str = "astra-sim-2") -> None:
        self.network, self.system, self.file = network, system, file
        self.policy, self.intra, self.timing = policy, intra, timing
        self.astra2 = timing_meaning(timing).runner == "astra-2"
        self.splits = system.chunks or 1
        self._memo: dict[tuple[str, int, tuple[bool, ...] | None], int] = {}
        #: The run behind each timed collective (what its bound reads) and the bounds.
        self._runs: dict[tuple[str, int, tuple[bool, ...] | None], SimResult] = {}
        self._bounds: dict[tuple[str, int, tuple[bool, ...] | None], int] = {}
        self._groups: dict[tuple[str, int, str], dict[int, int]] = {}

    def group_ns(self, node: Node, kind: str, comm_size: int, group: str,
                 members: list[int], rank: int) -> int:
        """``rank``'s time of the collective on the communicator group ``group``
        (``members``, smaller than the system) as 2.x flattens it, every member
        starting together (:func:`themis.astra2_group.group_ends_ns`)."""
        key = (kind, comm_size, group)
        ends = self._groups.get(key)
        if ends is None:
            from themis.astra2_group import group_ends_ns

            try:
                ends = group_ends_ns(self.network, self.system, kind, comm_size, members,
                                     self.splits)
            except InputError as err:
                raise InputError(f"{self.file}: node {node.id} ({node.name}): {err.reason}",
                                 err.field or "pg_name",
                                 group if err.field == "pg_name" else err.value,
                                 err.file) from None
            self._groups[key] = ends
        if rank not in ends:
            raise InputError(f"{self.file}: node {node.id} ({node.name}): rank {rank} is "
                             "not in its communicator group (ASTRA-sim 2.x asserts it is)",
                             "pg_name", group)
        return ends[rank]

    def time_ns(self, node: Node, kind: str, comm_size: int,
                dims: tuple[bool, ...] | None = None) -> int:
        """The collective's 2.x time alone; ``dims`` (``involved_dim``) masks dimensions."""
        key = (kind, comm_size, dims)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        from themis.system_run import run_system
        from themis.timing.astra2 import astra2_chunking

        npus = self.network.npus
        size = comm_size * npus if kind == "all-gather" else comm_size
        if size == 0 and not self.astra2:
            self._memo[key] = 0  # nothing to move: only 2.x inflates a 0-byte collective
            return 0
        if size == 0 and kind != "all-gather":
            # A converted NONE: Sys::determine_chunk_size raises the 0-byte chunk to N and
            # rewrites the size to splits x N (a latency-bound collective).
            size = self.splits * npus
        elif size == 0:
            raise InputError(f"{self.file}: node {node.id} ({node.name}): an all-gather of "
                             "0 bytes (ASTRA-sim 2.x asserts a positive chunk)", "comm_size", 0)
        network = self.network
        coll = Collective(kind, size, self.splits if self.astra2 else min(self.splits, size))
        if dims is not None and not all(dims) and not self.astra2:
            network = Network(tuple(
                d if on else Dimension(d.kind, 1, d.bandwidth_GBps, d.latency_ns)
                for d, on in zip(self.network.dims, dims, strict=True)), name=network.name)
            if kind == "all-gather":
                coll = Collective(kind, comm_size * network.npus, min(self.splits, comm_size))
        elif dims is not None and not all(dims):
            # Sys::generate_collective skips the phases of dimensions not involved; the
            # chunks are still cut against every NPU (determine_chunk_size's total_nodes).
            network = Network(tuple(
                d if on else Dimension(d.kind, 1, d.bandwidth_GBps, d.latency_ns)
                for d, on in zip(self.network.dims, dims, strict=True)), name=network.name)
            try:
                run_size, count = astra2_chunking(coll, self.network)
            except InputError as err:
                raise InputError(f"{self.file}: node {node.id} ({node.name}): {err.reason}",
                                 err.field, err.value, err.file) from None
            if kind == "all-gather":  # each NPU's shard chunks, gathered over the group
                chunk = run_size // (count * npus)
                coll = Collective(kind, count * chunk * network.npus, count)
            else:
                coll = Collective(kind, run_size, count)
        try:
            res = run_system(network, self.system, coll, self.timing,
                             self.policy or self.system.inter or "baseline", self.intra)
        except InputError as err:
            raise InputError(f"{self.file}: node {node.id} ({node.name}): {err.reason}",
                             err.field, err.value, err.file) from None
        t = math.ceil(res.makespan_ns - 1e-9)  # whole ns (2.x's are already whole)
        self._memo[key] = t
        self._runs[key] = res
        return t

    def bound_ns(self, node: Node, kind: str, comm_size: int,
                 dims: tuple[bool, ...] | None = None) -> int:
        """A lower bound of the collective's time alone under every policy and discipline
        (:func:`themis.training.et_bound.collective_bound_ns`; 0 for one of nothing)."""
        key = (kind, comm_size, dims)
        hit = self._bounds.get(key)
        if hit is None:
            self.time_ns(node, kind, comm_size, dims)
            res = self._runs.get(key)
            hit = 0 if res is None else collective_bound_ns(res, self.run_kind())
            self._bounds[key] = hit
        return hit

    def model(self, node: Node, kind: str, comm_size: int,
              dims: tuple[bool, ...] | None = None) -> CollectiveModel | None:
        """What the runner runs for the collective (its chunks, dimensions, stage costs and
        alternatives: :func:`themis.training.et_bound.collective_model`); ``None`` for a
        collective of nothing or on no dimension."""
        self.time_ns(node, kind, comm_size, dims)
        res = self._runs.get((kind, comm_size, dims))
        return None if res is None else collective_model(res, self.run_kind())

    def run_kind(self) -> RunKind:
        """The run kind whose plan shapes the runner can execute (the system file's
        ``collective-optimization``; 2.x's localBWAware without one)."""
        runner = timing_meaning(self.timing).runner
        lbw = self.system.local_bw_aware if self.system.collective_optimization is not None \
            else runner == "astra-2"
        return RunKind.of(self.timing, local_bw_aware=lbw)


def _run_rank(trace: Trace, file: str, network: Network, colls: _Collectives,
              groups: Mapping[str, list[int]], rank: int | None = None) -> list[NodeRun]:
    nodes = {n.id: n for n in trace.nodes}
    what = {n.id: classify(n, file, network.ndims, network.npus, groups, npu_sizes(network),
                            colls.astra2, rank) for n in trace.nodes}
    waiting = {i: len(n.deps) for i, n in nodes.items()}
    users: dict[int, list[int]] = {}
    for i, n in nodes.items():
        for d in n.deps:
            users.setdefault(d, []).append(i)
    ready = sorted(i for i, c in waiting.items() if c == 0)
    heapq.heapify(ready)
    events: list[tuple[int, int, int]] = []  # (end ns, issue order, node id)
    busy = {"compute": False, "collective": False}
    issue: dict[int, int] = {}
    out: list[NodeRun] = []
    seq = 0
    now = 0

    def start(i: int) -> None:
        nonlocal seq
        kind, coll, size, mask, group = what[i]
        node = nodes[i]
        if kind == "compute":
            # Workload::issue_replay: a COMP_NODE of 0 us takes 1 ns, not 0
            dur = node.duration_micros * NS_PER_MICRO or ZERO_COMPUTE_NS
        elif group is not None:
            dur = colls.group_ns(node, coll, size, group, list(groups[group]),
                                 rank if rank is not None else 0)
        elif kind == "collective":
            dur = colls.time_ns(node, coll, size, mask)
        else:
            dur = 0
        if kind != "control":
            busy[kind] = True
        issue[i] = now
        heapq.heappush(events, (now + dur, seq, i))
        seq += 1

    def issue_ready() -> None:
        held: list[int] = []
        while ready:
            i = heapq.heappop(ready)
            kind = what[i][0]
            if kind != "control" and busy[kind]:
                held.append(i)
                continue
            start(i)
        for i in held:
            heapq.heappush(ready, i)

    issue_ready()
    while events:
        now, _, i = heapq.heappop(events)
        kind, coll, size, mask, group = what[i]
        if kind != "control":
            busy[kind] = False
        node = nodes[i]
        out.append(NodeRun(i, node.name, kind, issue[i], now, coll, size, mask, group))
        for u in users.get(i, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
        issue_ready()
    if len(out) != len(nodes):  # pragma: no cover - check_trace refuses cycles
        raise InputError(f"{file}: {len(nodes) - len(out)} nodes never became ready",
                         "deps", len(nodes) - len(out))
    return out


def simulate_et(traces: Mapping[int, Trace], network: Network, system: SystemConfig,
                files: Mapping[int, str] | None = None,
                groups: Mapping[str, list[int]] | None = None,
                policy: str | None = None, intra: str | None = "fifo",
                timing: str = "astra-sim-2", bound: bool = False) -> ETResult:
    """Simulate one iteration of the per-rank ``traces`` on ``network`` under ASTRA-sim
    2.x's semantics (module docstring); each collective timed alone under ``timing`` (2.x's
    own by default; another timing keeps 2.x's slots and times collectives its way, a
    0-byte one taking no time). ``files`` names each rank's file in messages;
    ``groups`` is the comm-group file (``{"<id>": [npu ids]}``). ``policy`` and ``intra``
    schedule each collective's chunks (default: 2.x's own baseline / FIFO; any registered
    policy and discipline, Themis or the portfolio among them, which 2.x itself cannot
    run; ``intra=None`` lets a planning policy choose). ``bound``: also the iteration
    bound, valid for every policy and discipline (:mod:`themis.training.et_bound`)."""
    if len(traces) != network.npus:
        raise InputError(f"the network has {network.npus} NPUs but the trace has "
                         f"{len(traces)} ranks", "ranks", len(traces))
    files = files or {r: f"rank {r}" for r in traces}
    groups = groups or {}
    colls = _Collectives(network, system, files[min(traces)], policy, intra, timing)
    by_rep: dict[int, list[int]] = {}  # ranks equal up to their id offset run once
    for r in sorted(traces):
        for rep, ranks in by_rep.items():
            t = traces[r]
            if t is traces[rep] or t.same_as is traces[rep] or \
                    same_up_to_offset(t.nodes, traces[rep].nodes):
                ranks.append(r)
                break
        else:
            by_rep[r] = [r]
    classes = []
    for ranks in _split_by_group_times(by_rep, traces, files, network, colls, groups):
        r = ranks[0]
        classes.append((ranks, _run_rank(traces[r], files[r], network, colls, groups, r)))
    end = max((nodes_end_ns(nodes) for _, nodes in classes), default=0)
    slowest = max(classes, key=lambda c: nodes_end_ns(c[1]))[1]
    compute = sum(n.end_ns - n.issue_ns for n in slowest if n.kind == "compute")
    slots = max((_slot_bound(traces[ranks[0]], nodes) for ranks, nodes in classes), default=0)
    result = ETResult(end, compute, end - compute, len(traces), classes, slots, timer=colls)
    if bound:
        result.class_bounds_ns = [
            _iteration_bound(traces[ranks[0]], colls, groups, ranks[0], nodes)
            for ranks, nodes in classes]
        result.iteration_bound_ns = max(result.class_bounds_ns, default=0)
    return result


def _iteration_bound(trace: Trace, colls: _Collectives, groups: Mapping[str, list[int]],
                     rank: int, runs: list[NodeRun]) -> int:
    """The rank class's bound of :mod:`themis.training.et_bound`: the nodes of its run
    (in end order, so dependencies first) with each collective's own bound."""
    nodes = {n.id: n for n in trace.nodes}
    slot_nodes = []
    for run in runs:  # each node as the run classified it
        node, kind, coll, size = nodes[run.id], run.kind, run.collective, run.size_bytes
        if kind == "compute":
            ns = run.end_ns - run.issue_ns
        elif kind == "collective" and run.group is not None:  # no policy changes a flat ring
            ns = colls.group_ns(node, coll, size, run.group, list(groups[run.group]), rank)
        elif kind == "collective":
            ns = colls.bound_ns(node, coll, size, run.mask)
        else:
            ns = 0
        slot_nodes.append(SlotNode(run.id, kind if kind != "control" else "", ns,
                                   tuple(node.deps)))
    return slot_bound_ns(slot_nodes)


def _split_by_group_times(by_rep: Mapping[int, list[int]], traces: Mapping[int, Trace],
                          files: Mapping[int, str], network: Network, colls: _Collectives,
                          groups: Mapping[str, list[int]]) -> list[list[int]]:
    """Classes of identical ranks, split where ranks of one class end a flattened group
    collective at different times (members of a 2.x group whose links differ)."""
    if not colls.astra2 or not groups:
        return list(by_rep.values())
    out: list[list[int]] = []
    for rep, ranks in by_rep.items():
        trace, file = traces[rep], files[rep]
        flat = []
        for n in trace.nodes:
            kind, coll, size, _mask, group = classify(
                n, file, network.ndims, network.npus, groups, npu_sizes(network), True)
            if kind == "collective" and group is not None:
                flat.append((n, coll, size, group))
        if not flat:
            out.append(ranks)
            continue
        split: dict[tuple[int, ...], list[int]] = {}
        for r in ranks:
            sig = tuple(colls.group_ns(n, coll, size, group, list(groups[group]), r)
                        for n, coll, size, group in flat)
            split.setdefault(sig, []).append(r)
        out.extend(split.values())
    return out


def _slot_bound(trace: Trace, runs: list[NodeRun]) -> int:
    """The rank's bound (:attr:`ETResult.lower_bound_ns`): each slot's total work and the
    longest chain of dependencies, with the durations this run gave the nodes."""
    deps = {n.id: n.deps for n in trace.nodes}
    chain: dict[int, int] = {}
    totals = {"compute": 0, "collective": 0}
    for run in runs:  # issue order: a node's dependencies were issued before it
        dur = run.end_ns - run.issue_ns
        chain[run.id] = max((chain[d] for d in deps[run.id]), default=0) + dur
        if run.kind in totals:
            totals[run.kind] += dur
    return max([*totals.values(), *chain.values()], default=0)
