"""Configuration and result types of the training simulation (issue 11).

:class:`TrainingConfig` gathers what ASTRA-sim 1.0 reads from its system file
plus the workload run options (passes, scales); :class:`TrainingResult` is
what :func:`themis.training.simulate_training` returns, with ASTRA-sim's
printed figures (``end_ns``, ``pass_end_ns``, per-layer compute / comm /
exposed) and this project's own (per-dimension busy time, every collective,
a timeline, the iteration lower bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from themis.runkind import RunKind
from themis.schedule import Schedule
from topologies.errors import InputError
from topologies.system import DEFAULT_SPLITS, SystemConfig


class Phase(StrEnum):
    """Which pass of a layer a collective belongs to."""

    FWD = "fwd"
    IG = "ig"
    WG = "wg"


class SchedulingPolicy(StrEnum):
    """ASTRA-sim's ``scheduling-policy``: the priority of each new collective."""

    LIFO = "LIFO"
    FIFO = "FIFO"


#: The priority ASTRA-sim gives a collective issued with ``HIGHEST`` (DLRM's all-to-all).
HIGHEST_PRIORITY = 100000000


@dataclass(frozen=True)
class TrainingConfig:
    """How to run a workload: timing, policies, chunking and the loop options.

    ``timing`` is a registered timing model (``astra-sim-1.0`` reproduces
    ASTRA-sim 1.0, ``alpha-beta`` is the project's own model); ``policy`` and
    ``intra`` are registered names (``themis-running`` is the training-only
    Themis whose tracker counts the load still in flight). ``chunks`` is
    ``preferred-dataset-splits``. Per-kind algorithm tuples (one per physical
    dimension) default to each dimension's default, all-to-all to ``direct``.
    ``scheduling_policy`` LIFO gives each new collective a higher priority,
    FIFO a lower one. ``comm_scale`` / ``compute_scale`` multiply sizes and
    compute times (through float32 under ``astra-sim-1.0``, workloads.md §1.6).
    """

    timing: str = "astra-sim-1.0"
    policy: str = "baseline"
    intra: str = "fifo"
    chunks: int = DEFAULT_SPLITS  # the one default of every command (4)
    active_chunks: int = 1
    endpoint_delay_ns: float = 10.0
    all_reduce_algorithms: tuple[str, ...] | None = None
    reduce_scatter_algorithms: tuple[str, ...] | None = None
    all_gather_algorithms: tuple[str, ...] | None = None
    all_to_all_algorithms: tuple[str, ...] | None = None
    local_bw_aware: bool = True
    boost_mode: bool = True
    scheduling_policy: str = "LIFO"
    passes: int = 1
    comm_scale: float = 1.0
    compute_scale: float = 1.0

    def __post_init__(self) -> None:
        for name in ("chunks", "active_chunks", "passes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError("must be an integer >= 1", name.replace("_", "-"), v)
        for name in ("comm_scale", "compute_scale", "endpoint_delay_ns"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                    or v < 0 or (v == 0 and name != "endpoint_delay_ns"):
                raise InputError("must be a finite number > 0" if name != "endpoint_delay_ns"
                                 else "must be a finite number >= 0",
                                 name.replace("_", "-"), v)
        sp = str(self.scheduling_policy).strip().upper()
        if sp not in SchedulingPolicy.__members__:
            raise InputError("expected LIFO or FIFO", "scheduling-policy", self.scheduling_policy)
        object.__setattr__(self, "scheduling_policy", sp)

    @property
    def run_kind(self) -> RunKind:
        """What this run means (:class:`~themis.runkind.RunKind`): the timing's rules with
        the system file's localBWAware, boost mode and endpoint delay."""
        return RunKind.of(self.timing, local_bw_aware=self.local_bw_aware,
                          boost_mode=self.boost_mode, endpoint_delay_ns=self.endpoint_delay_ns)

    def algorithms_for(self, kind: str) -> tuple[str, ...] | None:
        """Per-physical-dimension algorithms of a collective kind (``None``: defaults)."""
        return {
            "all-reduce": self.all_reduce_algorithms,
            "reduce-scatter": self.reduce_scatter_algorithms,
            "all-gather": self.all_gather_algorithms,
            "all-to-all": self.all_to_all_algorithms,
        }[kind]

    @classmethod
    def from_system(cls, system: SystemConfig, **overrides: Any) -> TrainingConfig:
        """The configuration an ASTRA-sim system file describes, then ``overrides``.

        A key the file omits means what it means to ASTRA-sim
        (:meth:`~topologies.system.SystemConfig.with_astra_defaults`: baseline,
        FIFO, 10 ns endpoint delay, boost mode off, 1 active chunk); a key
        ASTRA-sim cannot run without is refused (:class:`InputError` naming the
        file): ``scheduling-policy``, ``collective-optimization`` (under the
        ``astra-sim-1.0`` timing) and ``preferred-dataset-splits`` (unless
        ``chunks`` is overridden). A ``system`` with no source (no file) keeps
        this class's defaults. ``overrides`` are field names; ``None`` values
        are ignored.
        """
        known = {f.name for f in fields(cls)}
        for key, value in overrides.items():
            if key not in known:
                raise InputError("unknown training option", key, value)
        given = {k: v for k, v in overrides.items() if v is not None}
        if system.from_file:
            system = system.with_astra_defaults()
            system.require("scheduling-policy")
            if RunKind.of(given.get("timing", cls.timing)).meaning.system_shapes:
                system.require("collective-optimization")
            if "chunks" not in given:
                system.require("preferred-dataset-splits")
        vals: dict[str, Any] = {}
        if system.chunks is not None:
            vals["chunks"] = system.chunks
        if system.active_chunks is not None:
            vals["active_chunks"] = system.active_chunks
        if system.endpoint_delay_ns is not None:
            vals["endpoint_delay_ns"] = system.endpoint_delay_ns
        for kind in ("all_reduce", "reduce_scatter", "all_gather", "all_to_all"):
            algos = getattr(system, f"{kind}_algorithms", None)
            if algos is not None:
                vals[f"{kind}_algorithms"] = tuple(algos)
        if system.collective_optimization is not None:
            vals["local_bw_aware"] = system.local_bw_aware
        if system.boost_mode is not None:
            vals["boost_mode"] = bool(system.boost_mode)
        if system.inter is not None:
            vals["policy"] = system.inter
        if system.intra is not None:
            vals["intra"] = system.intra
        sched = getattr(system, "scheduling_policy", None)
        if sched is not None:
            vals["scheduling_policy"] = sched
        vals.update(given)
        return cls(**vals)

    def with_(self, **changes: Any) -> TrainingConfig:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)


@dataclass
class LayerStats:
    """One layer's figures, as ASTRA-sim prints them (ns, summed over passes)."""

    name: str
    fwd_compute_ns: int = 0
    ig_compute_ns: int = 0
    wg_compute_ns: int = 0
    fwd_comm_ns: int = 0
    ig_comm_ns: int = 0
    wg_comm_ns: int = 0
    fwd_exposed_ns: int = 0
    ig_exposed_ns: int = 0
    wg_exposed_ns: int = 0
    collectives_issued: int = 0


@dataclass
class DimStats:
    """One (logical) dimension: how long it was busy, and that over the end time."""

    dim: int
    kind: str
    npus: int
    busy_ns: float
    utilization: float
    sent_bytes: float


@dataclass
class CollectiveRecord:
    """One issued collective.

    ``end_ns`` is its last stage's end; ``finished_ns`` adds the layer's
    update time (when a waiter resumes); ``dims`` the logical dimensions used.
    """

    id: int
    layer: int
    phase: str
    kind: str
    size_bytes: int
    dims: tuple[int, ...]
    issue_ns: float
    end_ns: float = -1.0
    finished_ns: float = -1.0
    pass_index: int = 0
    chunks: int = 0
    priority: int = 0
    blocking: bool = False


class Timeline:
    """What a plot needs: compute intervals and every stage on every dimension.

    ``compute``: (start_ns, end_ns, layer, phase); ``stages``: (dim,
    collective id, chunk, start_ns, end_ns). ``stages`` may be given as a
    function that makes them, called on first use: a long run that is not
    drawn or written out never holds a tuple per stage.
    """

    def __init__(self, compute: list[tuple[float, float, int, str]] | None = None,
                 stages: list[tuple[int, int, int, float, float]]
                 | Callable[[], list[tuple[int, int, int, float, float]]] | None = None
                 ) -> None:
        self.compute = compute if compute is not None else []
        self._stages = stages

    @property
    def stages(self) -> list[tuple[int, int, int, float, float]]:
        """Every stage as (dim, collective id, chunk, start_ns, end_ns)."""
        if self._stages is None:
            self._stages = []
        elif callable(self._stages):
            self._stages = self._stages()
        return self._stages

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timeline) and self.compute == other.compute and \
            self.stages == other.stages

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Timeline({len(self.compute)} compute intervals, stages)"


