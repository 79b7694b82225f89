"""What a design is scored on: the workload items, the budget, the policies and the evaluator
(simulated makespan, route-LP bound or fluid time per collective; a bounded cache)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

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
