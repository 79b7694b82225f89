"""Running ASTRA-sim 2.x network YAML and system JSON files.

:func:`simulate_astra2` runs one collective as ASTRA-sim 2.x (analytical,
congestion-unaware backend) runs it with a system file: the ``astra-sim-2``
timing (:mod:`themis.timing.astra2`), 2.x's chunking, its phase lists and its
queues (``shared/reference/astra-sim-2.x/timing.md`` §5). With ``baseline`` and
FIFO that is 2.x's own answer; every other policy and discipline runs on the
same timing, which 2.x itself cannot do (it never reads
``inter-dimension-scheduling`` or ``intra-dimension-scheduling``).

:func:`check_astra2` refuses, one line each naming the file, the key and the
value, what 2.x cannot run or silently gets wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from themis.collective import Collective
from themis.plans import PlanShape, stage_plan
from themis.policies.base import PLAIN_RUN, InterPolicy
from themis.runkind import RunKind
from themis.timing.astra2 import MAX_DIMS, NAME
from topologies.errors import InputError
from topologies.network import Network
from topologies.system import SystemConfig

if TYPE_CHECKING:  # pragma: no cover
    from themis.simulator import SimResult
    from themis.timing import Timing

#: ``endpoint-delay`` when a 2.x system file leaves it out (2.x's own default).
DEFAULT_ENDPOINT_DELAY_NS = 10.0

_IMPLEMENTATION_KEY = {
    "all-reduce": "all-reduce-implementation",
    "reduce-scatter": "reduce-scatter-implementation",
    "all-gather": "all-gather-implementation",
    "all-to-all": "all-to-all-implementation",
}


def check_astra2(network: Network, system: SystemConfig, kind: str,
                 network_file: str = "") -> None:
    """Refuse what ASTRA-sim 2.x cannot run or silently gets wrong (timing.md §4-§6).

    ``system`` is the 2.x system file's configuration (``source`` its path; an
    empty configuration when there is none: then only the network is checked).
    Raises :class:`InputError` for: more than 4 dimensions (2.x skips the rest),
    ``endpoint-delay`` 0 (2.x aborts), a missing ``collective-optimization``
    (2.x never finishes) or ``preferred-dataset-splits`` (2.x divides by zero),
    an implementation list shorter than the network (2.x runs fewer dimensions),
    halvingDoubling on a dimension whose size is not a power of two (2.x
    deadlocks) and doubleBinaryTree (not modelled yet). Custom (Chakra ET)
    implementations are refused by the system-file parser.
    """
    if network.ndims > MAX_DIMS:
        raise InputError(f"ASTRA-sim 2.x runs at most {MAX_DIMS} dimensions and silently skips "
                         f"the rest; this network has {network.ndims}", "topology",
                         [d.kind for d in network.dims], network_file)
    src = system.source
    if not src:
        return
    if system.endpoint_delay_ns == 0:
        raise InputError("ASTRA-sim 2.x aborts with endpoint-delay 0 (an event-queue "
                         "assertion): give a positive delay (2.x's default is 10)",
                         "endpoint-delay", 0, src)
    if system.collective_optimization is None:
        raise InputError("missing: ASTRA-sim 2.x never finishes without it (give baseline "
                         "or localBWAware)", "collective-optimization", None, src)
    if system.chunks is None:
        raise InputError("missing: ASTRA-sim 2.x divides by zero without it (give the "
                         "number of splits)", "preferred-dataset-splits", None, src)
    key = _IMPLEMENTATION_KEY[kind]
    algos = system.algorithms_for(kind)
    if algos is None:
        return
    if len(algos) < network.ndims:
        raise InputError(f"{len(algos)} entries for a network of {network.ndims} dimensions: "
                         f"ASTRA-sim 2.x would silently run only the first {len(algos)} "
                         "(give one per dimension)", key, "_".join(algos), src)
    for i, (algo, dim) in enumerate(zip(algos, network.dims, strict=False)):
        if algo == "doubleBinaryTree":
            raise InputError("doubleBinaryTree is not modelled yet by the astra-sim-2 timing "
                             "(it times ring, halvingDoubling and direct)", f"{key}[{i}]",
                             algo, src)
        if algo == "halvingDoubling" and kind == "all-to-all":
            raise InputError("ASTRA-sim 2.x has no halvingDoubling all-to-all (it exits with "
                             "\"unknown communication type\"): give ring or direct",
                             f"{key}[{i}]", algo, src)
        if algo == "halvingDoubling" and dim.npus & (dim.npus - 1):
            raise InputError(f"halvingDoubling needs a power-of-two dimension size (dimension "
                             f"{i} has {dim.npus}); ASTRA-sim 2.x deadlocks silently on it",
                             f"{key}[{i}]", algo, src)


def astra2_timing(network: Network, system: SystemConfig, kind: str = "all-reduce",
                  endpoint_delay_ns: float | None = None) -> Timing:
    """The ``astra-sim-2`` timing a 2.x system file gives a ``kind`` collective: its
    ``<kind>-implementation`` algorithms, ``endpoint-delay`` (default 10, or
    ``endpoint_delay_ns``) and ``local-mem-bw`` (the reduce cost). Errors name the
    system file."""
    from themis.timing import make_timing, resolve_algorithms

    if endpoint_delay_ns is None:
        endpoint_delay_ns = (system.endpoint_delay_ns if system.endpoint_delay_ns is not None
                             else DEFAULT_ENDPOINT_DELAY_NS)
    options = {"local_mem_bw_GBps": system.local_mem_bw_GBps} if system.local_mem_bw_GBps \
        else {}
    algos = system.algorithms_for(kind)
    if algos is not None:
        algos = resolve_algorithms(network, algos, _IMPLEMENTATION_KEY[kind], system.source)
    try:
        return make_timing(NAME, network, algos, endpoint_delay_ns, **options)
    except InputError as err:
        raise err.in_file(system.source) from None


def ignored_keys_note(system: SystemConfig) -> str | None:
    """One line when a 2.x system file names a policy or discipline 2.x ignores."""
    named = [f"{key} = {value!r}" for key, value, plain in (
        ("inter-dimension-scheduling", system.inter, "baseline"),
        ("intra-dimension-scheduling", system.intra, "fifo")) if value and value != plain]
    if not named:
        return None
    return (f"themis: note: {system.source}: ASTRA-sim 2.x ignores {' and '.join(named)} "
            "(it always runs baseline / FIFO); this tool honours them")


def plan_shape(policy_name: str, local_bw_aware: bool) -> PlanShape:
    """The all-reduce plan shape of a 2.x run (timing.md §5).

    ``collective-optimization: baseline``: a whole all-reduce on every dimension;
    ``localBWAware``: RS, one AR on the route's last dimension, AG back. Themis
    (which 2.x cannot run) gets the plans ASTRA-sim 1.0 gives it with
    localBWAware: RS along its route, AG back.

    The one rule of :meth:`themis.runkind.RunKind.shape`.
    """
    return RunKind.of(NAME, local_bw_aware=local_bw_aware).shape(policy_name)


def simulate_astra2(
    network: Network,
    system: SystemConfig,
    collective: Collective,
    policy: InterPolicy | str | None = None,
    intra: str | None = "fifo",
    active_chunks: int | None = None,
    endpoint_delay_ns: float | None = None,
    network_file: str = "",
) -> SimResult:
    """Simulate ``collective`` as ASTRA-sim 2.x runs it with ``system``.

    Fields of ``system`` left ``None`` become 2.x's defaults: endpoint delay
    10 ns, 1 active chunk, no reduce cost (no ``local-mem-bw``), each
    dimension's default algorithm; ``collective-optimization`` defaults to
    localBWAware only without a system file (with one it is required, see
    :func:`check_astra2`). ``policy`` (default: ``system.inter``, else
    baseline) picks the routes: ``baseline`` is 2.x's fixed order, ascending
    dimensions and for an all-gather descending; any other policy runs on the
    2.x timing too. ``intra`` is the discipline (``None``: a planning policy's
    choice, else FIFO). The chunks are 2.x's (:meth:`~themis.timing.astra2.
    AstraSim2Timing.chunked`); the schedule's collective is the one 2.x runs.
    The makespan is the collective's end, what 2.x prints (no +1).
    """
    from themis.simulator import intra_names, policy_choice, simulate

    kind = collective.kind
    check_astra2(network, system, kind, network_file)
    if endpoint_delay_ns is None:
        endpoint_delay_ns = (system.endpoint_delay_ns if system.endpoint_delay_ns is not None
                             else DEFAULT_ENDPOINT_DELAY_NS)
    k = active_chunks if active_chunks is not None else (system.active_chunks or 1)
    lbw = system.local_bw_aware if system.collective_optimization is not None else True
    timing = astra2_timing(network, system, kind, endpoint_delay_ns)
    coll = timing.chunked(collective)  # type: ignore[attr-defined]
    run = RunKind.of(NAME, local_bw_aware=lbw, endpoint_delay_ns=endpoint_delay_ns)
    name = policy if isinstance(policy, str) else None
    if policy is None:
        name = system.inter or "baseline"
    if name is not None:
        policy = run.policy(name)
    assert policy is not None and not isinstance(policy, str)
    chooses = intra is None and bool(getattr(policy, "chooses_intra", False))
    options_intra = intra_names() if chooses else (intra or "fifo",)
    shape = run.shape(policy.name)
    # A planning policy (guarded, lb-mix, portfolio) scores its routes as this run
    # applies them (2.x's plan shape, start tie order); the portfolio also scores what
    # this run gives baseline and Themis, so it is never slower than either.
    run_model = PLAIN_RUN
    if hasattr(policy, "plan"):
        run_model = run.run_model(coll, network, policy.name)
    choice = policy_choice(policy, coll, network, timing, options_intra, k, run_model)
    q = choice.intra or options_intra[0] if chooses else (intra or "fifo")
    shape = choice.shape or shape
    plans = [stage_plan(kind, r, shape=shape) for r in choice.routes]
    res = simulate(network, coll, intra=q, timing=timing, active_chunks=k,
                   local_bw_aware=shape is PlanShape.LOCAL_BW_AWARE and kind == "all-reduce",
                   tie_order=run.tie_order, plans=[plans])
    res.schedule.meta["policy"] = policy.name
    if choice.label and choice.label != policy.name:
        res.schedule.meta["policy_choice"] = choice.label
    if coll != collective:
        res.schedule.meta["requested_size_bytes"] = collective.size_bytes
        res.schedule.meta["requested_splits"] = collective.chunks
    res.routes = [list(choice.routes)]
    return res
