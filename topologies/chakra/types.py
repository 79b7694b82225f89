"""Chakra enums: node types and collective comm types."""

from __future__ import annotations

from enum import IntEnum


class NodeType(IntEnum):
    """``ChakraProtoMsg.NodeType`` (0, INVALID_NODE, is refused)."""

    METADATA_NODE = 1
    MEM_LOAD_NODE = 2
    MEM_STORE_NODE = 3
    COMP_NODE = 4
    COMM_SEND_NODE = 5
    COMM_RECV_NODE = 6
    COMM_COLL_NODE = 7


class CommType(IntEnum):
    """``ChakraProtoMsg.CollectiveCommType``, the ``comm_type`` attribute."""

    ALL_REDUCE = 0
    REDUCE = 1
    ALL_GATHER = 2
    GATHER = 3
    SCATTER = 4
    BROADCAST = 5
    ALL_TO_ALL = 6
    REDUCE_SCATTER = 7
    REDUCE_SCATTER_BLOCK = 8
    BARRIER = 9


#: The comm types the project runs, and the collective kind each is (the one mapping:
#: traces read, traces written).
COLLECTIVE_KINDS: dict[CommType, str] = {
    CommType.ALL_REDUCE: "all-reduce", CommType.ALL_GATHER: "all-gather",
    CommType.REDUCE_SCATTER: "reduce-scatter", CommType.ALL_TO_ALL: "all-to-all"}
