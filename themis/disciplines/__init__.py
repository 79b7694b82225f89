"""Intra-dimension queue disciplines, picked by name. A new discipline is one module here.

Every module of this package is imported here, so its ``@register_discipline``
runs on ``import themis.disciplines``.
"""

import importlib
import pkgutil

from themis.disciplines.base import (
    Discipline,
    DisciplineFactory,
    PriorityDiscipline,
    canonical_intra,
    discipline_names,
    make_discipline,
    register_discipline,
)

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name != "base":
        importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = [
    "Discipline",
    "DisciplineFactory",
    "PriorityDiscipline",
    "canonical_intra",
    "discipline_names",
    "make_discipline",
    "register_discipline",
]
