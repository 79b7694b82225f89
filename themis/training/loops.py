"""The training loop of every parallelism keyword (workloads.md §3, ASTRA-sim's Workload.cc).

Each loop is a generator over a :class:`LoopHost`: it yields compute times
and the one extra cycle of every state change, and waits with
``yield from run.wait(...)``. Collectives with no dimension left (or of type
NONE) are not issued; a blocking caller then goes on at once. The one host is
:mod:`themis.training.compile10`, which unrolls a loop into a
:class:`~themis.program.Program`, the training engine's interface.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Protocol

from themis.training.config import Phase
from topologies.errors import InputError
from topologies.workload import CommType, Parallelism, Workload

F, G, W = Phase.FWD, Phase.IG, Phase.WG

#: A loop: yields delays in ns (compute, the one cycle of a state change) or ``None``
#: to park until a collective it waits for ends.
Loop = Generator[int | None, None, None]


class LoopHost(Protocol):
    """What a loop calls: ASTRA-sim 1.0's ``Workload`` / ``Layer`` operations."""

    def compute_step(self, layer: int, phase: Phase, ns: int) -> int:
        """Compute of layer ``layer``'s ``phase``; returns the ns the loop yields."""
        ...

    def issue(self, layer: int, phase: Phase, blocking: bool, highest: bool = False) -> bool:
        """Issue the layer phase's collective; whether one was issued."""
        ...

    def wait(self, layer: int, phase: Phase) -> Loop:
        """Wait for the layer phase's non-blocking collectives."""
        ...

    def wait_blocking(self, layer: int, phase: Phase) -> Loop:
        """Wait for the blocking collective just issued."""
        ...

    def pass_end(self) -> None:
        """A pass ends now."""
        ...

    def finish(self) -> Loop:
        """The end: every collective must finish."""
        ...



def _blocking(run: LoopHost, i: int, phase: Phase) -> Loop:
    if run.issue(i, phase, blocking=True):
        yield from run.wait_blocking(i, phase)


def _forward(run: LoopHost, wl: Workload, i: int) -> Loop:
    """Wait for last pass's wg(i), compute, blocking forward collective, +1."""
    yield from run.wait(i, W)
    yield run.compute_step(i, F, wl.layers[i].fwd_compute_ns)
    yield from _blocking(run, i, F)
    yield 1


def data_loop(run: LoopHost, wl: Workload, passes: int) -> Loop:
    """DATA: no fwd / ig collectives; WG issues non-blocking; no IG(0)."""
    n = len(wl.layers)
    for _ in range(passes):
        for i in range(n):
            yield from run.wait(i, W)
            yield run.compute_step(i, F, wl.layers[i].fwd_compute_ns)
            yield 1
        for i in reversed(range(n)):
            yield run.compute_step(i, W, wl.layers[i].wg_compute_ns)
            run.issue(i, W, blocking=False)
            if i == 0:
                run.pass_end()
            yield 1
            if i > 0:
                yield run.compute_step(i, G, wl.layers[i].ig_compute_ns)
                yield 1
    yield from run.finish()


def transformer_loop(run: LoopHost, wl: Workload, passes: int) -> Loop:
    """HYBRID_TRANSFORMER(_FWD_IN_BCKWD): blocking fwd and ig, non-blocking wg."""
    n = len(wl.layers)
    recompute = wl.parallelism is Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD
    checkpoints = set(wl.checkpoints)
    initiates = set(wl.checkpoint_initiates)
    for _ in range(passes):
        for i in range(n):
            yield from _forward(run, wl, i)
        for i in reversed(range(n)):
            if recompute and i in initiates:
                j = i
                while j >= 0 and j not in checkpoints:
                    j -= 1
                if j < 0:
                    raise InputError(f"layer {i} starts a recompute but no checkpoint is at "
                                     "or before it", "checkpoints", sorted(checkpoints))
                yield 1
                while True:
                    yield from _forward(run, wl, j)
                    j += 1
                    if j >= n:
                        raise InputError(f"the recompute from checkpoint layer {i} runs past "
                                         "the last layer", "checkpoint_initiates",
                                         sorted(initiates))
                    if j in initiates:
                        break
                if j != i:  # ASTRA-sim goes on with IG of the layer it stopped at
                    raise InputError(f"the recompute for layer {i} stops at layer {j}, which "
                                     "starts a recompute itself", "checkpoint_initiates",
                                     sorted(initiates))
            yield run.compute_step(i, G, wl.layers[i].ig_compute_ns)
            yield from _blocking(run, i, G)
            yield 1
            yield from _weight_gradient(run, wl, i, issue=True)
    yield from run.finish()


