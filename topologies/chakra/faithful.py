"""Faithful ETs of ASTRA-sim 1.0 workloads (``themis convert --faithful``): chakra's graph
with what its text converter leaves out, so that the traces mean what ASTRA-sim 1.0 runs.

See :func:`convert_faithful` and ``docs/chakra.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from topologies.chakra.convert import build, check_args, metadata
from topologies.chakra.et import Attribute, Node
from topologies.chakra.trace import Trace
from topologies.chakra.types import NodeType
from topologies.errors import InputError
from topologies.network import npu_coords

__all__ = ["FaithfulETs", "convert_faithful", "dimension_mask", "group_members"]

#: Keywords whose weight gradients span every dimension and whose other collectives none
#: (ASTRA-sim 1.0's ``Workload`` loops; ``themis.training.dims`` has the same table).
_DATA_LIKE = ("MICRO", "DATA", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED")


def dimension_mask(kind: str, layer: int, phase: str, ndims: int) -> tuple[bool, ...]:
    """The dimensions ASTRA-sim 1.0 runs layer ``layer``'s ``phase`` (``fwd``, ``ig``,
    ``wg``) collective on, for the workload keyword ``kind`` (one of chakra's)."""
    every, none = (True,) * ndims, (False,) * ndims
    if kind.startswith("HYBRID_DLRM") and layer == 0:
        return every
    if kind in _DATA_LIKE:
        return every if phase == "wg" else none
    if kind == "MODEL":
        return none if phase == "wg" else every
    first = tuple(d == 0 for d in range(ndims))
    rest = tuple(d != 0 for d in range(ndims))
    model, data = (first, rest) if kind == "HYBRID_DATA_MODEL" else (rest, first)
    return data if phase == "wg" else model


def group_members(rank: int, mask: tuple[bool, ...], sizes: tuple[int, ...]) -> list[int]:
    """The NPUs that share ``rank``'s coordinates on every dimension ``mask`` leaves out
    (ASTRA-sim's numbering: dimension 0 varies fastest), in ascending order."""
    coords = npu_coords(rank, sizes)
    members = [0]
    stride = 1
    for d, size in enumerate(sizes):
        if mask[d]:
            members = [m + c * stride for c in range(size) for m in members]
        else:
            members = [m + coords[d] * stride for m in members]
        stride *= size
    return sorted(members)


@dataclass
class FaithfulETs:
    """What :func:`convert_faithful` writes: the traces, the comm groups, what was rounded."""

    traces: dict[int, Trace]
    #: ``{"<id>": [npu ids]}`` (ids from 1), the ``--comm-group-configuration`` file.
    groups: dict[str, list[int]]
    #: Compute nodes whose time was rounded to a whole microsecond, and the largest change.
    rounded: int = 0
    max_rounding_ns: float = 0.0
    #: Collective nodes left out: ``NONE`` or spanning no dimension (1.0 moves nothing).
    dropped: int = 0


def convert_faithful(text: str, sizes: tuple[int, ...], passes: int = 1,
                     schema: str = "1.0.0", file: str = "", clock_GHz: float = 1.0,
                     comm_groups: bool = True) -> FaithfulETs:
    """ETs of the 1.0 workload ``text`` that mean what ASTRA-sim 1.0 runs: chakra's graph
    (same nodes, ids and dependencies) with compute in microseconds (cycles at
    ``clock_GHz``: ``cycles / (1000 x clock_GHz)``, rounded to a whole microsecond, the
    ET's unit), each collective's ``involved_dim`` from the workload's keyword over the
    network's dimensions ``sizes`` (:func:`dimension_mask`), a collective that moves
    nothing in 1.0 (``NONE``, or spanning no dimension) left out (its dependents take its
    dependencies), and, with ``comm_groups``, a collective on fewer dimensions than all
    named by ``pg_name`` after its group (:func:`group_members`) in :attr:`FaithfulETs.groups`.
    """
    npus = 1
    for size in sizes:
        npus *= size
    check_args(schema, npus, passes)
    if not clock_GHz > 0 or clock_GHz == float("inf"):
        raise InputError("must be a positive number of GHz", "--clock-GHz", clock_GHz)
    kind, b = build(text, passes, file)
    ndims = len(sizes)
    out = FaithfulETs({}, {})
    gone: dict[int, list[int]] = {}  # a dropped node -> its own dependencies
    rank0: list[tuple[Node, tuple[bool, ...] | None]] = []
    for n in b.nodes:
        deps = []
        for d in n.data_deps:
            deps.extend(gone.get(d, [d]))
        node = Node(id=n.id, name=n.name, type=n.type, data_deps=list(dict.fromkeys(deps)),
                    attrs=list(n.attrs))
        mask = None
        if n.type == NodeType.COMP_NODE:
            exact = n.duration_micros / (1000.0 * clock_GHz)
            node.duration_micros = int(exact + 0.5)
            if node.duration_micros != exact:
                out.rounded += 1
                out.max_rounding_ns = max(out.max_rounding_ns,
                                          abs(node.duration_micros - exact) * 1000)
        elif n.id in b.comms:
            layer, phase, ctype = b.comms[n.id]
            mask = dimension_mask(kind, layer, phase, ndims)
            if ctype == "NONE" or not any(mask):
                gone[n.id] = node.data_deps
                out.dropped += 1
                continue
            node.attrs.append(Attribute("involved_dim", "bool_list", list(mask)))
        rank0.append((node, mask))
    meta = metadata(text, schema)
    ids: dict[tuple[int, ...], int] = {}
    for rank in range(npus):
        shift = rank * len(b.nodes)
        nodes = []
        for n, mask in rank0:
            attrs = list(n.attrs)
            if mask is not None and comm_groups and not all(mask):
                members = tuple(group_members(rank, mask, sizes))
                gid = ids.setdefault(members, len(ids) + 1)
                attrs.append(Attribute("pg_name", "string", str(gid)))
            nodes.append(Node(id=n.id + shift, name=n.name, type=n.type,
                              data_deps=[d + shift for d in n.data_deps],
                              duration_micros=n.duration_micros, attrs=attrs))
        out.traces[rank] = Trace(meta, nodes)
    out.groups = {str(g): list(m) for m, g in ids.items()}
    return out
