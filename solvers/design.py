"""Network design: per-dimension bandwidth under a budget, for the scheduler that will run.

Two pieces. The **fluid** closed form (LIBRA's model of an all-reduce in the baseline schedule:
fixed ascending dimension order, perfect pipelining, no latency, negligible fill): dimension
``d`` carries ``T_d`` bytes per NPU and the collective ends at ``max_d T_d / B_d``; under
``sum_d c_d B_d = budget`` the optimum is ``B_d = budget * T_d / sum_j c_j T_j`` with time
``sum_j c_j T_j / budget``. A total-bandwidth budget is the case ``c_d = 1``.

The **search** (:func:`design`): a workload is a weighted mix of collectives, each over its
own dimensions (a LIBRA communicator: a group size per dimension), and its time under a
policy is ``sum_i w_i T_i(B)``, each collective run alone (LIBRA sums a training loop's
collectives the same way). ``T_i`` is the simulated makespan under a registered policy
(alpha-beta timing, the network's latencies), the route-LP lower bound (``bound``: no
scheduler beats it on that network), or the fluid fixed-order time (``libra``). The search
is a deterministic pattern search on the budget: move a share of the budget from one
dimension to another, keep the best move, halve the share when none improves; it starts
from the best of the even split, LIBRA's design and the bound's design (and any design
given), so the result is never worse than any of them under the policy it is made for.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

from themis.collective import Collective
from themis.instance import Instance
from themis.metrics import ideal_ns
from themis.policies import policy_names
from themis.simulator import SimConfig, makespan_ns
from themis.training import TrainingConfig, simulate_training
from topologies.chakra.trace import Trace
from topologies.errors import InputError
from topologies.libra import LibraCollective
from topologies.network import Dimension, Network
from topologies.system import SystemConfig
from topologies.units import MIN_BANDWIDTH_GBPS, GBps_to_bytes_per_ns
from topologies.workload import Workload


@dataclass(frozen=True)
class FluidDesign:
    """A per-dimension bandwidth design and its fluid all-reduce time."""

    bandwidths_GBps: tuple[float, ...]
    traffic_bytes: tuple[float, ...]
    time_ns: float
    cost: float


def all_reduce_traffic_bytes(size_bytes: float, npus: tuple[int, ...]) -> tuple[float, ...]:
    """Bytes each NPU sends on each dimension for an all-reduce in ascending order.

    Reduce-scatter on dimension ``d`` moves ``S (n_d - 1) / n_d / prod_{j<d} n_j`` bytes per NPU;
    the all-gather mirrors it, so the all-reduce moves twice that.
    """
    if size_bytes <= 0:
        raise ValueError(f"size_bytes must be positive, got {size_bytes}")
    if not npus or any(n < 1 for n in npus):
        raise ValueError(f"npus per dimension must be >= 1, got {npus}")
    traffic = []
    before = 1
    for n in npus:
        traffic.append(2.0 * size_bytes * (n - 1) / n / before)
        before *= n
    return tuple(traffic)


def fluid_design(traffic_bytes: tuple[float, ...], budget: float,
                 cost_per_GBps: tuple[float, ...] | None = None) -> FluidDesign:
    """The design minimising ``max_d T_d / B_d`` subject to ``sum_d c_d B_d = budget``.

    ``cost_per_GBps`` defaults to 1 per dimension (a total-bandwidth budget in GB/s). Bandwidths
    are in GB/s (= bytes/ns), so the time is in ns. Dimensions with no traffic get no bandwidth.
    """
    costs = cost_per_GBps if cost_per_GBps is not None else tuple(1.0 for _ in traffic_bytes)
    if len(costs) != len(traffic_bytes):
        raise ValueError(f"{len(costs)} costs for {len(traffic_bytes)} dimensions")
    if not budget > 0 or not math.isfinite(budget):
        raise ValueError(f"budget must be positive and finite, got {budget}")
    if any(c <= 0 for c in costs) or any(t < 0 for t in traffic_bytes):
        raise ValueError("costs must be positive and traffic non-negative")
    weighted = sum(c * t for c, t in zip(costs, traffic_bytes, strict=True))
    if weighted <= 0:
        raise ValueError("no traffic on any dimension")
    bandwidths = tuple(budget * t / weighted for t in traffic_bytes)
    return FluidDesign(
        bandwidths_GBps=bandwidths,
        traffic_bytes=tuple(traffic_bytes),
        time_ns=weighted / budget,
        cost=sum(c * b for c, b in zip(costs, bandwidths, strict=True)),
    )


def fluid_time_ns(traffic_bytes: tuple[float, ...], bandwidths_GBps: tuple[float, ...]) -> float:
    """Fluid time of a design: the slowest dimension, ``max_d T_d / B_d`` (inf if starved)."""
    worst = 0.0
    for t, b in zip(traffic_bytes, bandwidths_GBps, strict=True):
        if t > 0:
            worst = max(worst, math.inf if b <= 0 else t / b)
    return worst


# --------------------------------------------------------------------------- the search

#: The design objectives that are not simulated policies.
BOUND = "bound"
LIBRA = "libra"
#: Default simulator runs (or bound evaluations) of one policy's search.
DEFAULT_EVALUATIONS = 200
#: The search stops refining once a move is below this share of the free budget.
MIN_MOVE_SHARE = 1e-3


def design_policy_names(training: bool = False, runner: str = "") -> tuple[str, ...]:
    """What a design can be made for: every registered policy but ``fixed``, the route-LP
    ``bound`` and LIBRA's fluid fixed-order model ``libra``; for a training iteration the
    training-level policies (``auto``, ...) too, and not ``libra``; under an ASTRA-sim
    timing's system-file ``runner`` the simulated policies only."""
    simulated = tuple(p for p in policy_names() if p != "fixed")
    if runner:
        return simulated
    if training:
        from themis.training.routing import training_policy_names

        return (*simulated, *training_policy_names(), BOUND)
    return (*simulated, BOUND, LIBRA)


