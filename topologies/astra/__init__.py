"""Read and write ASTRA-sim network and system files (model.md §1-§2).

One module per job:

* :mod:`topologies.astra.validators`: reading text, YAML and JSON, and the
  checks of numbers, counts and lists shared by every parser;
* :mod:`topologies.astra.network_yaml`: ASTRA-sim 2.x network YAML
  (``topology``, ``npus_count``, ``bandwidth`` in GB/s, ``latency`` in ns);
* :mod:`topologies.astra.network_json`: ASTRA-sim 1.0 analytical network JSON
  (``topologies-per-dim``, ``units-count``, ``links-count``,
  ``link-bandwidth``, ``link-latency``, ``nic-latency``, ``router-latency``);
* :mod:`topologies.astra.system_file`: ASTRA-sim system files (1.0
  ``key: value`` text, 2.x JSON);
* :mod:`topologies.astra.algorithms`: the check of a system file's algorithms
  against a network.

This package picks the network reader by file type (:func:`read_network`) and
re-exports the public functions, each module imported on first use. Every bad input raises
:class:`~topologies.errors.InputError` naming the file, the field and the value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topologies.errors import InputError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from topologies.astra.algorithms import validate_algorithms, validate_system
    from topologies.astra.network_json import (
        network_to_json,
        parse_network_json,
        write_network_json,
    )
    from topologies.astra.network_yaml import (
        network_to_yaml,
        parse_network_yaml,
        write_network_yaml,
    )
    from topologies.astra.system_file import parse_system, read_system
    from topologies.network import Network

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


def read_network(path: str | os.PathLike[str]) -> Network:
    """Read a network file: ``.yml``/``.yaml`` (2.x YAML) or ``.json`` (1.0 JSON).

    The network's ``name`` is the file stem. Raises :class:`InputError` for a
    missing or unreadable file, an unknown file type and every bad value.
    """
    from topologies.astra.validators import read_text

    file = str(path)
    suffix = Path(file).suffix.lower()
    text = read_text(path)
    if suffix in YAML_SUFFIXES:
        from topologies.astra.network_yaml import parse_network_yaml

        return parse_network_yaml(text, file)
    if suffix in JSON_SUFFIXES:
        from topologies.astra.network_json import parse_network_json

        return parse_network_json(text, file)
    raise InputError(
        "unknown network file type (expected .yml or .yaml for ASTRA-sim 2.x, "
        ".json for ASTRA-sim 1.0)",
        "path",
        file,
        file,
    )


_ALGORITHMS = frozenset({"validate_algorithms", "validate_system"})
_JSON = frozenset({"network_to_json", "parse_network_json", "write_network_json"})
_YAML = frozenset({"network_to_yaml", "parse_network_yaml", "write_network_yaml"})
_SYSTEM = frozenset({"parse_system", "read_system"})


def __getattr__(name: str) -> Any:
    # The readers and writers, imported on first use: a run reads one kind of file
    # (yaml and the 1.0 parsers are costly imports; start-up is part of every run's time).
    if name in _ALGORITHMS:
        import topologies.astra.algorithms

        return getattr(topologies.astra.algorithms, name)
    if name in _JSON:
        import topologies.astra.network_json

        return getattr(topologies.astra.network_json, name)
    if name in _YAML:
        import topologies.astra.network_yaml

        return getattr(topologies.astra.network_yaml, name)
    if name in _SYSTEM:
        import topologies.astra.system_file

        return getattr(topologies.astra.system_file, name)
    raise AttributeError(f"module 'topologies.astra' has no attribute {name!r}")
