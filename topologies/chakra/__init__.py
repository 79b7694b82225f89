"""Chakra execution traces (ETs): read and write without the ``chakra`` package."""

from topologies.chakra.trace import Trace, read_et, write_et

__all__ = ["Trace", "read_et", "write_et"]