@dataclass(frozen=True)
class DesignItem:
    """One collective of a design workload.

    ``group`` is the communicator size on each dimension (LIBRA's convention: ``-1`` or
    ``1``: the dimension is not in it; a size below the dimension's NPU count runs the
    collective on that many NPUs of the dimension). ``weight`` multiplies its time.
    """

    kind: str
    size_bytes: int
    chunks: int
    group: tuple[int, ...]
    weight: float = 1.0
    label: str = ""

    def dims(self) -> tuple[int, ...]:
        """The dimensions the collective crosses (group size > 1)."""
        return tuple(d for d, g in enumerate(self.group) if g > 1)


def workload_items(collectives: Iterable[LibraCollective],
                   communicator: dict[str, tuple[int, ...]], chunks: int,
                   file: str = "") -> tuple[DesignItem, ...]:
    """A LIBRA workload's collectives as design items: each phase's collective on that
    phase's communicator group, identical ones merged (their count is the weight)."""
    kinds = {"ALLREDUCE": "all-reduce", "ALLGATHER": "all-gather",
             "REDUCESCATTER": "reduce-scatter"}
    counts: dict[tuple[str, int, tuple[int, ...]], int] = {}
    labels: dict[tuple[str, int, tuple[int, ...]], str] = {}
    for c in collectives:
        kind = kinds.get(c.comm_type)
        if kind is None:
            raise InputError("a design workload takes all-reduce, all-gather and "
                             "reduce-scatter only", f"{c.layer} {c.phase}", c.comm_type, file)
        key = (kind, c.size_bytes, communicator[c.phase])
        counts[key] = counts.get(key, 0) + 1
        phases = labels.get(key, "")
        if c.phase not in phases.split("+"):
            labels[key] = f"{phases}+{c.phase}" if phases else c.phase
    return tuple(DesignItem(kind, size, chunks, group, float(n),
                            f"{labels[(kind, size, group)]} {kind}")
                 for (kind, size, group), n in counts.items())


@dataclass(frozen=True)
class TrainingSpec:
    """A training iteration as the design objective: ``train``'s engine runs ``workload``
    with ``config`` (its policy replaced by the one designed for); ``bound`` is the
    iteration lower bound of that run."""

    workload: Workload
    config: TrainingConfig


@dataclass(frozen=True)
class TraceSpec:
    """Chakra traces as the design objective: ``train``'s ET run (ASTRA-sim 2.x's slots,
    each collective timed alone under ``timing`` with ``system``), its end."""

    traces: Mapping[int, Trace]
    system: SystemConfig
    timing: str = "astra-sim-2"


