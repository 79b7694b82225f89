"""The semantic check of a system file's algorithms against a network."""

from __future__ import annotations

from collections.abc import Sequence

from topologies.astra.system_file import IMPLEMENTATION_KEYS
from topologies.errors import InputError
from topologies.network import Network
from topologies.system import ALGORITHMS, SystemConfig, canonical_algorithm

__all__ = ["validate_algorithms", "validate_system"]


def validate_algorithms(
    network: Network,
    algorithms: Sequence[str],
    file: str = "",
    field: str = "all-reduce-implementation",
) -> tuple[str, ...]:
    """Check one algorithm per dimension of ``network``; return the canonical names.

    Raises :class:`InputError` (naming ``file``, ``field[index]`` and the
    value) for a list whose length differs from the number of dimensions, an
    unknown algorithm, or ``halvingDoubling`` on a dimension whose NPU count
    is not a power of two (ASTRA-sim deadlocks silently there).
    """
    names = list(algorithms)
    if len(names) != network.ndims:
        n, nd = len(names), network.ndims
        # as the user wrote it: a JSON list in a 2.x (JSON) file, `_`-joined text in 1.0
        shown: object = names if file.lower().endswith(".json") else "_".join(map(str, names))
        raise InputError(
            f"{n} algorithm{'s' if n != 1 else ''} for a network of {nd} "
            f"dimension{'s' if nd != 1 else ''} (give one per dimension)",
            field,
            shown,
            file,
        )
    result = []
    for i, (name, dim) in enumerate(zip(names, network.dims, strict=True)):
        canonical = canonical_algorithm(name) if isinstance(name, str) else None
        if canonical is None:
            raise InputError(
                f"unknown algorithm (expected one of {', '.join(ALGORITHMS)})",
                f"{field}[{i}]",
                name,
                file,
            )
        if canonical == "halvingDoubling" and dim.npus & (dim.npus - 1):
            raise InputError(
                f"halvingDoubling needs a power-of-two NPU count but dimension {i} "
                f"has {dim.npus}",
                f"{field}[{i}]",
                name,
                file,
            )
        result.append(canonical)
    return tuple(result)


def validate_system(network: Network, system: SystemConfig) -> None:
    """Check every algorithm list that ``system`` gives against ``network``.

    Errors name ``system.source`` and the key, e.g.
    ``all-reduce-implementation[1]``.
    """
    for key, attr in IMPLEMENTATION_KEYS.items():
        algorithms = getattr(system, attr)
        if algorithms is not None:
            validate_algorithms(network, algorithms, system.source, key)
