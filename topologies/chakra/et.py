"""Chakra execution-trace messages (schema ``et_def.proto``, package ChakraProtoMsg).

Dataclasses for ``GlobalMetadata``, ``Node``, ``IOInfo`` and ``AttributeProto``,
decoded from and encoded to the protobuf wire format by :mod:`.wire`. A file is
one varint-length-delimited ``GlobalMetadata`` followed by ``Node`` messages.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from topologies.chakra.wire import (
    Field,
    WireType,
    encode_varint,
    iter_fields,
    len_field,
    packed_field,
    packed_varints,
    to_signed32,
    to_signed64,
    varint_field,
    zigzag_decode,
    zigzag_encode,
)

# oneof field number -> (name, scalar kind). Lists are the next (even) number.
SCALAR_KINDS: dict[int, str] = {
    3: "double",
    5: "float",
    7: "int32",
    9: "int64",
    11: "uint32",
    13: "uint64",
    15: "sint32",
    17: "sint64",
    19: "fixed32",
    21: "fixed64",
    23: "sfixed32",
    25: "sfixed64",
    27: "bool",
    29: "string",
    31: "bytes",
}
KIND_NUMBERS: dict[str, int] = {kind: number for number, kind in SCALAR_KINDS.items()}
_FIXED: dict[str, struct.Struct] = {
    "double": struct.Struct("<d"),
    "float": struct.Struct("<f"),
    "fixed32": struct.Struct("<I"),
    "fixed64": struct.Struct("<Q"),
    "sfixed32": struct.Struct("<i"),
    "sfixed64": struct.Struct("<q"),
}
_VARINT_KINDS = frozenset({"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"})

AttrValue = (
    int
    | float
    | bool
    | str
    | bytes
    | list[int]
    | list[float]
    | list[bool]
    | list[str]
    | list[bytes]
)


@dataclass
class Attribute:
    """One ``AttributeProto``: a name, a value kind (``int64``, ``bool_list``...) and the value."""

    name: str
    kind: str
    value: AttrValue
    doc_string: str = ""

    @property
    def is_list(self) -> bool:
        """Whether the value is one of the ``*_list`` kinds."""
        return self.kind.endswith("_list")


@dataclass
class IOInfo:
    """``IOInfo``: the string-encoded values, shapes and types of a node's inputs or outputs."""

    values: str = ""
    shapes: str = ""
    types: str = ""


@dataclass
class GlobalMetadata:
    """The first message of an ET file."""

    version: str = ""
    attrs: list[Attribute] = field(default_factory=list)


@dataclass
class Node:
    """One ET node; the type is kept as its raw number so bad values can be reported."""

    id: int
    name: str = ""
    type: int = 0
    ctrl_deps: list[int] = field(default_factory=list)
    data_deps: list[int] = field(default_factory=list)
    start_time_micros: int = 0
    duration_micros: int = 0
    inputs: IOInfo | None = None
    outputs: IOInfo | None = None
    attrs: list[Attribute] = field(default_factory=list)

    def attr(self, name: str) -> Attribute | None:
        """The first attribute called ``name``, if any."""
        for a in self.attrs:
            if a.name == name:
                return a
        return None

    @property
    def deps(self) -> list[int]:
        """Data then control dependencies, each id once."""
        return list(dict.fromkeys(self.data_deps + self.ctrl_deps))


