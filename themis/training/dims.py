"""Which dimensions each collective of a workload uses (workloads.md §2), and scaling.

* :func:`logical_network`: ASTRA-sim's ``Sys::break_dimension``. For a
  model-parallel group G the dimension where the product of sizes passes G is
  split into two logical dimensions of sizes G/p and P_d/(G/p), both keeping
  the physical dimension's kind, bandwidth, latency and links (and algorithm).
* :func:`dimension_mask`: the mask of a layer's fwd / ig / wg collective for
  the workload's keyword (the table of §2).
* :func:`scaled`: a compute time or size times a scale, through C ``float``
  (float32) as ASTRA-sim computes it (§1.6).
"""

from __future__ import annotations

import struct
from dataclasses import replace

from themis.training.config import Phase
from topologies.errors import InputError
from topologies.network import Network
from topologies.workload import Parallelism, Workload

_DATA_LIKE = (Parallelism.DATA, Parallelism.MICRO, Parallelism.HYBRID_DLRM,
              Parallelism.HYBRID_DLRM_ENHANCED)
_MODEL_LIKE = (Parallelism.MODEL, Parallelism.DISTRIBUTED_INFERENCE)
TRANSFORMERS = (Parallelism.HYBRID_TRANSFORMER, Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD)


def break_dimension(sizes: tuple[int, ...], group: int | None) -> tuple[int, int | None]:
    """``(b, split)``: the last model-parallel dimension and the split dimension (or ``None``).

    ``b = -1`` when ``group`` is ``None`` or 1 or exceeds the NPU count.
    """
    if group is None or group == 1:
        return -1, None
    p = 1
    for d, size in enumerate(sizes):
        if p * size < group:
            p *= size
        elif p * size == group:
            return d, None
        else:
            if group % p or size % (group // p):
                raise InputError(
                    f"the model-parallel group does not split dimension {d} (size {size}, "
                    f"{p} NPUs before it) into whole parts", "model_parallel_NPU_group", group)
            return d, d
    return -1, None


def logical_network(network: Network, group: int | None) -> tuple[Network, int, int | None]:
    """The network a workload runs on, its break dimension b and split dimension."""
    sizes = tuple(d.npus for d in network.dims)
    b, split = break_dimension(sizes, group)
    if split is None:
        return network, b, None
    dims = list(network.dims)
    d = dims[split]
    p = 1
    for x in sizes[:split]:
        p *= x
    first = group // p  # type: ignore[operator]
    halves = [replace(d, npus=first), replace(d, npus=d.npus // first)]
    dims[split:split + 1] = halves
    return replace(network, dims=tuple(dims)), b, split


def split_algorithms(algorithms: tuple[str, ...] | None, split: int | None
                     ) -> tuple[str, ...] | None:
    """Per-physical-dimension algorithms expanded over a split (the split one twice)."""
    if algorithms is None or split is None:
        return algorithms
    a = list(algorithms)
    i = min(split, len(a) - 1)
    a.insert(i, a[i])
    return tuple(a)


def _keyword_mask(keyword: Parallelism, phase: Phase, ndims: int, b: int,
                  layer: int) -> tuple[bool, ...]:
    allm = (True,) * ndims
    none = (False,) * ndims
    if keyword in (Parallelism.HYBRID_DLRM, Parallelism.HYBRID_DLRM_ENHANCED) and layer == 0:
        return allm
    if keyword in _DATA_LIKE:
        return allm if phase is Phase.WG else none
    if keyword in _MODEL_LIKE:
        return none if phase is Phase.WG else allm
    if keyword in (Parallelism.HYBRID_DATA_MODEL, Parallelism.HYBRID_MODEL_DATA):
        first = tuple(d == 0 for d in range(ndims))
        rest = tuple(d != 0 for d in range(ndims))
        model, data = (first, rest) if keyword is Parallelism.HYBRID_DATA_MODEL else (rest, first)
        return data if phase is Phase.WG else model
    if keyword in TRANSFORMERS:
        model = tuple(d <= b for d in range(ndims))
        return tuple(not m for m in model) if phase is Phase.WG else model
    raise InputError("has no dimension mask in ASTRA-sim 1.0 (as a HYBRID_CUSTOMIZED "
                     "layer keyword use DATA, MODEL, HYBRID_DATA_MODEL or HYBRID_MODEL_DATA)",
                     "parallelism", str(keyword))


def dimension_mask(workload: Workload, layer: int, phase: Phase, ndims: int,
                   b: int) -> tuple[bool, ...]:
    """Which logical dimensions layer ``layer``'s ``phase`` collective may use."""
    keyword = workload.parallelism
    if keyword is Parallelism.HYBRID_CUSTOMIZED:
        own = workload.layers[layer].parallelism
        if own is None or own is Parallelism.HYBRID_CUSTOMIZED or own in TRANSFORMERS:
            raise InputError(f"layer {layer} ({workload.layers[layer].name}) has no usable "
                             "keyword of its own", "parallelism", str(own))
        return _keyword_mask(own, phase, ndims, b, layer)
    return _keyword_mask(keyword, phase, ndims, b, layer)


def _float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def scaled(value: int, scale: float, exact_float32: bool) -> int:
    """``value * scale`` as ASTRA-sim stores it (a C ``float`` product, then truncated).

    With ``exact_float32`` the value and the product pass through float32
    (36290323 becomes 36290324); otherwise the product of doubles, truncated.
    """
    if scale == 1 and not exact_float32:
        return int(value)
    if exact_float32:
        return int(_float32(_float32(float(value)) * _float32(scale)))
    return int(value * scale)
