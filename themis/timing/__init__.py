"""Stage timing models (model.md §4): the protocol, the registry and the models.

A timing model answers, for a stage of one chunk on one dimension, how long it
takes alone, how much of that is fixed (latency) time, how many bytes the NPU
sends and what size the chunk has afterwards. A new model is one module that
registers a factory under a name with :func:`register_timing`; the bundled
modules are imported by the loaders below when their name is first looked up or
the names are listed (:mod:`themis.plugins`), so every bundled model is found
wherever a timing name is accepted and a run imports only its own model.
"""

from themis import plugins
from themis.timing.base import (
    PHASES,
    PLAIN_MEANING,
    Meaning,
    StageCost,
    StagePhase,
    Timing,
    TimingFactory,
    algorithm_steps,
    has_timing,
    make_timing,
    register_timing,
    resolve_algorithms,
    timing_meaning,
    timing_names,
)


# The bundled models, imported when their name is first needed (start-up is part of
# every run's time); a new model adds its loader here.
def _alpha_beta() -> None:
    import themis.timing.alpha_beta  # noqa: F401


def _astra10() -> None:
    import themis.timing.astra10  # noqa: F401


def _astra2() -> None:
    import themis.timing.astra2  # noqa: F401


plugins.add_loader(_alpha_beta, ("timing",), ("alpha-beta",))
plugins.add_loader(_astra10, ("timing",), ("astra-sim-1.0",))
plugins.add_loader(_astra2, ("timing",), ("astra-sim-2",))

__all__ = [
    "PHASES",
    "PLAIN_MEANING",
    "Meaning",
    "StageCost",
    "StagePhase",
    "Timing",
    "TimingFactory",
    "algorithm_steps",
    "has_timing",
    "make_timing",
    "register_timing",
    "resolve_algorithms",
    "timing_meaning",
    "timing_names",
]
