"""The training engine's interface: a :class:`~themis.program.Program` run on the engine's clock.

:class:`Execution` starts every node when its dependencies have ended (in node
id order, depth first, so a thread's nodes run in the order its compile wrote
them): a compute or delay node ends after its ``duration_ns`` (a 0 ns node at
once), a collective node is handed to ``issue_fn`` (the simulator, the bound's
replay or the exact model's replay), which calls :meth:`Execution.collective_done`
at its last stage's end; it ends ``finish_delay_ns`` later. A pass ends when a
``pass_end`` node starts. The run ends when every non-collective node has ended
and every collective has finished.

Statistics are kept per ``(layer, phase)`` key of the nodes, as ASTRA-sim 1.0's
``Layer`` keeps them (workloads.md §3, §5): compute, comm (issue to finish) and
exposed time. A collective is exposed from its issue when it is its key's only
outstanding blocking collective; otherwise from when a node started waiting for
it (a non-blocking dependency still running when the node's other dependencies
have ended). A node waiting on collectives of several keys waits on them in
dependency order, as a loop waits on one slot after another. The wait for the
collectives still running after the last node ends counts on ``end_wait``'s key
(ASTRA-sim's ``check_for_sim_end``: layer 0's weight gradient).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from themis.program import Node, NodeKind, Program
from themis.training.config import CollectiveRecord, LayerStats, Phase

#: A statistics key: (layer, phase).
Key = tuple[int, str]


@dataclass
class _Slot:
    """One statistics key: ASTRA-sim's ``*_datasets`` and waiting list of one layer phase."""

    outstanding: list[int] = field(default_factory=list)
    blocking: bool = False
    started_waiting: list[float] = field(default_factory=list)
    comm_ns: float = 0.0
    exposed_ns: float = 0.0
    compute_ns: float = 0.0


