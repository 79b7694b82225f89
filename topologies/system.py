"""ASTRA-sim system configuration (chunks, queues, algorithms, policies)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from topologies.errors import InputError

#: ``inter-dimension-scheduling`` values (ASTRA-sim 1.0 spellings included).
INTER_ALIASES: dict[str, str] = {
    "baseline": "baseline",
    "ascending": "baseline",
    "themis": "themis",
    "offlinegreedy": "themis",
    "roundrobin": "round-robin",
    "round-robin": "round-robin",
    "round_robin": "round-robin",
}

#: ``intra-dimension-scheduling`` values.
INTRA_ALIASES: dict[str, str] = {
    "fifo": "fifo",
    "scf": "scf",
    "smallestfirst": "scf",
    "smallest-first": "scf",
    "smallest_first": "scf",
}

#: ASTRA-sim 1.0 scheduling values (lower case) that name an algorithm this
#: project does not model: value -> ASTRA-sim's enum name. ``parse_system`` and
#: the policy / discipline names refuse them rather than run something else.
UNMODELLED_INTER: dict[str, str] = {
    "offlinegreedyflex": "OfflineGreedyFlex",
    "themisflex": "OfflineGreedyFlex",
}
UNMODELLED_INTRA: dict[str, str] = {
    "rg": "RG",
    "lessremainingphasefirst": "LessRemainingPhaseFirst",
}


def unmodelled_scheduling(value: object, inter: bool = True) -> str | None:
    """Why ``value`` is refused (an ASTRA-sim algorithm not modelled here), or ``None``."""
    table = UNMODELLED_INTER if inter else UNMODELLED_INTRA
    name = table.get(str(value).strip().lower())
    if name is None:
        return None
    if inter:
        return (f"ASTRA-sim's {name} (themisFlex / offlineGreedyFlex) is a different "
                "algorithm from Themis (themis / offlineGreedy) and is not modelled: "
                "use themis, baseline or roundRobin")
    return (f"ASTRA-sim's {name} intra-dimension scheduling is not modelled: use FIFO "
            "or SCF (smallestFirst)")


#: What ASTRA-sim runs when a system file omits a key (``Sys::Sys`` of ASTRA-sim
#: 1.0, tag tutorial-asplos2023, and of 2.x alike): ``inter-dimension-scheduling``
#: ascending (= baseline), ``intra-dimension-scheduling`` FIFO, ``endpoint-delay``
#: 10 ns, ``boost-mode`` 0, ``active-chunks-per-dimension`` 1. Field -> value.
#: The one chunk default (splits) of every command and timing when neither ``--chunks``
#: nor a system file's ``preferred-dataset-splits`` gives one (both ASTRA-sim versions
#: require the key, so this applies only without a system file): 4, the value of the
#: ASTRA-sim tutorial's dgx2 and tpu system files, and small enough that every exact
#: solver proves its answer in seconds.
DEFAULT_SPLITS = 4

ASTRA_DEFAULTS: dict[str, object] = {
    "inter": "baseline",
    "intra": "fifo",
    "endpoint_delay_ns": 10.0,
    "boost_mode": False,
    "active_chunks": 1,
}

#: Keys ASTRA-sim cannot run without (no built-in default): key -> what ASTRA-sim
#: 1.0 does (a 2.x JSON file: :data:`ASTRA2_REQUIRED`).
ASTRA_REQUIRED: dict[str, str] = {
    "preferred-dataset-splits": ("ASTRA-sim leaves it unset and divides the collective by "
                                 "it; give a chunk count (or --chunks)"),
    "collective-optimization": "ASTRA-sim 1.0 stops without it (\"unknown value for collective "
                               "optimization in sys input file\"); give baseline or localBWAware",
    "scheduling-policy": "ASTRA-sim 1.0 stops without it (\"unknown value for scheduling policy "
                         "in sys input file\"); give LIFO or FIFO",
}
#: The same for a 2.x system JSON (2.x reads a key only if present, leaving it unset).
ASTRA2_REQUIRED: dict[str, str] = {
    "preferred-dataset-splits": "ASTRA-sim 2.x divides by zero without it (give the number "
                                "of splits, or --chunks)",
    "collective-optimization": "ASTRA-sim 2.x never finishes without it (give baseline or "
                               "localBWAware)",
    "scheduling-policy": "ASTRA-sim 2.x leaves it unset without it; give LIFO or FIFO",
}
_REQUIRED_FIELDS = {"preferred-dataset-splits": "chunks",
                    "collective-optimization": "collective_optimization",
                    "scheduling-policy": "scheduling_policy"}
_DEFAULT_KEYS = {"inter": "inter-dimension-scheduling", "intra": "intra-dimension-scheduling",
                 "endpoint_delay_ns": "endpoint-delay", "boost_mode": "boost-mode",
                 "active_chunks": "active-chunks-per-dimension"}

ALGORITHMS = ("ring", "direct", "halvingDoubling", "doubleBinaryTree")
_ALGO_ALIASES = {a.lower(): a for a in ALGORITHMS}
_ALGO_ALIASES.update({"hd": "halvingDoubling", "halving_doubling": "halvingDoubling",
                      "oneRing".lower(): "ring", "oneDirect".lower(): "direct",
                      "oneHalvingDoubling".lower(): "halvingDoubling",
                      "dbt": "doubleBinaryTree"})


def canonical_algorithm(name: str) -> str | None:
    """The canonical algorithm name, or ``None`` if unknown."""
    return _ALGO_ALIASES.get(str(name).strip().lower())


@dataclass(frozen=True)
class SystemConfig:
    """What an ASTRA-sim system file says that matters to collective scheduling.

    Fields left ``None`` were not given. A file read by
    :func:`~topologies.astra.read_system` keeps them ``None``;
    :meth:`with_astra_defaults` fills in what ASTRA-sim runs for an omitted key
    (:data:`ASTRA_DEFAULTS`) and :meth:`require` refuses a missing key ASTRA-sim
    cannot run without (:data:`ASTRA_REQUIRED`). Algorithms are per dimension,
    per collective kind.
    """

    chunks: int | None = None
    active_chunks: int | None = None
    endpoint_delay_ns: float | None = None
    all_reduce_algorithms: tuple[str, ...] | None = None
    reduce_scatter_algorithms: tuple[str, ...] | None = None
    all_gather_algorithms: tuple[str, ...] | None = None
    collective_optimization: str | None = None
    boost_mode: bool | None = None
    inter: str | None = None
    intra: str | None = None
    #: ``all-to-all-implementation`` (what a training run's all-to-all uses).
    all_to_all_algorithms: tuple[str, ...] | None = None
    #: ``scheduling-policy``: ``LIFO`` (each new collective first) or ``FIFO``.
    scheduling_policy: str | None = None
    #: ``local-mem-bw`` (GB/s, 2.x): the reduce cost of the ``astra-sim-2`` timing.
    local_mem_bw_GBps: float | None = None
    source: str = ""
    unknown_keys: tuple[str, ...] = field(default=(), compare=False)
    #: The file keys :meth:`with_astra_defaults` filled in (the file omitted them).
    defaulted: tuple[str, ...] = field(default=(), compare=False)
    #: ``text`` (ASTRA-sim 1.0 ``key: value``) or ``json`` (2.x); ``""`` if not from a file.
    file_format: str = field(default="", compare=False)

    @property
    def from_file(self) -> bool:
        """Whether this configuration came from a system file (it has a source)."""
        return bool(self.source)

    def with_astra_defaults(self) -> SystemConfig:
        """This configuration with every omitted key ASTRA-sim has a default for set to it.

        ASTRA-sim's defaults (:data:`ASTRA_DEFAULTS`): baseline (ascending),
        FIFO, endpoint delay 10 ns, boost mode off, 1 active chunk. Idempotent;
        :attr:`defaulted` lists the keys filled in.
        """
        changes: dict[str, Any] = {f: v for f, v in ASTRA_DEFAULTS.items()
                                   if getattr(self, f) is None}
        if not changes:
            return self
        keys = self.defaulted + tuple(_DEFAULT_KEYS[f] for f in changes)
        return replace(self, **changes, defaulted=keys)

    def require(self, key: str) -> None:
        """Refuse (:class:`InputError`) a file that omits ``key``, one ASTRA-sim needs.

        ``key`` is one of :data:`ASTRA_REQUIRED`. Only a configuration from a
        file is checked (without ``--system`` the project's defaults apply).
        """
        if self.from_file and getattr(self, _REQUIRED_FIELDS[key]) is None:
            why = (ASTRA2_REQUIRED if self.file_format == "json" else ASTRA_REQUIRED)[key]
            raise InputError(f"missing: {why}", key, None, self.source)

    def algorithms_for(self, collective: str) -> tuple[str, ...] | None:
        """Per-dimension algorithms for a collective kind, if the file gave them."""
        return {
            "all-reduce": self.all_reduce_algorithms,
            "reduce-scatter": self.reduce_scatter_algorithms,
            "all-gather": self.all_gather_algorithms,
            "all-to-all": self.all_to_all_algorithms,
        }[collective]

    @property
    def local_bw_aware(self) -> bool:
        """Whether ``collective-optimization`` is ``localBWAware``."""
        return (self.collective_optimization or "").lower() == "localbwaware"