@dataclass(frozen=True)
class DesignProblem:
    """A network shape, a workload and a budget: what :func:`design` solves.

    ``network`` gives the kinds, NPUs and latencies (its bandwidths are ignored);
    ``costs`` the price of 1 GB/s per NPU on each dimension (1: a total-bandwidth budget);
    ``budget`` the total price; ``min_GBps``/``max_GBps`` bounds per dimension (equal:
    fixed). Dimensions no collective crosses are kept at their minimum.
    """

    network: Network
    items: tuple[DesignItem, ...]
    budget: float
    costs: tuple[float, ...] = ()
    min_GBps: tuple[float, ...] = ()
    max_GBps: tuple[float, ...] = ()
    endpoint_delay_ns: float = 0.0
    intra: str = "fifo"
    #: Every searched bandwidth a multiple of this (GB/s; 0: continuous). The budget is
    #: then an upper limit: a design spends what whole steps allow.
    step_GBps: float = 0.0
    #: A training iteration (``TrainingSpec``) or Chakra traces (``TraceSpec``) as the
    #: objective instead of ``items`` (then empty).
    training: TrainingSpec | TraceSpec | None = None
    #: The timing simulated policies run under; an ASTRA-sim timing runs the system file
    #: (``system``) as ``simulate --timing`` does (its runner), where the route-LP bound and
    #: LIBRA's fluid model do not apply.
    timing: str = "alpha-beta"
    system: SystemConfig | None = None

    def __post_init__(self) -> None:
        n = self.network.ndims
        if not self.costs:
            object.__setattr__(self, "costs", (1.0,) * n)
        if not self.min_GBps:
            object.__setattr__(self, "min_GBps", (0.0,) * n)
        if not self.max_GBps:
            object.__setattr__(self, "max_GBps", (math.inf,) * n)
        for name in ("costs", "min_GBps", "max_GBps"):
            if len(getattr(self, name)) != n:
                raise InputError(f"has {len(getattr(self, name))} entries for {n} dimensions",
                                 name, getattr(self, name))
        if not (self.budget > 0 and math.isfinite(self.budget)):
            raise InputError("must be a positive finite number", "budget", self.budget)
        for d, (c, lo, hi) in enumerate(zip(self.costs, self.min_GBps, self.max_GBps,
                                            strict=True)):
            if not (c > 0 and math.isfinite(c)):
                raise InputError("must be a positive finite price", f"cost[{d}]", c)
            if not 0 <= lo <= hi:
                raise InputError(f"bounds {lo}..{hi} GB/s are empty", f"dimension {d}", lo)
        if not self.items and self.training is None:
            raise InputError("no collective to design for", "workload", None)
        if self.runner and isinstance(self.training, TrainingSpec):
            raise InputError("a training design runs under alpha-beta (train --timing for "
                             "one run)", "--timing", self.timing)
        for item in self.items:
            if len(item.group) != n:
                raise InputError(f"group has {len(item.group)} entries for {n} dimensions",
                                 item.label or "group", item.group)
            for d, g in enumerate(item.group):
                if g > self.network.dims[d].npus:
                    raise InputError(f"group size above the dimension's {self.network.dims[d].npus}"
                                     " NPUs", f"{item.label or 'group'}[{d}]", g)
            if not item.weight >= 0:
                raise InputError("must be >= 0", "weight", item.weight)
        active = self.active_dims
        if not active:
            raise InputError("no collective crosses any dimension", "workload", None)
        if not (self.step_GBps >= 0 and math.isfinite(self.step_GBps)):
            raise InputError("must be a finite number >= 0", "step", self.step_GBps)
        if self.step_GBps:
            for d in active:
                if self.min_GBps[d] < self.max_GBps[d] and \
                        self._step_floor(d) > self.max_GBps[d] * (1 + 1e-12):
                    raise InputError(f"no multiple of the {self.step_GBps:g} GB/s step in "
                                     f"{self.min_GBps[d]:g}..{self.max_GBps[d]:g} GB/s",
                                     f"dimension {d}", self.max_GBps[d])
        floor = sum(self.costs[d] * self._floor(d) for d in range(n))
        if floor > self.budget * (1 + 1e-12):
            raise InputError(f"is below what the minimum bandwidths cost ({floor:g})",
                             "budget", self.budget)
        if all(math.isfinite(self.max_GBps[d]) for d in active):
            ceiling = sum(self.costs[d] * (self.max_GBps[d] if d in active else self._floor(d))
                          for d in range(n))
            if ceiling < self.budget * (1 - 1e-12):
                raise InputError(f"is above what the maximum bandwidths cost ({ceiling:g}): "
                                 "lower it or raise a maximum", "budget", self.budget)

    @property
    def runner(self) -> str:
        """The system-file runner of the timing (``""``: the plain simulator)."""
        from themis.timing.base import timing_meaning

        return timing_meaning(self.timing).runner

    @property
    def active_dims(self) -> tuple[int, ...]:
        """Dimensions some collective crosses (a training iteration: every dimension of more
        than one NPU)."""
        if self.training is not None:
            return self.network.active_dims
        return tuple(sorted({d for item in self.items for d in item.dims()}))

    def _floor(self, d: int) -> float:
        return max(self.min_GBps[d], MIN_BANDWIDTH_GBPS)

    def _step_floor(self, d: int) -> float:
        g = self.step_GBps
        return max(g, math.ceil(self.min_GBps[d] / g - 1e-9) * g)

    def _stepped(self, d: int) -> bool:
        return bool(self.step_GBps) and d in self.active_dims and \
            self.min_GBps[d] < self.max_GBps[d]

    def snap(self, bandwidths_GBps: Sequence[float]) -> tuple[float, ...]:
        """A design on the step grid within the budget: each free dimension rounded down to a
        step, then steps added back where they fit, largest rounding loss first."""
        g = self.step_GBps
        bw = list(self.project(bandwidths_GBps))
        if not g:
            return tuple(bw)
        loss = {}
        for d in range(len(bw)):
            if self._stepped(d):
                top = math.floor(self.max_GBps[d] / g + 1e-9) * g if math.isfinite(
                    self.max_GBps[d]) else math.inf
                snapped = min(max(math.floor(bw[d] / g + 1e-9) * g, self._step_floor(d)), top)
                loss[d] = bw[d] - snapped
                bw[d] = snapped
        added = True
        while added:
            added = False
            for d in sorted(loss, key=lambda d: (-loss[d], d)):
                if self.cost(bw) + self.costs[d] * g <= self.budget * (1 + 1e-12) and \
                        bw[d] + g <= self.max_GBps[d] * (1 + 1e-12):
                    bw[d] += g
                    loss[d] -= g
                    added = True
        return tuple(bw)

    def cost(self, bandwidths_GBps: Sequence[float]) -> float:
        """The price of a design."""
        return sum(c * b for c, b in zip(self.costs, bandwidths_GBps, strict=True))

    def network_with(self, bandwidths_GBps: Sequence[float]) -> Network:
        """The network with these per-dimension bandwidths."""
        return Network(tuple(Dimension(d.kind, d.npus, float(b), d.latency_ns, d.links,
                                       d.nic_latency_ns, d.router_latency_ns)
                             for d, b in zip(self.network.dims, bandwidths_GBps, strict=True)),
                       self.network.nic_latency_ns, self.network.router_latency_ns,
                       self.network.name)

    def project(self, bandwidths_GBps: Sequence[float]) -> tuple[float, ...]:
        """The nearest design that spends the budget exactly within the bounds: clipped,
        then the rest of the budget spread over the free dimensions in proportion."""
        active = set(self.active_dims)
        bw = [min(max(b, self._floor(d)), self.max_GBps[d]) if d in active else self._floor(d)
              for d, b in enumerate(bandwidths_GBps)]
        for _ in range(4 * len(bw) + 4):
            rest = self.budget - self.cost(bw)
            if abs(rest) <= 1e-12 * self.budget:
                break
            free = [d for d in active if (rest > 0 and bw[d] < self.max_GBps[d])
                    or (rest < 0 and bw[d] > self._floor(d))]
            if not free:
                break
            spent = sum(self.costs[d] * bw[d] for d in free)
            for d in free:
                share = (self.costs[d] * bw[d] / spent) if spent > 0 else 1 / len(free)
                target = bw[d] + rest * share / self.costs[d]
                bw[d] = min(max(target, self._floor(d)), self.max_GBps[d])
        return tuple(bw)


