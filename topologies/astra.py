"""Read and write ASTRA-sim network and system files (model.md §1-§2).

Networks
    * ``.yml`` / ``.yaml``: ASTRA-sim 2.x network YAML (``topology``,
      ``npus_count``, ``bandwidth`` in GB/s, ``latency`` in ns, one entry per
      dimension).
    * ``.json``: ASTRA-sim 1.0 analytical network JSON (``topologies-per-dim``,
      ``units-count``, ``links-count``, ``link-bandwidth``, ``link-latency``,
      optional ``dimensions-count``, ``nic-latency``, ``router-latency``). The
      per-dimension bandwidth is ``links-count * link-bandwidth`` and the
      dimension keeps ``links = links-count``.

Systems
    ASTRA-sim 1.0 system text (``key: value`` lines) or 2.x system JSON; see
    :func:`parse_system`.

Every bad input raises :class:`~topologies.errors.InputError` naming the file,
the field (``key`` or ``key[index]``) and the value; no ``KeyError``,
``TypeError`` or YAML/JSON exception escapes.

Round trips (what holds exactly, ``==`` on :class:`~topologies.network.Network`):
    * YAML -> Network -> YAML -> Network: equal. The 2.x YAML has no
      links-count, NIC or router latency, so :func:`network_to_yaml` can only
      keep networks whose dimensions have ``links=None`` (or the 2.x default)
      and zero NIC/router latency; otherwise it warns and drops them.
    * JSON -> Network -> JSON -> Network: equal (bandwidths exactly, links,
      NIC and router latency kept).
    * Any Network -> JSON -> Network: equal except that every dimension comes
      back with ``links`` set explicitly (to ``Dimension.links_count``).
"""

from __future__ import annotations

import decimal
import json
import math
import os
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from topologies.errors import InputError
from topologies.files import atomic_write
from topologies.network import Dimension, Network, canonical_kind
from topologies.system import (
    ALGORITHMS,
    INTER_ALIASES,
    INTRA_ALIASES,
    SystemConfig,
    canonical_algorithm,
)

__all__ = [
    "JSON_SUFFIXES",
    "NETWORK_SUFFIXES",
    "YAML_SUFFIXES",
    "network_to_json",
    "network_to_yaml",
    "parse_network_json",
    "parse_network_yaml",
    "parse_system",
    "read_network",
    "read_system",
    "validate_algorithms",
    "validate_system",
    "write_network_json",
    "write_network_yaml",
]

#: File name endings of 2.x network YAML files.
YAML_SUFFIXES: tuple[str, ...] = (".yml", ".yaml")
#: File name endings of 1.0 network JSON files.
JSON_SUFFIXES: tuple[str, ...] = (".json",)
#: Every network file ending :func:`read_network` accepts.
NETWORK_SUFFIXES: tuple[str, ...] = YAML_SUFFIXES + JSON_SUFFIXES

#: Keys of an ASTRA-sim 2.x network YAML.
YAML_NETWORK_KEYS: frozenset[str] = frozenset({"topology", "npus_count", "bandwidth", "latency"})

#: Keys of an ASTRA-sim 1.0 network JSON that we read.
JSON_NETWORK_KEYS: frozenset[str] = frozenset(
    {
        "dimensions-count",
        "topologies-per-dim",
        "units-count",
        "links-count",
        "link-bandwidth",
        "link-latency",
        "nic-latency",
        "router-latency",
    }
)

#: Known ASTRA-sim 1.0 network keys that do not matter here (ignored silently).
JSON_NETWORK_IGNORED_KEYS: frozenset[str] = frozenset(
    {
        "topology-name",
        "dimension-type",
        "hbm-latency",
        "hbm-bandwidth",
        "hbm-scale",
        "link-failure",
        "scheduling-policy",
        # the pre-"Hierarchical" analytical format
        "dims-count",
        "nodes-per-dim",
    }
)

