"""Networks, dimensions, ASTRA-sim readers/writers and presets.

Importing the package is light (every ``topologies.*`` import runs it): the names
below are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
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
    from topologies.graph import grid_positions, npu_coords, npu_graph, npu_id, switch_node
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

_ASTRA = frozenset({"network_to_json", "network_to_yaml", "parse_network_json",
                    "parse_network_yaml", "parse_system", "read_network", "read_system",
                    "validate_algorithms", "validate_system", "write_network_json",
                    "write_network_yaml"})
_GRAPH = frozenset({"grid_positions", "npu_coords", "npu_graph", "npu_id", "switch_node"})
_NETWORK = frozenset({"Dimension", "Network"})
_PRESETS = frozenset({"PresetInfo", "list_preset_systems", "list_presets", "preset_network",
                      "preset_system", "preset_system_path", "resolve_network",
                      "resolve_system"})
_UNITS = frozenset({"GiB", "KiB", "MiB", "parse_size"})


def __getattr__(name: str) -> Any:
    # The re-exports, imported on first use: yaml (the readers) and networkx (the
    # graph helpers) are slow to import, and start-up is part of every run's time.
    if name in _ASTRA:
        import topologies.astra

        return getattr(topologies.astra, name)
    if name in _GRAPH:
        import topologies.graph

        return getattr(topologies.graph, name)
    if name in _NETWORK:
        import topologies.network

        return getattr(topologies.network, name)
    if name in _PRESETS:
        import topologies.presets

        return getattr(topologies.presets, name)
    if name in _UNITS:
        import topologies.units

        return getattr(topologies.units, name)
    if name == "InputError":
        from topologies.errors import InputError

        return InputError
    if name == "SystemConfig":
        from topologies.system import SystemConfig

        return SystemConfig
    raise AttributeError(f"module 'topologies' has no attribute {name!r}")
