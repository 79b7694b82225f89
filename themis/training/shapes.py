"""What each layer's collective of a training run is: kind, size, chunks, mask, priority.

Shared by the simulation (:mod:`themis.training.simulate`) and the iteration
bound (:mod:`themis.training.bound`).
"""

from __future__ import annotations

from themis.runkind import RunKind
from themis.training.config import Phase, TrainingConfig
from themis.training.dims import dimension_mask
from themis.training.planner import involved
from themis.training.runner import Run
from topologies.errors import InputError
from topologies.network import Network
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


class CollectiveShapes:
    """What a layer's collective is: kind, size, chunk sizes, mask, dimensions, priority."""

    def __init__(self, wl: Workload, lnet: Network, b: int, cfg: TrainingConfig) -> None:
        self.wl, self.lnet, self.b, self.cfg = wl, lnet, b, cfg
        self.kind = cfg.run_kind
        self._masks: dict[tuple[int, Phase], tuple[bool, ...]] = {}

    def shape(self, run: Run, i: int, phase: Phase, highest: bool
              ) -> tuple[str, int, list[int], tuple[bool, ...], tuple[int, ...], int] | None:
        """``None`` for no collective (NONE type, or no dimension left); the priority is
        taken (ASTRA-sim's counter moves) whenever a collective is generated."""
        wl = self.wl
        layer = wl.layers[i]
        ctype = layer_comm_type(wl, i, phase)
        if ctype is None:
            return None
        mask = self._masks.get((i, phase))
        if mask is None:
            try:
                mask = dimension_mask(wl, i, phase, self.lnet.ndims, self.b)
            except InputError as err:
                raise err.in_file(wl.file or wl.name) from None
            self._masks[(i, phase)] = mask
        prio = run.priority(highest)
        dims = involved(self.lnet, mask)
        if not dims:
            return None
        size = getattr(layer, f"{phase}_size_bytes")
        sizes = chunk_sizes(size, self.cfg.chunks, self.kind,
                            f"{wl.file or wl.name}: layer {i} ({layer.name}) {phase}")
        return KINDS[ctype], size, sizes, mask, dims, prio
