"""ASTRA-sim system files: 1.0 ``key: value`` text and 2.x system JSON."""

from __future__ import annotations

import math
import os
import re
from typing import Any

from topologies.astra.validators import (
    as_mapping,
    latency,
    load_json,
    read_text,
    warn_unknown,
    whole_number,
)
from topologies.errors import InputError
from topologies.system import (
    ALGORITHMS,
    INTER_ALIASES,
    INTRA_ALIASES,
    SystemConfig,
    canonical_algorithm,
    unmodelled_scheduling,
)

__all__ = ["IMPLEMENTATION_KEYS", "SYSTEM_IGNORED_KEYS", "parse_system", "read_system"]

#: Known ASTRA-sim 1.0 / 2.x system keys that do not matter here (ignored silently).
SYSTEM_IGNORED_KEYS: frozenset[str] = frozenset(
    {
        # 1.0
        "broadcast-implementation",
        "direct-collective-window",
        "local-reduction-delay",
        "packet-routing",
        "injection-policy",
        "intra-dimension-parallel",
        "model-shared-bus",
        "seprate-log",
        "separate-log",
        "L",
        "o",
        "g",
        "G",
        # 2.x
        "all-to-all-implementation-custom",
        "per-node-custom-implementation",
        "local-reduce-delay",
        "roofline-enabled",
        "peak-perf",
        "trace-enabled",
        "replay-only",
        "track-local-mem",
        "local-mem-trace-filename",
    }
)

IMPLEMENTATION_KEYS = {
    "all-reduce-implementation": "all_reduce_algorithms",
    "reduce-scatter-implementation": "reduce_scatter_algorithms",
    "all-gather-implementation": "all_gather_algorithms",
}

#: 2.x keys naming custom collective implementations (Chakra ET files): refused,
#: since only ASTRA-sim's native algorithms are modelled.
CUSTOM_IMPLEMENTATION_KEYS: frozenset[str] = frozenset(
    f"{key}-custom" for key in IMPLEMENTATION_KEYS
)

#: Keys that only a network file has: a system file holding them is a network file.
_NETWORK_ONLY_KEYS: frozenset[str] = frozenset(
    {"topology", "npus_count", "topologies-per-dim", "units-count", "links-count",
     "link-bandwidth"}
)

_COLLECTIVE_OPTIMIZATIONS = {"baseline": "baseline", "localbwaware": "localBWAware"}


