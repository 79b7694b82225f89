"""The timing-model protocol and registry (model.md §4).

A timing model answers, for a stage of one chunk on one dimension, how long it
takes alone, how much of that is fixed (latency) time, how many bytes the NPU
sends and what size the chunk has afterwards. New models register a factory
under a name with :func:`register_timing`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from themis.plans import PlanShape, StagePhase
from themis.plugins import load_plugins
from topologies.errors import InputError
from topologies.network import Network

#: Stage phases: reduce-scatter, all-gather, and a whole all-reduce on one dimension.
PHASES: tuple[str, ...] = tuple(StagePhase)


@dataclass(frozen=True)
class StageCost:
    """What one stage costs when it runs alone on its dimension."""

    duration_ns: float
    fixed_ns: float
    sent_bytes: float
    output_bytes: float


class Timing(Protocol):
    """A timing model bound to a network and per-dimension algorithms."""

    # Read-only members: the models are frozen dataclasses.
    @property
    def name(self) -> str: ...
    @property
    def network(self) -> Network: ...
    @property
    def algorithms(self) -> tuple[str, ...]: ...
    @property
    def endpoint_delay_ns(self) -> float: ...
    @property
    def resource_law(self) -> str:
        """The name of the resource law stages running together on a dimension follow
        (:mod:`themis.engine.resources`: ``exclusive``, ``shared`` or a registered one);
        the engine runs it, the checker replays a schedule through it and the bounds
        keep the terms it names."""
        ...
    #: The all-reduce plan shapes this model runs; the checker accepts exactly these
    #: (``local-bw-aware`` only in a schedule marked ``local_bw_aware``).
    plan_shapes: ClassVar[tuple[PlanShape, ...]]

    def stage(self, phase: str, dim: int, input_bytes: float) -> StageCost:
        """The cost of a ``phase`` stage on ``dim`` whose input is ``input_bytes``."""
        ...

    def all_gather_input(self, chunk_bytes: float) -> float:
        """Input size of an all-gather chunk's first stage (chunk of the output)."""
        ...

    # Optional: ``last_message_ns(phase, dim, input_bytes) -> float``, the duration of
    # a stage's final message. The engine orders stage ends of the same tick by end
    # minus it (ASTRA-sim 1.0's rule, :mod:`themis.timing.astra10`); a model without
    # it (or returning 0) keeps the engine's tie order.
    # Optional: ``last_event_ns(phase, dim, input_bytes) -> float``, how long before a
    # stage's end its last internal event was registered (read instead under
    # :attr:`~themis.engine.rules.Rules.final_event_ties`).


def direct_all_reduce_ns(msgs: Sequence[float], d: float, red: float) -> tuple[float, float]:
    """A direct all-reduce stage from ASTRA-sim's packet flow (``AllToAll::run``, the same
    code in 1.0 and 2.x): its duration and its final message's time.

    ``msgs[s - 1]`` is the message time to the partner ``s`` steps away. Round 1 sends
    the n - 1 messages at ``d`` (the endpoint delay); each arrival is processed ``d +
    red`` later. The first processing end at or after the last arrival starts round 2,
    and every processing end from then on sends one round-2 message (as many at once as
    have been processed), to partners in ring order 1, 2, ..., n - 1; the stage ends
    ``d`` after the last round-2 arrival. With every partner equally far this is
    ``3d + 2 N*(m) + red``; on a Ring round 2 can start before the farthest packet is
    processed."""
    arrivals = sorted(d + t for t in msgs)
    last_arrival = arrivals[-1]
    sends: list[float] = []
    free = 0
    for done in (a + d + red for a in arrivals):
        free += 1
        if done >= last_arrival:
            while free and len(sends) < len(msgs):
                sends.append(done)
                free -= 1
    ends = [t + msgs[k] for k, t in enumerate(sends)]
    last = max(range(len(ends)), key=ends.__getitem__)
    return ends[last] + d, msgs[last]


TimingFactory = Callable[..., Timing]
_REGISTRY: dict[str, TimingFactory] = {}


