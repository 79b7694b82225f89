"""Collectives and their chunking (model.md §3)."""

from __future__ import annotations

from dataclasses import dataclass

from topologies.errors import InputError

COLLECTIVES: tuple[str, ...] = ("all-reduce", "reduce-scatter", "all-gather")

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
    """A collective of ``size_bytes`` split into ``chunks`` chunks.

    ``size_bytes`` is the full buffer: the all-reduce buffer, the
    reduce-scatter input, the all-gather output (NCCL convention).
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

    def chunk_sizes(self) -> list[int]:
        """Sizes of all chunks: C chunks of floor(S/C), plus one for a remainder."""
        base = self.chunk_bytes
        sizes = [base] * self.chunks
        rest = self.size_bytes - base * self.chunks
        if rest:
            sizes.append(rest)
        return sizes
