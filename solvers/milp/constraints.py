"""MILP constraints: route chains (big-M), AG after RS, disjunctions per dimension.

Route r's chain holds when ``x[c, r] = 1`` (big-M); every AG stage starts
after the chunk's RS stages (no big-M). Per dimension, every pair of stages
of different chunks gets an order binary and two big-M disjunctions. Chunks
of equal size run their RS stages on the first dimension in chunk order
(symmetry breaking, as in CP-SAT). M is the upper bound (the hint's
makespan) plus a margin, so a relaxed row never binds.
"""

from __future__ import annotations

from solvers.common import ProblemData
from solvers.milp.variables import MilpVars


def order_pairs(data: ProblemData) -> int:
    """How many order binaries the model has (at most; before symmetry breaking)."""
    stages = 2 * data.nchunks
    return len(data.dims) * (stages * (stages - 1) // 2 - data.nchunks)


def add_chains(prob, data: ProblemData, v: MilpVars, unit: float, big: float) -> None:
    """Chains of the chosen route and AG order; the makespan after every stage."""
    import pulp

    nr, nq = len(data.perms), len(data.ag_perms)
    for c in range(data.nchunks):
        k = data.class_of[c]
        prob += pulp.lpSum(v.x[c, r] for r in range(nr)) == 1, f"route_{c}"
        if data.free:
            prob += pulp.lpSum(v.y[c, q] for q in range(nq)) == 1, f"agorder_{c}"
        for r, perm in enumerate(data.perms):
            for a, b in zip(perm, perm[1:], strict=False):
                prob += (v.s[c, "RS", b] >= v.s[c, "RS", a] + data.rs[k][r][a] / unit
                         - big * (1 - v.x[c, r]), f"rs_{c}_{r}_{a}")
        for q, perm in enumerate(data.ag_perms):
            for a, b in zip(perm, perm[1:], strict=False):
                prob += (v.s[c, "AG", b] >= v.s[c, "AG", a] + data.ag[k][q][a] / unit
                         - big * (1 - v.y[c, q]), f"ag_{c}_{q}_{a}")
        for d in data.dims:
            prob += v.done[c] >= v.s[c, "RS", d] + v.dur[c, "RS", d], f"done_{c}_{d}"
            prob += v.s[c, "AG", d] >= v.done[c], f"agafter_{c}_{d}"
            prob += v.T >= v.s[c, "AG", d] + v.dur[c, "AG", d], f"mk_{c}_{d}"


def add_disjunctions(prob, data: ProblemData, v: MilpVars, big: float,
                     symmetry: bool) -> None:
    """One stage at a time per dimension (order binaries), and the chunk-order symmetry."""
    import pulp

    sym_dim = data.dims[0]
    for d in data.dims:
        keys = [(c, ph) for c in range(data.nchunks) for ph in ("RS", "AG")]
        for i, (ca, pa) in enumerate(keys):
            for cb, pb in keys[i + 1:]:
                if ca == cb:
                    continue
                a, b = (ca, pa, d), (cb, pb, d)
                if symmetry and d == sym_dim and pa == pb == "RS" \
                        and data.class_of[ca] == data.class_of[cb]:
                    prob += v.s[b] >= v.s[a] + v.dur[a], f"sym_{ca}_{cb}"
                    continue
                o = prob.add_variable(f"o_{ca}{pa}_{cb}{pb}_{d}", 0, 1, pulp.LpBinary)
                v.order[a, b] = o
                prob += v.s[b] >= v.s[a] + v.dur[a] - big * (1 - o), f"ab_{ca}{pa}_{cb}{pb}_{d}"
                prob += v.s[a] >= v.s[b] + v.dur[b] - big * o, f"ba_{ca}{pa}_{cb}{pb}_{d}"
