"""ASTRA-sim 1.0 analytical network JSON: read and write.

Keys: ``topologies-per-dim``, ``units-count``, ``links-count``,
``link-bandwidth``, ``link-latency``, optional ``dimensions-count``,
``nic-latency``, ``router-latency``. The per-dimension bandwidth is
``links-count * link-bandwidth`` and the dimension keeps ``links = links-count``.

Round trips: JSON -> Network -> JSON -> Network is equal (bandwidths exactly,
links, NIC and router latency kept); any Network -> JSON -> Network is equal
except that every dimension comes back with ``links`` set explicitly (to
``Dimension.links_count``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from typing import Any

from topologies.astra.validators import (
    JsonFloat,
    as_mapping,
    dim_kind,
    latency,
    load_json,
    make_dimension,
    make_network,
    non_negative,
    number_text,
    plain,
    positive,
    required_list,
    same_length,
    warn_unknown,
    whole_number,
    write_text,
)
from topologies.errors import InputError
from topologies.network import BANDWIDTH_RANGE, Network
from topologies.units import MAX_BANDWIDTH_GBPS, MIN_BANDWIDTH_GBPS

__all__ = [
    "JSON_NETWORK_IGNORED_KEYS",
    "JSON_NETWORK_KEYS",
    "network_to_json",
    "parse_network_json",
    "write_network_json",
]

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


def exact_product(value: float | int | str, factor: int) -> float:
    """``value * factor`` rounded once, with ``value`` taken as its decimal text.

    ``link-bandwidth`` 6.25 times 6 links is exactly 37.5, and a file written
    by :func:`network_to_json` reads back to the very same bandwidth.
    """
    raw = value.text if isinstance(value, JsonFloat) else value
    import decimal  # late: only a 1.0 network file needs it

    with decimal.localcontext() as ctx:
        ctx.prec = 200
        return float(decimal.Decimal(raw) * factor)


def _latencies(
    data: dict[str, Any], key: str, relevant: Sequence[bool], file: str
) -> tuple[float, list[float] | None]:
    """A 1.0 latency key given as a number or a per-dimension list.

    Returns (the network's value, None) when the entries of the dimensions
    where it matters (``relevant``) agree, else (0, the per-dimension values):
    ASTRA-sim 1.0 charges each message its own dimension's entry.
    """
    if key not in data:
        return 0.0, None
    value = data[key]
    if not isinstance(value, list):
        return non_negative(value, key, file), None
    if len(value) != len(relevant):
        raise InputError(
            f"has {len(value)} entries but topologies-per-dim has {len(relevant)} "
            "(one entry per dimension)",
            key,
            value,
            file,
        )
    values = [non_negative(v, f"{key}[{i}]", file) for i, v in enumerate(value)]
    used = {v for v, r in zip(values, relevant, strict=True) if r}
    if not used:
        return (values[0] if len(set(values)) == 1 else 0.0), None
    if len(used) > 1:
        return 0.0, values
    return used.pop(), None


def parse_network_json(text: str, file: str = "") -> Network:
    """Parse an ASTRA-sim 1.0 analytical network JSON document.

    Required keys: ``topologies-per-dim``, ``units-count``, ``links-count``,
    ``link-bandwidth`` (GB/s per link), ``link-latency`` (ns); optional
    ``dimensions-count`` (must agree with the lists), ``nic-latency`` and
    ``router-latency`` (a number or a per-dimension list; when the entries that
    matter differ (NIC on dimensions with P > 1, router on such Switch
    dimensions) each dimension keeps its own). Each dimension's bandwidth is
    ``links-count * link-bandwidth``, the link bandwidth taken as the decimal
    written and the product rounded once (6 x 0.1 is 0.6), and it keeps
    ``links``. A Ring needs at
    least 2 links and a FullyConnected dimension of P NPUs at least P - 1
    (ASTRA-sim 1.0 would give a message no bandwidth otherwise). Known 1.0
    keys that do not matter (``hbm-*``, ``dimension-type``, ...) are ignored;
    unknown keys give a warning.
    """
    data = as_mapping(load_json(text, file), file, "an ASTRA-sim 1.0 network")
    warn_unknown(
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
    kinds = required_list(data, "topologies-per-dim", file)
    units = required_list(data, "units-count", file)
    links = required_list(data, "links-count", file)
    link_bw = required_list(data, "link-bandwidth", file)
    link_lat = required_list(data, "link-latency", file)
    same_length(
        file, ("topologies-per-dim", kinds), ("units-count", units), ("links-count", links),
        ("link-bandwidth", link_bw), ("link-latency", link_lat),
    )
    if "dimensions-count" in data:
        count = whole_number(data["dimensions-count"], "dimensions-count", file, 1)
        if count != len(kinds):
            raise InputError(
                f"disagrees with topologies-per-dim, which lists {len(kinds)} dimensions",
                "dimensions-count",
                data["dimensions-count"],
                file,
            )
    parsed = []
    for i in range(len(kinds)):
        kind = dim_kind(kinds[i], f"topologies-per-dim[{i}]", file)
        p = whole_number(units[i], f"units-count[{i}]", file, 1)
        n_links = whole_number(links[i], f"links-count[{i}]", file, 1)
        positive(link_bw[i], f"link-bandwidth[{i}]", file)
        lat = latency(link_lat[i], f"link-latency[{i}]", file)
        if p > 1 and kind == "Ring" and n_links < 2:
            raise InputError(
                "a Ring needs at least 2 links (ASTRA-sim 1.0 sends a Ring's messages "
                "over its links in pairs, one link per direction: 1 link sends nothing)",
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
        total = exact_product(link_bw[i], n_links)
        if not math.isfinite(total):
            raise InputError("links-count * link-bandwidth is too large", f"link-bandwidth[{i}]",
                             link_bw[i], file)
        if not MIN_BANDWIDTH_GBPS <= total <= MAX_BANDWIDTH_GBPS:
            raise InputError(f"{BANDWIDTH_RANGE} (links-count * link-bandwidth = {total:g})",
                             f"link-bandwidth[{i}]", link_bw[i], file)
        parsed.append((kind, p, total, lat, n_links))
    nic, nics = _latencies(data, "nic-latency", [p > 1 for _, p, *_ in parsed], file)
    router, routers = _latencies(
        data, "router-latency", [k == "Switch" and p > 1 for k, p, *_ in parsed], file
    )
    dims = [
        make_dimension(i, file, kind, p, bw, lat, links=n_links)
        for i, (kind, p, bw, lat, n_links) in enumerate(parsed)
    ]
    if nics or routers:  # different values per dimension: each dimension keeps its own
        dims = [dataclasses.replace(d, nic_latency_ns=nics[i] if nics else None,
                                    router_latency_ns=routers[i] if routers else None)
                for i, d in enumerate(dims)]
    return make_network(dims, file, "units-count", units, nic, router)


def _link_bandwidth_text(bandwidth: float, links: int) -> str:
    """JSON text x of a link bandwidth with ``links * x`` rounding to ``bandwidth``.

    The reader multiplies the decimal text exactly (:func:`exact_product`), so
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
    exact = [t for t in map(number_text, candidates) if exact_product(t, links) == bandwidth]
    if exact:
        return min(exact, key=len)  # the shortest, nearest to bandwidth / links on ties
    import decimal  # late: only a 1.0 network file needs it

    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return str(decimal.Decimal(bandwidth) / links)


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
        "link-latency": [plain(d.latency_ns) for d in dims],
    }
    nics = [network.nic_latency(i) for i in range(len(dims))]
    routers = [network.router_latency(i) for i in range(len(dims))]
    if any(nics):
        data["nic-latency"] = [plain(v) for v in nics]
    if any(routers):
        data["router-latency"] = [plain(v) for v in routers]
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()]
    link_bw = ", ".join(
        _link_bandwidth_text(d.bandwidth_GBps, n) for d, n in zip(dims, links, strict=True)
    )
    lines.insert(5, f'  "link-bandwidth": [{link_bw}]')
    body = ",\n".join(lines)
    return "{\n" + body + "\n}\n"


def write_network_json(network: Network, path: str | os.PathLike[str]) -> None:
    """Write ``network`` as ASTRA-sim 1.0 JSON to ``path`` (atomically)."""
    write_text(path, network_to_json(network))
