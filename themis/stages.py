"""Stage plans walked through a timing model, and the per-stage arrays of a run.

:func:`chain` is the one place where a chunk's (phase, dim) plan is walked
through a timing model (each stage's output is the next one's input); the
simulator, the checker and the solvers' problem data all use it.
:class:`StageTable` holds one simulation's stages as flat arrays (stage ids
``0..n-1``, a chunk's stages consecutive), which the simulator and the
intra-dimension disciplines read.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain as _concat
from itertools import repeat

from themis.plans import Plan
from themis.timing.base import StageCost, Timing

#: One chunk's stage columns (:meth:`StageTable.block`): dims, durations, fixed times,
#: bytes sent, input and output bytes, phases, and which stage is the chunk's last.
Block = tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...],
              tuple[float, ...], tuple[float, ...], tuple[str, ...], tuple[bool, ...]]


def first_input(timing: Timing, kind: str, chunk_bytes: float) -> float:
    """The input size of a chunk's first stage (an all-gather starts at a shard)."""
    return timing.all_gather_input(chunk_bytes) if kind == "all-gather" else float(chunk_bytes)


def chain(
    timing: Timing,
    kind: str,
    chunk_bytes: float,
    plan: Sequence[tuple[str, int]],
    cache: dict[tuple[str, int, float], StageCost] | None = None,
) -> list[tuple[float, StageCost]]:
    """``(input_bytes, cost)`` of every stage of ``plan`` for a chunk of ``chunk_bytes``.

    ``cache`` (optional, shared between calls with the same timing) memoizes
    ``timing.stage`` by (phase, dim, input bytes).
    """
    m = first_input(timing, kind, chunk_bytes)
    out: list[tuple[float, StageCost]] = []
    for phase, d in plan:
        if cache is None:
            c = timing.stage(phase, d, m)
        else:
            key = (phase, d, m)
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = timing.stage(phase, d, m)
            c = hit
        out.append((m, c))
        m = c.output_bytes
    return out


#: Per timing model (immutable), the stage columns of (kind, plan, chunk bytes) blocks.
BlockMemo = dict[tuple[str, Plan, int], Block]
_BLOCKS: weakref.WeakKeyDictionary[Timing, BlockMemo] = weakref.WeakKeyDictionary()


def block_cache(timing: Timing) -> BlockMemo:
    """A memo of :meth:`StageTable.block` results that lives as long as ``timing``."""
    try:
        memo = _BLOCKS.get(timing)
        if memo is None:
            memo = _BLOCKS[timing] = {}
        return memo
    except TypeError:  # a timing object that cannot be hashed or weakly referenced
        return {}


def chunk_block(timing: Timing, kind: str, chunk_bytes: int, plan: Plan,
                memo: BlockMemo | None = None) -> Block:
    """The :meth:`StageTable.block` of a chunk, memoized per timing model."""
    memo = block_cache(timing) if memo is None else memo
    key = (kind, plan, chunk_bytes)
    block = memo.get(key)
    if block is None:
        block = memo[key] = StageTable.block(plan, chain(timing, kind, chunk_bytes, plan))
    return block


@dataclass
class StageTable:
    """One run's stages as parallel lists indexed by stage id.

    A chunk's stages have consecutive ids in plan order, so the successor of a
    stage ``sid`` that is not its chunk's ``last`` is ``sid + 1``. ``chunks``
    lists (collective, chunk, first stage id, stage count) per chunk.
    ``cache`` is scratch space where a discipline may keep arrays it derives
    once per run (e.g. the remaining work of every stage). ``priority`` is
    filled by :class:`themis.engine.Engine` (collectives issued with priorities)
    for the priority disciplines.
    """

    dim: list[int] = field(default_factory=list)
    duration_ns: list[float] = field(default_factory=list)
    fixed_ns: list[float] = field(default_factory=list)
    sent_bytes: list[float] = field(default_factory=list)
    input_bytes: list[float] = field(default_factory=list)
    output_bytes: list[float] = field(default_factory=list)
    phase: list[str] = field(default_factory=list)
    last: list[bool] = field(default_factory=list)
    chunks: list[tuple[int, int, int, int]] = field(default_factory=list)
    cache: dict[str, object] = field(default_factory=dict)
    #: Per stage, its collective's priority (a training run's; empty otherwise).
    priority: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.dim)

    @staticmethod
    def block(plan: Plan, costs: Sequence[tuple[float, StageCost]]) -> Block:
        """One chunk's stage columns (from :func:`chain`), to add with :meth:`add_block`."""
        n = len(plan)
        return (
            tuple(d for _, d in plan),
            tuple(c.duration_ns for _, c in costs),
            tuple(c.fixed_ns for _, c in costs),
            tuple(c.sent_bytes for _, c in costs),
            tuple(m for m, _ in costs),
            tuple(c.output_bytes for _, c in costs),
            tuple(p for p, _ in plan),
            (False,) * (n - 1) + (True,) if n else (),
        )

    def add_block(self, collective: int, chunk: int, block: Block) -> int:
        """Append one chunk's stages (a :meth:`block`); returns its first stage id."""
        first = len(self.dim)
        dims, dur, fixed, sent, inp, out, phase, last = block
        self.dim.extend(dims)
        self.duration_ns.extend(dur)
        self.fixed_ns.extend(fixed)
        self.sent_bytes.extend(sent)
        self.input_bytes.extend(inp)
        self.output_bytes.extend(out)
        self.phase.extend(phase)
        self.last.extend(last)
        self.chunks.append((collective, chunk, first, len(dims)))
        return first

    @classmethod
    def from_blocks(cls, keys: Sequence[tuple[int, int]], blocks: Sequence[Block]
                    ) -> tuple[StageTable, list[int]]:
        """A table of chunks ``keys[i]`` = (collective, chunk) with stages ``blocks[i]``,
        and each chunk's first stage id."""
        cols = [list(_concat.from_iterable(col)) for col in zip(*blocks, strict=True)] \
            if blocks else [[] for _ in range(8)]
        firsts: list[int] = []
        chunks = []
        pos = 0
        for (ci, k), b in zip(keys, blocks, strict=True):
            n = len(b[0])
            firsts.append(pos)
            chunks.append((ci, k, pos, n))
            pos += n
        dims, dur, fixed, sent, inp, out, phase, last = cols
        return cls(dims, dur, fixed, sent, inp, out, phase, last, chunks=chunks), firsts

    def add_chunk(self, collective: int, chunk: int, plan: Plan,
                  costs: Sequence[tuple[float, StageCost]]) -> int:
        """Append one chunk's stages from :func:`chain`; returns its first stage id."""
        return self.add_block(collective, chunk, self.block(plan, costs))

    def key_columns(self) -> tuple[list[int], list[int], list[int]]:
        """Per stage: its collective, chunk and step."""
        coll: list[int] = []
        chunk: list[int] = []
        step: list[int] = []
        for ci, k, _, n in self.chunks:
            coll.extend(repeat(ci, n))
            chunk.extend(repeat(k, n))
            step.extend(range(n))
        return coll, chunk, step

    def keys(self) -> list[tuple[int, int, int]]:
        """Per stage: (collective, chunk, step)."""
        return list(zip(*self.key_columns(), strict=True))