def _subnetwork(network: Network, item: DesignItem) -> Network | None:
    dims = tuple(Dimension(network.dims[d].kind, item.group[d], network.dims[d].bandwidth_GBps,
                           network.dims[d].latency_ns) for d in item.dims())
    return Network(dims, name=network.name) if dims else None


def _fluid_item_ns(network: Network, item: DesignItem) -> float:
    """LIBRA's time of one collective: fixed ascending order (an all-gather mirrored),
    perfect pipelining, no latency: the slowest dimension's bytes over its bandwidth."""
    rounds = 2.0 if item.kind == "all-reduce" else 1.0
    before = 1
    worst = 0.0
    for d in item.dims():
        n = item.group[d]
        traffic = rounds * item.size_bytes * (n - 1) / n / before
        worst = max(worst, traffic / GBps_to_bytes_per_ns(network.dims[d].bandwidth_GBps))
        before *= n
    return worst


class DesignEvaluator:
    """The time of a design under a policy, with what repeated evaluations share: one cache
    of results per (policy, design), bounded in size."""

    def __init__(self, problem: DesignProblem, cache_size: int = 100_000,
                 executor: Executor | None = None) -> None:
        self.problem = problem
        self.cache_size = cache_size
        #: Where batches of designs are evaluated (a process pool or a Dask client's
        #: executor, e.g. the sweep executors); ``None``: this process.
        self.executor = executor
        self._cache: dict[tuple[str, tuple[float, ...]], float] = {}
        self.evaluations = 0

    def item_ns(self, policy: str, network: Network, item: DesignItem) -> float:
        """One collective's time on ``network`` under ``policy``."""
        sub = _subnetwork(network, item)
        if sub is None:
            return 0.0
        if policy == LIBRA:
            return _fluid_item_ns(network, item)
        coll = Collective(item.kind, item.size_bytes, item.chunks)
        if policy == BOUND:
            if item.kind == "all-reduce":
                from solvers.bounds import lp_bound_ns

                return lp_bound_ns(Instance(sub, item.size_bytes, item.chunks,
                                            self.problem.endpoint_delay_ns))
            return ideal_ns(sub, [coll])
        if self.problem.runner:
            return self.system_run_ns(policy, network, item, coll)
        config = SimConfig(policy=policy, intra=self.problem.intra,
                           endpoint_delay_ns=self.problem.endpoint_delay_ns)
        return makespan_ns(sub, [coll], config)

    def system_run_ns(self, policy: str, network: Network, item: DesignItem,
                      coll: Collective) -> float:
        """One collective run as ``simulate --timing T --system FILE`` runs it (the
        timing's system-file runner); dimensions outside the group keep their place with
        one NPU, so the file's per-dimension algorithms still line up."""
        sub = Network(tuple(Dimension(d.kind, item.group[i] if item.group[i] > 1 else 1,
                                      d.bandwidth_GBps, d.latency_ns)
                            for i, d in enumerate(network.dims)), name=network.name)
        from themis.system_run import run_system

        return float(run_system(sub, self.problem.system, coll, self.problem.timing, policy,
                                self.problem.intra).makespan_ns)

    def training_ns(self, policy: str, network: Network) -> float:
        """The iteration's end under ``policy`` (``bound``: its iteration lower bound)."""
        spec = self.problem.training
        assert spec is not None
        if isinstance(spec, TraceSpec):
            if policy in (LIBRA, BOUND):
                raise InputError("Chakra traces are designed for a simulated policy (no "
                                 "bound or fluid model of a trace)", "--policy", policy)
            from themis.training.et_run import simulate_et

            return float(simulate_et(spec.traces, network, spec.system, None, None, policy,
                                      self.problem.intra, spec.timing).end_ns)
        if policy == LIBRA:
            raise InputError("LIBRA's fluid model times collective mixes, not a training "
                             "iteration", "--policy", policy)
        from dataclasses import replace

        cfg = replace(spec.config, policy="baseline" if policy == BOUND else policy)
        result = simulate_training(spec.workload, network, cfg, bound=policy == BOUND)
        if policy == BOUND:
            return float(result.lower_bound_ns or 0.0)
        return float(result.end_ns)

    @staticmethod
    def _key(policy: str, bandwidths_GBps: Sequence[float]) -> tuple[str, tuple[float, ...]]:
        return policy, tuple(round(b, 9) for b in bandwidths_GBps)

    def _store(self, key: tuple[str, tuple[float, ...]], value: float) -> None:
        if len(self._cache) >= self.cache_size:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = value

    def many(self, policy: str, designs: Sequence[Sequence[float]]) -> list[float]:
        """The time of each design under ``policy``, in order: cached ones from the cache,
        the others in one batch on the executor (or here)."""
        keys = [self._key(policy, bw) for bw in designs]
        todo: dict[tuple[str, tuple[float, ...]], Sequence[float]] = {}
        for key, bw in zip(keys, designs, strict=True):
            if key not in self._cache and key not in todo:
                todo[key] = bw
        if self.executor is not None and len(todo) > 1:
            values = list(self.executor.map(_evaluate, [(self.problem, policy, tuple(bw))
                                                        for bw in todo.values()]))
            self.evaluations += len(todo)
            for key, value in zip(todo, values, strict=True):
                self._store(key, value)
        else:
            for bw in todo.values():
                self(policy, bw)
        return [self._cache[k] if k in self._cache else self(policy, bw)
                for k, bw in zip(keys, designs, strict=True)]

    def __call__(self, policy: str, bandwidths_GBps: Sequence[float]) -> float:
        """``sum_i w_i T_i`` of the workload on this design under ``policy`` (ns)."""
        key = self._key(policy, bandwidths_GBps)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        self.evaluations += 1
        network = self.problem.network_with(bandwidths_GBps)
        if self.problem.training is not None:
            value = self.training_ns(policy, network)
        else:
            value = sum(item.weight * self.item_ns(policy, network, item)
                        for item in self.problem.items if item.weight)
        self._store(key, value)
        return value