#: Known ASTRA-sim 1.0 / 2.x system keys that do not matter here (ignored silently).
SYSTEM_IGNORED_KEYS: frozenset[str] = frozenset(
    {
        # 1.0
        "scheduling-policy",
        "all-to-all-implementation",
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
        "all-reduce-implementation-custom",
        "reduce-scatter-implementation-custom",
        "all-gather-implementation-custom",
        "all-to-all-implementation-custom",
        "per-node-custom-implementation",
        "local-reduce-delay",
        "roofline-enabled",
        "peak-perf",
        "local-mem-bw",
        "trace-enabled",
        "replay-only",
        "track-local-mem",
        "local-mem-trace-filename",
    }
)

_IMPLEMENTATION_KEYS = {
    "all-reduce-implementation": "all_reduce_algorithms",
    "reduce-scatter-implementation": "reduce_scatter_algorithms",
    "all-gather-implementation": "all_gather_algorithms",
}

_COLLECTIVE_OPTIMIZATIONS = {"baseline": "baseline", "localbwaware": "localBWAware"}

_MAX_SHOWN = 80


# --------------------------------------------------------------------------- helpers


class _JsonFloat(float):
    """A JSON number that remembers its decimal text (for exact products)."""

    text: str

    def __new__(cls, text: str) -> _JsonFloat:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


def _exact_product(value: float | int | str, factor: int) -> float:
    """``value * factor`` rounded once, with ``value`` taken as its decimal text.

    ``link-bandwidth`` 6.25 times 6 links is exactly 37.5, and a file written
    by :func:`network_to_json` reads back to the very same bandwidth.
    """
    raw = value.text if isinstance(value, _JsonFloat) else value
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        return float(decimal.Decimal(raw) * factor)


def _line_of(text: str, line_no: int) -> str | None:
    """Line ``line_no`` (1-based) of ``text``, stripped and shortened, if any."""
    lines = text.splitlines()
    if 1 <= line_no <= len(lines):
        line = lines[line_no - 1].strip()
        return line if len(line) <= _MAX_SHOWN else line[: _MAX_SHOWN - 3] + "..."
    return None


def _read_text(path: str | os.PathLike[str]) -> str:
    """The text of ``path``; every failure is an :class:`InputError`."""
    file = str(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", "path", file, file) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", "path", file, file) from None
    except UnicodeDecodeError:
        raise InputError("not a text file (not UTF-8)", "path", file, file) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", "path", file, file) from None