class SchemaError(ValueError):
    """A well-formed protobuf message that does not fit the Chakra schema: ``field`` names where."""

    def __init__(self, reason: str, field_name: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field_name = field_name


def _text(f: Field, where: str) -> str:
    if f.wire_type != WireType.LEN:
        raise SchemaError(f"wire type {int(f.wire_type)} where a string is expected", where)
    assert isinstance(f.value, bytes)
    try:
        return f.value.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SchemaError("string is not UTF-8", where) from err


def _uint(f: Field, where: str) -> int:
    if f.wire_type != WireType.VARINT:
        raise SchemaError(f"wire type {int(f.wire_type)} where a varint is expected", where)
    assert isinstance(f.value, int)
    return f.value


def _scalar_from_varint(kind: str, raw: int) -> int | bool:
    if kind == "int64":
        return to_signed64(raw)
    if kind == "int32":
        return to_signed32(raw)
    if kind == "uint32":
        return raw & 0xFFFFFFFF
    if kind in ("sint32", "sint64"):
        return zigzag_decode(raw)
    if kind == "bool":
        return raw != 0
    return raw


def _scalar_to_varint(kind: str, value: int | bool) -> int:
    if kind in ("sint32", "sint64"):
        return zigzag_encode(int(value))
    return int(value)


def _decode_list(kind: str, payload: bytes, where: str) -> AttrValue:
    if kind in ("string", "bytes"):
        items: list[str] | list[bytes] = []
        for f in iter_fields(payload):
            if f.number != 1 or f.wire_type != WireType.LEN:
                raise SchemaError(f"unexpected field {f.number} in a {kind} list", where)
            assert isinstance(f.value, bytes)
            items.append(_text(f, where) if kind == "string" else f.value)  # type: ignore[arg-type]
        return items
    values: list = []
    for f in iter_fields(payload):
        if f.number != 1:
            raise SchemaError(f"unexpected field {f.number} in a {kind} list", where)
        if kind in _FIXED:
            fmt = _FIXED[kind]
            raw = f.value if isinstance(f.value, bytes) else b""
            if f.wire_type == WireType.LEN and len(raw) % fmt.size == 0:
                values.extend(v for (v,) in fmt.iter_unpack(raw))
            elif f.wire_type in (WireType.I32, WireType.I64) and len(raw) == fmt.size:
                values.append(fmt.unpack(raw)[0])
            else:
                raise SchemaError(f"bad {kind} list element", where)
        elif f.wire_type == WireType.LEN:
            assert isinstance(f.value, bytes)
            values.extend(_scalar_from_varint(kind, v) for v in packed_varints(f.value))
        elif f.wire_type == WireType.VARINT:
            assert isinstance(f.value, int)
            values.append(_scalar_from_varint(kind, f.value))
        else:
            raise SchemaError(f"bad {kind} list element", where)
    return values


def decode_attribute(payload: bytes, where: str) -> Attribute:
    """An ``AttributeProto`` from its bytes."""
    name, doc, kind, value = "", "", "", None
    for f in iter_fields(payload):
        if f.number == 1:
            name = _text(f, where + ".name")
        elif f.number == 2:
            doc = _text(f, where + ".doc_string")
        elif 3 <= f.number <= 32:
            is_list = f.number % 2 == 0
            base = SCALAR_KINDS[f.number - 1 if is_list else f.number]
            kind = base + "_list" if is_list else base
            label = (
                f"{where}[{name or '?'}].{kind}_val"
                if not is_list
                else f"{where}[{name or '?'}].{kind}"
            )
            if is_list:
                if f.wire_type != WireType.LEN:
                    raise SchemaError("list attribute is not length-delimited", label)
                assert isinstance(f.value, bytes)
                value = _decode_list(base, f.value, label)
            elif base in _FIXED:
                fmt = _FIXED[base]
                if (
                    not isinstance(f.value, bytes)
                    or len(f.value) != fmt.size
                    or f.wire_type == WireType.LEN
                ):
                    raise SchemaError(f"bad {base} value", label)
                value = fmt.unpack(f.value)[0]
            elif base in _VARINT_KINDS:
                value = _scalar_from_varint(base, _uint(f, label))
            elif base == "string":
                value = _text(f, label)
            else:
                if f.wire_type != WireType.LEN:
                    raise SchemaError("bytes attribute is not length-delimited", label)
                value = f.value
        else:
            raise SchemaError(f"unknown field number {f.number}", where)
    if not kind:
        raise SchemaError("attribute has no value", f"{where}[{name or '?'}]")
    assert value is not None
    return Attribute(name=name, kind=kind, value=value, doc_string=doc)


def encode_attribute(a: Attribute) -> bytes:
    """An ``AttributeProto``'s bytes (the oneof value is always written, as protobuf does)."""
    out = bytearray()
    if a.name:
        out += len_field(1, a.name.encode())
    if a.doc_string:
        out += len_field(2, a.doc_string.encode())
    base = a.kind.removesuffix("_list")
    number = KIND_NUMBERS[base]
    if a.is_list:
        assert isinstance(a.value, list)
        body = bytearray()
        if base in ("string", "bytes"):
            for item in a.value:
                body += len_field(1, item.encode() if isinstance(item, str) else bytes(item))  # type: ignore[arg-type]
        elif base in _FIXED and a.value:
            body += len_field(1, b"".join(_FIXED[base].pack(v) for v in a.value))
        else:
            body += packed_field(1, [_scalar_to_varint(base, v) for v in a.value])  # type: ignore[arg-type]
        out += len_field(number + 1, bytes(body))
    elif base in _FIXED:
        tag = WireType.I64 if _FIXED[base].size == 8 else WireType.I32
        out += encode_varint(number << 3 | int(tag)) + _FIXED[base].pack(a.value)
    elif base in _VARINT_KINDS:
        out += varint_field(number, _scalar_to_varint(base, a.value))  # type: ignore[arg-type]
    elif base == "string":
        assert isinstance(a.value, str)
        out += len_field(number, a.value.encode())
    else:
        assert isinstance(a.value, bytes)
        out += len_field(number, a.value)
    return bytes(out)


def _decode_io(payload: bytes, where: str) -> IOInfo:
    io = IOInfo()
    for f in iter_fields(payload):
        if f.number == 1:
            io.values = _text(f, where + ".values")
        elif f.number == 2:
            io.shapes = _text(f, where + ".shapes")
        elif f.number == 3:
            io.types = _text(f, where + ".types")
        else:
            raise SchemaError(f"unknown field number {f.number}", where)
    return io


def _encode_io(io: IOInfo) -> bytes:
    out = b""
    for number, text in ((1, io.values), (2, io.shapes), (3, io.types)):
        if text:
            out += len_field(number, text.encode())
    return out


def decode_metadata(payload: bytes) -> GlobalMetadata:
    """A ``GlobalMetadata`` from its bytes."""
    meta = GlobalMetadata()
    for f in iter_fields(payload):
        if f.number == 1:
            meta.version = _text(f, "GlobalMetadata.version")
        elif f.number == 2 and f.wire_type == WireType.LEN:
            assert isinstance(f.value, bytes)
            meta.attrs.append(decode_attribute(f.value, "GlobalMetadata.attr"))
        else:
            raise SchemaError(f"unknown field number {f.number}", "GlobalMetadata")
    return meta


def encode_metadata(meta: GlobalMetadata) -> bytes:
    """A ``GlobalMetadata``'s bytes."""
    out = len_field(1, meta.version.encode()) if meta.version else b""
    return out + b"".join(len_field(2, encode_attribute(a)) for a in meta.attrs)


def _deps(f: Field, where: str) -> list[int]:
    if f.wire_type == WireType.LEN:
        assert isinstance(f.value, bytes)
        return packed_varints(f.value)
    return [_uint(f, where)]


def decode_node(payload: bytes) -> Node:
    """A ``Node`` from its bytes; a :class:`SchemaError` names the attribute at fault."""
    node = Node(id=0)
    for f in iter_fields(payload):
        n = f.number
        if n == 1:
            node.id = _uint(f, "id")
        elif n == 2:
            node.name = _text(f, "name")
        elif n == 3:
            node.type = _uint(f, "type")
        elif n == 4:
            node.ctrl_deps.extend(_deps(f, "ctrl_deps"))
        elif n == 5:
            node.data_deps.extend(_deps(f, "data_deps"))
        elif n == 6:
            node.start_time_micros = _uint(f, "start_time_micros")
        elif n == 7:
            node.duration_micros = _uint(f, "duration_micros")
        elif n in (8, 9) and f.wire_type == WireType.LEN:
            assert isinstance(f.value, bytes)
            io = _decode_io(f.value, "inputs" if n == 8 else "outputs")
            if n == 8:
                node.inputs = io
            else:
                node.outputs = io
        elif n == 10 and f.wire_type == WireType.LEN:
            assert isinstance(f.value, bytes)
            node.attrs.append(decode_attribute(f.value, "attr"))
        else:
            raise SchemaError(
                f"unknown field number {n} (wire type {int(f.wire_type)})", f"field {n}"
            )
    return node


def encode_node(node: Node) -> bytes:
    """A ``Node``'s bytes, canonical as protobuf writes them."""
    out = bytearray()
    if node.id:
        out += varint_field(1, node.id)
    if node.name:
        out += len_field(2, node.name.encode())
    if node.type:
        out += varint_field(3, node.type)
    out += packed_field(4, node.ctrl_deps)
    out += packed_field(5, node.data_deps)
    if node.start_time_micros:
        out += varint_field(6, node.start_time_micros)
    if node.duration_micros:
        out += varint_field(7, node.duration_micros)
    if node.inputs is not None:
        out += len_field(8, _encode_io(node.inputs))
    if node.outputs is not None:
        out += len_field(9, _encode_io(node.outputs))
    for a in node.attrs:
        out += len_field(10, encode_attribute(a))
    return bytes(out)