def _evaluate(job: tuple[DesignProblem, str, tuple[float, ...]]) -> float:
    """One design's time in a worker process (module level, so it pickles)."""
    problem, policy, bw = job
    return DesignEvaluator(problem, cache_size=1)(policy, bw)


@dataclass(frozen=True)
class Design:
    """A design found for one policy: its bandwidths, its time under that policy, its price,
    the start it came from and what the search spent."""

    policy: str
    bandwidths_GBps: tuple[float, ...]
    time_ns: float
    cost: float
    start: str
    starts_ns: dict[str, float] = field(default_factory=dict)
    evaluations: int = 0

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"policy": self.policy, "bandwidths_GBps": list(self.bandwidths_GBps),
                "time_ns": self.time_ns, "cost": self.cost, "start": self.start,
                "starts_ns": dict(self.starts_ns), "evaluations": self.evaluations}


def even_split(problem: DesignProblem) -> tuple[float, ...]:
    """The same bandwidth on every dimension a collective crosses, spending the budget."""
    active = problem.active_dims
    fixed = sum(problem.costs[d] * problem._floor(d) for d in range(problem.network.ndims)
                if d not in active)
    each = (problem.budget - fixed) / sum(problem.costs[d] for d in active)
    return problem.project([each if d in active else 0.0 for d in range(problem.network.ndims)])