class _YamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader, also reading ``1e3`` as a number (as YAML 1.2 and yaml-cpp do)."""


_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _load_yaml(text: str, file: str) -> Any:
    try:
        return yaml.load(text, Loader=_YamlLoader)  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        if mark is not None:
            line = mark.line + 1
            raise InputError(
                f"invalid YAML: {problem} (line {line}, column {mark.column + 1})",
                f"line {line}",
                _line_of(text, line),
                file,
            ) from None
        raise InputError(f"invalid YAML: {problem}", "syntax", None, file) from None
    except (yaml.YAMLError, RecursionError) as err:
        raise InputError(f"invalid YAML: {err}", "syntax", None, file) from None


def _load_json(text: str, file: str) -> Any:
    try:
        return json.loads(text, parse_float=_JsonFloat)
    except json.JSONDecodeError as err:
        raise InputError(
            f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})",
            f"line {err.lineno}",
            _line_of(text, err.lineno),
            file,
        ) from None
    except (ValueError, RecursionError) as err:
        raise InputError(f"invalid JSON: {err}", "syntax", None, file) from None


def _mapping(data: Any, file: str, what: str) -> dict[str, Any]:
    if data is None:
        raise InputError(f"the file is empty (expected {what})", "document", None, file)
    if not isinstance(data, dict):
        raise InputError(
            f"expected {what} as a mapping of keys to values",
            "document",
            type(data).__name__,
            file,
        )
    return {str(k): v for k, v in data.items()}


def _warn_unknown(file: str, what: str, keys: Iterable[str]) -> tuple[str, ...]:
    unknown = tuple(sorted(keys))
    if unknown:
        warnings.warn(
            f"{file or '<input>'}: unknown {what} keys ignored: {', '.join(unknown)}",
            UserWarning,
            stacklevel=3,
        )
    return unknown


def _list(data: dict[str, Any], key: str, file: str) -> list[Any]:
    if key not in data:
        raise InputError("missing required key", key, None, file)
    value = data[key]
    if not isinstance(value, list):
        raise InputError("must be a list with one entry per dimension", key, value, file)
    if not value:
        raise InputError("must list at least one dimension", key, value, file)
    return value


def _same_length(file: str, first: tuple[str, list[Any]], *others: tuple[str, list[Any]]) -> None:
    name0, list0 = first
    for name, values in others:
        if len(values) != len(list0):
            raise InputError(
                f"has {len(values)} entries but {name0} has {len(list0)} "
                "(one entry per dimension)",
                name,
                values,
                file,
            )


def _number(value: Any, field: str, file: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError("not a number", field, value, file)
    try:
        result = float(value)
    except OverflowError:
        raise InputError("number too large", field, value, file) from None
    if not math.isfinite(result):
        raise InputError("not a finite number", field, value, file)
    return result


def _positive(value: Any, field: str, file: str) -> float:
    result = _number(value, field, file)
    if result <= 0:
        raise InputError("must be positive", field, value, file)
    return result


def _non_negative(value: Any, field: str, file: str) -> float:
    result = _number(value, field, file)
    if result < 0:
        raise InputError("must not be negative", field, value, file)
    return result


def _count(value: Any, field: str, file: str, minimum: int) -> int:
    """A whole number >= ``minimum`` (integral floats such as ``8.0`` accepted)."""
    if isinstance(value, bool):
        raise InputError("must be a whole number", field, value, file)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise InputError("must be a whole number", field, value, file)
    if value < minimum:
        raise InputError(f"must be at least {minimum}", field, value, file)
    return value


def _kind(value: Any, field: str, file: str) -> str:
    try:
        return canonical_kind(value, field)
    except InputError as err:
        raise err.in_file(file) from None


def _name_of(file: str) -> str:
    return Path(file).stem if file else ""


def _network(
    dims: list[Dimension],
    file: str,
    npus_field: str,
    npus_value: Any,
    nic_latency_ns: float = 0.0,
    router_latency_ns: float = 0.0,
) -> Network:
    if math.prod(d.npus for d in dims) < 2:
        raise InputError(
            "a network needs at least 2 NPUs (the product over all dimensions)",
            npus_field,
            npus_value,
            file,
        )
    try:
        return Network(tuple(dims), nic_latency_ns, router_latency_ns, name=_name_of(file))
    except InputError as err:
        raise err.in_file(file) from None


def _dimension(i: int, file: str, *args: Any, **kwargs: Any) -> Dimension:
    try:
        return Dimension(*args, **kwargs)
    except InputError as err:  # pragma: no cover - values are checked before
        err.field = f"{err.field}[{i}]"
        raise err.in_file(file) from None


# --------------------------------------------------------------------------- networks


def parse_network_yaml(text: str, file: str = "") -> Network:
    """Parse an ASTRA-sim 2.x network YAML document.

    Required keys: ``topology`` (``Ring``, ``FullyConnected``, ``Switch``),
    ``npus_count`` (>= 1; 1 is accepted and that dimension is skipped),
    ``bandwidth`` (GB/s, > 0) and ``latency`` (ns, >= 0), each a list with one
    entry per dimension. Unknown keys give a warning. ``file`` is used in
    messages and as the network's name (its stem).
    """
    data = _mapping(_load_yaml(text, file), file, "an ASTRA-sim 2.x network")
    _warn_unknown(file, "network", set(data) - YAML_NETWORK_KEYS)
    kinds = _list(data, "topology", file)
    npus = _list(data, "npus_count", file)
    bandwidths = _list(data, "bandwidth", file)
    latencies = _list(data, "latency", file)
    _same_length(
        file, ("topology", kinds), ("npus_count", npus), ("bandwidth", bandwidths),
        ("latency", latencies),
    )
    dims = []
    for i in range(len(kinds)):
        kind = _kind(kinds[i], f"topology[{i}]", file)
        p = _count(npus[i], f"npus_count[{i}]", file, 1)
        bw = _positive(bandwidths[i], f"bandwidth[{i}]", file)
        lat = _non_negative(latencies[i], f"latency[{i}]", file)
        dims.append(_dimension(i, file, kind, p, bw, lat))
    return _network(dims, file, "npus_count", npus)


def _shared_latency(
    data: dict[str, Any], key: str, relevant: Sequence[bool], file: str
) -> float:
    """A per-network latency from a 1.0 key given as a number or a per-dim list.

    The model keeps one value per network, so the entries of the dimensions
    where it matters (``relevant``) must agree; entries of other dimensions
    are checked but otherwise ignored.
    """
    if key not in data:
        return 0.0
    value = data[key]
    if not isinstance(value, list):
        return _non_negative(value, key, file)
    if len(value) != len(relevant):
        raise InputError(
            f"has {len(value)} entries but topologies-per-dim has {len(relevant)} "
            "(one entry per dimension)",
            key,
            value,
            file,
        )
    values = [_non_negative(v, f"{key}[{i}]", file) for i, v in enumerate(value)]
    used = {v for v, r in zip(values, relevant, strict=True) if r}
    if not used:
        return values[0] if len(set(values)) == 1 else 0.0
    if len(used) > 1:
        raise InputError(
            "different values per dimension are not supported "
            "(the model keeps one value for the whole network)",
            key,
            value,
            file,
        )
    return used.pop()


def parse_network_json(text: str, file: str = "") -> Network:
    """Parse an ASTRA-sim 1.0 analytical network JSON document.

    Required keys: ``topologies-per-dim``, ``units-count``, ``links-count``,
    ``link-bandwidth`` (GB/s per link), ``link-latency`` (ns); optional
    ``dimensions-count`` (must agree with the lists), ``nic-latency`` and
    ``router-latency`` (a number or a per-dimension list; the model keeps one
    value, so the entries that matter must agree: NIC on dimensions with
    P > 1, router on such Switch dimensions). Each dimension's bandwidth is
    ``links-count * link-bandwidth``, the link bandwidth taken as the decimal
    written and the product rounded once (6 x 0.1 is 0.6), and it keeps
    ``links``. A Ring needs at
    least 2 links and a FullyConnected dimension of P NPUs at least P - 1
    (ASTRA-sim 1.0 would give a message no bandwidth otherwise). Known 1.0
    keys that do not matter (``hbm-*``, ``dimension-type``, ...) are ignored;
    unknown keys give a warning.
    """
    data = _mapping(_load_json(text, file), file, "an ASTRA-sim 1.0 network")
    _warn_unknown(
        file, "network", set(data) - JSON_NETWORK_KEYS - JSON_NETWORK_IGNORED_KEYS
    )
    if "topologies-per-dim" not in data and "topology-name" in data:
        raise InputError(
            "missing required key (the old single-topology format with topology-name "
            "is not supported; list topologies-per-dim)",
            "topologies-per-dim",
            None,
            file,
        )
    kinds = _list(data, "topologies-per-dim", file)
    units = _list(data, "units-count", file)
    links = _list(data, "links-count", file)
    link_bw = _list(data, "link-bandwidth", file)
    link_lat = _list(data, "link-latency", file)
    _same_length(
        file, ("topologies-per-dim", kinds), ("units-count", units), ("links-count", links),
        ("link-bandwidth", link_bw), ("link-latency", link_lat),
    )
    if "dimensions-count" in data:
        count = _count(data["dimensions-count"], "dimensions-count", file, 1)
        if count != len(kinds):
            raise InputError(
                f"disagrees with topologies-per-dim, which lists {len(kinds)} dimensions",
                "dimensions-count",
                data["dimensions-count"],
                file,
            )
    parsed = []
    for i in range(len(kinds)):
        kind = _kind(kinds[i], f"topologies-per-dim[{i}]", file)
        p = _count(units[i], f"units-count[{i}]", file, 1)
        n_links = _count(links[i], f"links-count[{i}]", file, 1)
        _positive(link_bw[i], f"link-bandwidth[{i}]", file)
        lat = _non_negative(link_lat[i], f"link-latency[{i}]", file)
        if p > 1 and kind == "Ring" and n_links < 2:
            raise InputError(
                "a Ring needs at least 2 links (ASTRA-sim 1.0 gives one message "
                "links - links mod 2 of them)",
                f"links-count[{i}]",
                links[i],
                file,
            )
        if p > 1 and kind == "FullyConnected" and n_links < p - 1:
            raise InputError(
                f"a FullyConnected dimension of {p} NPUs needs at least {p - 1} links "
                "(one per peer)",
                f"links-count[{i}]",
                links[i],
                file,
            )
        total = _exact_product(link_bw[i], n_links)
        if not math.isfinite(total):
            raise InputError("links-count * link-bandwidth is too large", f"link-bandwidth[{i}]",
                             link_bw[i], file)
        parsed.append((kind, p, total, lat, n_links))
    nic = _shared_latency(data, "nic-latency", [p > 1 for _, p, *_ in parsed], file)
    router = _shared_latency(
        data, "router-latency", [k == "Switch" and p > 1 for k, p, *_ in parsed], file
    )
    dims = [
        _dimension(i, file, kind, p, bw, lat, links=n_links)
        for i, (kind, p, bw, lat, n_links) in enumerate(parsed)
    ]
    return _network(dims, file, "units-count", units, nic, router)


def read_network(path: str | os.PathLike[str]) -> Network:
    """Read a network file: ``.yml``/``.yaml`` (2.x YAML) or ``.json`` (1.0 JSON).

    The network's ``name`` is the file stem. Raises :class:`InputError` for a
    missing or unreadable file, an unknown file type and every bad value.
    """
    file = str(path)
    suffix = Path(file).suffix.lower()
    text = _read_text(path)
    if suffix in YAML_SUFFIXES:
        return parse_network_yaml(text, file)
    if suffix in JSON_SUFFIXES:
        return parse_network_json(text, file)
    raise InputError(
        "unknown network file type (expected .yml or .yaml for ASTRA-sim 2.x, "
        ".json for ASTRA-sim 1.0)",
        "path",
        file,
        file,
    )


def _plain(value: float) -> int | float:
    """``50.0`` -> ``50`` for readable files; other floats unchanged."""
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _number_text(value: float) -> str:
    """The shortest JSON text of ``value`` (``50`` rather than ``50.0``)."""
    plain = _plain(value)
    return str(plain) if isinstance(plain, int) else repr(plain)


def _link_bandwidth_text(bandwidth: float, links: int) -> str:
    """JSON text x of a link bandwidth with ``links * x`` rounding to ``bandwidth``.

    The reader multiplies the decimal text exactly (:func:`_exact_product`), so
    a float near ``bandwidth / links`` usually works (the shortest is written); when none
    does (some bandwidths are not ``links`` times any float), a longer decimal
    is written.
    """
    guess = bandwidth / links
    candidates = [guess]
    for direction in (math.inf, -math.inf):
        x = guess
        for _ in range(8):
            x = math.nextafter(x, direction)
            candidates.append(x)
    exact = [t for t in map(_number_text, candidates) if _exact_product(t, links) == bandwidth]
    if exact:
        return min(exact, key=len)  # the shortest, nearest to bandwidth / links on ties
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return str(decimal.Decimal(bandwidth) / links)


def network_to_yaml(network: Network) -> str:
    """The network as ASTRA-sim 2.x YAML text (``topology``, ``npus_count``, ...).

    The 2.x format has no links-count, NIC or router latency: if the network
    has links that differ from the 2.x convention (Ring 2, Switch 1,
    FullyConnected P - 1) or a nonzero NIC/router latency, a warning says
    what is dropped.
    """
    dropped = []
    for i, d in enumerate(network.dims):
        if d.links is not None and d.links != Dimension(d.kind, d.npus, 1.0).links_count:
            dropped.append(f"links-count[{i}] = {d.links}")
    if network.nic_latency_ns:
        dropped.append(f"nic-latency = {network.nic_latency_ns:g}")
    if network.router_latency_ns:
        dropped.append(f"router-latency = {network.router_latency_ns:g}")
    if dropped:
        warnings.warn(
            f"{network.name or 'network'}: ASTRA-sim 2.x YAML cannot hold "
            f"{', '.join(dropped)}; written without it",
            UserWarning,
            stacklevel=2,
        )
    data = {
        "topology": [d.kind for d in network.dims],
        "npus_count": [d.npus for d in network.dims],
        "bandwidth": [_plain(d.bandwidth_GBps) for d in network.dims],
        "latency": [_plain(d.latency_ns) for d in network.dims],
    }
    header = f"# ASTRA-sim 2.x network: {network.describe()} ({network.npus} NPUs)\n"
    return header + yaml.safe_dump(data, default_flow_style=None, sort_keys=False)


def network_to_json(network: Network) -> str:
    """The network as ASTRA-sim 1.0 network JSON text.

    ``links-count`` is ``Dimension.links_count`` (the explicit links, or the
    2.x convention) and ``link-bandwidth`` is bandwidth / links, chosen so
    that reading the file back gives exactly the same bandwidth.
    ``nic-latency``/``router-latency`` are written (per dimension) only when
    nonzero.
    """
    dims = network.dims
    links = [d.links_count for d in dims]
    data: dict[str, Any] = {
        "dimensions-count": len(dims),
        "topologies-per-dim": [d.kind for d in dims],
        "units-count": [d.npus for d in dims],
        "links-count": links,
        "link-latency": [_plain(d.latency_ns) for d in dims],
    }
    if network.nic_latency_ns:
        data["nic-latency"] = [_plain(network.nic_latency_ns)] * len(dims)
    if network.router_latency_ns:
        data["router-latency"] = [_plain(network.router_latency_ns)] * len(dims)
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()]
    link_bw = ", ".join(
        _link_bandwidth_text(d.bandwidth_GBps, n) for d, n in zip(dims, links, strict=True)
    )
    lines.insert(5, f'  "link-bandwidth": [{link_bw}]')
    body = ",\n".join(lines)
    return "{\n" + body + "\n}\n"


def _atomic_write(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` atomically; an OS error becomes an :class:`InputError`."""
    try:
        atomic_write(path, text)
    except OSError as err:
        file = str(path)
        raise InputError(f"cannot write: {err.strerror or err}", "path", file, file) from None


