"""Stage timing models (model.md §4): the protocol, the registry and the models.

A timing model answers, for a stage of one chunk on one dimension, how long it
takes alone, how much of that is fixed (latency) time, how many bytes the NPU
sends and what size the chunk has afterwards. A new model is one module that
registers a factory under a name with :func:`register_timing`; the modules
below are imported here, so every bundled model is registered on import.
"""

from themis.timing import alpha_beta, astra2, astra10  # noqa: F401  (registers the models)
from themis.timing.base import (
    PHASES,
    PLAIN_MEANING,
    Meaning,
    StageCost,
    StagePhase,
    Timing,
    TimingFactory,
    algorithm_steps,
    make_timing,
    register_timing,
    resolve_algorithms,
    timing_meaning,
    timing_names,
)

__all__ = [
    "PHASES",
    "PLAIN_MEANING",
    "Meaning",
    "StageCost",
    "StagePhase",
    "Timing",
    "TimingFactory",
    "algorithm_steps",
    "make_timing",
    "register_timing",
    "resolve_algorithms",
    "timing_meaning",
    "timing_names",
]
