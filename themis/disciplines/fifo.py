"""FIFO: stages start in the order they became ready."""

from __future__ import annotations

from collections.abc import Sequence

from themis.disciplines.base import PriorityDiscipline, register_discipline
from themis.stages import StageTable


@register_discipline("fifo")
class Fifo(PriorityDiscipline):
    """Arrival order (one key for all stages, the oldest first)."""

    __slots__ = ()
    newest_first = False

    @classmethod
    def keys(cls, table: StageTable) -> Sequence[int]:
        """The same key for every stage."""
        return [0] * len(table)

    @classmethod
    def shifted_ranks(cls, table: StageTable) -> list[int]:
        """All ranks are 0: only the arrival order counts."""
        return [0] * len(table)
