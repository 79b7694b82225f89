"""What a run means: one value, built once from the timing, the system file and the flags.

A :class:`RunKind` owns every rule that used to be recomputed from timing-name
strings: which variant of a policy runs (ASTRA-sim's own baseline, Themis and
round-robin under its timings), the all-reduce plan shape each policy gets, the
plan shapes the run can execute at all, the queue a discipline name runs as,
the chunking of a collective, the engine's tie order and event order, and what
a planning policy scores its candidates against (:meth:`RunKind.run_model`).
The timing's registry entry names its :class:`~themis.timing.base.Meaning`, so
a new timing brings its own meaning; this module is the only reader.

The simulator of one collective (:mod:`themis.simulator`, through the
system-file runners), the training simulator and its planner, the iteration
bound and the exact iteration model all ask the run kind, so the same
collective means the same run everywhere: ``train`` on a one-collective
workload ends exactly 1 ns (the update) after ``simulate``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from themis.collective import Collective
from themis.disciplines import canonical_intra
from themis.engine import Rules, resource_law
from themis.plans import PlanShape
from themis.policies.base import InterPolicy, RunModel, canonical_policy, is_route, make_policy
from themis.schedule import Chunking, astra_chunk_sizes
from themis.timing import Meaning, Timing, make_timing, timing_meaning
from topologies.network import Network
from topologies.system import INTER_ALIASES

#: The policies whose routes every planning policy is promised to be no slower than.
REFERENCE_POLICIES: tuple[str, ...] = ("baseline", "themis")



@dataclass(frozen=True)
class RunKind:
    """The meaning of a run (module docstring): timing name, its :class:`Meaning`, the
    system file's ``collective-optimization`` (``local_bw_aware``) and ``boost-mode``
    (kept only where the timing's simulator has it), and the endpoint delay."""

    timing: str
    meaning: Meaning
    local_bw_aware: bool = False
    boost_mode: bool = False
    endpoint_delay_ns: float = 0.0

    @classmethod
    def of(cls, timing: str, *, local_bw_aware: bool = False, boost_mode: bool = False,
           endpoint_delay_ns: float = 0.0) -> RunKind:
        """The run kind of timing ``timing`` with these system-file values."""
        meaning = timing_meaning(timing)
        return cls(timing, meaning, bool(local_bw_aware),
                   bool(boost_mode) and meaning.boost_mode, float(endpoint_delay_ns))

    # -- policies -------------------------------------------------------------------
    def own(self, policy: str) -> bool:
        """Whether ``policy`` runs as the reproduced simulator's own variant."""
        return canonical_policy(policy) in self.meaning.own_policies

    def policy(self, name: str | InterPolicy) -> InterPolicy:
        """The policy ``name`` as this run runs it (the simulator's own variant where
        it has one); a policy object passes through."""
        if not isinstance(name, str):
            return name
        if self.own(name):
            return make_policy(name, astra=True)
        return make_policy(name)

    def shape(self, policy: str) -> PlanShape:
        """The all-reduce plan shape a policy's routes get (the one rule).

        Under a timing whose shapes follow the system file (ASTRA-sim,
        ``Sys::generate_collective``): with ``collective-optimization: baseline``
        every all-reduce runs whole on each dimension of its route, whatever the
        policy; with ``localBWAware`` Themis runs RS then AG back, ASTRA-sim's other
        policies (baseline, round-robin) and a fixed route one AR on the route's last
        dimension, and the project's policies (not ASTRA-sim's) RS then AG as they do
        under every timing. Other timings: RS then AG."""
        if not self.meaning.system_shapes:
            return PlanShape.RS_AG
        if not self.local_bw_aware:
            return PlanShape.AR_PER_DIM
        if policy == "fixed" or is_route(policy):
            return PlanShape.LOCAL_BW_AWARE
        name = INTER_ALIASES.get(policy.strip().lower(), policy)
        if (
                name in self.meaning.own_policies and name != "themis"):
            return PlanShape.LOCAL_BW_AWARE
        return PlanShape.RS_AG

    def shapes(self) -> tuple[PlanShape, ...]:
        """Every all-reduce plan shape this run can execute (what a planner or the
        iteration bound may choose among)."""
        if not self.meaning.system_shapes:
            return (PlanShape.RS_AG,)
        if not self.local_bw_aware:
            return (PlanShape.AR_PER_DIM,)
        return (PlanShape.RS_AG, PlanShape.LOCAL_BW_AWARE)

    # -- queues and events ----------------------------------------------------------
    def queue(self, intra: str) -> str:
        """The discipline the run queues with when ``intra`` is named."""
        return dict(self.meaning.queues).get(intra, intra)

    def priority_queue(self, intra: str) -> str:
        """The discipline ``intra`` runs as when stages carry collective priorities
        (training): FIFO keeps ASTRA-sim's priority order, SCF under ASTRA-sim 1.0 its
        SmallestFirst list (:mod:`themis.disciplines.priority`); others as they are."""
        key = canonical_intra(intra)
        return dict(self.meaning.priority_queues).get(key, key)

    @property
    def tie_order(self) -> str:
        """The simulator's tie order: ``dim`` under boost mode, else ``start``."""
        return "dim" if self.boost_mode else "start"

    @property
    def astra_events(self) -> bool:
        """Whether the run follows ASTRA-sim 1.0's same-tick event order."""
        return self.meaning.event_order == "astra"

    def rules(self, law: str = "exclusive") -> Rules:
        """The engine's rules (:mod:`themis.engine.rules`) under the resource law ``law``
        (:func:`~themis.engine.resources.law_at`): ASTRA-sim 1.0's event order under its
        timing, else the simulator's; per-dimension loads are kept (what an online
        planner reads; they change no time)."""
        if self.astra_events:
            return Rules.astra(self.boost_mode)
        exact = resource_law(law).exact_durations
        return replace(Rules.simulator(self.boost_mode, exact), loads=True)

    # -- chunking -------------------------------------------------------------------
    def chunk_sizes(self, size_bytes: int, chunks: int) -> list[int]:
        """A collective's chunk sizes: ASTRA-sim's (each input cut into chunks of
        floor(S / C) while bytes remain) or the project's (C chunks plus a remainder)."""
        if self.meaning.input_chunking:
            return astra_chunk_sizes(size_bytes, chunks)
        c = size_bytes // chunks
        sizes = [c] * chunks
        if size_bytes - c * chunks:
            sizes.append(size_bytes - c * chunks)
        return sizes

    @property
    def chunking(self) -> Chunking:
        """The chunking rule of a :class:`~themis.schedule.Schedule` of a run that chunks
        each NPU's input (ASTRA-sim 1.0's, or the project's rule per NPU)."""
        return Chunking.ASTRA_INPUT if self.meaning.input_chunking else Chunking.PER_NPU

    # -- what planners score against ------------------------------------------------
    def make_timing(self, network: Network, algorithms: tuple[str, ...] | None = None
                    ) -> Timing:
        """This run's timing model on ``network`` with its endpoint delay."""
        return make_timing(self.timing, network, algorithms, self.endpoint_delay_ns)

    def run_model(self, collective: Collective, network: Network, policy: str) -> RunModel:
        """How this run applies a planning policy's routes (plan shape, tie order,
        queues) and what it would run for the reference policies (their routes and
        shapes), so a planner scores its candidates as the run applies them."""
        refs = tuple(
            (name, tuple(tuple(r) for r in self.policy(name).routes(collective, network)),
             self.shape(name))
            for name in REFERENCE_POLICIES)
        return RunModel(self.shape(policy), self.tie_order, self.meaning.queues, refs)
