"""What each node of a Chakra execution trace is, checked before anything runs.

:func:`classify` tells a node's role (compute, collective, control), its collective
kind, comm size, ``involved_dim`` mask and, under ``astra-sim-2``, the ``pg_name`` of
a group smaller than the system that 2.x flattens; it refuses what is not modelled in
one line naming the file, node and attribute. :func:`check_et` applies it to every
distinct trace up front. :mod:`themis.training.et_run` runs what it classifies.
"""

from __future__ import annotations

from collections.abc import Mapping

from themis.timing.base import timing_meaning
from topologies.chakra.et import Node
from topologies.chakra.trace import Trace
from topologies.chakra.types import COLLECTIVE_KINDS, CommType, NodeType
from topologies.errors import InputError
from topologies.network import Network

__all__ = ["KINDS", "check_et", "classify", "group_dims", "int_attr", "npu_sizes"]

#: ET collective types -> the project's collective kinds.
KINDS = COLLECTIVE_KINDS


def int_attr(node: Node, name: str) -> int | None:
    """An integer attribute of ``node`` (``None`` when absent or not an integer)."""
    a = node.attr(name)
    if a is None:
        return None
    if isinstance(a.value, bool) or not isinstance(a.value, int):
        return None
    return int(a.value)


def group_dims(members: list[int], sizes: tuple[int, ...]) -> tuple[bool, ...] | None:
    """The dimensions a communicator group spans when it is every NPU that shares one
    NPU's coordinates outside them (a sub-grid of the network), else ``None``."""
    from topologies.chakra.faithful import group_members
    from topologies.network import npu_coords

    coords = [npu_coords(m, sizes) for m in members]
    dims = tuple(len({c[d] for c in coords}) > 1 for d in range(len(sizes)))
    if sorted(members) != group_members(members[0], dims, sizes):
        return None
    return dims


def classify(node: Node, file: str, ndims: int, npus: int,
              groups: Mapping[str, list[int]], sizes: tuple[int, ...] = (),
              astra2: bool = True, rank: int | None = None
              ) -> tuple[str, str, int, tuple[bool, ...] | None, str | None]:
    """(what the node is, its collective kind, its comm size, its ``involved_dim`` mask,
    the ``pg_name`` of a group smaller than the system that 2.x flattens). Under
    ``astra-sim-2`` a group collective ignores ``involved_dim`` (the group's plan has
    its own dimensions) and one smaller than the system is flattened; under another
    timing such a group narrows the mask to the dimensions it spans."""
    where = f"{file}: node {node.id} ({node.name})"
    t = node.type
    if t == NodeType.COMP_NODE:
        return "compute", "", 0, None, None
    if t == NodeType.COMM_COLL_NODE:
        ctype = int_attr(node, "comm_type")
        if ctype is None:  # a PyTorch c10d control node: no collective
            return "control", "", 0, None, None
        kind = KINDS.get(CommType(ctype)) if ctype in CommType._value2member_map_ else None
        if kind is None:
            raise InputError(f"{where}: ASTRA-sim 2.x runs all-reduce, all-gather, "
                             "reduce-scatter and all-to-all only", "comm_type", ctype)
        size = int_attr(node, "comm_size")
        if size is None or size < 0:
            raise InputError(f"{where}: a collective needs a comm_size >= 0", "comm_size",
                             size)
        dims = node.attr("involved_dim")
        mask: tuple[bool, ...] | None = None
        if dims is not None:
            if dims.kind != "bool_list" or not isinstance(dims.value, list):
                raise InputError(f"{where}: involved_dim must be a bool list (ASTRA-sim 2.x "
                                 "stops on another type)", "involved_dim", dims.kind)
            if len(dims.value) < ndims:
                raise InputError(f"{where}: involved_dim has {len(dims.value)} entries for "
                                 f"{ndims} dimensions (2.x would read past it)",
                                 "involved_dim", dims.value)
            mask = tuple(bool(v) for v in dims.value[:ndims])
            if not any(mask):
                raise InputError(f"{where}: involved_dim selects no dimension",
                                 "involved_dim", dims.value)
        pg = node.attr("pg_name")
        if pg is not None and pg.value not in ("", "0", None):  # "0": the default group
            members = groups.get(str(pg.value))
            if members is None and not groups:
                raise InputError(f"{where}: names a communicator group and no comm-group "
                                 "file is given (--comm-group FILE.json, or comm_group in a "
                                 "spec; `themis convert --faithful` writes "
                                 "PREFIX.comm_groups.json)", "pg_name", pg.value)
            if members is None:
                raise InputError(f"{where}: names a communicator group the comm-group "
                                 "file does not hold", "pg_name", pg.value)
            if rank is not None and rank not in members:
                raise InputError(f"{where}: rank {rank} is not in its communicator group "
                                 "(ASTRA-sim 2.x asserts it is)", "pg_name", pg.value)
            if astra2:  # CommunicatorGroup::get_collective_plan
                if len(members) < 2:
                    raise InputError(f"{where}: a communicator group of one NPU: what "
                                     "ASTRA-sim 2.x does with it is not modelled",
                                     "pg_name", pg.value)
                return "collective", kind, size, None, (
                    str(pg.value) if len(members) != npus else None)
            if len(members) != npus:
                spans = group_dims(members, sizes or (npus,))
                if spans is None:
                    raise InputError(f"{where}: the group is not every NPU sharing one "
                                     "NPU's coordinates outside some dimensions (only such "
                                     "groups run hierarchically)", "pg_name", pg.value)
                mask = tuple(a and b for a, b in zip(mask or (True,) * ndims, spans,
                                                     strict=True))
                if not any(mask):
                    raise InputError(f"{where}: involved_dim and the group share no "
                                     "dimension", "pg_name", pg.value)
        return "collective", kind, size, mask, None
    if t == NodeType.METADATA_NODE or (
            t in (NodeType.MEM_LOAD_NODE, NodeType.MEM_STORE_NODE) and not node.duration_micros):
        return "control", "", 0, None, None
    raise InputError(f"{where}: this node type is not modelled yet", "type",
                     NodeType(t).name if t in NodeType._value2member_map_ else t)


def check_et(traces: Mapping[int, Trace], network: Network,
             files: Mapping[int, str] | None = None,
             groups: Mapping[str, list[int]] | None = None,
             timing: str = "astra-sim-2") -> None:
    """Refuse, before anything runs, what :func:`simulate_et` would refuse in one line for
    any node of ``traces`` (a rank count other than the network's NPUs, a node type or
    collective not modelled, a bad ``involved_dim``, a ``pg_name`` without its group),
    naming the file, node and attribute; each distinct trace is looked at once."""
    if len(traces) != network.npus:
        raise InputError(f"the network has {network.npus} NPUs but the trace has "
                         f"{len(traces)} ranks", "ranks", len(traces))
    files = files or {r: f"rank {r}" for r in traces}
    seen: set[int] = set()
    for r in sorted(traces):
        t = traces[r]
        if id(t) in seen or (t.same_as is not None and id(t.same_as) in seen):
            continue
        seen.add(id(t))
        astra2 = timing_meaning(timing).runner == "astra-2"
        for n in t.nodes:
            classify(n, files[r], network.ndims, network.npus, groups or {},
                      npu_sizes(network), astra2, r)


def npu_sizes(network: Network) -> tuple[int, ...]:
    """The NPUs of each dimension."""
    return tuple(d.npus for d in network.dims)
