"""Chakra traces as program graphs: each rank class of an ET run as a
:class:`~themis.program.Program`, what the exact iteration model solves.

:func:`et_programs` turns every rank class of a :func:`~themis.training.et_run.simulate_et`
run (made with ``bound=True``) into a program: a ``COMP_NODE`` a compute node of its
duration, a control node (metadata, a ``c10d`` node without ``comm_type``) a 0 ns delay, a
collective a collective node (its kind; its size as a program holds it, an all-gather's
output; its ``involved_dim`` as a mask or its flattened 2.x group), dependencies kept and
nodes renumbered in the run's order (a topological one). Beside the program, per
collective node: what the system-file runner runs for it
(:class:`~themis.training.et_bound.CollectiveModel`: chunks, dimensions, alternatives), or
a fixed time where no schedule changes it (a communicator group 2.x flattens to one ring,
or a collective of nothing), the class's iteration bound and the run's issue times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from themis.program import Node, NodeKind, Program
from themis.training.et_bound import CollectiveModel
from themis.training.et_run import ETResult, NodeRun
from topologies.chakra.trace import Trace
from topologies.errors import InputError
from topologies.network import Network

__all__ = ["ETProgram", "et_programs"]


@dataclass
class ETProgram:
    """One rank class of an ET run as a program (module docstring)."""

    ranks: list[int]
    program: Program
    #: Program node i is trace node ``trace_ids[i]``.
    trace_ids: tuple[int, ...]
    #: Per collective index (``program.collectives`` order): what the runner runs.
    models: dict[int, CollectiveModel] = field(default_factory=dict)
    #: Per collective index: a time no schedule changes (ns).
    fixed_ns: dict[int, int] = field(default_factory=dict)
    #: The class's iteration bound (every policy and discipline).
    bound_ns: int = 0
    #: The run's node issue times and the class's end (a schedule of the same semantics).
    issue_ns: dict[int, int] = field(default_factory=dict)
    end_ns: int = 0


def et_programs(traces: Mapping[int, Trace], network: Network, result: ETResult,
                files: Mapping[int, str] | None = None,
                groups: Mapping[str, list[int]] | None = None) -> list[ETProgram]:
    """Every rank class of ``result`` (a run of ``traces`` on ``network`` with
    ``bound=True``) as an :class:`ETProgram`."""
    timer = result.timer
    if timer is None or len(result.class_bounds_ns) != len(result.classes):
        raise ValueError("et_programs needs a simulate_et result made with bound=True")
    files = files or {r: f"rank {r}" for r in traces}
    groups = groups or {}
    out = []
    for (ranks, runs), bound in zip(result.classes, result.class_bounds_ns, strict=True):
        rank = ranks[0]
        out.append(_program(traces[rank], files[rank], network, timer, groups, rank, ranks,
                            runs, bound))
    return out


def _program(trace: Trace, file: str, network: Network, timer: Any,
             groups: Mapping[str, list[int]],
             rank: int, ranks: list[int], runs: list[NodeRun], bound: int) -> ETProgram:
    by_id = {n.id: n for n in trace.nodes}
    new = {run.id: i for i, run in enumerate(runs)}  # end order: dependencies first
    nodes: list[Node] = []
    models: dict[int, CollectiveModel] = {}
    fixed: dict[int, int] = {}
    ncoll = 0
    for i, run in enumerate(runs):
        node = by_id[run.id]
        deps = tuple(sorted({new[d] for d in node.deps}))
        kind, coll, size, mask, group = (run.kind, run.collective, run.size_bytes, run.mask,
                                         run.group)  # as the run classified the node
        name = node.name or f"node{node.id}"
        if kind == "compute":
            nodes.append(Node(i, NodeKind.COMPUTE, name, deps, run.end_ns - run.issue_ns))
            continue
        if kind != "collective":
            nodes.append(Node(i, NodeKind.DELAY, name, deps))
            continue
        members = tuple(groups[group]) if group is not None else None
        dims = mask or (True,) * network.ndims
        span = len(members) if members is not None else math.prod(
            d.npus for d, on in zip(network.dims, dims, strict=True) if on)
        model = None
        if members is not None:
            ns = timer.group_ns(node, coll, size, group, list(members), rank)
        else:
            model = timer.model(node, coll, size, mask)
            ns = timer.time_ns(node, coll, size, mask)
        if model is None and ns == 0:  # a collective of nothing: no time, no slot held
            nodes.append(Node(i, NodeKind.DELAY, name, deps))
            continue
        run_size = size or (timer.splits * network.npus)  # 2.x's NONE: splits x N bytes
        nodes.append(Node(i, NodeKind.COLLECTIVE, name, deps, collective=coll,
                          size_bytes=run_size * span if coll == "all-gather" else run_size,
                          mask=None if members is not None else tuple(dims), group=members,
                          rank=rank))
        if model is not None:
            models[ncoll] = model
        else:
            fixed[ncoll] = ns
        ncoll += 1
    try:
        program = Program(tuple(nodes), file)
    except InputError as err:  # pragma: no cover - the run's order is topological
        raise InputError(f"{file}: {err.reason}", err.field, err.value) from None
    issue = {new[run.id]: run.issue_ns for run in runs}
    return ETProgram(list(ranks), program, tuple(run.id for run in runs), models, fixed,
                     bound, issue, max((run.end_ns for run in runs), default=0))