def write_network_yaml(network: Network, path: str | os.PathLike[str]) -> None:
    """Write ``network`` as ASTRA-sim 2.x YAML to ``path`` (atomically)."""
    _atomic_write(path, network_to_yaml(network))


def write_network_json(network: Network, path: str | os.PathLike[str]) -> None:
    """Write ``network`` as ASTRA-sim 1.0 JSON to ``path`` (atomically)."""
    _atomic_write(path, network_to_json(network))


# --------------------------------------------------------------------------- systems


def _scalar_text(value: Any, key: str, file: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError("must be a single value", key, value, file)
    text = str(value).strip()
    if not text:
        raise InputError("missing value", key, value, file)
    return text


def _int_setting(value: Any, key: str, file: str, minimum: int) -> int:
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise InputError("must be a whole number", key, text, file) from None
    return _count(value, key, file, minimum)


def _float_setting(value: Any, key: str, file: str) -> float:
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            raise InputError("not a number", key, text, file) from None
    return _non_negative(value, key, file)


def _bool_setting(value: Any, key: str, file: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int | float) else None
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InputError("must be 0 or 1", key, value, file)


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
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or not key:
            raise InputError("expected a `key: value` line", f"line {n}", raw.strip(), file)
        items.append((key, value.strip()))
    return items


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
    :data:`~topologies.system.INTER_ALIASES` / ``INTRA_ALIASES``, any case).
    Known ASTRA-sim keys that do not matter here are ignored; unknown keys
    give a warning and are recorded in ``SystemConfig.unknown_keys``.
    """
    if fmt is None:
        is_json = file.lower().endswith(".json") or text.lstrip().startswith("{")
        fmt = "json" if is_json else "text"
    if fmt == "json":
        items = list(_mapping(_load_json(text, file), file, "an ASTRA-sim 2.x system").items())
    elif fmt == "text":
        items = _parse_system_text(text, file)
    else:
        raise ValueError(f"unknown system format {fmt!r} (use 'text' or 'json')")

    fields: dict[str, Any] = {}
    unknown: list[str] = []
    inter_shown = "baseline, themis, roundRobin or their ASTRA-sim names"
    intra_shown = "FIFO or SCF (smallestFirst)"
    for key, value in items:
        if key == "preferred-dataset-splits":
            fields["chunks"] = _int_setting(value, key, file, 1)
        elif key == "active-chunks-per-dimension":
            fields["active_chunks"] = _int_setting(value, key, file, 1)
        elif key == "endpoint-delay":
            fields["endpoint_delay_ns"] = _float_setting(value, key, file)
        elif key in _IMPLEMENTATION_KEYS:
            fields[_IMPLEMENTATION_KEYS[key]] = _algorithms_setting(value, key, file)
        elif key == "collective-optimization":
            fields["collective_optimization"] = _alias_setting(
                value, key, file, _COLLECTIVE_OPTIMIZATIONS, "baseline or localBWAware"
            )
        elif key == "boost-mode":
            fields["boost_mode"] = _bool_setting(value, key, file)
        elif key == "inter-dimension-scheduling":
            fields["inter"] = _alias_setting(value, key, file, INTER_ALIASES, inter_shown)
        elif key == "intra-dimension-scheduling":
            fields["intra"] = _alias_setting(value, key, file, INTRA_ALIASES, intra_shown)
        elif key in SYSTEM_IGNORED_KEYS:
            continue
        elif key not in unknown:
            unknown.append(key)
    unknown_keys = _warn_unknown(file, "system", unknown)
    return SystemConfig(**fields, source=file, unknown_keys=unknown_keys)


def read_system(path: str | os.PathLike[str]) -> SystemConfig:
    """Read an ASTRA-sim 1.0 system text file or a 2.x system JSON file.

    See :func:`parse_system` for the keys; ``source`` is ``path``.
    """
    file = str(path)
    return parse_system(_read_text(path), file)


def validate_algorithms(
    network: Network,
    algorithms: Sequence[str],
    file: str = "",
    field: str = "all-reduce-implementation",
) -> tuple[str, ...]:
    """Check one algorithm per dimension of ``network``; return the canonical names.

    Raises :class:`InputError` (naming ``file``, ``field[index]`` and the
    value) for a list whose length differs from the number of dimensions, an
    unknown algorithm, or ``halvingDoubling`` on a dimension whose NPU count
    is not a power of two (ASTRA-sim deadlocks silently there).
    """
    names = list(algorithms)
    if len(names) != network.ndims:
        raise InputError(
            f"{len(names)} algorithms for a network of {network.ndims} dimensions "
            "(give one per dimension)",
            field,
            "_".join(str(n) for n in names),
            file,
        )
    result = []
    for i, (name, dim) in enumerate(zip(names, network.dims, strict=True)):
        canonical = canonical_algorithm(name) if isinstance(name, str) else None
        if canonical is None:
            raise InputError(
                f"unknown algorithm (expected one of {', '.join(ALGORITHMS)})",
                f"{field}[{i}]",
                name,
                file,
            )
        if canonical == "halvingDoubling" and dim.npus & (dim.npus - 1):
            raise InputError(
                f"halvingDoubling needs a power-of-two NPU count but dimension {i} "
                f"has {dim.npus}",
                f"{field}[{i}]",
                name,
                file,
            )
        result.append(canonical)
    return tuple(result)


def validate_system(network: Network, system: SystemConfig) -> None:
    """Check every algorithm list that ``system`` gives against ``network``.

    Errors name ``system.source`` and the key, e.g.
    ``all-reduce-implementation[1]``.
    """
    for key, attr in _IMPLEMENTATION_KEYS.items():
        algorithms = getattr(system, attr)
        if algorithms is not None:
            validate_algorithms(network, algorithms, system.source, key)