def libra_design(problem: DesignProblem) -> tuple[float, ...]:
    """LIBRA's design: the fluid fixed-order optimum (closed form for one collective;
    the search on the fluid time for a mix)."""
    items = [i for i in problem.items if i.weight > 0 and i.dims()]
    if len(items) == 1:
        item = items[0]
        rounds = 2.0 if item.kind == "all-reduce" else 1.0
        traffic = [0.0] * problem.network.ndims
        before = 1
        for d in item.dims():
            n = item.group[d]
            traffic[d] = rounds * item.size_bytes * (n - 1) / n / before
            before *= n
        weighted = sum(c * t for c, t in zip(problem.costs, traffic, strict=True))
        return problem.project([problem.budget * t / weighted for t in traffic])
    evaluator = DesignEvaluator(problem)
    return _search(problem, lambda bws: evaluator.many(LIBRA, bws), even_split(problem),
                   10 * DEFAULT_EVALUATIONS)[0]


#: Route designs are start points up to this many dimensions (d! of them).
ROUTE_STARTS_MAX_DIMS = 5
#: The search runs from this many of the best start points.
SEARCH_STARTS = 3


def route_designs(problem: DesignProblem) -> dict[str, tuple[float, ...]]:
    """For each order of the dimensions, the fluid design of the workload run in that order
    (bandwidth in proportion to the bytes each dimension carries, weighted by the
    collectives' weights): start points that the fixed-order LIBRA design is one of."""
    active = problem.active_dims
    if len(active) > ROUTE_STARTS_MAX_DIMS:
        return {}
    out = {}
    for route in itertools.permutations(active):
        traffic = [0.0] * problem.network.ndims
        for item in problem.items:
            rounds = 2.0 if item.kind == "all-reduce" else 1.0
            before = 1
            for d in route:
                n = item.group[d]
                if n > 1:
                    traffic[d] += item.weight * rounds * item.size_bytes * (n - 1) / n / before
                    before *= n
        weighted = sum(c * t for c, t in zip(problem.costs, traffic, strict=True))
        if weighted > 0:
            out["route " + ",".join(map(str, route))] = problem.project(
                [problem.budget * t / weighted for t in traffic])
    return out


def lattice_designs(problem: DesignProblem, most: int) -> dict[str, tuple[float, ...]]:
    """The coarse grid of budget shares in multiples of 1/m over the active dimensions
    (every dimension at least one share), m the largest with at most ``most`` points:
    deterministic start points that cover the whole budget simplex."""
    active = problem.active_dims
    k = len(active)
    if k < 2 or most < 1:
        return {}
    m = k  # shares of 1/m, each dimension >= 1: C(m-1, k-1) points
    while math.comb(m, k - 1) <= most:
        m += 1
    fixed = sum(problem.costs[d] * problem._floor(d) for d in range(problem.network.ndims))
    spend = problem.budget - fixed
    out = {}
    for cuts in itertools.combinations(range(1, m), k - 1):
        parts = [b - a for a, b in zip((0, *cuts), (*cuts, m), strict=True)]
        bw = [problem._floor(d) for d in range(problem.network.ndims)]
        for d, part in zip(active, parts, strict=True):
            bw[d] += spend * part / m / problem.costs[d]
        out["grid " + ":".join(map(str, parts))] = problem.project(bw)
    return out


def _moves(problem: DesignProblem, bw: tuple[float, ...], delta: float
           ) -> Iterable[tuple[float, ...]]:
    """Every design one move away: ``delta`` of budget from dimension i to dimension j."""
    active = problem.active_dims
    for i in active:
        for j in active:
            if i == j:
                continue
            take = min(delta, problem.costs[i] * (bw[i] - problem._floor(i)),
                       problem.costs[j] * (problem.max_GBps[j] - bw[j]))
            if take <= 1e-12 * problem.budget:
                continue
            new = list(bw)
            new[i] -= take / problem.costs[i]
            new[j] += take / problem.costs[j]
            new[i] = max(new[i], problem._floor(i))
            yield tuple(new)


#: A batch objective: the times of a list of designs, in order (evaluated in parallel
#: where the evaluator has an executor; the search's result does not depend on it).
Objective = Callable[[list[tuple[float, ...]]], list[float]]


