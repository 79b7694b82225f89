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
    decode_node,
    encode_metadata,
    encode_node,
)
from topologies.chakra.types import CommType, NodeType
from topologies.chakra.wire import WireError, encode_varint, iter_delimited, iter_fields
from topologies.errors import InputError


@dataclass
class Trace:
    """The ``GlobalMetadata`` and nodes of one ET file, in file order."""

    metadata: GlobalMetadata
    nodes: list[Node] = field(default_factory=list)


def _is_legacy(first: bytes) -> bool:
    """A v0.0.1 trace starts with a Node (varint id in field 1), not a GlobalMetadata."""
    try:
        fields = list(iter_fields(first))
    except WireError:
        return False
    return any(f.number == 1 and f.wire_type == 0 for f in fields)


def parse_et(data: bytes, file: str) -> Trace:
    """A trace from the bytes of an ET file (checked; see :func:`check_trace`)."""
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
            nodes.append(decode_node(payload))
        except WireError as err:
            raise InputError(str(err), field=f"node at byte {offset}", file=file) from None
        except SchemaError as err:
            raise InputError(
                err.reason, field=f"node at byte {offset}: {err.field_name}", file=file
            ) from None
    trace = Trace(meta, nodes)
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


def read_et(path: str | Path) -> Trace:
    """Read and check one ``.et`` file."""
    from topologies.files import check_input_file

    p = Path(path)
    check_input_file(p, "trace")
    try:
        data = p.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", file=str(p)) from None
    return parse_et(data, str(p))


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
