"""A training program as a trace: delays, issues and waits, in the order the one NPU runs them.

A compiled 1.0 workload (:mod:`themis.program`, :mod:`themis.training.compile10`)
is one sequential thread whose control flow does not depend on time: it
computes, issues collectives and waits for some of them (a node's collective
dependencies). :func:`program_trace` writes that sequence; the iteration model
then needs no simulator. The end waits for every collective: max-plus, as in
the bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from themis.program import NodeKind, Program
from themis.training.config import HIGHEST_PRIORITY, Phase
from topologies.errors import InputError


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


def program_trace(program: Program) -> Trace:
    """The trace of a one-thread training ``program`` (:mod:`themis.program`): each node's
    collective dependencies a wait before it, compute and delay nodes delays, collective
    nodes issues (collective ``index`` in node order)."""
    index: dict[int, int] = {}
    trace = Trace()
    prev: int | None = None
    for node in program.nodes:
        if node.kind is not NodeKind.COLLECTIVE:
            if prev is not None and prev not in node.deps:
                raise InputError(f"{program.name or 'program'}: the exact iteration model "
                                 f"takes one thread (node {node.id} does not follow node "
                                 f"{prev})", f"node {node.id} deps", list(node.deps))
            prev = node.id
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
