"""A training loop as a trace: delays, issues and waits, in the order the one NPU runs them.

The loop of every keyword (:mod:`themis.training.loops`) is one sequential
thread whose control flow does not depend on time: it computes, issues
collectives and waits for some of them. Driven by :class:`Recorder` instead of
the simulator's ``Run``, it yields that sequence; the iteration model then
needs no simulator. A wait on a layer's slot waits for every collective issued
to that slot so far (those already finished do not delay it), the end waits
for all: max-plus, as in the bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from themis.program import NodeKind, Program
from themis.training.config import HIGHEST_PRIORITY, Phase
from themis.training.loops import LOOPS
from topologies.workload import Workload


@dataclass(frozen=True)
class Issue:
    """Collective ``index`` (in issue order) of layer ``layer``'s ``phase``."""

    index: int
    layer: int
    phase: Phase
    highest: bool


@dataclass
class Trace:
    """``ops``: ``("delay", ns)``, ``("issue", Issue)``, ``("wait", [collective indices])``;
    the iteration ends when the thread is through and every collective finished."""

    ops: list[tuple[str, object]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


class Recorder:
    """The part of :class:`themis.training.runner.Run` a loop calls, recording a trace.

    ``issue_fn(layer, phase, highest)`` says whether a collective is issued (a
    NONE type or no dimension left issues none, as in the simulator).
    """

    def __init__(self, issue_fn) -> None:
        self.trace = Trace()
        self._issue_fn = issue_fn
        self._slots: dict[tuple[int, Phase], list[int]] = {}
        self.priority_counter = 0

    def compute_step(self, layer: int, phase: Phase, ns: int) -> int:
        """Compute is a delay (the loop yields it)."""
        return ns

    def priority(self, highest: bool) -> int:
        """Priorities do not matter to the model (no queue discipline)."""
        return 0

    def issue(self, layer: int, phase: Phase, blocking: bool, highest: bool = False) -> bool:
        """Record an issue if the collective exists."""
        if not self._issue_fn(self, layer, phase, highest):
            return False
        iss = Issue(len(self.trace.issues), layer, phase, highest)
        self.trace.issues.append(iss)
        self.trace.ops.append(("issue", iss))
        self._slots.setdefault((layer, phase), []).append(iss.index)
        return True

    def _wait(self, layer: int, phase: Phase):
        got = self._slots.get((layer, phase))
        if got:
            self.trace.ops.append(("wait", list(got)))
        return
        yield  # a generator that never parks

    def wait(self, layer: int, phase: Phase):
        """Wait for the slot's collectives."""
        return self._wait(layer, phase)

    def wait_blocking(self, layer: int, phase: Phase):
        """Wait for the blocking collective just issued."""
        return self._wait(layer, phase)

    def pass_end(self) -> None:
        """Pass ends are not modelled."""

    def finish(self):
        """The end waits for every collective (the model's makespan row)."""
        return
        yield


def record(wl: Workload, passes: int, issue_fn) -> Trace:
    """The trace of ``wl``'s loop over ``passes`` passes."""
    rec = Recorder(issue_fn)
    for step in LOOPS[wl.parallelism](rec, wl, passes):  # type: ignore[arg-type]
        if step:
            rec.trace.ops.append(("delay", step))
    return rec.trace


def program_trace(program: Program) -> Trace:
    """The trace of a one-thread training ``program`` (:mod:`themis.program`): each node's
    collective dependencies a wait before it, compute and delay nodes delays, collective
    nodes issues (collective ``index`` in node order)."""
    index: dict[int, int] = {}
    trace = Trace()
    for node in program.nodes:
        waits = [index[d] for d in node.deps if d in index]
        if waits:
            trace.ops.append(("wait", waits))
        if node.kind is NodeKind.COLLECTIVE:
            iss = Issue(len(trace.issues), node.layer, Phase(node.phase),
                        node.priority == HIGHEST_PRIORITY)
            index[node.id] = iss.index
            trace.issues.append(iss)
            trace.ops.append(("issue", iss))
        elif node.duration_ns:
            trace.ops.append(("delay", node.duration_ns))
    return trace
