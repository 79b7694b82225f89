"""Intra-dimension queue disciplines, picked by name. A new discipline is one module here.

Each module is imported below, by name and in a chosen order, so its
``@register_discipline`` runs on ``import themis.disciplines``; that order is the
order of :func:`discipline_names` (``fifo``, ``lrw``, ``scf``), which the
comparisons and the portfolio's tie-break follow. A new discipline adds its
import here (at the end, so that existing results keep their order). ``feed``
is opt-in (``default=False``): accepted by name everywhere, but not in the
default set that comparisons and free-choice planners run
(``discipline_names(opt_in=True)`` lists it too).
"""

from themis.disciplines.base import (
    Discipline,
    DisciplineFactory,
    PriorityDiscipline,
    canonical_intra,
    discipline_names,
    make_discipline,
    register_discipline,
)

# isort: off
# The registration order (astra-scf, replay and priority's are internal); new modules
# go last.
from themis.disciplines import astra_scf  # noqa: F401
from themis.disciplines import fifo  # noqa: F401
from themis.disciplines import lrw  # noqa: F401
from themis.disciplines import replay  # noqa: F401
from themis.disciplines import scf  # noqa: F401
from themis.disciplines import priority  # noqa: F401
from themis.disciplines import feed  # noqa: F401
# isort: on

__all__ = [
    "Discipline",
    "DisciplineFactory",
    "PriorityDiscipline",
    "canonical_intra",
    "discipline_names",
    "make_discipline",
    "register_discipline",
]
