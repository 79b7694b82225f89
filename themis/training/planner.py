"""Routes and stage plans of each collective of a training run.

Every inter policy of the registry works per collective: it sees the
collective's chunks on a *masked* view of the network, where the dimensions
outside the collective's mask have size 1 (so they are skipped exactly as
ASTRA-sim skips them). Choices are cached per collective shape (kind, mask,
chunk size, chunk count, position in the run of same-tick collectives).

ASTRA-sim 1.0 state that spans collectives is kept as ASTRA keeps it:

* ``round-robin``: one rotation counter over all chunks of all collectives;
* ``themis``: the loads are reset when a collective is issued at a new tick;
  collectives issued in the same tick continue the same greedy (and share its
  loads). Under boost mode 1 (the engine's per-NPU lists,
  :mod:`themis.engine.npu_lists`) the reset race of workloads.md §4 is kept: ASTRA
  resets only when NPU 0 generates, so where another NPU runs the issuing event first,
  that tick's collectives continue the loads the previous tick left (and the loads are
  0 after it: NPU 0 resets later in the tick).
* a *router* of :mod:`themis.training.routing` (``themis-running``, which starts
  each collective's greedy from the load still in flight on every dimension
  instead of zero; ``online-mix``) sees the running engine at every issue and
  may choose the stage plans too.
"""

from __future__ import annotations

import math
from dataclasses import replace

from themis.collective import Collective
from themis.engine import Engine
from themis.plans import Plan, PlanShape, Route, check_routes, stage_plan
from themis.policies import canonical_policy, is_route, parse_route
from themis.policies.base import InterPolicy, choose
from themis.policies.greedy import Themis
from themis.runkind import RunKind
from themis.training.routing import (
    Router,
    RouterFactory,
    make_router,
    router_names,
    training_key,
)
from topologies.errors import InputError
from topologies.network import Network


def masked_network(network: Network, mask: tuple[bool, ...]) -> Network:
    """``network`` with every dimension outside ``mask`` at size 1."""
    dims = tuple(d if m else replace(d, npus=1) for d, m in zip(network.dims, mask, strict=True))
    return replace(network, dims=dims)


def route_of(kind: str, plan: Plan) -> Route:
    """The route a stage plan follows: its RS / AR dimensions (AG for an all-gather,
    A2A for an all-to-all)."""
    if kind in ("all-gather", "all-to-all"):
        return tuple(d for _, d in plan)
    return tuple(d for ph, d in plan if ph in ("RS", "AR")) or tuple(d for _, d in plan)


def involved(network: Network, mask: tuple[bool, ...]) -> tuple[int, ...]:
    """The dimensions a collective with ``mask`` crosses (in the mask, size > 1)."""
    return tuple(i for i, (d, m) in enumerate(zip(network.dims, mask, strict=True))
                 if m and d.npus > 1)


