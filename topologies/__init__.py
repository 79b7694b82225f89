"""Networks, dimensions, ASTRA-sim readers/writers and presets."""

from topologies.astra import (
    network_to_json,
    network_to_yaml,
    parse_network_json,
    parse_network_yaml,
    parse_system,
    read_network,
    read_system,
    validate_algorithms,
    validate_system,
    write_network_json,
    write_network_yaml,
)
from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.presets import (
    PresetInfo,
    list_preset_systems,
    list_presets,
    preset_network,
    preset_system,
    preset_system_path,
    resolve_network,
    resolve_system,
)
from topologies.system import SystemConfig
from topologies.units import GiB, KiB, MiB, parse_size

__all__ = [
    "Dimension",
    "GiB",
    "InputError",
    "KiB",
    "MiB",
    "Network",
    "PresetInfo",
    "SystemConfig",
    "grid_positions",
    "list_preset_systems",
    "list_presets",
    "network_to_json",
    "network_to_yaml",
    "npu_coords",
    "npu_graph",
    "npu_id",
    "parse_network_json",
    "parse_network_yaml",
    "parse_size",
    "parse_system",
    "preset_network",
    "preset_system",
    "preset_system_path",
    "read_network",
    "read_system",
    "resolve_network",
    "resolve_system",
    "switch_node",
    "validate_algorithms",
    "validate_system",
    "write_network_json",
    "write_network_yaml",
]

_LAZY_GRAPH = {"grid_positions", "npu_coords", "npu_graph", "npu_id", "switch_node"}


def __getattr__(name: str):
    # networkx is slow to import: load the graph helpers only when asked for.
    if name in _LAZY_GRAPH:
        from topologies import graph

        return getattr(graph, name)
    raise AttributeError(f"module 'topologies' has no attribute {name!r}")
