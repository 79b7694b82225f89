"""LIBRA's input files, read as they are (github:astra-sim/libra, ``inputs/``).

- **Network** (``Topology``, ``NpusCount``, ``CostDimension``): the shape of a network and
  the cost class of each dimension; it has no bandwidth or latency.
- **Cost model** (``<class>: {Link, Switch, Nic}``): $ per GB/s of each component, per
  cost class.
- **Workload** (one line per layer, ASTRA-sim 1.0's twelve columns without its header):
  the collective of each phase and its size in bytes.
- **Communicator** (``Forward``, ``InputGrad``, ``WeightGrad``): per training phase, the
  communicator size on each dimension (``-1``: the dimension is not in the group).

LIBRA's cost of a dimension (its ``src/model/model.py``), per NPU and per GB/s: the link's
price for a Ring or FullyConnected dimension; link + switch (+ NIC where the class has one)
for a Switch dimension.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from topologies.astra.validators import as_mapping, dim_kind, load_yaml, read_text
from topologies.errors import InputError
from topologies.network import Dimension, Network

__all__ = ["LIBRA_PHASES", "LibraNetwork", "dimension_costs", "is_libra_network",
           "LibraCollective", "parse_libra_communicator", "parse_libra_cost",
           "parse_libra_network", "parse_libra_workload", "read_libra_communicator",
           "read_libra_cost", "read_libra_network", "read_libra_workload"]

#: The training phases of a LIBRA communicator file, in its order.
LIBRA_PHASES = ("Forward", "InputGrad", "WeightGrad")
_NETWORK_KEYS = frozenset({"Topology", "NpusCount", "CostDimension"})
_COMPONENTS = ("Link", "Switch", "Nic")


@dataclass(frozen=True)
class LibraNetwork:
    """A LIBRA network shape: topology kinds, NPUs and cost class per dimension."""

    kinds: tuple[str, ...]
    npus: tuple[int, ...]
    cost_classes: tuple[str, ...]
    name: str = ""

    def network(self, bandwidths_GBps: tuple[float, ...] | None = None,
                latencies_ns: tuple[float, ...] | None = None) -> Network:
        """The project's network of this shape (1 GB/s and 0 ns per dimension unless given)."""
        n = len(self.kinds)
        bws = bandwidths_GBps or (1.0,) * n
        lats = latencies_ns or (0.0,) * n
        return Network(tuple(Dimension(k, p, b, lat) for k, p, b, lat
                             in zip(self.kinds, self.npus, bws, lats, strict=True)),
                       name=self.name)


def is_libra_network(text: str) -> bool:
    """Whether YAML ``text`` looks like a LIBRA network file (``Topology`` and ``NpusCount``)."""
    return "Topology:" in text and "NpusCount:" in text


