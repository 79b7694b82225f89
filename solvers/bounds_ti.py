"""A time-indexed LP lower bound on the makespan (reverse AG orders; issue 26).

The model (one all-reduce, model.md §7, each chunk's RS along its route then AG
along the reversed route: 2D stages in a chain). Time is cut into slots of
``delta`` ns; each stage's duration becomes ``p' = floor(p / delta)`` slots
(exact integers of the exact tick where an exact grid exists and ``delta`` is a
multiple of it). Chunks of one class are identical, so the variables are
aggregated by (class k, route r): ``n[k,r]`` chunks take route r, and
``X[k,r,j,t]`` (fractional) is how many of them started stage j in slots
``0..t``. For a horizon of ``H`` slots the LP asks for:

- ``sum_r n[k,r] = class_count[k]``;
- ``X`` nondecreasing in t, 0 before the stage's earliest start (its chain
  prefix), ``n[k,r]`` from its latest start on (``H`` minus its chain suffix,
  itself included): every stage ends by ``H``;
- precedence: ``X[k,r,j+1,t] <= X[k,r,j,t - p'_j]`` (a chunk starts stage j+1
  only after it ended stage j);
- capacity: on each dimension and slot u, the stages running in u,
  ``sum (X[.,j,u] - X[.,j,u - p'_j])`` over the stages on that dimension, is
  at most 1.

The bound is ``delta * H*``, ``H*`` the smallest horizon whose LP is feasible
(feasibility is monotone in H), found by doubling then bisection from
``floor(LB / delta)`` (LB: ``solvers.bounds``'s best bound).

**Why it is valid.** Take any schedule (start times ``s``, real durations
``p``, makespan ``T``) and map every start to the slot ``floor(s / delta)``.
As ``floor(a + b) >= floor(a) + floor(b)``: if stage j of a chunk ends by
``s'`` (the start of its next stage), ``floor(s' / delta) >= floor(s / delta)
+ floor(p / delta)``, so precedences hold with ``p'``; two stages on one
dimension do not overlap (``s2 >= s1 + p1``), so their slot intervals
``[floor(s / delta), floor(s / delta) + p')`` do not either (capacity 1); and
every stage ends by ``floor(T / delta)`` slots. Counting the chunks of each
(class, route) gives a feasible point of the LP with ``H = floor(T / delta)``,
so ``H* <= T / delta`` and ``T >= delta * H*``. Off an exact grid the slot
durations are ``floor(p / delta - 1e-9)`` (a float ratio that should be an
integer may lose a slot; never gain one). An LP declared infeasible is the only
claim the value rests on; HiGHS's feasibility tolerances can only accept more
horizons (a lower value), never fewer.

**What it adds.** The LP couples the dimensions through time (pipeline fill
and drain), which LB3 prices only per dimension. It is a fluid relaxation,
though: a fraction of a chunk may start a stage while the rest starts later,
and identical chunks make the LP the same as a per-chunk one. Measured
(``docs/solvers.md``): it raises LB3 at a few chunks (D3 = Ring 4x4x4 C = 2:
to the optimum; C = 4: +3.8%) and not at C >= 8, where the fluid realizes
LB3's perfect pipeline (D3 C = 64: LB3's route mix is LP-feasible at LB3's
horizon on the exact grid).

Deterministic: HiGHS's interior point method on one thread, no wall-clock
dependence of the value unless the safety limit ``safety_s`` is hit (then
``status`` is ``wall`` and the value the largest horizon proven infeasible,
plus one). Models above ``max_columns`` columns are refused up front
(``InputError``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from solvers.bounds import bounds as route_bounds
from solvers.common import ProblemData
from solvers.cpsat.scaling import exact_grid
from themis.highs import new_highs
from themis.instance import Instance
from topologies.errors import InputError

__all__ = ["DEFAULT_SLOTS", "MAX_COLUMNS", "TimeIndexedBound", "time_indexed_bound"]

#: Default number of slots over the reference bound (``delta = LB / slots``).
DEFAULT_SLOTS = 200
#: Largest LP (columns) built; larger models are refused up front.
MAX_COLUMNS = 60_000
#: Wall-clock safety net per LP (s); hitting it labels the value ``wall``.
SAFETY_S = 600.0
#: Relative margin removed from the value (as the other bounds do).
SAFETY = 1e-9


@dataclass(frozen=True)
class TimeIndexedBound:
    """The time-indexed LP bound and how it was obtained.

    ``status``: ``raised`` (above ``reference_ns``), ``not-raised`` (the LP is
    feasible at the reference's horizon: the value is the reference rounded
    down to whole slots), ``wall`` (the safety limit stopped an LP: the value
    rests on the horizons proven infeasible so far), ``size`` (a longer horizon's
    LP would exceed ``max_columns``: likewise) or ``failed``.
    """

    value_ns: float
    status: str
    reference_ns: float
    delta_ns: float
    grid: str
    horizon_slots: int
    lps: int
    columns: int
    rows: int
    nonzeros: int

    def to_dict(self) -> dict:
        """JSON-ready dictionary."""
        return asdict(self)


@dataclass
class _Chains:
    """Per (class, route): the dimensions and slot durations of the 2D stages."""

    keys: list[tuple[int, int]]
    dims: list[list[int]]
    slots: list[list[int]]


def _chains(data: ProblemData, delta_ns: float, ticks: int | None) -> _Chains:
    """Stage slot durations: exact ticks // ``ticks`` on an exact grid, else floored."""
    grid = exact_grid(data) if ticks is not None else None
    keys, dims, slots = [], [], []
    for k in range(len(data.classes)):
        for r, perm in enumerate(data.perms):
            ds = list(perm) + list(data.ag_perms[r])
            n = len(perm)
            if grid is not None and ticks is not None:
                p = [grid.p_rs[k][r][d] // ticks if j < n else grid.p_ag[k][r][d] // ticks
                     for j, d in enumerate(ds)]
            else:
                p = [math.floor((data.rs[k][r][d] if j < n else data.ag[k][r][d])
                                / delta_ns - 1e-9) for j, d in enumerate(ds)]
            keys.append((k, r))
            dims.append(ds)
            slots.append([max(0, v) for v in p])
    return _Chains(keys, dims, slots)


