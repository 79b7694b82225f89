"""Collectives and their chunking (model.md §3)."""

from __future__ import annotations

from dataclasses import dataclass

from topologies.errors import InputError

COLLECTIVES: tuple[str, ...] = ("all-reduce", "reduce-scatter", "all-gather")
#: The all-to-all of training workloads (DLRM): simulated and checked, not offered
#: to the single-collective commands, policies or solvers.
ALL_TO_ALL = "all-to-all"

_ALIASES = {
    "all-reduce": "all-reduce",
    "allreduce": "all-reduce",
    "ar": "all-reduce",
    "reduce-scatter": "reduce-scatter",
    "reducescatter": "reduce-scatter",
    "rs": "reduce-scatter",
    "all-gather": "all-gather",
    "allgather": "all-gather",
    "ag": "all-gather",
    "all-to-all": ALL_TO_ALL,
    "alltoall": ALL_TO_ALL,
}


def canonical_collective(name: str) -> str:
    """Canonical collective kind for a user spelling (``allreduce``, ``AR``...)."""
    key = str(name).strip().lower().replace("_", "-")
    if key in _ALIASES:
        return _ALIASES[key]
    raise InputError(f"unknown collective (expected one of {', '.join(COLLECTIVES)})",
                     "collective", name)


@dataclass(frozen=True)
class Collective:
    """A collective of ``size_bytes`` split ``chunks`` ways (model.md §3).

    ``size_bytes`` is the full buffer: the all-reduce buffer, the
    reduce-scatter input, the all-gather output (NCCL convention).
    ``chunks`` is the number of splits, ASTRA-sim's ``preferred-dataset-splits``
    (what ``--chunks`` gives): ``chunks`` chunks of floor(S / chunks) bytes,
    plus one more chunk for a remainder. :attr:`chunk_count` is how many chunks
    that makes; :meth:`chunking` and :meth:`describe_chunks` show both the
    same way in every output.
    """

    kind: str
    size_bytes: int
    chunks: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", canonical_collective(self.kind))
        if isinstance(self.size_bytes, bool) or not isinstance(self.size_bytes, int):
            raise InputError("size must be a whole number of bytes", "size", self.size_bytes)
        if self.size_bytes <= 0:
            raise InputError("size must be positive", "size", self.size_bytes)
        if isinstance(self.chunks, bool) or not isinstance(self.chunks, int) or self.chunks < 1:
            raise InputError("chunks must be an integer >= 1", "chunks", self.chunks)
        if self.chunks > self.size_bytes:
            raise InputError(
                f"more chunks than bytes (size {self.size_bytes})", "chunks", self.chunks
            )

    @property
    def chunk_bytes(self) -> int:
        """The regular chunk size, floor(S / C)."""
        return self.size_bytes // self.chunks

    @property
    def splits(self) -> int:
        """The requested number of splits (the ``chunks`` field)."""
        return self.chunks

    @property
    def remainder_bytes(self) -> int:
        """Size of the extra last chunk, S - C * floor(S / C) (0: no extra chunk)."""
        return self.size_bytes - self.chunk_bytes * self.chunks

    @property
    def chunk_count(self) -> int:
        """How many chunks the split makes: C, or C + 1 with a remainder."""
        return self.chunks + (1 if self.remainder_bytes else 0)

    def chunking(self) -> dict[str, object]:
        """The split as JSON fields: ``splits``, ``chunk_count`` and ``chunk_sizes``
        (``[{"size_bytes": b, "count": n}, ...]``, the regular size first)."""
        sizes = [{"size_bytes": self.chunk_bytes, "count": self.chunks}]
        if self.remainder_bytes:
            sizes.append({"size_bytes": self.remainder_bytes, "count": 1})
        return {"splits": self.splits, "chunk_count": self.chunk_count, "chunk_sizes": sizes}

    def describe_chunks(self) -> str:
        """E.g. ``7 chunks (6 splits: 6 x 1000 B + 1 x 5 B)`` or ``4 chunks of 1 KiB``."""
        from topologies.units import format_size

        if not self.remainder_bytes:
            return f"{self.chunk_count} chunks of {format_size(self.chunk_bytes)}"
        return (f"{self.chunk_count} chunks ({self.splits} splits: {self.chunks} x "
                f"{format_size(self.chunk_bytes)} + 1 x {format_size(self.remainder_bytes)})")

    def chunk_sizes(self) -> list[int]:
        """Sizes of all chunks: C chunks of floor(S/C), plus one for a remainder."""
        base = self.chunk_bytes
        sizes = [base] * self.chunks
        rest = self.size_bytes - base * self.chunks
        if rest:
            sizes.append(rest)
        return sizes