#: JSON names of :class:`CollectiveRecord` fields that differ from the field's name.
_COLLECTIVE_KEYS = {"dims": "active_dims", "kind": "collective"}


@dataclass
class TrainingResult:
    """The outcome of :func:`~themis.training.simulate_training`.

    ``end_ns`` is ASTRA-sim's "all passes finished" (the last collective's end
    plus its update time, or the loop's end); ``exposed_comm_ns`` = end -
    compute, as ASTRA-sim defines it; ``lower_bound_ns`` bounds the end time of
    every policy (``None`` when not computed).
    """

    workload: str
    parallelism: str
    end_ns: float
    pass_end_ns: list[float]
    compute_ns: float
    layers: list[LayerStats]
    dims: list[DimStats]
    collectives: list[CollectiveRecord]
    timeline: Timeline
    config: TrainingConfig
    logical_npus: tuple[int, ...]
    lower_bound_ns: float | None = None
    wall_s: float = 0.0
    #: Every stage of the run as the one :class:`~themis.schedule.Schedule` type (on
    #: the logical network; :func:`themis.checker.check` validates it).
    schedule: Schedule | None = None
    #: For a run a whole-iteration planner chose (``config.policy`` is then the
    #: planner, e.g. ``auto``): the candidate that won, e.g. ``portfolio/feed``.
    policy_choice: str = ""
    #: Every candidate the planner simulated and its end (ns), in its order.
    candidates_ns: dict[str, float] = field(default_factory=dict)

    @property
    def exposed_comm_ns(self) -> float:
        """end - compute (ASTRA-sim's definition, not a sum of waits)."""
        return self.end_ns - self.compute_ns

    def to_dict(self, timeline: bool = False) -> dict[str, Any]:
        """A JSON-ready dict (``timeline`` adds the compute and stage intervals)."""
        out: dict[str, Any] = {
            "workload": self.workload,
            "parallelism": self.parallelism,
            "end_ns": self.end_ns,
            "pass_end_ns": list(self.pass_end_ns),
            "compute_ns": self.compute_ns,
            "exposed_comm_ns": self.exposed_comm_ns,
            "lower_bound_ns": self.lower_bound_ns,
            "logical_npus": list(self.logical_npus),
            # the config's "chunks" is the splits (preferred-dataset-splits): one name
            # for one meaning across commands (docs/json.md)
            "config": {("splits" if k == "chunks" else k): v
                       for k, v in asdict(self.config).items()},
            "layers": [asdict(s) for s in self.layers],
            # one name per meaning (docs/json.md): a dimension's "topology", a
            # collective's "collective" (its type), never a bare "kind"
            "dims": [{("topology" if k == "kind" else k): v for k, v in asdict(d).items()}
                     for d in self.dims],
            # a collective's dimension indices: "dims" is a list of dimension objects
            "collectives": [{_COLLECTIVE_KEYS.get(k, k): v for k, v in asdict(c).items()}
                            for c in self.collectives],
            "runtime_s": self.wall_s,
        }
        if self.policy_choice:
            out["policy_choice"] = self.policy_choice
            out["candidates_end_ns"] = dict(self.candidates_ns)
        if timeline:
            out["timeline"] = {"compute": [list(c) for c in self.timeline.compute],
                               "stages": [list(s) for s in self.timeline.stages]}
        return out