class Execution:
    """Runs a program on ``engine`` (see the module docstring).

    ``issue_fn(execution, node)`` issues a collective node and returns its
    :class:`CollectiveRecord` (``None``: nothing was issued; the node ends at once)."""

    def __init__(self, program: Program, engine,
                 issue_fn: Callable[[Execution, Node], CollectiveRecord | None],
                 end_wait: Key = (0, str(Phase.WG))) -> None:
        self.program, self.engine = program, engine
        self._issue_fn = issue_fn
        self.end_wait = end_wait
        nodes = program.nodes
        self._left = [len(set(n.deps)) for n in nodes]
        self._ended = [False] * len(nodes)
        self._unstarted = len(nodes)
        self._thread_left = sum(n.kind is not NodeKind.COLLECTIVE for n in nodes)
        #: Nodes whose non-collective dependencies ended, waiting on collectives: the
        #: key they wait on now.
        self._waiting: dict[int, Key | None] = {}
        self.slots: dict[Key, _Slot] = {}
        self.issued: dict[int, int] = {}
        self.records: list[CollectiveRecord] = []
        self.pass_end_ns: list[float] = []
        self.passes_done = 0
        self.compute: list[tuple[float, float, int, str]] = []
        self.compute_total = 0
        self.injected = 0
        self.finished = 0
        self.waiting_for_end = False
        self.end_ns: float | None = None

    def slot(self, key: Key) -> _Slot:
        """The statistics of ``key``."""
        s = self.slots.get(key)
        if s is None:
            s = self.slots[key] = _Slot()
        return s

    # -- driving -------------------------------------------------------------------
    def run(self) -> None:
        """Run the program from time 0 to its end."""
        self.engine.at(0.0, self._begin)
        self.engine.run()

    def _begin(self) -> None:
        for n in [n for n in self.program.nodes if not n.deps]:  # roots, listed first
            self._start(n)
        self._check_end()

    def _start(self, node: Node) -> None:
        self._unstarted -= 1
        self._waiting.pop(node.id, None)
        now = self.engine.now
        if node.pass_end:
            self.pass_end_ns.append(now)
            self.passes_done += 1
        if node.kind is NodeKind.COLLECTIVE:
            slot = self.slot((node.layer, node.phase))
            slot.blocking = node.blocking
            rec = self._issue_fn(self, node)
            if rec is None:
                self._end(node)
                return
            self.issued[node.layer] = self.issued.get(node.layer, 0) + 1
            self.injected += 1
            rec.blocking = node.blocking
            rec.pass_index = self.passes_done
            self.records.append(rec)
            slot.outstanding.append(node.id)
            return
        ns = node.duration_ns
        if node.kind is NodeKind.COMPUTE and ns > 0:
            self.slot((node.layer, node.phase)).compute_ns += ns
            self.compute_total += ns
            self.compute.append((now, now + ns, node.layer, node.phase))
        if ns > 0:
            self.engine.at(now + ns, lambda: self._timed_end(node))
        else:
            self._end(node)

    def _timed_end(self, node: Node) -> None:
        self._end(node)
        self._check_end()

    def _end(self, node: Node) -> None:
        """``node`` ended now: start the users it was the last dependency of."""
        self._ended[node.id] = True
        if node.kind is not NodeKind.COLLECTIVE:
            self._thread_left -= 1
        for u in self.program.users(node.id):
            self._left[u] -= 1
            if self._left[u] == 0:
                self._start(self.program.nodes[u])
            elif node.kind is not NodeKind.COLLECTIVE and u not in self._waiting \
                    and self._only_collectives_left(u):
                self._waiting[u] = None
                self._note_wait(u)

    def _only_collectives_left(self, u: int) -> bool:
        nodes = self.program.nodes
        return all(self._ended[d] or nodes[d].kind is NodeKind.COLLECTIVE
                   for d in nodes[u].deps)

    def _note_wait(self, u: int) -> None:
        """Node ``u`` waits on its first key with a running non-blocking collective."""
        nodes = self.program.nodes
        for d in nodes[u].deps:
            dn = nodes[d]
            if self._ended[d] or dn.kind is not NodeKind.COLLECTIVE or dn.blocking:
                continue
            key = (dn.layer, dn.phase)
            self._waiting[u] = key
            self._note(key)
            return
        self._waiting[u] = None

    def _note(self, key: Key) -> None:
        """``is_*_comm_finished_blocking``: note when the wait started."""
        slot = self.slot(key)
        if slot.outstanding and not slot.started_waiting:
            slot.started_waiting.append(self.engine.now)

    def _check_end(self) -> None:
        """Every node started and every non-collective node ended: the end, or the wait
        for the collectives still running."""
        if self.end_ns is not None or self.waiting_for_end or self._thread_left \
                or self._unstarted:
            return
        if self.finished != self.injected:
            self.waiting_for_end = True
            self._note(self.end_wait)
            return
        self.end_ns = self.engine.now

    # -- collectives ending --------------------------------------------------------
    def collective_done(self, rec: CollectiveRecord, node: Node, t: float) -> None:
        """The last chunk's last stage ended at ``t``: finished after the finish delay."""
        rec.end_ns = t

        def after() -> None:
            now = self.engine.now
            rec.finished_ns = now
            key = (node.layer, node.phase)
            slot = self.slot(key)
            slot.comm_ns += now - rec.issue_ns
            if len(slot.outstanding) == 1 and slot.blocking:
                slot.exposed_ns += now - rec.issue_ns
            elif slot.started_waiting:
                slot.exposed_ns += now - slot.started_waiting.pop(0)
            slot.outstanding.remove(node.id)
            self.finished += 1
            self._end(node)
            for u, waits_on in list(self._waiting.items()):
                if waits_on == key:  # waiting still, on this key or the next
                    if slot.outstanding:
                        self._note(key)
                    else:
                        self._note_wait(u)
            if self.waiting_for_end and self.finished == self.injected:
                self.end_ns = now
            self._check_end()

        self.engine.at(t + node.finish_delay_ns, after)

    def layer_stats(self, names: list[str]) -> list[LayerStats]:
        """Per-layer figures as ASTRA-sim prints them (layers named ``names``)."""
        out = []
        for i, name in enumerate(names):
            s = {ph: self.slots.get((i, str(ph)), _Slot()) for ph in Phase}
            out.append(LayerStats(
                name,
                int(s[Phase.FWD].compute_ns), int(s[Phase.IG].compute_ns),
                int(s[Phase.WG].compute_ns),
                int(s[Phase.FWD].comm_ns), int(s[Phase.IG].comm_ns), int(s[Phase.WG].comm_ns),
                int(s[Phase.FWD].exposed_ns), int(s[Phase.IG].exposed_ns),
                int(s[Phase.WG].exposed_ns), self.issued.get(i, 0)))
        return out
