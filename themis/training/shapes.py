"""What a layer's collective of an ASTRA-sim 1.0 workload is: its kind and its chunking.

Read by the compile of 1.0 workloads to programs (:mod:`themis.training.compile10`).
"""

from __future__ import annotations

from themis.runkind import RunKind
from themis.training.config import Phase
from topologies.errors import InputError
from topologies.workload import CommType, Workload

KINDS = {CommType.ALLREDUCE: "all-reduce", CommType.ALLGATHER: "all-gather",
         CommType.REDUCESCATTER: "reduce-scatter", CommType.ALLTOALL: "all-to-all"}


def chunk_sizes(size: int, chunks: int, kind: RunKind, where: str) -> list[int]:
    """The run's chunking (:meth:`RunKind.chunk_sizes`); a collective smaller than the
    chunk count is refused."""
    c = size // chunks
    if c == 0:
        raise InputError(f"{where}: a collective of {size} bytes cannot be cut into {chunks} "
                         "chunks (ASTRA-sim 1.0 never ends on it)", "chunks", chunks)
    return kind.chunk_sizes(size, chunks)


def layer_comm_type(wl: Workload, i: int, phase: Phase) -> CommType | None:
    """The collective type of layer ``i``'s ``phase``, ``None`` for NONE; an
    ALLREDUCEALLTOALL (on which ASTRA-sim 1.0 aborts) is refused."""
    layer = wl.layers[i]
    ctype: CommType = getattr(layer, f"{phase}_type")
    if ctype is CommType.NONE:
        return None
    if ctype is CommType.ALLREDUCEALLTOALL:
        raise InputError("ASTRA-sim 1.0 aborts on an ALLREDUCEALLTOALL collective",
                         f"layer {i} ({layer.name}) {phase}_type", str(ctype),
                         wl.file or wl.name)
    return ctype
