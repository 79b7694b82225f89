"""A :class:`~themis.program.Program` the project holds, written as Chakra ETs.

:func:`program_to_ets` turns a program (one graph for every rank, or one per rank) into
one trace per rank and a comm-group file, as ASTRA-sim 2.x reads them (``docs/chakra.md``):

* a compute node becomes a ``COMP_NODE`` of ``duration_ns`` in whole microseconds (the
  ET's unit; rounded half up, and :attr:`ProgramETs.rounded` says how many and by how much);
* a collective node becomes a ``COMM_COLL_NODE`` with ``comm_type``, ``comm_size`` (bytes;
  for an all-gather each rank's shard: the program's output size over the NPUs it spans,
  as a Chakra ``comm_size``), ``comm_priority`` when not 0, ``involved_dim`` from its
  dimension mask, or ``pg_name`` naming its NPU group in :attr:`ProgramETs.groups`
  (``{"<id>": [npu ids]}``, ids from 1);
* a delay node (a wait that is not compute, e.g. ASTRA-sim 1.0's one-cycle state change)
  is left out, its dependents taking its dependencies: an ET has no such node, and a
  compute node would hold the compute slot;
* dependencies become ``data_deps``; node ids are kept (every rank's graph numbered alike).

What an ET cannot say is dropped and counted in :attr:`ProgramETs.dropped`: a collective's
``blocking`` flag and ``finish_delay_ns`` (2.x's slots decide when a node may start),
``pass_end`` markers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from themis.program import NodeKind, Program
from topologies.chakra.convert import CHAKRA_SCHEMAS
from topologies.chakra.et import Attribute, GlobalMetadata
from topologies.chakra.et import Node as ETNode
from topologies.chakra.trace import Trace
from topologies.chakra.types import COLLECTIVE_KINDS, NodeType
from topologies.errors import InputError

__all__ = ["ProgramETs", "program_to_ets"]

#: Program collective kinds -> ``comm_type`` (the reader's mapping, inverted).
COMM_TYPES = {kind: ctype for ctype, kind in COLLECTIVE_KINDS.items()}


@dataclass
class ProgramETs:
    """What :func:`program_to_ets` writes: one trace per rank, the comm groups, what changed."""

    traces: dict[int, Trace]
    #: ``{"<id>": [npu ids]}`` (ids from 1), the ``--comm-group-configuration`` file.
    groups: dict[str, list[int]] = field(default_factory=dict)
    #: Compute nodes whose time was rounded to a whole microsecond, and the largest change.
    rounded: int = 0
    max_rounding_ns: int = 0
    #: What an ET cannot hold, per kind: ``delay`` nodes, ``blocking`` collectives,
    #: ``finish_delay_ns`` collectives, ``pass_end`` markers (counted over rank 0's graph).
    dropped: dict[str, int] = field(default_factory=dict)


def program_to_ets(program: Program | Mapping[int, Program], sizes: tuple[int, ...],
                   schema: str = "1.0.0") -> ProgramETs:
    """``program`` as per-rank Chakra ETs on a network of dimension ``sizes`` (module
    docstring). One :class:`Program` stands for every rank (a collective on an NPU group
    must then hold every rank); a mapping gives each rank 0..N-1 its own. Masks must have
    one entry per dimension. Raises :class:`InputError` in one line naming the node."""
    npus = math.prod(sizes)
    per_rank = dict(program) if isinstance(program, Mapping) else \
        {r: program for r in range(npus)}
    if sorted(per_rank) != list(range(npus)):
        raise InputError(f"a program per rank 0..{npus - 1} is needed", "ranks",
                         sorted(per_rank))
    if schema not in CHAKRA_SCHEMAS:
        raise InputError(f"one of {', '.join(CHAKRA_SCHEMAS)}", "schema", schema)
    meta = GlobalMetadata(attrs=[Attribute("schema", "string", CHAKRA_SCHEMAS[schema])])
    out = ProgramETs({})
    gids: dict[tuple[int, ...], int] = {}
    for rank in range(npus):
        prog = per_rank[rank]
        where = prog.name or "program"
        gone: dict[int, list[int]] = {}
        nodes: list[ETNode] = []
        dropped = {"delay": 0, "blocking": 0, "finish_delay_ns": 0, "pass_end": 0}
        for n in prog.nodes:
            deps: list[int] = []
            for d in n.deps:
                deps.extend(gone.get(d, [d]))
            deps = list(dict.fromkeys(deps))
            dropped["pass_end"] += n.pass_end
            if n.kind is NodeKind.DELAY:
                gone[n.id] = deps
                dropped["delay"] += 1
                continue
            name = n.name or f"{n.kind.value}{n.id}"
            if n.kind is NodeKind.COMPUTE:
                micros = (n.duration_ns + 500) // 1000
                if rank == 0 and micros * 1000 != n.duration_ns:
                    out.rounded += 1
                    out.max_rounding_ns = max(out.max_rounding_ns,
                                              abs(micros * 1000 - n.duration_ns))
                nodes.append(ETNode(n.id, name, NodeType.COMP_NODE, data_deps=deps,
                                    duration_micros=micros))
                continue
            assert n.collective is not None
            dropped["blocking"] += n.blocking
            dropped["finish_delay_ns"] += n.finish_delay_ns > 0
            attrs = [Attribute("comm_type", "int64", int(COMM_TYPES[n.collective]))]
            if n.group is not None:
                if rank not in n.group:
                    raise InputError(f"{where}: node {n.id} ({name}): rank {rank} is not in "
                                     "the collective's NPU group (give a program per rank)",
                                     "group", list(n.group))
                bad = [m for m in n.group if not 0 <= m < npus]
                if bad:
                    raise InputError(f"{where}: node {n.id} ({name}): an NPU the network "
                                     f"has not ({npus} NPUs)", "group", bad)
                span = len(n.group)
                key = tuple(n.group)
                gid = gids.setdefault(key, len(gids) + 1)
                extra = [Attribute("pg_name", "string", str(gid))]
            else:
                mask = n.mask or ()
                if len(mask) != len(sizes):
                    raise InputError(f"{where}: node {n.id} ({name}): the mask has "
                                     f"{len(mask)} entries for {len(sizes)} dimensions",
                                     "mask", list(mask))
                span = math.prod(s for s, on in zip(sizes, mask, strict=True) if on)
                extra = [Attribute("involved_dim", "bool_list", list(mask))]
            size = n.size_bytes // span if n.collective == "all-gather" else n.size_bytes
            if size <= 0:
                raise InputError(f"{where}: node {n.id} ({name}): an all-gather of "
                                 f"{n.size_bytes} bytes over {span} NPUs leaves no shard",
                                 "size_bytes", n.size_bytes)
            attrs.append(Attribute("comm_size", "int64", size))
            if n.priority:
                attrs.append(Attribute("comm_priority", "int64", n.priority))
            nodes.append(ETNode(n.id, name, NodeType.COMM_COLL_NODE, data_deps=deps,
                                attrs=attrs + extra))
        if rank == 0:
            out.dropped = {k: v for k, v in dropped.items() if v}
        out.traces[rank] = Trace(meta, nodes)
    out.groups = {str(g): list(m) for m, g in gids.items()}
    return out
