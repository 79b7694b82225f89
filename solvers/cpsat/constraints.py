"""CP-SAT constraints: chains, one stage at a time per dimension, symmetry breaking.

- One route (and, free variant, one AG order) per chunk; route literals
  enforce the chain of their route (``only_enforce_if``); every AG stage
  starts after all the chunk's RS stages.
- One ``no_overlap`` per dimension over all its intervals. Redundant but
  helpful: a chunk's RS intervals do not overlap each other (whatever the
  route), nor do its AG intervals; a chunk's whole chain fits before the
  makespan.
- Symmetry: chunks of equal size are interchangeable, so their RS stages on
  one dimension (the first active one) run in chunk order; time reversal maps
  a schedule onto one with the same makespan, swapping the idle time before
  and after the stages of that dimension: head + last <= makespan.
- Optionally (the coarse phase), LB3's route counts per chunk class.
"""

from __future__ import annotations

from solvers.bounds import RouteCounts
from solvers.common import ProblemData
from solvers.cpsat.variables import Variables


def add_chains(m, data: ProblemData, v: Variables) -> None:
    """Route order of RS and AG stages, AG after RS, chain ends before the makespan."""
    dims = data.dims
    for c in range(data.nchunks):
        m.add_exactly_one(v.x[c])
        if data.free:
            m.add_exactly_one(v.y[c])
        for r, perm in enumerate(data.perms):
            for a, b in zip(perm, perm[1:], strict=False):
                m.add(v.rs[c, a].end <= v.rs[c, b].start).only_enforce_if(v.x[c][r])
        for q, perm in enumerate(data.ag_perms):
            for a, b in zip(perm, perm[1:], strict=False):
                m.add(v.ag[c, a].end <= v.ag[c, b].start).only_enforce_if(v.y[c][q])
        done = v.done[c]
        for d in dims:
            m.add(done >= v.rs[c, d].end)
            m.add(v.ag[c, d].start >= done)
            m.add(v.makespan >= v.ag[c, d].end)
        m.add(done >= sum(v.rs[c, d].size for d in dims))
        m.add(v.makespan >= done + sum(v.ag[c, d].size for d in dims))
        if len(dims) > 1:
            m.add_no_overlap([v.rs[c, d].interval for d in dims])
            m.add_no_overlap([v.ag[c, d].interval for d in dims])


def add_resources(m, data: ProblemData, v: Variables) -> None:
    """Each dimension runs one stage at a time."""
    for d in data.dims:
        m.add_no_overlap([v.rs[c, d].interval for c in range(data.nchunks)]
                         + [v.ag[c, d].interval for c in range(data.nchunks)])


def add_route_counts(m, data: ProblemData, v: Variables, counts: RouteCounts) -> None:
    """Exactly ``counts`` chunks of each class per route (a heuristic restriction)."""
    nch = data.nchunks
    for (k, r), cnt in counts.rs.items():
        m.add(sum(v.x[c][r] for c in range(nch) if data.class_of[c] == k) == cnt)
    if data.free:
        for (k, q), cnt in counts.ag.items():
            m.add(sum(v.y[c][q] for c in range(nch) if data.class_of[c] == k) == cnt)


def add_symmetry(m, data: ProblemData, v: Variables) -> None:
    """Chunk-order and mirror symmetry breaking on the first dimension."""
    nch, sym = data.nchunks, data.dims[0]
    for a in range(nch):
        for b in range(a + 1, nch):
            if data.class_of[a] == data.class_of[b]:
                m.add(v.rs[a, sym].end <= v.rs[b, sym].start)
                break
    head = m.new_int_var(0, v.horizon, "head")
    last = m.new_int_var(0, v.horizon, "last")
    m.add_min_equality(head, [v.rs[c, sym].start for c in range(nch)])
    m.add_max_equality(last, [v.ag[c, sym].end for c in range(nch)])
    m.add(head + last <= v.makespan)
    v.extra["head"], v.extra["last"] = head, last