class Planner:
    """Chooses every chunk's route and stage plan, collective by collective."""

    def __init__(self, network: Network, policy: str, kind: RunKind, engine: Engine,
                 intra: str = "fifo", router: RouterFactory | None = None) -> None:
        self.network = network
        self.kind = kind
        self.intra = intra
        self.engine = engine
        routed = training_key(policy)
        if router is not None:  # a planner's own router: the policy is only its name
            routed, policy = "given", "baseline"
        elif routed is not None and routed not in router_names():
            raise InputError("a whole-iteration planner: run it through simulate_training",
                             "policy", policy)
        self.name = routed or canonical_policy(policy)
        self.fixed: tuple[Route, ...] = ()
        if is_route(self.name):
            self.fixed = tuple(parse_route(r) for r in self.name.split(";"))
            check_routes(self.fixed, network.active_dims, key="policy",
                         what="(logical) dimensions")
            self.name = "fixed"
        if self.name == "fixed" and not self.fixed:
            raise InputError("needs a route: give the route itself, like 2,0,1", "policy",
                             "fixed")
        #: ASTRA-sim state that spans collectives (round-robin's counter, Themis' reset
        #: tick) is kept where the policy runs as the simulator's own variant.
        self.own = self.name in ("round-robin", "themis") and kind.own(self.name)
        self.router: Router | None = None
        self.policy: InterPolicy | None = None
        if routed is None and self.name != "fixed":
            self.policy = kind.policy(self.name)
        #: The run's all-reduce plan shape for this policy (:meth:`RunKind.shape`); a
        #: planning policy may choose another per collective.
        self.shape = kind.shape(self.name)
        if router is not None:
            self.router = router(network, engine, kind, self.shape)
        elif routed is not None:
            self.router = make_router(routed, network, engine, kind, self.shape)
        self._cache: dict[tuple, tuple[list[Route], PlanShape | None]] = {}
        self._shapes: dict[tuple[Route, ...], PlanShape] = {}
        self._rr = 0  # ASTRA's round-robin counter (over all dimensions)
        self._tick: float | None = None
        self._tick_shape: tuple | None = None
        self._tick_count = 0
        #: The reset race: whether the current tick's collectives continue the loads of
        #: the previous tick (the greedy's list, ``None`` while it is the fresh one), and
        #: what the last tick without a race routed (to make its loads when needed).
        self._race = False
        self._carry: list | None = None
        self._routed: tuple | None = None

    def _policy_routes(self, kind: str, mask: tuple[bool, ...], chunk: int, n: int,
                       offset: int) -> tuple[list[Route], PlanShape | None]:
        """The policy's routes for ``n`` chunks (from ``offset`` in a same-tick run of
        Themis), and the plan shape a planning policy chose (``None``: the run's).

        A planning policy (guarded, lb-mix, portfolio) plans through ``plan()`` as
        ``simulate`` does: under the run's timing (this collective kind's, with the
        run's endpoint delay and algorithms), its queue, k and :meth:`RunKind.run_model`."""
        key = (kind, mask, chunk, n, offset)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        view = masked_network(self.network, mask)
        total = offset + n
        npus = math.prod(d.npus for d in view.dims) if kind == "all-gather" else 1
        coll = Collective(kind, max(chunk, 1) * npus * total, total)
        assert self.policy is not None
        shape: PlanShape | None = None
        if hasattr(self.policy, "plan"):
            run = self.kind.run_model(coll, view, self.name)
            choice = choose(self.policy, coll, view, self.engine.timings[kind], (self.intra,),
                            self.engine.k, run)
            got = [tuple(r) for r in choice.routes]
            shape = choice.shape
        else:
            got = [tuple(r) for r in self.policy.routes(coll, view)]
        routes = got[offset:]
        check_routes(routes, view.active_dims, producer=self.name)
        self._cache[key] = (routes, shape)
        return routes, shape

    def routes(self, kind: str, mask: tuple[bool, ...], chunk: int, n: int,
               now: float) -> tuple[list[Route], PlanShape | None]:
        """One route per chunk for a collective issued at ``now``, and the all-reduce
        plan shape a planning policy chose for them (``None``: the run's)."""
        dims = involved(self.network, mask)
        if kind == "all-to-all":
            if self.own and self.name == "round-robin":
                return self._rotated(dims, n, reverse=False), None
            return [dims] * n, None
        if self.name == "fixed":
            keep = set(dims)
            return [tuple(d for d in self.fixed[k % len(self.fixed)] if d in keep)
                    for k in range(n)], None
        if self.own and self.name == "round-robin":
            return self._rotated(dims, n, reverse=kind == "all-gather"), None
        offset = 0
        if self.own and self.name == "themis":
            if self._carry is not None and now == self._tick:  # the reset race
                view = masked_network(self.network, mask)
                npus = math.prod(d.npus for d in view.dims) if kind == "all-gather" else 1
                assert isinstance(self.policy, Themis)
                got, self._carry = self.policy.routes_from(
                    Collective(kind, max(chunk, 1) * npus * n, n), view, self._carry)
                routes = [tuple(r) for r in got]
                check_routes(routes, view.active_dims, producer=self.name)
                return routes, None
            shape = (kind, mask, chunk)
            if now == self._tick and shape == self._tick_shape:
                offset = self._tick_count
            else:
                self._tick_shape = shape
                self._tick_count = 0
            self._tick_count += n
            self._routed = (kind, mask, chunk, self._tick_count)
        return self._policy_routes(kind, mask, chunk, n, offset)

    def choose(self, kind: str, mask: tuple[bool, ...], sizes: list[int], now: float
               ) -> tuple[list[Route], list[Plan]]:
        """Every chunk's route and stage plan for a collective issued at ``now`` (a router
        sees the engine and may choose the plans; all-to-all is never routed)."""
        if self.router is not None and kind != "all-to-all":
            routes, plans = self.router.choose(kind, mask, sizes, now)
            routes = [tuple(r) for r in routes]
            check_routes(routes, involved(self.network, mask), producer=self.name)
            return routes, plans if plans is not None else self.plans(kind, routes)
        routes, shape = self.routes(kind, mask, sizes[0], len(sizes), now)
        return routes, self.plans(kind, routes, shape)

    def note_issue(self, now: float) -> None:
        """A collective (possibly an empty one) was issued at ``now``: Themis' reset tick
        (with the engine's per-NPU lists, reset only when NPU 0 runs the issue first)."""
        if now != self._tick:
            lists = self.engine.npu_lists
            race = self.own and self.name == "themis" and lists is not None \
                and not lists.npu0_first
            self._carry = self._loads_left() if race else None
            self._race = race
            self._routed = None
            self._tick = now
            self._tick_shape = None
            self._tick_count = 0

    def _loads_left(self) -> list | None:
        """The greedy's list the previous issue tick left (``None``: the fresh one)."""
        if self._race:  # NPU 0 reset the loads after the racing NPU routed
            return None
        if self._routed is None:
            return None
        kind, mask, chunk, total = self._routed
        view = masked_network(self.network, mask)
        npus = math.prod(d.npus for d in view.dims) if kind == "all-gather" else 1
        assert isinstance(self.policy, Themis)
        return self.policy.routes_from(Collective(kind, max(chunk, 1) * npus * total, total),
                                       view)[1]

    def _rotated(self, dims: Route, n: int, reverse: bool) -> list[Route]:
        nd = self.network.ndims
        base = list(range(nd))
        if reverse:
            base.reverse()
        keep = set(dims)
        out = []
        for _ in range(n):
            r = self._rr
            out.append(tuple(d for d in base[r:] + base[:r] if d in keep))
            self._rr = (r + 1) % nd
        return out

    def plans(self, kind: str, routes: list[Route], shape: PlanShape | None = None
              ) -> list[Plan]:
        """Every chunk's (phase, dim) sequence (an all-reduce's of ``shape``, default the
        run's shape for this policy)."""
        if kind == "all-to-all":
            return [stage_plan(kind, r) for r in routes]
        shape = (shape or self.shape) if kind == "all-reduce" else PlanShape.RS_AG
        cache: dict[Route, Plan] = {}
        out = []
        for r in routes:
            p = cache.get(r)
            if p is None:
                p = cache[r] = stage_plan(kind, r, shape=shape)
            out.append(p)
        return out
