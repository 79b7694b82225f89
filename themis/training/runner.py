"""The workload side of a run: layers' collectives, waits and statistics.

A loop (:mod:`themis.training.loops`) is a generator that yields a delay in ns
(compute, or the one cycle of a state change), or :data:`PARK` to wait for a
collective. :class:`Run` drives it on the engine's clock and keeps, per layer
and phase, what ASTRA-sim's ``Layer`` keeps: the outstanding collectives, the
barrier of the last issue, when the loop started waiting, comm and exposed
totals (workloads.md §3, §5).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from themis.training.config import HIGHEST_PRIORITY, CollectiveRecord, LayerStats, Phase
from topologies.workload import Workload

#: What a loop yields to wait until a collective it waits for calls it back.
PARK = None
Loop = Generator[int | None, None, None]


@dataclass
class _Slot:
    """One layer's fwd, ig or wg: ASTRA-sim's ``*_datasets`` and waiting list."""

    outstanding: list[int] = field(default_factory=list)
    blocking: bool = False
    started_waiting: list[float] = field(default_factory=list)
    comm_ns: float = 0.0
    exposed_ns: float = 0.0
    compute_ns: float = 0.0


class Run:
    """Drives a loop and answers its questions (see the module docstring)."""

    def __init__(self, n_layers: int, names: list[str], issue_fn: Callable, engine,
                 update_ns: list[int]) -> None:
        self.engine = engine
        self.names = names
        self.slots = {(i, ph): _Slot() for i in range(n_layers) for ph in Phase}
        self.issued = [0] * n_layers
        self.update_ns = update_ns
        self._issue_fn = issue_fn
        self.records: list[CollectiveRecord] = []
        self.pass_end_ns: list[float] = []
        self.passes_done = 0
        self.compute: list[tuple[float, float, int, str]] = []
        self.compute_total = 0
        self.injected = 0
        self.finished = 0
        self.waiting_for_end = False
        self.end_ns: float | None = None
        self.priority_counter = 0
        self._gen: Loop | None = None
        self._parked = False
        self._record_timeline = True

    @classmethod
    def for_workload(cls, wl: Workload, issue_fn: Callable, engine,
                     scheduling_policy: str) -> Run:
        """A run over ``wl``'s layers. Under ``LIFO`` each new collective gets a higher
        priority than the last, under ``FIFO`` a lower one (workloads.md §4)."""
        run = cls(len(wl.layers), [layer.name for layer in wl.layers], issue_fn, engine,
                  [layer.update_ns for layer in wl.layers])
        run._step = 1 if scheduling_policy == "LIFO" else -1
        return run

    # -- driving the loop ----------------------------------------------------------
    def start(self, gen: Loop) -> None:
        """Run ``gen`` from time 0."""
        self._gen = gen
        self.engine.at(0.0, self._resume)

    def _resume(self) -> None:
        self._parked = False
        gen = self._gen
        assert gen is not None
        while True:
            try:
                step = next(gen)
            except StopIteration:
                return
            if step is PARK:
                self._parked = True
                return
            if step > 0:
                self.engine.at(self.engine.now + step, self._resume)
                return

    def call(self) -> None:
        """ASTRA's ``workload->call``: resume the loop if it is waiting."""
        if self._parked:
            self._resume()

    # -- what a loop asks ----------------------------------------------------------
    def compute_step(self, layer: int, phase: Phase, ns: int) -> int:
        """Account ``ns`` of compute (returns it, for the loop to yield)."""
        if ns > 0:
            now = self.engine.now
            self.slots[(layer, phase)].compute_ns += ns
            self.compute_total += ns
            self.compute.append((now, now + ns, layer, str(phase)))
        return ns

    def priority(self, highest: bool) -> int:
        """ASTRA's ``get_priority``: LIFO counts up, FIFO down, HIGHEST is fixed."""
        if highest:
            return HIGHEST_PRIORITY
        p = self.priority_counter
        self.priority_counter += self._step
        return p

    def issue(self, layer: int, phase: Phase, blocking: bool, highest: bool = False) -> bool:
        """Issue layer ``layer``'s ``phase`` collective; whether one was started."""
        slot = self.slots[(layer, phase)]
        slot.blocking = blocking
        rec = self._issue_fn(self, layer, phase, highest)
        if rec is None:
            return False
        self.issued[layer] += 1
        self.injected += 1
        rec.blocking = blocking
        rec.pass_index = self.passes_done
        self.records.append(rec)
        slot.outstanding.append(rec.id)
        return True

    def finished_blocking(self, layer: int, phase: Phase) -> bool:
        """``is_*_comm_finished_blocking``: done, or note when the wait started."""
        slot = self.slots[(layer, phase)]
        if not slot.outstanding:
            return True
        if not slot.started_waiting:
            slot.started_waiting.append(self.engine.now)
        return False

    def wait(self, layer: int, phase: Phase) -> Loop:
        """Wait (non-blocking collective) until layer ``layer``'s ``phase`` is done."""
        while not self.finished_blocking(layer, phase):
            yield PARK

    def wait_blocking(self, layer: int, phase: Phase) -> Loop:
        """Wait for the blocking collective just issued (no waiting note)."""
        while self.slots[(layer, phase)].outstanding:
            yield PARK

    def pass_end(self) -> None:
        """``pass: k finished`` now."""
        self.pass_end_ns.append(self.engine.now)
        self.passes_done += 1

    def finish(self) -> Loop:
        """``check_for_sim_end``: wait for every collective; layer 0's wg notes the wait."""
        if self.finished != self.injected:
            self.waiting_for_end = True
            self.finished_blocking(0, Phase.WG)
            yield PARK
            return
        self.end_ns = self.engine.now

    # -- collectives ending --------------------------------------------------------
    def collective_done(self, rec: CollectiveRecord, layer: int, phase: Phase, t: float) -> None:
        """The last chunk's last stage ended at ``t``: finished after the update time."""
        rec.end_ns = t

        def after() -> None:
            now = self.engine.now
            rec.finished_ns = now
            slot = self.slots[(layer, phase)]
            slot.comm_ns += now - rec.issue_ns
            resume = False
            if len(slot.outstanding) == 1 and slot.blocking:
                slot.exposed_ns += now - rec.issue_ns
                resume = True
            elif slot.started_waiting:
                slot.exposed_ns += now - slot.started_waiting.pop(0)
                resume = True
            slot.outstanding.remove(rec.id)
            if resume:
                self.call()
            self.finished += 1
            if self.waiting_for_end and self.finished == self.injected:
                self.end_ns = now

        self.engine.at(t + self.update_ns[layer], after)

    def layer_stats(self) -> list[LayerStats]:
        """Per-layer figures as ASTRA-sim prints them."""
        out = []
        for i, name in enumerate(self.names):
            s = {ph: self.slots[(i, ph)] for ph in Phase}
            out.append(LayerStats(
                name,
                int(s[Phase.FWD].compute_ns), int(s[Phase.IG].compute_ns),
                int(s[Phase.WG].compute_ns),
                int(s[Phase.FWD].comm_ns), int(s[Phase.IG].comm_ns), int(s[Phase.WG].comm_ns),
                int(s[Phase.FWD].exposed_ns), int(s[Phase.IG].exposed_ns),
                int(s[Phase.WG].exposed_ns), self.issued[i]))
        return out

    _step = 1