@dataclass(frozen=True)
class Meaning:
    """What a run under a timing model means, beyond its stage costs: the rules a
    simulator whose behaviour the timing reproduces applies. A timing's registry entry
    names its meaning (:func:`register_timing`); :class:`themis.runkind.RunKind` is
    the one place that reads it, so no other module compares timing names.

    ``own_policies``: policies that run as the simulator's own variant
    (``make_policy(name, astra=True)``: ASTRA-sim's baseline, Themis, round-robin);
    ``system_shapes``: the all-reduce plan shape follows the system file's
    ``collective-optimization`` (ASTRA-sim's ``Sys::generate_collective``); else every
    all-reduce runs RS then AG; ``queues``: disciplines offered -> the discipline the
    run queues with (ASTRA-sim 1.0's SmallestFirst list for ``scf``);
    ``priority_queues``: the same with collective priorities (training);
    ``input_chunking``: each NPU's input is cut into chunks of floor(S / C) while bytes
    remain (``Sys::generate_collective``), else C chunks plus a remainder;
    ``event_order``: ``"astra"`` (ASTRA-sim 1.0's same-tick order: the old dimension
    is served before the next, final-message ties) or ``"simulator"``;
    ``float32``: sizes and scales are C floats (ASTRA-sim 1.0's workload layer);
    ``direct_all_to_all_only``: only the direct all-to-all is reproduced;
    ``boost_mode``: the system file's ``boost-mode`` orders same-time stage ends by
    dimension (ASTRA-sim 1.0); elsewhere ends of one time go by start order;
    ``training``: whether ``train`` runs under it; ``runner``: the system-file runner
    that applies the reproduced simulator's policies, plans and defaults (``"astra-1.0"``:
    :func:`themis.astra_run.simulate_astra`, ``"astra-2"``:
    :func:`themis.astra2_run.simulate_astra2`; empty: the plain simulator);
    ``disciplines``: the disciplines policies run with (``None``: every registered one);
    ``below_ideal``: why a makespan can beat the bandwidth bound under this timing
    (a congestion-free backend), printed when it does;
    ``affine_exact``: every stage time is ``fixed + sent / B`` exactly (alpha-beta), so an
    exact model may re-time it with fractions (:func:`solvers.cpsat.scaling.exact_durations`).
    """

    own_policies: frozenset[str] = frozenset()
    system_shapes: bool = False
    queues: tuple[tuple[str, str], ...] = ()
    priority_queues: tuple[tuple[str, str], ...] = (("fifo", "fifo-priority"),)
    input_chunking: bool = False
    event_order: str = "simulator"
    float32: bool = False
    direct_all_to_all_only: bool = False
    boost_mode: bool = False
    training: bool = True
    runner: str = ""
    disciplines: tuple[str, ...] | None = None
    below_ideal: str = ""
    affine_exact: bool = False


#: The meaning of a timing registered without one: the plain simulator's run.
PLAIN_MEANING = Meaning()
_MEANINGS: dict[str, Meaning] = {}


def _load(name: str) -> None:
    """Import the plug-in registering the timing ``name`` if it is not registered yet."""
    if name not in _REGISTRY:
        load_plugins("timing", name)


def has_timing(name: str) -> bool:
    """Whether ``name`` is a registered timing model (importing only its plug-in, where
    :func:`timing_names` imports every one)."""
    _load(name)
    return name in _REGISTRY


def timing_meaning(name: str) -> Meaning:
    """The :class:`Meaning` the timing ``name`` was registered with."""
    _load(name)
    if name not in _REGISTRY:
        raise InputError(f"unknown timing model (expected one of {', '.join(sorted(_REGISTRY))})",
                         "timing", name)
    return _MEANINGS.get(name, PLAIN_MEANING)
#: Timing models already made, by (name, network, algorithms, endpoint delay): a
#: timing model is immutable, so repeated simulations of one network share one
#: (and the stage costs cached on it). Bounded; cleared when a model is registered.
_MADE: dict[tuple, Timing] = {}
_MADE_MAX = 256


def register_timing(name: str, meaning: Meaning = PLAIN_MEANING
                    ) -> Callable[[TimingFactory], TimingFactory]:
    """Register a timing factory ``f(network, algorithms, endpoint_delay_ns, **options)``
    with the :class:`Meaning` of a run under it."""

    def deco(factory: TimingFactory) -> TimingFactory:
        load_plugins("timing", name, named_only=True)  # a bundled one first, then this
        _REGISTRY[name] = factory
        _MEANINGS[name] = meaning
        _MADE.clear()
        return factory

    return deco


