"""SCF: smallest chunk (stage input size) first."""

from __future__ import annotations

from collections.abc import Sequence

from themis.disciplines.base import PriorityDiscipline, register_discipline
from themis.stages import StageTable


@register_discipline("scf")
class Scf(PriorityDiscipline):
    """Smallest stage input first; the most recently queued first among equal sizes."""

    __slots__ = ()
    newest_first = True

    @classmethod
    def keys(cls, table: StageTable) -> Sequence[float]:
        """The stage input sizes."""
        return table.input_bytes
