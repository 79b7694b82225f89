"""feed: serve first the stage whose chunk has the most work left on the *other* dimensions.

A stage's key is the time (ns, from the run's timing model, each stage as it
would take alone) of its chunk's later stages that run on dimensions other
than the stage's own. A dimension that starts such a stage first hands the
most work on to the others soonest, so they are fed while it drains its own
queue; work the chunk still has on this same dimension does not count (it
comes back here anyway). Equal keys start in arrival order (oldest first),
then by stage id (the engines' heaps break the remaining ties), so the order
is deterministic.

Opt-in (``default=False``): ``--intra feed`` works wherever a discipline name
is accepted, but the comparisons, sweeps and planners that run every
discipline when none is named leave it out, so their results do not change.
"""

from __future__ import annotations

from collections.abc import Sequence

from themis.disciplines.base import PriorityDiscipline, register_discipline
from themis.stages import StageTable


def other_work_ns(table: StageTable, start: int = 0) -> list[float]:
    """Per stage from ``start`` (a chunk's first stage) on: the durations of its chunk's
    later stages on dimensions other than its own."""
    n = len(table)
    dim, dur, last = table.dim, table.duration_ns, table.last
    out = [0.0] * (n - start)
    after = 0.0  # the chunk's stages after sid, all dimensions
    on: dict[int, float] = {}  # ... and per dimension
    for sid in range(n - 1, start - 1, -1):
        if last[sid]:
            after = 0.0
            on = {}
        d = dim[sid]
        out[sid - start] = after - on.get(d, 0.0)
        after += dur[sid]
        on[d] = on.get(d, 0.0) + dur[sid]
    return out


@register_discipline("feed", default=False)
class Feed(PriorityDiscipline):
    """Most work left on the other dimensions first; arrival order among equals."""

    __slots__ = ()
    newest_first = False

    @classmethod
    def keys(cls, table: StageTable) -> Sequence[float]:
        """Minus the chunk's later work on other dimensions (the smallest key starts first)."""
        return [-w for w in other_work_ns(table)]

    @classmethod
    def grown_keys(cls, table: StageTable, keys: Sequence[float]) -> Sequence[float]:
        """``keys`` extended by the stages added since (chunks are added whole, and a
        stage's key depends on its own chunk only)."""
        start = len(keys)
        if not isinstance(keys, list) or (start and not table.last[start - 1]):
            return cls.keys(table)
        keys.extend(-w for w in other_work_ns(table, start))
        return keys
