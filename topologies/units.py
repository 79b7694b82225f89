"""Units of the model (model.md §1): bytes, GB/s with 1 GB = 2^30 bytes, ns."""

from __future__ import annotations

import math
import re

from topologies.errors import InputError

GiB = 1 << 30
MiB = 1 << 20
KiB = 1 << 10

#: Largest accepted collective size: 1 PiB. Larger is surely a typo.
MAX_SIZE_BYTES = 1 << 50

#: Accepted per-dimension bandwidths (GB/s): 1 KB/s to 1 EB/s. Outside, stage
#: times of sizes up to MAX_SIZE_BYTES stop being finite or meaningful.
MIN_BANDWIDTH_GBPS = 1e-6
MAX_BANDWIDTH_GBPS = 1e9

#: Largest accepted latency or endpoint delay: 1e12 ns (about 17 minutes).
MAX_LATENCY_NS = 1e12

_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_FACTORS = {
    None: 1,
    "b": 1,
    "kib": KiB,
    "mib": MiB,
    "gib": GiB,
    "tib": 1 << 40,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
}


def GBps_to_bytes_per_ns(bandwidth_GBps: float) -> float:
    """Convert ASTRA-sim GB/s (1 GB = 2^30 bytes) to bytes per ns."""
    return bandwidth_GBps * GiB / 1e9


def parse_size(text: str | int, field: str = "size") -> int:
    """Parse ``1GiB``, ``64MiB``, ``512KiB``, ``1048576`` into bytes.

    KiB/MiB/GiB are powers of 1024, kB/MB/GB powers of 1000. Zero, negative,
    fractional byte counts, non-numbers and sizes above 1 PiB are rejected with
    an :class:`InputError` naming ``field``.
    """
    if isinstance(text, bool):
        raise InputError("not a size", field, text)
    if isinstance(text, int):
        value = text
    else:
        m = _SIZE_RE.match(str(text))
        if not m:
            raise InputError("not a size (use e.g. 1GiB, 64MiB, 512KiB or bytes)", field, text)
        number, unit = m.group(1), m.group(2)
        factor = _FACTORS[unit.lower() if unit else None]
        raw = float(number) * factor
        if not math.isfinite(raw) or raw != int(raw):
            raise InputError("size must be a whole number of bytes", field, text)
        value = int(raw)
    if value <= 0:
        raise InputError("size must be positive", field, text)
    if value > MAX_SIZE_BYTES:
        raise InputError("size is absurdly large (more than 1 PiB)", field, text)
    return value


def format_size(size_bytes: float) -> str:
    """Render bytes with the largest binary unit that divides them evenly."""
    size = int(size_bytes)
    if size != size_bytes:
        return f"{size_bytes:g}B"
    for name, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{name}"
    return f"{size}B"