def _columns(ch: _Chains, horizon: int) -> int:
    """Columns of the LP at ``horizon`` (counts plus cumulative starts)."""
    total = 0
    for p in ch.slots:
        if sum(p) > horizon:
            continue
        total += 1
        pre = 0
        for j in range(len(p)):
            total += max(0, horizon - sum(p[j:]) - pre)
            pre += p[j]
    return total


def _feasible(data: ProblemData, ch: _Chains, horizon: int,
              safety_s: float) -> tuple[str, int, int, int]:
    """Whether the LP with ``horizon`` slots is feasible: ``feasible``,
    ``infeasible`` or ``wall``/``failed``; and the LP's size."""
    import highspy
    import numpy as np

    lb: list[float] = []
    ub: list[float] = []
    r_lo: list[float] = []
    r_hi: list[float] = []
    r_idx: list[list[int]] = []
    r_val: list[list[float]] = []
    inf = highspy.kHighsInf

    def cols(count: int, hi: float) -> int:
        first = len(lb)
        lb.extend([0.0] * count)
        ub.extend([hi] * count)
        return first

    def row(idx: list[int], val: list[float], lo: float, hi: float) -> None:
        r_idx.append(idx)
        r_val.append(val)
        r_lo.append(lo)
        r_hi.append(hi)

    # per dimension: (earliest, latest, first column, n column, p') of each stage on it
    on_dim: dict[int, list[tuple[int, int, int, int, int]]] = {d: [] for d in data.dims}
    counts: dict[int, list[int]] = {k: [] for k in range(len(data.classes))}
    for (k, _r), ds, p in zip(ch.keys, ch.dims, ch.slots, strict=True):
        if sum(p) > horizon:
            continue
        cap = float(data.class_count[k])
        n = cols(1, cap)
        counts[k].append(n)
        stages = []
        pre = 0
        for j in range(len(p)):
            early, late = pre, horizon - sum(p[j:])
            first = cols(max(0, late - early), cap)
            for i in range(late - early - 1):
                row([first + i, first + i + 1], [1.0, -1.0], -inf, 0.0)
            if late > early:
                row([first + late - early - 1, n], [1.0, -1.0], -inf, 0.0)
            stages.append((early, late, first, n, p[j]))
            on_dim[ds[j]].append((early, late, first, n, p[j]))
            pre += p[j]
        for j in range(len(p) - 1):
            e1, l1, f1, _, _ = stages[j + 1]
            for t in range(e1, l1):
                row([f1 + t - e1, _x(stages[j], t - p[j])], [1.0, -1.0], -inf, 0.0)
    for k, cs in counts.items():
        row(cs, [1.0] * len(cs), data.class_count[k], data.class_count[k])
    for d in data.dims:
        for u in range(horizon):
            coefs: dict[int, float] = {}
            for st in on_dim[d]:
                if st[4] == 0:
                    continue
                for t, sign in ((u, 1.0), (u - st[4], -1.0)):
                    v = _x(st, t)
                    if v >= 0:
                        coefs[v] = coefs.get(v, 0.0) + sign
            coefs = {v: c for v, c in coefs.items() if c != 0.0}
            if coefs:
                row(list(coefs), list(coefs.values()), -inf, 1.0)
    h = new_highs()
    h.setOptionValue("threads", 1)
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("time_limit", float(safety_s))
    h.addVars(len(lb), np.array(lb), np.array(ub))
    nnz = sum(len(i) for i in r_idx)
    if r_idx:
        starts = np.cumsum([0] + [len(i) for i in r_idx[:-1]]).astype(np.int32)
        h.addRows(len(r_idx), np.array(r_lo), np.array(r_hi), nnz, starts,
                  np.concatenate([np.array(i, dtype=np.int32) for i in r_idx]),
                  np.concatenate([np.array(v, dtype=float) for v in r_val]))
    h.run()
    status = h.getModelStatus()
    S = highspy.HighsModelStatus
    verdict = {S.kOptimal: "feasible", S.kInfeasible: "infeasible",
               S.kTimeLimit: "wall"}.get(status, "failed")
    return verdict, len(lb), len(r_idx), nnz


