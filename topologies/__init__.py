"""Networks, dimensions, ASTRA-sim readers/writers and presets."""

from topologies.errors import InputError
from topologies.network import Dimension, Network
from topologies.system import SystemConfig
from topologies.units import GiB, KiB, MiB, parse_size

__all__ = ["Dimension", "GiB", "InputError", "KiB", "MiB", "Network", "SystemConfig", "parse_size"]
