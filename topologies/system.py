"""ASTRA-sim system configuration (chunks, queues, algorithms, policies)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: ``inter-dimension-scheduling`` values (ASTRA-sim 1.0 spellings included).
INTER_ALIASES: dict[str, str] = {
    "baseline": "baseline",
    "ascending": "baseline",
    "themis": "themis",
    "offlinegreedy": "themis",
    "offlinegreedyflex": "themis",
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

    Fields left ``None`` were not given; the defaults then apply (see
    :meth:`resolved`). Algorithms are per dimension, per collective kind.
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

    def algorithms_for(self, collective: str) -> tuple[str, ...] | None:
        """Per-dimension algorithms for a collective kind, if the file gave them."""
        return {
            "all-reduce": self.all_reduce_algorithms,
            "reduce-scatter": self.reduce_scatter_algorithms,
            "all-gather": self.all_gather_algorithms,
        }[collective]

    @property
    def local_bw_aware(self) -> bool:
        """Whether ``collective-optimization`` is ``localBWAware``."""
        return (self.collective_optimization or "").lower() == "localbwaware"