def timing_names() -> list[str]:
    """Names of the registered timing models (plug-ins imported first)."""
    load_plugins("timing")
    return sorted(_REGISTRY)


def resolve_algorithms(
    network: Network, algorithms: Sequence[str] | None, field: str = "algorithms",
    file: str = "",
) -> tuple[str, ...]:
    """Per-dimension algorithms: the given ones (validated) or each kind's default."""
    if algorithms is None:
        return tuple(d.default_algorithm for d in network.dims)
    from topologies.astra.algorithms import validate_algorithms

    return validate_algorithms(network, algorithms, file, field)


def make_timing(
    name: str,
    network: Network,
    algorithms: Sequence[str] | None = None,
    endpoint_delay_ns: float = 0.0,
    **options: object,
) -> Timing:
    """Instantiate the timing model ``name`` for ``network``.

    ``options`` are the model's own further parameters (e.g. ``astra-sim-2``'s
    ``local_mem_bw_GBps``); a model lists the ones it was made with in its
    ``options`` attribute, which a :class:`~themis.schedule.Schedule` records.
    """
    _load(name)
    if name not in _REGISTRY:
        raise InputError(f"unknown timing model (expected one of {', '.join(sorted(_REGISTRY))})",
                         "timing", name)
    if isinstance(endpoint_delay_ns, bool) or not isinstance(endpoint_delay_ns, int | float) \
            or not math.isfinite(endpoint_delay_ns) or endpoint_delay_ns < 0:
        raise InputError("endpoint delay must be a number >= 0", "endpoint-delay",
                         endpoint_delay_ns)
    try:
        key = (name, network, None if algorithms is None else tuple(algorithms),
               endpoint_delay_ns, tuple(sorted(options.items())))
        hash(key)
    except TypeError:  # an unhashable network or algorithm list: no memo
        key = None
    tm = _MADE.get(key) if key is not None else None
    if tm is None:
        algos = resolve_algorithms(network, algorithms)
        try:
            tm = _REGISTRY[name](network, algos, endpoint_delay_ns, **options)
        except TypeError as err:
            if not options:
                raise
            raise InputError(f"option not taken by the {name} timing ({err})", "timing options",
                             ", ".join(sorted(options))) from None
        if key is not None:
            if len(_MADE) >= _MADE_MAX:
                _MADE.pop(next(iter(_MADE)))
            _MADE[key] = tm
    return tm


def algorithm_steps(algorithm: str, npus: int) -> int:
    """Message steps of one RS or AG stage (model.md §4)."""
    if npus <= 1:
        return 0
    if algorithm == "ring":
        return npus - 1
    if algorithm == "direct":
        return 1
    if algorithm == "halvingDoubling":
        return int(math.log2(npus))
    if algorithm == "doubleBinaryTree":
        # A pipelined tree: ceil(log2 P) steps to reduce (or broadcast).
        return math.ceil(math.log2(npus))
    raise InputError("unknown algorithm", "algorithm", algorithm)


def whole_bytes(x: float, field_name: str, timing_name: str) -> int:
    """``x`` as an int if it is integral (ASTRA-sim's timings need whole bytes), else an
    :class:`InputError` naming ``timing_name``."""
    i = int(x)
    if i != x:
        raise InputError(f"the {timing_name} timing needs whole numbers of bytes", field_name, x)
    return i


def phase_bytes(phase: str, input_bytes: int, n: int) -> tuple[int, int]:
    """``(output bytes, bytes sent)`` of a ``phase`` stage on ``n`` NPUs in ASTRA-sim's
    integer arithmetic: RS ``D // n`` and ``(n-1) * (D // n)``, AG ``D * n`` and
    ``(n-1) * D``, AR ``D`` and ``2 (n-1) (D // n)``."""
    D = input_bytes
    if phase == "RS":
        return D // n, (n - 1) * (D // n)
    if phase == "AG":
        return D * n, (n - 1) * D
    if phase == "AR":
        return D, 2 * (n - 1) * (D // n)
    raise ValueError(f"unknown phase {phase!r}")