def _best_move(objective: Objective, cands: list[tuple[float, ...]], best_ns: float
               ) -> tuple[tuple[float, ...] | None, float]:
    """The first candidate of least time that improves on ``best_ns`` (relative 1e-9)."""
    move, move_ns = None, best_ns
    for cand, value in zip(cands, objective(cands), strict=True):
        if value < move_ns * (1 - 1e-9):
            move, move_ns = cand, value
    return move, move_ns


def _search(problem: DesignProblem, objective: Objective,
            start: tuple[float, ...], evaluations: int) -> tuple[tuple[float, ...], float, int]:
    """Deterministic pattern search from ``start``: best move of the current size, halving
    the size when none improves (relative 1e-9), until the size is below
    :data:`MIN_MOVE_SHARE` of the free budget or ``evaluations`` objective calls are spent."""
    best, best_ns = start, objective([start])[0]
    used = 1
    free = problem.budget - sum(problem.costs[d] * problem._floor(d)
                                for d in range(problem.network.ndims))
    delta = free / 4
    while delta >= MIN_MOVE_SHARE * free and used < evaluations:
        cands = list(itertools.islice(_moves(problem, best, delta), evaluations - used))
        used += len(cands)
        move, move_ns = _best_move(objective, cands, best_ns)
        if move is None:
            delta /= 2
        else:
            best, best_ns = move, move_ns
    return best, best_ns, used


def _step_moves(problem: DesignProblem, bw: tuple[float, ...], k: int
                ) -> Iterable[tuple[float, ...]]:
    """Designs ``k`` steps away on the grid: k steps from i to j, the price of k steps of i
    spent on j in whole steps, or k more steps on j where the budget allows."""
    g = problem.step_GBps
    free = [d for d in problem.active_dims if problem._stepped(d)]
    seen = set()
    for i in [None, *free]:
        for j in free:
            if i == j:
                continue
            gains = [k] if i is None else sorted({k, math.floor(k * problem.costs[i] /
                                                                problem.costs[j] + 1e-9)})
            for gain in gains:
                if gain < 1:
                    continue
                new = list(bw)
                if i is not None:
                    new[i] -= k * g
                    if new[i] < problem._step_floor(i) - 1e-9:
                        continue
                new[j] += gain * g
                cand = tuple(new)
                if cand in seen or new[j] > problem.max_GBps[j] * (1 + 1e-12) or \
                        problem.cost(cand) > problem.budget * (1 + 1e-12):
                    continue
                seen.add(cand)
                yield cand


def _step_search(problem: DesignProblem, objective: Objective,
                 start: tuple[float, ...], evaluations: int) -> tuple[tuple[float, ...], float]:
    """The pattern search on the step grid: best move of k steps, k halved when none
    improves, down to one step (or until the budget of evaluations ends)."""
    best, best_ns = start, objective([start])[0]
    used = 1
    k = 1
    while 2 * k * problem.step_GBps * max(problem.costs) <= problem.budget / 4:
        k *= 2
    while k >= 1 and used < evaluations:
        cands = list(itertools.islice(_step_moves(problem, best, k), evaluations - used))
        used += len(cands)
        move, move_ns = _best_move(objective, cands, best_ns)
        if move is None:
            k //= 2
        else:
            best, best_ns = move, move_ns
    return best, best_ns


