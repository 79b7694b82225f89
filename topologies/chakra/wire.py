"""The protobuf wire format, as much of it as Chakra execution traces use.

A small decoder and encoder so that ETs are read and written without the
``chakra`` package or generated protobuf code (no runtime version mismatch).
Encoding is canonical (fields in number order, repeated scalars packed, proto3
defaults omitted): what protobuf's own serializer writes, so a trace read and
written again is byte-identical.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from enum import IntEnum
from typing import NamedTuple


class WireError(ValueError):
    """Bytes that are not a well-formed protobuf message."""


class WireType(IntEnum):
    """Protobuf wire types (groups, 3 and 4, are not supported)."""

    VARINT = 0
    I64 = 1
    LEN = 2
    I32 = 5


class Field(NamedTuple):
    """One field occurrence: its number, wire type and raw value.

    ``value`` is an int for VARINT, the 8 or 4 raw bytes for I64/I32, and the
    payload bytes for LEN. (A named tuple: traces hold millions of fields.)
    """

    number: int
    wire_type: WireType
    value: int | bytes


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    if pos < len(data) and data[pos] < 0x80:  # one byte: most keys and small values
        return data[pos], pos + 1
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise WireError(f"truncated varint at byte {pos}")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift >= 70:
            raise WireError(f"varint longer than 10 bytes at byte {pos}")
    if result >= 1 << 64:
        raise WireError(f"varint over 64 bits at byte {pos}")
    return result, pos


def encode_varint(value: int) -> bytes:
    """``value`` as an unsigned varint (negatives as 64-bit two's complement)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def to_signed64(value: int) -> int:
    """An unsigned 64-bit varint read as int64."""
    return value - (1 << 64) if value >= 1 << 63 else value


def to_signed32(value: int) -> int:
    """A varint read as int32 (protobuf sign-extends negatives to 64 bits)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def zigzag_decode(value: int) -> int:
    """sint32/sint64 ZigZag decoding."""
    return (value >> 1) ^ -(value & 1)


def zigzag_encode(value: int) -> int:
    """sint64 ZigZag encoding."""
    return (value << 1) ^ (value >> 63) if value < 0 else value << 1


_VARINT, _I64, _LEN, _I32 = (WireType.VARINT, WireType.I64, WireType.LEN, WireType.I32)


def iter_fields(data: bytes) -> Iterator[Field]:
    """The fields of one message, in the order they appear."""
    pos = 0
    end = len(data)
    while pos < end:
        key = data[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire == 0:
            if pos < end and data[pos] < 0x80:
                value = data[pos]
                pos += 1
            else:
                value, pos = read_varint(data, pos)
            yield Field(number, _VARINT, value)
        elif wire == 2:
            if pos < end and data[pos] < 0x80:
                size = data[pos]
                pos += 1
            else:
                size, pos = read_varint(data, pos)
            if pos + size > end:
                raise WireError(f"field {number}: length {size} runs past the message end")
            yield Field(number, _LEN, data[pos : pos + size])
            pos += size
        elif wire == 1:
            if pos + 8 > end:
                raise WireError(f"field {number}: truncated 64-bit value")
            yield Field(number, _I64, data[pos : pos + 8])
            pos += 8
        elif wire == 5:
            if pos + 4 > end:
                raise WireError(f"field {number}: truncated 32-bit value")
            yield Field(number, _I32, data[pos : pos + 4])
            pos += 4
        else:
            raise WireError(f"field {number}: unsupported wire type {wire}")


def iter_delimited(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(offset, payload) of each varint-length-delimited message in a stream."""
    pos = 0
    while pos < len(data):
        start = pos
        size, pos = read_varint(data, pos)
        if pos + size > len(data):
            raise WireError(f"message at byte {start}: length {size} runs past the end of the file")
        yield start, data[pos : pos + size]
        pos += size


def packed_varints(payload: bytes) -> list[int]:
    """The varints of a packed repeated field."""
    out = []
    pos = 0
    while pos < len(payload):
        value, pos = read_varint(payload, pos)
        out.append(value)
    return out


def key(number: int, wire: WireType) -> bytes:
    """A field key."""
    return encode_varint(number << 3 | int(wire))


def len_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return key(number, WireType.LEN) + encode_varint(len(payload)) + payload


def varint_field(number: int, value: int) -> bytes:
    """A varint field."""
    return key(number, WireType.VARINT) + encode_varint(value)


def packed_field(number: int, values: list[int]) -> bytes:
    """A packed repeated varint field (empty when there are no values)."""
    if not values:
        return b""
    return len_field(number, b"".join(encode_varint(v) for v in values))


def fixed_struct(fmt: str) -> struct.Struct:
    """A little-endian struct for fixed-width values."""
    return struct.Struct("<" + fmt)
