"""Stage plans walked through a timing model, and the per-stage arrays of a run.

:func:`chain` is the one place where a chunk's (phase, dim) plan is walked
through a timing model (each stage's output is the next one's input); the
simulator, the checker and the solvers' problem data all use it.
:class:`StageTable` holds one simulation's stages as flat arrays (stage ids
``0..n-1``, a chunk's stages consecutive), which the simulator and the
intra-dimension disciplines read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from themis.timing.base import StageCost, Timing

Plan = tuple[tuple[str, int], ...]


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
            c = cache.get(key)
            if c is None:
                c = cache[key] = timing.stage(phase, d, m)
        out.append((m, c))
        m = c.output_bytes
    return out


@dataclass
class StageTable:
    """One run's stages as parallel lists indexed by stage id.

    A chunk's stages have consecutive ids in plan order, so the successor of a
    stage ``sid`` that is not its chunk's ``last`` is ``sid + 1``. ``key`` is
    (collective, chunk, step). ``cache`` is scratch space where a discipline
    may keep arrays it derives once per run (e.g. remaining work per stage).
    """

    dim: list[int] = field(default_factory=list)
    duration_ns: list[float] = field(default_factory=list)
    fixed_ns: list[float] = field(default_factory=list)
    sent_bytes: list[float] = field(default_factory=list)
    input_bytes: list[float] = field(default_factory=list)
    output_bytes: list[float] = field(default_factory=list)
    phase: list[str] = field(default_factory=list)
    key: list[tuple[int, int, int]] = field(default_factory=list)
    last: list[bool] = field(default_factory=list)
    cache: dict[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.dim)

    def add_chunk(self, collective: int, chunk: int, plan: Plan,
                  costs: Sequence[tuple[float, StageCost]]) -> int:
        """Append one chunk's stages (from :func:`chain`); returns its first stage id."""
        first = len(self.dim)
        n = len(plan)
        for step, ((phase, d), (m, c)) in enumerate(zip(plan, costs, strict=True)):
            self.dim.append(d)
            self.duration_ns.append(c.duration_ns)
            self.fixed_ns.append(c.fixed_ns)
            self.sent_bytes.append(c.sent_bytes)
            self.input_bytes.append(m)
            self.output_bytes.append(c.output_bytes)
            self.phase.append(phase)
            self.key.append((collective, chunk, step))
            self.last.append(step == n - 1)
        return first