def design(problem: DesignProblem, policy: str, evaluations: int = DEFAULT_EVALUATIONS,
           starts: dict[str, tuple[float, ...]] | None = None,
           evaluator: DesignEvaluator | None = None) -> Design:
    """The design that minimises the workload's time under ``policy`` on the budget.

    Start points: the even split, LIBRA's design, the bound's design (for a simulated
    policy) and ``starts``; the search starts from the best of them under ``policy``, so
    the result is never worse than any of them. Deterministic: same inputs, same design.
    """
    names = design_policy_names(problem.training is not None, problem.runner
                                or ("trace" if isinstance(problem.training, TraceSpec) else ""))
    if policy not in names:
        raise InputError(f"unknown design policy (one of {', '.join(names)})", "--policy",
                         policy)
    if evaluations < 1:
        raise InputError("must be at least 1", "--evaluations", evaluations)
    ev = evaluator or DesignEvaluator(problem)
    points = {"even": even_split(problem)}
    if problem.training is None:
        points["libra"] = libra_design(problem)  # a start point: its fluid closed form
    elif policy == LIBRA:
        raise InputError("LIBRA's fluid model times collective mixes, not a training "
                         "iteration", "--policy", policy)
    if policy not in (BOUND, LIBRA) and not problem.runner \
            and not isinstance(problem.training, TraceSpec):
        points["bound"] = design(problem, BOUND, evaluations, evaluator=ev).bandwidths_GBps
    for name, bw in (starts or {}).items():
        points[name] = problem.project(bw)
    points |= {n: bw for n, bw in route_designs(problem).items() if n not in points}
    points |= lattice_designs(problem, evaluations // 2)
    if problem.step_GBps:
        points = {name: problem.snap(bw) for name, bw in points.items()}
    starts_ns = dict(zip(points, ev.many(policy, list(points.values())), strict=True))
    order = sorted(starts_ns, key=lambda n: (starts_ns[n], list(points).index(n)))
    first = order[0]
    before = ev.evaluations
    free = problem if not problem.step_GBps else DesignProblem(
        problem.network, problem.items, problem.budget, problem.costs, problem.min_GBps,
        problem.max_GBps, problem.endpoint_delay_ns, problem.intra)
    bw, value = points[first], starts_ns[first]
    for name in order[:SEARCH_STARTS]:  # the best starts, while evaluations remain
        left = evaluations - (ev.evaluations - before)
        if left < 1:
            break
        found, found_ns, _ = _search(free, lambda bws: ev.many(policy, bws), points[name],
                                     left)
        if problem.step_GBps:
            found = problem.snap(found)
            found_ns = ev(policy, found)
        if found_ns < value * (1 - 1e-12):
            bw, value, first = found, found_ns, name
    if problem.step_GBps:
        left = max(1, evaluations - (ev.evaluations - before))
        bw, value = _step_search(problem, lambda bws: ev.many(policy, bws), bw, left)
    return Design(policy, bw, value, problem.cost(bw), first, starts_ns,
                  ev.evaluations - before)


@dataclass(frozen=True)
class RegretTable:
    """Every design run under every policy: ``time_ns[design][policy]``, each design's
    bound, and the regret of running ``policy`` on a design made for another."""

    designs: dict[str, tuple[float, ...]]
    policies: tuple[str, ...]
    time_ns: dict[str, dict[str, float]]
    #: Each design's route-LP bound (``None`` under an ASTRA-sim timing: it bounds alpha-beta).
    bound_ns: dict[str, float | None]

    def regret(self, design_name: str, policy: str) -> float | None:
        """``time(design, policy) / time(policy's own design, policy) - 1`` (None without
        a design made for ``policy``)."""
        own = self.time_ns.get(policy, {}).get(policy)
        if own is None or own <= 0:
            return None
        return self.time_ns[design_name][policy] / own - 1.0

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"policies": list(self.policies),
                "designs": {n: {"bandwidths_GBps": list(bw), "time_ns": self.time_ns[n],
                                "bound_ns": self.bound_ns[n],
                                "regret": {p: self.regret(n, p) for p in self.policies}}
                            for n, bw in self.designs.items()}}


def regret_table(problem: DesignProblem, designs: dict[str, tuple[float, ...]],
                 policies: Sequence[str], evaluator: DesignEvaluator | None = None
                 ) -> RegretTable:
    """Run every design under every policy (and its bound)."""
    ev = evaluator or DesignEvaluator(problem)
    times = {n: {p: ev(p, bw) for p in policies} for n, bw in designs.items()}
    no_bound = problem.runner or isinstance(problem.training, TraceSpec)
    bounds: dict[str, float | None] = {
        n: None if no_bound else ev(BOUND, bw) for n, bw in designs.items()}
    return RegretTable(dict(designs), tuple(policies), times, bounds)


@dataclass(frozen=True)
class DesignStudy:
    """A design per policy (each searched from every design made before it too, so each is
    the best design found under its own policy) and the regret table of all of them."""

    problem: DesignProblem
    designs: dict[str, Design]
    table: RegretTable

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"budget": self.problem.budget, "costs": list(self.problem.costs),
                "designs": {n: d.to_dict() for n, d in self.designs.items()},
                "regret_table": self.table.to_dict()}


def design_study(problem: DesignProblem, policies: Sequence[str],
                 evaluations: int = DEFAULT_EVALUATIONS,
                 executor: Executor | None = None) -> DesignStudy:
    """Design for each policy in turn, then run every design (and the even split) under
    every policy: what designing for the wrong scheduler costs. ``executor`` evaluates
    batches of designs in parallel (same result)."""
    ev = DesignEvaluator(problem, executor=executor)
    made: dict[str, Design] = {}
    for policy in policies:
        starts = {f"{n} design": d.bandwidths_GBps for n, d in made.items()}
        made[policy] = design(problem, policy, evaluations, starts, ev)
    for policy in policies:  # a design made later may beat an earlier one under its policy
        others = {f"{n} design": d.bandwidths_GBps for n, d in made.items() if n != policy}
        if any(ev(policy, bw) < made[policy].time_ns for bw in others.values()):
            made[policy] = design(problem, policy, evaluations, others, ev)
    designs = {"even": even_split(problem)} | {n: d.bandwidths_GBps for n, d in made.items()}
    return DesignStudy(problem, made, regret_table(problem, designs, policies, ev))