def _x(stage: tuple[int, int, int, int, int], t: int) -> int:
    """Column of the cumulative starts of ``stage`` by slot ``t`` (-1: the constant 0)."""
    early, late, first, n, _ = stage
    if t < early:
        return -1
    if t >= late:
        return n
    return first + t - early


def time_indexed_bound(instance: Instance, slots: int = DEFAULT_SLOTS,
                       data: ProblemData | None = None, reference_ns: float | None = None,
                       max_columns: int = MAX_COLUMNS,
                       safety_s: float = SAFETY_S) -> TimeIndexedBound:
    """The time-indexed LP bound of ``instance`` (reverse AG; see the module docstring).

    ``slots``: about how many slots the reference bound spans (``delta`` is the
    reference over ``slots``, rounded down to a multiple of the exact tick,
    at least one tick, where an exact grid exists). ``reference_ns``: where the search starts
    (default: ``solvers.bounds.bounds(instance).lb_ns``). A model above
    ``max_columns`` columns is refused (``InputError``).
    """
    if slots < 1:
        raise InputError("the number of slots must be at least 1", "slots", slots)
    if data is None or data.ag_order != "reverse":
        data = ProblemData(instance, "reverse")
    if reference_ns is None:
        reference_ns = route_bounds(instance, "reverse", data).lb_ns
    delta = max(reference_ns, 1e-9) / slots
    grid = exact_grid(data)
    ticks = None
    if grid is not None and grid.exact:
        ticks = max(1, int(delta // grid.tick_ns))
        delta = ticks * grid.tick_ns
    ch = _chains(data, delta, ticks)
    lo = math.floor(reference_ns / delta)
    size = _columns(ch, lo)
    if size > max_columns:
        raise InputError(f"the time-indexed LP would have about {size} columns (at most "
                         f"{max_columns}): use fewer slots", "slots", slots)
    lps = 0
    last = (0, 0, 0)

    def test(h: int) -> str:
        nonlocal lps, last
        if _columns(ch, h) > max_columns:
            return "size"
        verdict, *size_ = _feasible(data, ch, h, safety_s)
        lps += 1
        last = (size_[0], size_[1], size_[2])
        return verdict

    # invariant: every horizon below ``bad + 1`` is infeasible (monotone); ``good`` feasible
    bad, good, stop = lo - 1, None, ""
    step = 1
    h = lo
    while good is None:
        verdict = test(h)
        if verdict == "feasible":
            good = h
        elif verdict == "infeasible":
            bad, h, step = h, h + step, 2 * step
        else:
            stop = verdict
            break
    while good is not None and good - bad > 1 and not stop:
        mid = (bad + good) // 2
        verdict = test(mid)
        if verdict == "feasible":
            good = mid
        elif verdict == "infeasible":
            bad = mid
        else:
            stop = verdict
    horizon = max(bad + 1, lo)
    value = horizon * delta * (1.0 - SAFETY)
    status = stop or ("raised" if value > reference_ns else "not-raised")
    return TimeIndexedBound(value, status, reference_ns, delta,
                            "exact" if ticks is not None else "floored", horizon, lps, *last)