def _scalar_text(value: Any, key: str, file: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError("must be a single value", key, value, file)
    text = str(value).strip()
    if not text:
        raise InputError("missing value", key, value, file)
    return text


def _ascii_number(value: str, key: str, file: str) -> str:
    """``value`` stripped, refused unless written in ASCII (no ``_`` separators): Python
    reads ``1_6`` and Arabic-Indic or full-width digits, ASTRA-sim's C++ readers do not."""
    text = value.strip()
    if not text.isascii() or "_" in text:
        raise InputError("must be a number in ASCII digits without underscores "
                         "(as ASTRA-sim's C++ readers take it)", key, text, file)
    return text


def _int_setting(value: Any, key: str, file: str, minimum: int) -> int:
    if isinstance(value, str):
        text = _ascii_number(value, key, file)
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise InputError("must be a whole number", key, text, file) from None
    return whole_number(value, key, file, minimum)


def _astra10_integer(value: str, key: str, file: str) -> None:
    """Refuse 1.0 text that ASTRA-sim 1.0 would read as another integer.

    ASTRA-sim 1.0 reads ``preferred-dataset-splits``, ``active-chunks-per-dimension``,
    ``endpoint-delay`` and ``boost-mode`` into ``int`` with ``operator>>``, which
    stops at the first non-digit: ``1e3`` is 1 to it, ``2.5`` is 2.
    """
    text = value.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return
    read = re.match(r"[+-]?\d+", text)
    if read:  # (no digits at all: the key's own check says what it expects)
        raise InputError(f"ASTRA-sim 1.0 reads a whole number here and would read it as "
                         f"{int(read.group())}: write the integer itself", key, text, file)


#: The values ASTRA-sim 1.0 accepts, exactly (``Sys::parse_var`` and
#: ``post_process_inputs`` compare strings; any other spelling stops it).
ASTRA10_SPELLINGS: dict[str, tuple[str, ...]] = {
    "inter-dimension-scheduling": ("baseline", "ascending", "themis", "offlineGreedy",
                                   "roundRobin"),
    "intra-dimension-scheduling": ("FIFO", "SCF", "smallestFirst"),
    "scheduling-policy": ("LIFO", "FIFO"),
    "collective-optimization": ("baseline", "localBWAware"),
}


def _astra10_spelling(value: str, key: str, file: str) -> None:
    """Refuse a 1.0 text value ASTRA-sim 1.0 would stop on (``fifo``, ``round-robin``)."""
    text = value.strip()
    allowed = ASTRA10_SPELLINGS[key]
    if text in allowed:
        return
    same = [a for a in allowed if a.lower() == text.lower()]
    if not same:
        from topologies.system import INTER_ALIASES, INTRA_ALIASES

        aliases = {"inter-dimension-scheduling": INTER_ALIASES,
                   "intra-dimension-scheduling": INTRA_ALIASES}.get(key, {})
        meant = aliases.get(text.lower())
        same = [a for a in allowed if meant is not None and aliases.get(a.lower()) == meant]
    if same:
        raise InputError(f"ASTRA-sim 1.0 stops on this spelling (it reads only "
                         f"{', '.join(allowed)}): write {same[0]}", key, text, file)


def _float_setting(value: Any, key: str, file: str) -> float:
    if isinstance(value, str):
        text = _ascii_number(value, key, file)
        try:
            value = float(text)
        except ValueError:
            raise InputError("not a number", key, text, file) from None
    return latency(value, key, file)


def _positive_setting(value: Any, key: str, file: str) -> float:
    """A finite number > 0 (e.g. ``local-mem-bw`` in GB/s)."""
    number = value
    if isinstance(value, str):
        try:
            number = float(_ascii_number(value, key, file))
        except ValueError:
            raise InputError("not a number", key, value, file) from None
    if isinstance(number, bool) or not isinstance(number, int | float) \
            or not math.isfinite(number) or number <= 0:
        raise InputError("must be a number > 0", key, value, file)
    return float(number)


def _bool_setting(value: Any, key: str, file: str) -> bool:
    """0 or 1 (as ASTRA-sim reads it, an integer), or a JSON true/false."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) or (isinstance(value, str) and value.strip() in ("0", "1")):
        if int(value) in (0, 1):
            return bool(int(value))
    raise InputError("must be 0 or 1", key, value, file)


#: The algorithm names as ASTRA-sim's system files spell them (compared exactly).
ASTRA_SPELLINGS = ("ring", "direct", "halvingDoubling", "doubleBinaryTree", "oneRing",
                   "oneDirect", "oneHalvingDoubling")


def _algorithms_setting(value: Any, key: str, file: str) -> tuple[str, ...]:
    if isinstance(value, list):
        entries = value
    elif isinstance(value, str):
        entries = value.strip().split("_")
    else:
        raise InputError(
            "must be a list of algorithms or `_`-joined names like ring_ring", key, value, file
        )
    if not entries:
        raise InputError("must name one algorithm per dimension", key, value, file)
    result = []
    for i, entry in enumerate(entries):
        name = canonical_algorithm(entry) if isinstance(entry, str) and entry.strip() else None
        exact = {a.lower(): a for a in ASTRA_SPELLINGS}.get(str(entry).strip().lower())
        if exact is not None and str(entry).strip() != exact:
            # Sys::Sys compares the names as they are: another case aborts the run.
            raise InputError(f"ASTRA-sim spells it {exact} (it compares names exactly and "
                             "stops on any other spelling)", f"{key}[{i}]", entry, file)
        if name is None:
            raise InputError(
                f"unknown algorithm (expected one of {', '.join(ALGORITHMS)})",
                f"{key}[{i}]",
                entry,
                file,
            )
        result.append(name)
    return tuple(result)


def _alias_setting(value: Any, key: str, file: str, aliases: dict[str, str], shown: str) -> str:
    text = _scalar_text(value, key, file)
    canonical = aliases.get(text.lower())
    if canonical is None:
        raise InputError(f"unknown value (expected {shown})", key, value, file)
    return canonical


def _parse_system_text(text: str, file: str) -> list[tuple[str, str]]:
    items = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or not key:
            raise InputError("expected a `key: value` line", f"line {n}", raw.strip(), file)
        if key in seen:
            raise InputError(f"duplicate key (line {n}; first given on line {seen[key]})",
                             key, value.strip(), file)
        if value.strip() and not value[:1].isspace():
            # ASTRA-sim 1.0 reads whitespace-separated tokens: `key:value` is one
            # token, an unknown variable to it (it exits).
            raise InputError(f"ASTRA-sim 1.0 needs a space after the colon (line {n}; it "
                             f"reads `{key}:{value.strip()}` as one unknown key): write "
                             f"`{key}: {value.strip()}`", key, value.strip(), file)
        seen[key] = n
        items.append((key, value.strip()))
    return items


def _check_kind_of_file(items: list[tuple[str, Any]], file: str) -> None:
    """Refuse a network file, or a file of no settings, given as a system file."""
    keys = [k for k, _ in items]
    network_keys = [k for k in keys if k in _NETWORK_ONLY_KEYS]
    if network_keys:
        raise InputError(
            "this is a network file, not a system file (give it as NETWORK; a system "
            "file has keys like preferred-dataset-splits)", network_keys[0], None, file)
    if not keys:
        raise InputError("no settings (expected `key: value` lines or a JSON object "
                         "with keys like preferred-dataset-splits)", "document", None, file)


def parse_system(text: str, file: str = "", fmt: str | None = None) -> SystemConfig:
    """Parse an ASTRA-sim system configuration.

    ``fmt`` is ``"text"`` (1.0: ``key: value`` lines, blank lines and ``#``
    comments allowed) or ``"json"`` (2.x: one JSON object); by default JSON
    when ``file`` ends in ``.json`` or the text starts with ``{``.

    Keys read: ``preferred-dataset-splits`` (chunks, >= 1),
    ``active-chunks-per-dimension`` (>= 1), ``endpoint-delay`` (ns, >= 0),
    ``all-reduce-`` / ``reduce-scatter-`` / ``all-gather-implementation`` (one
    algorithm per dimension: ``_``-joined text or a JSON list),
    ``collective-optimization`` (``baseline`` | ``localBWAware``),
    ``boost-mode`` (0/1), ``inter-dimension-scheduling`` and
    ``intra-dimension-scheduling`` (the aliases of
    :data:`~topologies.system.INTER_ALIASES` / ``INTRA_ALIASES``, any case in
    2.x JSON; 1.0 text must spell them, ``scheduling-policy`` and
    ``collective-optimization`` as ASTRA-sim 1.0 does, :data:`ASTRA10_SPELLINGS`;
    ASTRA-sim's ``offlineGreedyFlex`` / ``themisFlex``, ``RG`` and
    ``lessRemainingPhaseFirst`` are refused: not modelled);
    for training runs ``scheduling-policy`` (LIFO | FIFO) and
    ``all-to-all-implementation``; ``local-mem-bw`` (GB/s, > 0: the 2.x
    reduce cost). Known ASTRA-sim keys that do not matter here
    are ignored; unknown keys give a warning and are recorded in ``SystemConfig.unknown_keys``.
    Omitted keys stay ``None`` (see :meth:`SystemConfig.with_astra_defaults`).
    """
    if not text.strip():
        raise InputError("the file is empty (expected an ASTRA-sim system file)", "document",
                         None, file)
    if fmt is None:
        is_json = file.lower().endswith(".json") or text.lstrip().startswith("{")
        fmt = "json" if is_json else "text"
    if fmt == "json":
        items = list(as_mapping(load_json(text, file), file, "an ASTRA-sim 2.x system").items())
    elif fmt == "text":
        items = _parse_system_text(text, file)
    else:
        raise ValueError(f"unknown system format {fmt!r} (use 'text' or 'json')")
    _check_kind_of_file(items, file)

    fields: dict[str, Any] = {}
    unknown: list[str] = []
    inter_shown = "baseline, themis, roundRobin or their ASTRA-sim names"
    intra_shown = "FIFO or SCF (smallestFirst)"
    integer_keys = ("preferred-dataset-splits", "active-chunks-per-dimension",
                    "endpoint-delay", "boost-mode")
    for key, value in items:
        if fmt == "text" and key in integer_keys:
            _astra10_integer(value, key, file)
        if fmt == "text" and key in ASTRA10_SPELLINGS and isinstance(value, str) \
                and not unmodelled_scheduling(value, key.startswith("inter")):
            _astra10_spelling(value, key, file)
        if key == "preferred-dataset-splits":
            fields["chunks"] = _int_setting(value, key, file, 1)
        elif key == "active-chunks-per-dimension":
            fields["active_chunks"] = _int_setting(value, key, file, 1)
        elif key == "endpoint-delay":
            fields["endpoint_delay_ns"] = _float_setting(value, key, file)
        elif key in IMPLEMENTATION_KEYS:
            fields[IMPLEMENTATION_KEYS[key]] = _algorithms_setting(value, key, file)
        elif key == "collective-optimization":
            fields["collective_optimization"] = _alias_setting(
                value, key, file, _COLLECTIVE_OPTIMIZATIONS, "baseline or localBWAware"
            )
        elif key == "boost-mode":
            fields["boost_mode"] = _bool_setting(value, key, file)
        elif key in ("inter-dimension-scheduling", "intra-dimension-scheduling") and (
                why := unmodelled_scheduling(value, key.startswith("inter"))):
            raise InputError(why, key, value, file)
        elif key == "inter-dimension-scheduling":
            fields["inter"] = _alias_setting(value, key, file, INTER_ALIASES, inter_shown)
        elif key == "intra-dimension-scheduling":
            fields["intra"] = _alias_setting(value, key, file, INTRA_ALIASES, intra_shown)
        elif key in CUSTOM_IMPLEMENTATION_KEYS:
            raise InputError(
                "custom collective implementations (Chakra ET files) are not modelled yet: "
                f"only ASTRA-sim's native algorithms are; give {key[:-7]} instead",
                key, value, file)
        elif key == "all-to-all-implementation":
            fields["all_to_all_algorithms"] = _algorithms_setting(value, key, file)
        elif key == "scheduling-policy":
            fields["scheduling_policy"] = _alias_setting(
                value, key, file, {"lifo": "LIFO", "fifo": "FIFO"}, "LIFO or FIFO")
        elif key == "local-mem-bw":
            fields["local_mem_bw_GBps"] = _positive_setting(value, key, file)
        elif key in SYSTEM_IGNORED_KEYS:
            continue
        elif key not in unknown:
            unknown.append(key)
    unknown_keys = warn_unknown(file, "system", unknown)
    return SystemConfig(**fields, source=file, unknown_keys=unknown_keys, file_format=fmt)


def read_system(path: str | os.PathLike[str]) -> SystemConfig:
    """Read an ASTRA-sim 1.0 system text file or a 2.x system JSON file.

    See :func:`parse_system` for the keys; ``source`` is ``path``.
    """
    file = str(path)
    return parse_system(read_text(path), file)
