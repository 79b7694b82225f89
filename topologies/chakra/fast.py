"""A fast decoder of the common Chakra nodes (the general one: ``et.decode_node``).

Reading a rank set is dominated by decoding nodes (137,600 of them for 32 ranks of 4,300): this
reads the fields converted and captured traces use in one loop, and hands anything else (inputs,
outputs, a wire type out of place, bad UTF-8, an unusual attribute) to the general decoder, which
gives the error naming the field. Both give the same ``Node``.
"""

from __future__ import annotations

from topologies.chakra.et import Attribute, Node, SchemaError, decode_attribute, decode_node
from topologies.chakra.wire import to_signed64

__all__ = ["read_node"]


class _Slow(Exception):
    """The fast node decoder met something it leaves to the general one."""


def _varint_at(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >= 1 << 64:
                raise _Slow
            return result, pos
        shift += 7
        if shift >= 70:
            raise _Slow
    raise _Slow


def _fast_int64_attr(data: bytes, pos: int, stop: int) -> Attribute | None:
    """The usual attribute (a name, then an ``int64_val``: ``comm_type``, ``comm_size``...)
    read directly; ``None`` for any other layout."""
    if stop - pos < 4 or data[pos] != 0x0A or data[pos + 1] >= 0x80:
        return None
    at = pos + 2 + data[pos + 1]
    if at >= stop or data[at] != 0x48:  # field 9 (int64_val), varint
        return None
    try:
        value, end = _varint_at(data, at + 1, stop)
        name = data[pos + 2:at].decode("utf-8")
    except (_Slow, UnicodeDecodeError):
        return None
    if end != stop:
        return None
    return Attribute(name=name, kind="int64", value=to_signed64(value))


def _fast_node(payload: bytes) -> Node:
    """The common nodes (id, name, type, deps, times, attributes) in one loop; anything
    else (inputs/outputs, a wire type out of place, bad UTF-8) raises :class:`_Slow`."""
    node = Node(id=0)
    pos, end = 0, len(payload)
    while pos < end:
        key = payload[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint_at(payload, pos, end)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value = payload[pos] if pos < end else 0x80
            if value < 0x80:
                pos += 1
            else:
                value, pos = _varint_at(payload, pos, end)
            if number == 1:
                node.id = value
            elif number == 3:
                node.type = value
            elif number == 7:
                node.duration_micros = value
            elif number == 6:
                node.start_time_micros = value
            elif number == 5:
                node.data_deps.append(value)
            elif number == 4:
                node.ctrl_deps.append(value)
            else:
                raise _Slow
        elif wire == 2:
            size, pos = _varint_at(payload, pos, end)
            stop = pos + size
            if stop > end:
                raise _Slow
            if number == 2:
                node.name = payload[pos:stop].decode("utf-8")
            elif number == 10:
                node.attrs.append(_fast_int64_attr(payload, pos, stop)
                                  or decode_attribute(payload[pos:stop], "attr"))
            elif number in (4, 5):
                deps = node.data_deps if number == 5 else node.ctrl_deps
                while pos < stop:
                    value = payload[pos]
                    if value < 0x80:
                        pos += 1
                    else:
                        value, pos = _varint_at(payload, pos, stop)
                    deps.append(value)
            else:
                raise _Slow
            pos = stop
        else:
            raise _Slow
    return node


def read_node(payload: bytes) -> Node:
    """A ``Node`` from its bytes: the fast path, else the general decoder (and its errors)."""
    try:
        return _fast_node(payload)
    except (_Slow, UnicodeDecodeError, SchemaError):
        return decode_node(payload)