def _int_list(data: dict, key: str, file: str, minimum: int) -> tuple[int, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise InputError("must be a non-empty list", key, value, file)
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise InputError(f"must be a whole number >= {minimum}", f"{key}[{i}]", v, file)
        out.append(v)
    return tuple(out)


def parse_libra_network(text: str, file: str = "") -> LibraNetwork:
    """A LIBRA network YAML document (``Topology``, ``NpusCount``, ``CostDimension``)."""
    data = as_mapping(load_yaml(text, file), file, "a LIBRA network")
    unknown = sorted(set(data) - _NETWORK_KEYS)
    if unknown:
        raise InputError("unknown key in a LIBRA network file", unknown[0], data[unknown[0]], file)
    topo = data.get("Topology")
    if not isinstance(topo, list) or not topo:
        raise InputError("must be a non-empty list", "Topology", topo, file)
    kinds = tuple(dim_kind(k, f"Topology[{i}]", file) for i, k in enumerate(topo))
    npus = _int_list(data, "NpusCount", file, 1)
    classes = data.get("CostDimension", [])
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise InputError("must be a list of cost class names", "CostDimension", classes, file)
    for key, values in (("NpusCount", npus), ("CostDimension", classes)):
        if key == "CostDimension" and not classes:
            continue
        if len(values) != len(kinds):
            raise InputError(f"has {len(values)} entries for {len(kinds)} dimensions",
                             key, list(values), file)
    stem = os.path.splitext(os.path.basename(file))[0] if file else ""
    return LibraNetwork(kinds, npus, tuple(classes), stem)


def parse_libra_cost(text: str, file: str = "") -> dict[str, dict[str, float]]:
    """A LIBRA cost model: ``{class: {component: $ per GB/s}}`` (components Link, Switch, Nic)."""
    data = as_mapping(load_yaml(text, file), file, "a LIBRA cost model")
    out: dict[str, dict[str, float]] = {}
    for name, parts in data.items():
        if not isinstance(parts, dict) or not parts:
            raise InputError("must map Link/Switch/Nic to $ per GB/s", str(name), parts, file)
        costs = {}
        for comp, value in parts.items():
            if comp not in _COMPONENTS:
                raise InputError(f"unknown component (expected {', '.join(_COMPONENTS)})",
                                 f"{name}.{comp}", value, file)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0 \
                    or value == float("inf"):
                raise InputError("must be a finite number >= 0", f"{name}.{comp}", value, file)
            costs[str(comp)] = float(value)
        out[str(name)] = costs
    return out


def dimension_costs(network: LibraNetwork, cost: dict[str, dict[str, float]],
                    file: str = "") -> tuple[float, ...]:
    """$ per GB/s per NPU of each dimension (LIBRA's rule: Ring/FullyConnected pay the link,
    Switch the link, the switch and the NIC where its class has them)."""
    if not network.cost_classes:
        raise InputError("the network names no cost class per dimension", "CostDimension",
                         None, network.name)
    out = []
    for i, (kind, cls) in enumerate(zip(network.kinds, network.cost_classes, strict=True)):
        parts = cost.get(cls)
        if parts is None:
            raise InputError("cost class not in the cost model", f"CostDimension[{i}]", cls, file)
        if kind == "Switch":
            price = sum(parts.get(c, 0.0) for c in _COMPONENTS)
        else:
            price = parts.get("Link", 0.0)
        if price <= 0:
            raise InputError("dimension costs nothing (no Link price)", cls, parts, file)
        out.append(price)
    return tuple(out)


def parse_libra_communicator(text: str, file: str = "") -> dict[str, tuple[int, ...]]:
    """A LIBRA communicator file: per phase, the group size on each dimension (-1: not in it)."""
    data: Any = as_mapping(load_yaml(text, file), file, "a LIBRA communicator file")
    out = {}
    for phase in LIBRA_PHASES:
        if phase not in data:
            raise InputError("missing phase", phase, None, file)
        sizes = _int_list(data, phase, file, -1)
        if any(s == 0 for s in sizes):
            raise InputError("group sizes are -1 or >= 1", phase, list(sizes), file)
        out[phase] = sizes
    unknown = sorted(set(data) - set(LIBRA_PHASES))
    if unknown:
        raise InputError("unknown phase", unknown[0], data[unknown[0]], file)
    if len({len(s) for s in out.values()}) != 1:
        raise InputError("phases have different numbers of dimensions", "Forward",
                         list(out["Forward"]), file)
    return out


@dataclass(frozen=True)
class LibraCollective:
    """One collective of a LIBRA workload: its layer, phase, type (as written) and size."""

    layer: str
    phase: str
    comm_type: str
    size_bytes: int


_LIBRA_COMM_TYPES = ("NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL")


def parse_libra_workload(text: str, file: str = "") -> tuple[LibraCollective, ...]:
    """A LIBRA workload: per line ``name reserved fwd_ns fwd_type fwd_bytes ig_ns ig_type
    ig_bytes wg_ns wg_type wg_bytes update_ns``; the collectives of every phase in order
    (``NONE`` and size-0 entries left out)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 12:
            raise InputError(f"a layer has 12 columns, this line {len(words)}",
                             f"line {number}", line.strip()[:80], file)
        for phase, (kind, size) in zip(LIBRA_PHASES, ((words[3], words[4]),
                                                      (words[6], words[7]),
                                                      (words[9], words[10])), strict=True):
            if kind not in _LIBRA_COMM_TYPES:
                raise InputError(f"unknown collective (one of {', '.join(_LIBRA_COMM_TYPES)})",
                                 f"line {number} {phase}", kind, file)
            if not (size.isascii() and size.isdigit()):
                raise InputError("a size is a whole number of bytes", f"line {number} {phase}",
                                 size, file)
            if kind != "NONE" and int(size) > 0:
                out.append(LibraCollective(words[0], phase, kind, int(size)))
    if not out:
        raise InputError("no collective in the workload", "document", None, file)
    return tuple(out)


def read_libra_workload(path: str | os.PathLike[str]) -> tuple[LibraCollective, ...]:
    """Read a LIBRA workload file."""
    return parse_libra_workload(read_text(path), str(path))


def read_libra_network(path: str | os.PathLike[str]) -> LibraNetwork:
    """Read a LIBRA network file."""
    return parse_libra_network(read_text(path), str(path))


def read_libra_cost(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """Read a LIBRA cost-model file."""
    return parse_libra_cost(read_text(path), str(path))


def read_libra_communicator(path: str | os.PathLike[str]) -> dict[str, tuple[int, ...]]:
    """Read a LIBRA communicator file."""
    return parse_libra_communicator(read_text(path), str(path))
