"""One ET file: read (checked) and written byte-exact.

Every malformed trace is an :class:`InputError` naming the file, the node and the attribute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from topologies.chakra.et import (
    GlobalMetadata,
    Node,
    SchemaError,
    decode_metadata,
    encode_metadata,
    encode_node,
)
from topologies.chakra.fast import read_node
from topologies.chakra.types import CommType, NodeType
from topologies.chakra.wire import WireError, encode_varint, iter_delimited, iter_fields
from topologies.errors import InputError


@dataclass
class Trace:
    """The ``GlobalMetadata`` and nodes of one ET file, in file order."""

    metadata: GlobalMetadata
    nodes: list[Node] = field(default_factory=list)
    #: The checked trace this one equals up to an id offset (:func:`same_up_to_offset`),
    #: when reading found it so.
    same_as: Trace | None = field(default=None, compare=False, repr=False)


def _is_legacy(first: bytes) -> bool:
    """A v0.0.1 trace starts with a Node (varint id in field 1), not a GlobalMetadata."""
    try:
        fields = list(iter_fields(first))
    except WireError:
        return False
    return any(f.number == 1 and f.wire_type == 0 for f in fields)


def same_up_to_offset(nodes: list[Node], like: list[Node]) -> bool:
    """Whether ``nodes`` are ``like`` with every id and dependency moved by one constant and
    all else equal (how chakra's converter numbers ranks on): then every check of
    :func:`check_trace` gives the same answer for both, and both run the same."""
    if len(nodes) != len(like) or not nodes:
        return False
    off = nodes[0].id - like[0].id
    for a, b in zip(nodes, like, strict=True):
        if a.id - b.id != off or a.type != b.type or a.name != b.name \
                or a.duration_micros != b.duration_micros \
                or a.start_time_micros != b.start_time_micros or a.attrs != b.attrs \
                or a.inputs != b.inputs or a.outputs != b.outputs \
                or len(a.data_deps) != len(b.data_deps) or len(a.ctrl_deps) != len(b.ctrl_deps):
            return False
        for x, y in zip(a.data_deps, b.data_deps, strict=True):
            if x - y != off:
                return False
        for x, y in zip(a.ctrl_deps, b.ctrl_deps, strict=True):
            if x - y != off:
                return False
    return True


def parse_et(data: bytes, file: str, like: Trace | None = None) -> Trace:
    """A trace from the bytes of an ET file (checked; see :func:`check_trace`). A trace
    that is ``like`` (an already checked trace) up to an id offset needs no second check."""
    try:
        messages = list(iter_delimited(data))
    except WireError as err:
        raise InputError(str(err), file=file) from None
    if not messages:
        raise InputError("empty file: no GlobalMetadata", file=file)
    if _is_legacy(messages[0][1]):
        raise InputError(
            "legacy Chakra v0.0.1 schema (no GlobalMetadata, fields numbered differently): "
            "re-convert it with chakra >= 0.0.4",
            file=file,
        )
    try:
        meta = decode_metadata(messages[0][1])
    except (WireError, SchemaError) as err:
        raise InputError(str(err), field="GlobalMetadata", file=file) from None
    if meta.version.startswith("0.0.1"):
        raise InputError(
            "legacy Chakra v0.0.1 schema: re-convert it with chakra >= 0.0.4",
            field="GlobalMetadata.version",
            value=meta.version,
            file=file,
        )
    nodes = []
    for offset, payload in messages[1:]:
        try:
            nodes.append(read_node(payload))
        except WireError as err:
            raise InputError(str(err), field=f"node at byte {offset}", file=file) from None
        except SchemaError as err:
            raise InputError(
                err.reason, field=f"node at byte {offset}: {err.field_name}", file=file
            ) from None
    trace = Trace(meta, nodes)
    if like is not None and same_up_to_offset(nodes, like.nodes):
        trace.same_as = like
    else:
        check_trace(trace, file)
    return trace


def check_trace(trace: Trace, file: str) -> None:
    """Refuse unknown node types or comm types, duplicate ids, dangling dependencies and cycles."""
    ids: set[int] = set()
    for node in trace.nodes:
        where = f"node {node.id}"
        if node.id in ids:
            raise InputError("duplicate node id", field=f"{where}.id", value=node.id, file=file)
        ids.add(node.id)
        if node.type not in NodeType._value2member_map_:
            raise InputError("unknown node type", field=f"{where}.type", value=node.type, file=file)
        comm = node.attr("comm_type")
        if comm is not None and (
            not isinstance(comm.value, int)
            or isinstance(comm.value, bool)
            or comm.value not in CommType._value2member_map_
        ):
            raise InputError(
                "unknown collective comm_type",
                field=f"{where}.comm_type",
                value=comm.value,
                file=file,
            )
    for node in trace.nodes:
        for name, deps in (("data_deps", node.data_deps), ("ctrl_deps", node.ctrl_deps)):
            for dep in deps:
                if dep not in ids:
                    raise InputError(
                        "dependency on a node not in the file",
                        field=f"node {node.id}.{name}",
                        value=dep,
                        file=file,
                    )
    pending = {n.id: len(set(n.deps)) for n in trace.nodes}
    users: dict[int, list[int]] = {}
    for n in trace.nodes:
        for dep in set(n.deps):
            users.setdefault(dep, []).append(n.id)
    ready = [i for i, k in pending.items() if k == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for u in users.get(i, []):
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    if done < len(trace.nodes):
        stuck = min(i for i, k in pending.items() if k > 0)
        raise InputError(
            "dependency cycle (or a node depending on one)", field=f"node {stuck}.deps", file=file
        )


def read_et(path: str | Path, like: Trace | None = None) -> Trace:
    """Read and check one ``.et`` file (``like``: see :func:`parse_et`)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", file=str(p)) from None
    return parse_et(data, str(p), like)


def et_bytes(trace: Trace) -> bytes:
    """The bytes of an ET file holding ``trace`` (canonical protobuf encoding)."""
    out = bytearray()
    for payload in [encode_metadata(trace.metadata), *(encode_node(n) for n in trace.nodes)]:
        out += encode_varint(len(payload)) + payload
    return bytes(out)


def write_et(trace: Trace, path: str | Path) -> None:
    """Write ``trace`` to ``path`` (whole file at once: nothing half-written)."""
    data = et_bytes(trace)
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(p)
