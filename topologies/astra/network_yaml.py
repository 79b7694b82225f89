"""ASTRA-sim 2.x network YAML: read and write.

Keys: ``topology``, ``npus_count``, ``bandwidth`` (GB/s), ``latency`` (ns).

Round trip: YAML -> Network -> YAML -> Network is equal. The 2.x YAML has no
links-count, NIC or router latency, so :func:`network_to_yaml` can only keep
networks whose dimensions have ``links=None`` (or the 2.x default) and zero
NIC/router latency; otherwise it warns and drops them.
"""

from __future__ import annotations

import os
import warnings

from topologies.astra.validators import (
    as_mapping,
    bandwidth,
    dim_kind,
    latency,
    load_yaml,
    make_dimension,
    make_network,
    plain,
    required_list,
    same_length,
    warn_unknown,
    whole_number,
    write_text,
)
from topologies.errors import InputError
from topologies.network import Dimension, Network

__all__ = ["YAML_NETWORK_KEYS", "network_to_yaml", "parse_network_yaml", "write_network_yaml"]

#: Keys of an ASTRA-sim 2.x network YAML.
YAML_NETWORK_KEYS: frozenset[str] = frozenset({"topology", "npus_count", "bandwidth", "latency"})


def parse_network_yaml(text: str, file: str = "") -> Network:
    """Parse an ASTRA-sim 2.x network YAML document.

    Required keys: ``topology`` (``Ring``, ``FullyConnected``, ``Switch``),
    ``npus_count`` (>= 1; 1 is accepted and that dimension is skipped),
    ``bandwidth`` (GB/s, > 0) and ``latency`` (ns, >= 0), each a list with one
    entry per dimension. Unknown keys give a warning. ``file`` is used in
    messages and as the network's name (its stem).
    """
    data = as_mapping(load_yaml(text, file), file, "an ASTRA-sim 2.x network")
    warn_unknown(file, "network", set(data) - YAML_NETWORK_KEYS)
    kinds = required_list(data, "topology", file)
    npus = required_list(data, "npus_count", file)
    bandwidths = required_list(data, "bandwidth", file)
    latencies = required_list(data, "latency", file)
    same_length(
        file, ("topology", kinds), ("npus_count", npus), ("bandwidth", bandwidths),
        ("latency", latencies),
    )
    dims = []
    for i in range(len(kinds)):
        kind = dim_kind(kinds[i], f"topology[{i}]", file)
        if kinds[i] != kind:  # 2.x's YAML reader compares the names exactly
            raise InputError(f"ASTRA-sim 2.x spells it {kind} (it compares names exactly and "
                             "stops on any other spelling)", f"topology[{i}]", kinds[i], file)
        p = whole_number(npus[i], f"npus_count[{i}]", file, 1)
        bw = bandwidth(bandwidths[i], f"bandwidth[{i}]", file)
        lat = latency(latencies[i], f"latency[{i}]", file)
        dims.append(make_dimension(i, file, kind, p, bw, lat))
    return make_network(dims, file, "npus_count", npus)


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
    for key, of in (("nic-latency", network.nic_latency), ("router-latency",
                                                         network.router_latency)):
        values = [of(i) for i in range(len(network.dims))]
        if any(values):
            shown = (f"{values[0]:g}" if len(set(values)) == 1
                     else "[" + ", ".join(f"{v:g}" for v in values) + "]")
            dropped.append(f"{key} = {shown}")
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
        "bandwidth": [plain(d.bandwidth_GBps) for d in network.dims],
        "latency": [plain(d.latency_ns) for d in network.dims],
    }
    header = f"# ASTRA-sim 2.x network: {network.describe()} ({network.npus} NPUs)\n"
    import yaml  # late: a costly import, which reading a network file needs no more

    return header + yaml.safe_dump(data, default_flow_style=None, sort_keys=False)


def write_network_yaml(network: Network, path: str | os.PathLike[str]) -> None:
    """Write ``network`` as ASTRA-sim 2.x YAML to ``path`` (atomically)."""
    write_text(path, network_to_yaml(network))
