"""The program graph: a workload-independent DAG of compute and collective nodes.

Every workload form (ASTRA-sim 1.0 workload files through
:mod:`themis.training.compile10`, Chakra execution traces next) compiles to a
:class:`Program`. A node is compute (``duration_ns``), a delay (a fixed wait
that is not compute, e.g. ASTRA-sim's one-cycle state change) or a collective
(kind, size in bytes, the dimensions it spans as a mask or the NPU group it
spans, priority). ``deps`` are node ids that must end before the node starts.
Per-rank graphs carry ``rank``; ``layer`` / ``phase`` are optional statistics
keys (ASTRA-sim's per-layer report). Nodes are listed in a topological order
(every dependency has a smaller id), which is also the issuing thread's order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from topologies.errors import InputError


class NodeKind(StrEnum):
    """What a node does."""

    COMPUTE = "compute"
    DELAY = "delay"
    COLLECTIVE = "collective"


#: The collective kinds a node may carry.
COLLECTIVE_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")


@dataclass(frozen=True)
class Node:
    """One node of a :class:`Program` (see the module docstring).

    ``blocking``: the issuing thread waits for this collective right after
    issuing it (ASTRA-sim counts its exposed time from the issue).
    ``finish_delay_ns``: time after a collective's last stage before it counts
    as finished (ASTRA-sim's layer update time). ``pass_end``: a training pass
    ends when this node starts.
    """

    id: int
    kind: NodeKind
    name: str = ""
    deps: tuple[int, ...] = ()
    duration_ns: int = 0
    collective: str | None = None
    size_bytes: int = 0
    mask: tuple[bool, ...] | None = None
    group: tuple[int, ...] | None = None
    priority: int = 0
    blocking: bool = False
    finish_delay_ns: int = 0
    rank: int = 0
    layer: int = -1
    phase: str = ""
    pass_end: bool = False

    def __post_init__(self) -> None:
        where = f"node {self.id} ({self.name or self.kind})"
        if self.duration_ns < 0:
            raise InputError(f"{where}: a negative duration", "duration_ns", self.duration_ns)
        if self.kind is NodeKind.COLLECTIVE:
            if self.collective not in COLLECTIVE_KINDS:
                raise InputError(f"{where}: unknown collective kind", "collective",
                                 self.collective)
            if self.size_bytes <= 0:
                raise InputError(f"{where}: a collective needs a positive size",
                                 "size_bytes", self.size_bytes)
            if self.mask is None and self.group is None:
                raise InputError(f"{where}: a collective spans a dimension mask or an NPU "
                                 "group", "mask", None)
        elif self.collective is not None:
            raise InputError(f"{where}: only a collective node has a collective kind",
                             "collective", self.collective)


@dataclass(frozen=True)
class Program:
    """A validated DAG of :class:`Node` s: ids are 0..n-1 in order, every dependency
    exists and comes first (so there is no cycle)."""

    nodes: tuple[Node, ...]
    name: str = ""
    _users: tuple[tuple[int, ...], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        users: list[list[int]] = [[] for _ in self.nodes]
        for i, node in enumerate(self.nodes):
            if node.id != i:
                raise InputError(f"{self.name or 'program'}: node ids must be 0..n-1 in order",
                                 f"node {i} id", node.id)
            for d in node.deps:
                if not 0 <= d < len(self.nodes):
                    raise InputError(f"{self.name or 'program'}: node {i} depends on a "
                                     "missing node", f"node {i} deps", d)
                if d >= i:
                    raise InputError(f"{self.name or 'program'}: node {i} depends on a later "
                                     "node (a cycle or an unordered graph)", f"node {i} deps", d)
                users[d].append(i)
        object.__setattr__(self, "_users", tuple(tuple(u) for u in users))

    @classmethod
    def from_nodes(cls, nodes: list[Node], name: str = "") -> Program:
        """A program of ``nodes`` in any order: renumbered in a topological order
        (Kahn's, smallest original id first); a cycle or a dangling dependency is refused."""
        by_id = {n.id: n for n in nodes}
        if len(by_id) != len(nodes):
            raise InputError(f"{name or 'program'}: duplicate node ids", "id", len(nodes))
        indeg = {}
        users: dict[int, list[int]] = {n.id: [] for n in nodes}
        for n in nodes:
            for d in n.deps:
                if d not in by_id:
                    raise InputError(f"{name or 'program'}: node {n.id} depends on a missing "
                                     "node", f"node {n.id} deps", d)
                users[d].append(n.id)
            indeg[n.id] = len(set(n.deps))
        import heapq
        ready = [i for i, k in indeg.items() if k == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for u in set(users[i]):
                indeg[u] -= 1
                if indeg[u] == 0:
                    heapq.heappush(ready, u)
        if len(order) != len(nodes):
            stuck = min(i for i, k in indeg.items() if k > 0)
            raise InputError(f"{name or 'program'}: the dependencies form a cycle",
                             f"node {stuck} deps", list(by_id[stuck].deps))
        new = {old: k for k, old in enumerate(order)}
        from dataclasses import replace
        return cls(tuple(replace(by_id[old], id=k, deps=tuple(sorted({new[d] for d in
                                                                       by_id[old].deps})))
                         for k, old in enumerate(order)), name)

    def users(self, node_id: int) -> tuple[int, ...]:
        """The nodes that depend on ``node_id``."""
        return self._users[node_id]

    @property
    def collectives(self) -> list[Node]:
        """The collective nodes, in order."""
        return [n for n in self.nodes if n.kind is NodeKind.COLLECTIVE]


def earliest_ends(program: Program, collective_ns: dict[int, int]) -> list[int]:
    """Each node's end with unlimited resources: deps' max end plus its own time
    (compute and delay their duration, collective ``collective_ns[id]`` plus its finish
    delay). A critical-path reference for tests and bounds."""
    end: list[int] = []
    for n in program.nodes:
        start = max((end[d] for d in n.deps), default=0)
        own = n.duration_ns if n.kind is not NodeKind.COLLECTIVE \
            else collective_ns.get(n.id, 0) + n.finish_delay_ns
        end.append(start + own)
    return end
