"""ASTRA-sim 1.0 workload files compiled to a :class:`~themis.program.Program`.

The loop of the workload's parallelism keyword (:mod:`themis.training.loops`)
is unrolled over the passes by a recording stand-in for the simulator's
``Run``: each compute step becomes a compute node, each one-cycle state change
a delay node of 1 ns, each issued collective a collective node (kind, size,
logical dimension mask, ASTRA-sim's priority, blocking flag, the layer's update
time as its finish delay). Every thread node depends on the previous one; a wait
on a layer's slot becomes dependencies on the collectives issued to it since the
last wait. Collectives ASTRA-sim does not issue (NONE type, no dimension left)
are left out; their priority is taken as ASTRA-sim takes it.
"""

from __future__ import annotations

from themis.program import Node, NodeKind, Program
from themis.training.config import HIGHEST_PRIORITY, Phase, TrainingConfig
from themis.training.dims import dimension_mask
from themis.training.loops import LOOPS
from themis.training.planner import involved
from themis.training.shapes import KINDS, chunk_sizes, layer_comm_type
from topologies.errors import InputError
from topologies.network import Network
from topologies.workload import Workload


class _Compiler:
    """A :class:`~themis.training.loops.LoopHost` that emits nodes."""

    def __init__(self, wl: Workload, lnet: Network, b: int, cfg: TrainingConfig) -> None:
        self.wl, self.lnet, self.b, self.cfg = wl, lnet, b, cfg
        self.nodes: list[Node] = []
        self.prev: int | None = None
        self.waits: list[int] = []
        self.slots: dict[tuple[int, Phase], list[int]] = {}
        self.priority_counter = 0
        self.step = 1 if cfg.scheduling_policy == "LIFO" else -1
        self.pass_pending = False

    def _add(self, kind: NodeKind, **kw) -> int:
        deps = set(self.waits)
        if self.prev is not None:
            deps.add(self.prev)
        node = Node(len(self.nodes), kind, deps=tuple(sorted(deps)),
                    pass_end=self.pass_pending, **kw)
        self.pass_pending = False
        self.waits = []
        self.nodes.append(node)
        return node.id

    def delay(self, ns: int) -> None:
        """A one-cycle (or longer) state change."""
        self.prev = self._add(NodeKind.DELAY, duration_ns=int(ns), name="cycle")

    def compute_step(self, layer: int, phase: Phase, ns: int) -> int:
        """A compute node (none for 0 ns); returns 0 (the node holds the time)."""
        if ns > 0:
            self.prev = self._add(NodeKind.COMPUTE, duration_ns=int(ns), layer=layer,
                                  phase=str(phase),
                                  name=f"{self.wl.layers[layer].name}.{phase}")
        return 0

    def priority(self, highest: bool) -> int:
        """ASTRA's ``get_priority``."""
        if highest:
            return HIGHEST_PRIORITY
        p = self.priority_counter
        self.priority_counter += self.step
        return p

    def issue(self, layer: int, phase: Phase, blocking: bool, highest: bool = False) -> bool:
        """A collective node, if ASTRA-sim issues one."""
        wl = self.wl
        ly = wl.layers[layer]
        ctype = layer_comm_type(wl, layer, phase)
        if ctype is None:
            return False
        try:
            mask = dimension_mask(wl, layer, phase, self.lnet.ndims, self.b)
        except InputError as err:
            raise err.in_file(wl.file or wl.name) from None
        prio = self.priority(highest)
        if not involved(self.lnet, mask):
            return False
        size = getattr(ly, f"{phase}_size_bytes")
        chunk_sizes(size, self.cfg.chunks, self.cfg.run_kind,
                    f"{wl.file or wl.name}: layer {layer} ({ly.name}) {phase}")
        nid = self._add(NodeKind.COLLECTIVE, collective=KINDS[ctype], size_bytes=int(size),
                        mask=tuple(mask), priority=prio, blocking=blocking,
                        finish_delay_ns=int(ly.update_ns), layer=layer, phase=str(phase),
                        name=f"{ly.name}.{phase}.{KINDS[ctype]}")
        self.slots.setdefault((layer, phase), []).append(nid)
        return True

    def _wait(self, layer: int, phase: Phase):
        self.waits.extend(self.slots.pop((layer, phase), []))
        return
        yield  # a generator that never parks

    def wait(self, layer: int, phase: Phase):
        """Dependencies on the slot's collectives."""
        return self._wait(layer, phase)

    def wait_blocking(self, layer: int, phase: Phase):
        """Dependencies on the blocking collective just issued."""
        return self._wait(layer, phase)

    def pass_end(self) -> None:
        """The next node starts when the pass ends."""
        self.pass_pending = True

    def finish(self):
        """The end waits for every collective (the executor's rule)."""
        if self.pass_pending:
            self.delay(0)
        return
        yield


def compile_workload(wl: Workload, lnet: Network, b: int, cfg: TrainingConfig,
                     passes: int | None = None) -> Program:
    """The (scaled) workload ``wl``'s loop over ``passes`` (default ``cfg.passes``) on
    the logical network ``lnet`` with model-parallel split ``b``, as a program."""
    comp = _Compiler(wl, lnet, b, cfg)
    for step in LOOPS[wl.parallelism](comp, wl, cfg.passes if passes is None else passes):
        if step:
            comp.delay(step)
    return Program(tuple(comp.nodes), wl.name)