def _weight_gradient(run: LoopHost, wl: Workload, i: int, issue: bool) -> Loop:
    """WG(i) after IG(i): compute, issue the weight-gradient collective (non-blocking)
    when ``issue``, wait for ig(i), +1; layer 0 ends the pass."""
    yield run.compute_step(i, W, wl.layers[i].wg_compute_ns)
    if issue:
        run.issue(i, W, blocking=False)
    yield from run.wait(i, G)
    if i == 0:
        run.pass_end()
    yield 1


def model_loop(run: LoopHost, wl: Workload, passes: int) -> Loop:
    """MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_CUSTOMIZED.

    Forward: blocking fwd collectives. Backward IG(L-1), WG(L-1), IG(L-2)...:
    IG issues its collective non-blocking (not for layer 0); WG issues the wg
    collective (not in MODEL) and waits for ig(i).
    """
    n = len(wl.layers)
    wg_comm = wl.parallelism is not Parallelism.MODEL
    for _ in range(passes):
        for i in range(n):
            yield from _forward(run, wl, i)
        for i in reversed(range(n)):
            yield run.compute_step(i, G, wl.layers[i].ig_compute_ns)
            if i > 0:
                run.issue(i, G, blocking=False)
            yield 1
            yield from _weight_gradient(run, wl, i, issue=wg_comm)
    yield from run.finish()


def dlrm_loop(run: LoopHost, wl: Workload, passes: int) -> Loop:
    """HYBRID_DLRM(_ENHANCED): all-to-all forward at HIGHEST, DATA-like backward."""
    n = len(wl.layers)
    bottom = wl.dlrm_last_bottom_layer if wl.dlrm_last_bottom_layer is not None else -1
    enhanced = wl.parallelism is Parallelism.HYBRID_DLRM_ENHANCED
    for _ in range(passes):
        for i in range(n):
            yield from run.wait(i, W)
            yield run.compute_step(i, F, wl.layers[i].fwd_compute_ns)
            if wl.layers[i].fwd_type is CommType.ALLTOALL:
                run.issue(i, F, blocking=False, highest=True)
            elif i == bottom:
                yield from run.wait(0, F)
            yield 1
        for i in reversed(range(n)):
            yield run.compute_step(i, W, wl.layers[i].wg_compute_ns)
            run.issue(i, W, blocking=False)
            if not enhanced:
                yield from run.wait(i, G)
            if i == 0:
                run.pass_end()
            yield 1
            if i > 0:
                yield run.compute_step(i, G, wl.layers[i].ig_compute_ns)
                if i == bottom + 1:
                    run.issue(0, G, blocking=False, highest=True)
                yield 1
    yield from run.finish()


def micro_loop(run: LoopHost, wl: Workload, passes: int) -> Loop:
    """MICRO: layer 0's wg collective, ``passes`` times at t = 0; no compute."""
    for _ in range(passes):
        run.issue(0, W, blocking=False)
    yield from run.finish()


def inference_loop(run: LoopHost, wl: Workload, passes: int) -> Loop:
    """DISTRIBUTED_INFERENCE: the forward loop, repeated (no pass line is printed;
    the pass end recorded here is the last forward step's tick)."""
    n = len(wl.layers)
    for _ in range(passes):
        for i in range(n):
            yield from run.wait(i, W)
            yield run.compute_step(i, F, wl.layers[i].fwd_compute_ns)
            yield from _blocking(run, i, F)
            if i == n - 1:
                run.pass_end()
            yield 1
    yield from run.finish()


LOOPS = {
    Parallelism.DATA: data_loop,
    Parallelism.HYBRID_TRANSFORMER: transformer_loop,
    Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD: transformer_loop,
    Parallelism.MODEL: model_loop,
    Parallelism.HYBRID_DATA_MODEL: model_loop,
    Parallelism.HYBRID_MODEL_DATA: model_loop,
    Parallelism.HYBRID_CUSTOMIZED: model_loop,
    Parallelism.HYBRID_DLRM: dlrm_loop,
    Parallelism.HYBRID_DLRM_ENHANCED: dlrm_loop,
    Parallelism.MICRO: micro_loop,
    Parallelism.DISTRIBUTED_INFERENCE: inference_loop,
}
