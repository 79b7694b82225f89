"""The inter-dimension policy protocol and its registry.

:func:`policy_names` is the one list of policy names; :func:`make_policy`
accepts every registered name, ASTRA-sim's spellings (``ascending``,
``offlineGreedy``, ``roundRobin``) and fixed routes such as ``"2,0,1"`` (or
``"0,1;1,0"``, cycled over the chunks), so every command accepts the same names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from themis.collective import Collective
from themis.plans import Plan, PlanShape, Route, stage_plan
from themis.plugins import load_plugins
from topologies.errors import InputError
from topologies.network import Network

if TYPE_CHECKING:  # pragma: no cover
    from themis.timing import Timing



class InterPolicy(Protocol):
    """Chooses each chunk's route (order of the dimensions it crosses).

    ``routes`` is called once when a collective is issued and returns one
    route per chunk (a permutation of ``network.active_dims``).
    """

    @property
    def name(self) -> str:
        """The registered name (read-only: policies are often frozen dataclasses)."""
        ...

    def routes(self, collective: Collective, network: Network) -> list[Route]:
        """One route per chunk of ``collective``, in chunk order."""
        ...


@dataclass(frozen=True)
class PolicyChoice:
    """What a planning policy decided for one collective.

    ``routes``: one route per chunk; ``intra``: the intra-dimension discipline
    it chose (one of the ``intra_options`` it was offered), or ``None`` to
    leave the caller's; ``label``: which candidate won (for reports);
    ``makespan_ns``: the makespan the policy measured for its choice, if it
    simulated it; ``plan_s``: the seconds it took to compute the choice (its
    original cost, also when a cache served it).
    """

    routes: list[Route]
    intra: str | None = None
    label: str = ""
    makespan_ns: float | None = None
    plan_s: float = 0.0
    #: The all-reduce plan shape the policy chose with the routes (a reference of the
    #: :class:`RunModel` it was given), or ``None`` for the run's own shape.
    shape: PlanShape | None = None


@dataclass(frozen=True)
class RunModel:
    """How the run applies a planning policy's routes, so that it scores them the same way.

    ``shape``: the all-reduce plan shape the run gives the policy's routes;
    ``tie_order``: the simulator's tie order; ``disciplines``: pairs (discipline
    offered, discipline the run queues with), e.g. ASTRA-sim 1.0's
    ``("scf", "astra-scf")``; ``references``: what the same run would apply for
    other policies, as (label, routes, shape), e.g. ASTRA-sim 1.0's baseline and
    Themis with their own plan shapes. A planner that promises to be no slower
    than them scores them too and may return one (:attr:`PolicyChoice.shape`).
    The default is the simulator's plain run (RS/AG plans, start tie order).
    """

    shape: PlanShape = PlanShape.RS_AG
    tie_order: str = "start"
    disciplines: tuple[tuple[str, str], ...] = ()
    references: tuple[tuple[str, tuple[Route, ...], PlanShape], ...] = ()

    def discipline(self, name: str) -> str:
        """The discipline the run queues with when ``name`` is chosen."""
        return dict(self.disciplines).get(name, name)

    def plan(self, kind: str, route: Route, shape: PlanShape | None = None) -> Plan:
        """The stage plan the run gives ``route`` (with ``shape``, default the run's)."""
        return stage_plan(kind, route, shape=shape or self.shape)


#: The simulator's plain run (RS/AG plans, start tie order, disciplines as named).
PLAIN_RUN = RunModel()


@runtime_checkable
class PlanningPolicy(Protocol):
    """A policy that sees the timing model and may choose the discipline too.

    The simulator calls ``plan`` instead of ``routes`` when a policy has it.
    ``intra_options`` are the disciplines it may pick from (one when the user
    fixed ``--intra``); ``active_chunks`` is k. A policy whose class sets
    ``chooses_intra = True`` is offered every discipline when the user gives
    none (``simulate(..., intra=None)``, ``themis simulate`` without ``--intra``).
    """

    name: str

    def plan(self, collective: Collective, network: Network, timing: Timing,
             intra_options: Sequence[str], active_chunks: int = 1,
             run: RunModel = PLAIN_RUN) -> PolicyChoice:
        """Routes (and possibly a discipline or plan shape) for ``collective``, scored
        as ``run`` applies them."""
        ...


def choose(policy: InterPolicy, collective: Collective, network: Network, timing: Timing,
           intra_options: Sequence[str], active_chunks: int = 1,
           run: RunModel = PLAIN_RUN) -> PolicyChoice:
    """``policy``'s :class:`PolicyChoice`: its ``plan`` if it has one, else its routes.

    ``run`` (how the run applies the routes) is passed on when it is not the plain run."""
    plan = getattr(policy, "plan", None)
    if plan is not None:
        if run == PLAIN_RUN:
            return plan(collective, network, timing, tuple(intra_options), active_chunks)
        return plan(collective, network, timing, tuple(intra_options), active_chunks, run=run)
    return PolicyChoice(policy.routes(collective, network), None, policy.name)


PolicyFactory = Callable[..., InterPolicy]
_POLICIES: dict[str, PolicyFactory] = {}


def register_policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory under ``name`` (used by :func:`make_policy`)."""

    def deco(factory: PolicyFactory) -> PolicyFactory:
        load_plugins("policy", name, named_only=True)  # a bundled one first, then this
        _POLICIES[name] = factory
        return factory

    return deco


#: The bundled policies in the order every list of them follows (the solvers' default
#: hints, compare's rows), whichever package registers them (the planners register
#: from :mod:`themis.planning`); other registered names follow in registration order.
BUNDLED_ORDER = ("baseline", "fixed", "themis", "guarded", "lb-mix", "portfolio", "round-robin")


def policy_names() -> list[str]:
    """Registered policy names (``fixed`` needs a route: give the route itself), the
    plug-ins imported on first need (:mod:`themis.plugins`) included."""
    load_plugins("policy")
    rank = {name: i for i, name in enumerate(BUNDLED_ORDER)}
    return sorted(_POLICIES, key=lambda n: rank.get(n, len(rank)))


def is_route(name: str) -> bool:
    """Whether ``name`` is a fixed route such as ``"2,0,1"`` or ``"0,1;1,0"``."""
    s = str(name).strip()
    return bool(s) and all(ch.isdigit() or ch in ",; " for ch in s) and any(
        ch.isdigit() for ch in s)


def canonical_policy(name: str) -> str:
    """The registered name for a spelling, or the normalized route text for a route.

    Raises :class:`InputError` (field ``policy``) for anything else.
    """
    from topologies.system import INTER_ALIASES, unmodelled_scheduling

    s = str(name).strip()
    if is_route(s):
        return ";".join(part.replace(" ", "") for part in s.split(";"))
    why = unmodelled_scheduling(s, inter=True)
    if why:
        raise InputError(why, "policy", name)
    key = INTER_ALIASES.get(s.lower(), s.lower())
    if key not in _POLICIES and s not in _POLICIES:
        load_plugins("policy", key)  # a plug-in not imported yet may register it
    if key not in _POLICIES and s in _POLICIES:
        key = s
    if key not in _POLICIES:
        raise InputError("unknown policy (expected one of "
                         f"{', '.join(n for n in policy_names() if n != 'fixed')}, or a route like "
                         "2,0,1)", "policy", name)
    return key


def make_policy(name: str | InterPolicy, **options: object) -> InterPolicy:
    """A policy by name or fixed route (see the module docstring).

    A policy object passes through unchanged.
    """
    if not isinstance(name, str):
        return name
    key = canonical_policy(name)
    if is_route(key):
        if "fixed" not in _POLICIES:
            load_plugins("policy", "fixed")
        return _POLICIES["fixed"](key, **options)
    return _POLICIES[key](**options)
