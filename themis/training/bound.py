"""A lower bound of a training iteration, valid for every policy and discipline: the window LP.

It plays the role of the Themis paper's "Ideal". An *alternative* of a chunk
is a route and stage-plan shape the simulator can run (every permutation of
its collective's dimensions; RS-AG and, under ``astra-sim-1.0``, ASTRA's
all-reduce shape); with its stage times alone on their dimensions it has, per
dimension d, a busy time ``load_d`` (and a byte time, bytes / B), a head
(its stages before it first reaches d), a tail (its stages after it last
leaves d) and a chain (all its stages).

1. **Each collective's own bound** ``LB_c``: the route-count model
   (:mod:`themis.route_model`) of its chunks alone, over its dimensions:
   ``T >= min head_d + sum_a x_a load_d(a) / k + min tail_d`` for every d,
   ``sum_a x_a = n`` per chunk size, and ``T >=`` the slowest chunk's shortest
   chain. With at most :data:`INTEGER_CHUNKS` chunks the counts are integers and
   heads, tails and chains are those of the alternatives in use (LB3's model;
   the MIP's dual bound after a deterministic node budget).
2. **Earliest issue times** ``e_c``: the training program (:mod:`themis.program`)
   replayed (max-plus) with each collective finishing at ``e_c + LB_c + u_c``
   (``u_c`` its finish delay, the layer's update time). Every program time is a
   max-plus expression that grows with collective end times, and no collective
   ends before its issue plus ``LB_c``, so every replayed time, the end included,
   is at most the real one: ``e_c`` is at most c's real issue time.
3. **The window LP.** One routing ``x[c,s,a]`` (chunks of size class s of
   collective c on alternative a) for the whole iteration. For every threshold
   tau in {e_c}, with ``S = {c : e_c >= tau}``, and every dimension d used by S:
   ``M >= tau + min head_d(S) + sum_{c in S,s,a} x[c,s,a] load_d(a) / k
   + min tail_d(S) + min_{c in S on d} u_c``. Valid: every stage of S starts
   after tau (its real issue is at or after ``e_c``), the first on d after some
   chunk's head, d runs at most k stages at once, and after its last stage on d
   that chunk still runs its tail and its collective its update before the
   iteration can end. With bandwidth sharing (``alpha-beta``, k > 1) a stage
   runs at least its time alone and d sends at most B bytes per ns, so the
   window also holds ``sum x * bytes_d / B`` in place of the busy term. The
   rows share one x: one routing must satisfy every window.

The bound is ``max(replay end, LP optimum x (1 - SAFETY))``, the LP's cumulative
loads written with one column per (threshold, dimension) so the model stays
linear in size.
Above :data:`MAX_WINDOWS` distinct thresholds only every k-th is kept (a
collective between two kept ones counts as issued at the lower): the kept
windows are unchanged, so the LP is a relaxation of the full one and still a
bound, and its time and memory stay linear in the iteration's length.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass

from themis.engine import Engine, resource_law
from themis.highs import LinearModel
from themis.limits import check_route_enumeration
from themis.plans import stage_plan
from themis.program import Node, Program
from themis.route_model import chain_rows, count_vars, used_min
from themis.runkind import RunKind
from themis.timing.base import StageCost, Timing
from themis.training.config import CollectiveRecord, TrainingConfig
from themis.training.execute import Execution
from themis.training.planner import involved
from topologies.network import Network

#: Relative margin taken off LP / MIP optima (solver tolerances).
SAFETY = 1e-9
#: Collectives of at most this many chunks get the integer model of their own bound.
INTEGER_CHUNKS = 8
#: Branch-and-bound nodes of that MIP (a deterministic work limit; its dual bound is used).
NODE_LIMIT = 200
#: The window LP's thresholds at most (above, evenly thinned; see ``windows_ns``).
MAX_WINDOWS = 2000


@dataclass(frozen=True)
class Alternative:
    """One route and plan shape of one chunk: per-dimension busy, byte, head and tail ns."""

    load_ns: dict[int, float]
    byte_ns: dict[int, float]
    head_ns: dict[int, float]
    tail_ns: dict[int, float]
    chain_ns: float


class Alternatives:
    """Every alternative of a chunk (kind, dimensions, size), measured with the run's
    stage costs (the timing models') and cached."""

    def __init__(self, engine: Engine, kind: RunKind) -> None:
        self.engine = engine
        #: The all-reduce shapes the run can execute (:meth:`RunKind.shapes`).
        self.shapes = list(kind.shapes())
        self.bw = [d.bandwidth_bytes_per_ns for d in engine.network.dims]
        self._costs: dict[tuple[str, str, int, float], StageCost] = {}
        self._memo: dict[tuple[str, tuple[int, ...], float], list[Alternative]] = {}

    def plans(self, kind: str, dims: tuple[int, ...]) -> list[tuple[tuple[str, int], ...]]:
        """Every stage plan of a chunk: each route (permutation of ``dims``) and shape."""
        check_route_enumeration(len(dims), "the training bound and mixes",
                                self.engine.network.name)
        out = []
        for route in itertools.permutations(dims):
            if kind == "all-to-all":
                out.append(stage_plan(kind, route))
            elif kind == "all-reduce":
                out += [stage_plan(kind, route, shape=s) for s in self.shapes]
            else:
                out.append(stage_plan(kind, route))
        return list(dict.fromkeys(out))

    def steps(self, kind: str, plan: tuple[tuple[str, int], ...], size: float
              ) -> list[tuple[int, float, float]]:
        """``(dimension, duration ns, byte ns)`` of every stage of ``plan``."""
        steps = []
        m: float = size
        for phase, d in plan:
            key = (kind, phase, d, m)
            c = self._costs.get(key)
            if c is None:
                c = self._costs[key] = self.engine.timings[kind].stage(phase, d, m)
            steps.append((d, c.duration_ns, c.sent_bytes / self.bw[d]))
            m = c.output_bytes
        return steps

    def of(self, kind: str, dims: tuple[int, ...], size: float) -> list[Alternative]:
        """The distinct alternatives of one chunk of ``size`` bytes."""
        key = (kind, dims, size)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        seen: dict[tuple, Alternative] = {}
        for plan in self.plans(kind, dims):
            alt = self.measure(kind, dims, plan, size)
            sig = tuple((d, alt.load_ns[d], alt.byte_ns[d], alt.head_ns[d], alt.tail_ns[d])
                        for d in dims)
            seen.setdefault(sig, alt)
        out = self._memo[key] = list(seen.values())
        return out

    def measure(self, kind: str, dims: tuple[int, ...], plan: tuple[tuple[str, int], ...],
                size: float) -> Alternative:
        """One plan of a chunk of ``size`` bytes: per dimension of ``dims`` its busy and
        byte ns, the ns before its first stage there (head) and after its last (tail)."""
        steps = self.steps(kind, plan, size)
        total = sum(t for _, t, _ in steps)
        load = dict.fromkeys(dims, 0.0)
        byte = dict.fromkeys(dims, 0.0)
        head: dict[int, float] = {}
        tail: dict[int, float] = {}
        acc = 0.0
        for d, t, b in steps:
            head.setdefault(d, acc)
            load[d] += t
            byte[d] += b
            acc += t
            tail[d] = total - acc
        return Alternative(load, byte, head, tail, total)


#: A collective's chunks: (kind, dimensions, ((size, count), ...)).
Shape = tuple[str, tuple[int, ...], tuple[tuple[float, int], ...]]


def _classes(sizes: list[int]) -> tuple[tuple[float, int], ...]:
    return tuple((float(s), sizes.count(s)) for s in dict.fromkeys(sizes))


class WindowBound:
    """The three parts of the module docstring for one run's stage costs."""

    def __init__(self, alts: Alternatives, k: int, law: str = "exclusive") -> None:
        self.alts, self.k, self.law = alts, k, law
        #: The capacity terms valid under the run's resource law (its ``bound_fields``).
        self.fields: tuple[str, ...] = resource_law(law).bound_fields
        self._own: dict[Shape, float] = {}

    def alone_ns(self, shape: Shape) -> float:
        """The slowest chunk's shortest chain."""
        kind, dims, classes = shape
        return max(min(a.chain_ns for a in self.alts.of(kind, dims, s)) for s, _ in classes)

    def own_ns(self, shape: Shape) -> float:
        """``LB_c``: the collective's chunks alone (LP, or the MIP for few chunks)."""
        hit = self._own.get(shape)
        if hit is None:
            hit = self._own[shape] = max(self.alone_ns(shape), self._own_model(shape))
        return hit

    def _own_model(self, shape: Shape) -> float:
        kind, dims, classes = shape
        table = [self.alts.of(kind, dims, s) for s, _ in classes]
        unit = max(a.chain_ns for alts in table for a in alts) / 1000.0 or 1.0
        integer = sum(c for _, c in classes) <= INTEGER_CHUNKS
        m = LinearModel()
        t_var = m.var(cost=1.0)
        keys = [(i, j) for i, alts in enumerate(table) for j in range(len(alts))]
        n = count_vars(m, keys, {i: c for i, (_, c) in enumerate(classes)}, integer)
        for d in dims:
            for field in self._fields():
                row = {t_var: 1.0}
                for (i, j), v in n.items():
                    row[v] = -self._coef(table[i][j], d, field) / unit
                const = 0.0
                for part in ("head_ns", "tail_ns"):
                    values = {key: getattr(table[key[0]][key[1]], part)[d] for key in keys}
                    if integer:
                        low, terms = used_min(m, values, n, unit)
                        for a, coef in terms.items():
                            row[a] = -coef
                    else:
                        low = min(values.values()) / unit
                    const += low
                m.row(const, math.inf, row)
        if integer:
            chain_rows(m, t_var, [(v, classes[i][1], table[i][j].chain_ns)
                                  for (i, j), v in n.items()], unit)
        solved = m.solve(NODE_LIMIT if integer else None)
        if solved.stop in ("failed", "wall"):
            return 0.0
        return max(0.0, solved.value * unit * (1.0 - SAFETY))

    def _fields(self) -> tuple[str, ...]:
        return self.fields

    def _coef(self, alt: Alternative, d: int, field: str) -> float:
        return alt.load_ns[d] / self.k if field == "load" else alt.byte_ns[d]

    def windows_ns(self, issued: list[tuple[float, Shape, float]]) -> float:
        """The window LP over ``(e_c, shape, u_c)`` of every collective (0 if it fails)."""
        if not issued:
            return 0.0
        # At most MAX_WINDOWS thresholds: a collective issued between two kept ones
        # counts as issued at the lower one. Each kept window's set S is unchanged, so
        # the LP is the full one less the other windows' rows: a relaxation, still a
        # bound, and linear in time and memory however long the iteration.
        times = sorted({e for e, _, _ in issued})
        if len(times) > MAX_WINDOWS:
            kept = times[::-(-len(times) // MAX_WINDOWS)]
            issued = [(kept[bisect.bisect_right(kept, e) - 1], shape, u)
                      for e, shape, u in issued]
        # Collectives issued at the same replayed time are in the same windows: merge
        # their chunks per (kind, dimensions, size); keep their least update time per dim.
        groups: dict[float, dict[tuple[str, tuple[int, ...], float], int]] = {}
        upd: dict[float, dict[int, float]] = {}
        for e, (kind, dims, classes), u in issued:
            g = groups.setdefault(e, {})
            for s, c in classes:
                g[(kind, dims, s)] = g.get((kind, dims, s), 0) + c
            ud = upd.setdefault(e, {})
            for d in dims:
                ud[d] = min(ud.get(d, math.inf), u)
        taus = sorted(groups, reverse=True)
        unit = max(a.chain_ns for g in groups.values() for (kind, dims, s) in g
                   for a in self.alts.of(kind, dims, s)) / 1000.0 or 1.0
        m = LinearModel()
        t_var = m.var(cost=1.0)
        cum: dict[tuple[int, str], int] = {}  # (dim, field) -> column of S's load so far
        head: dict[int, float] = {}
        tail: dict[int, float] = {}
        least_u: dict[int, float] = {}
        for tau in taus:
            keys = []
            counts = {}
            for i, ((kind, dims, s), c) in enumerate(groups[tau].items()):
                counts[i] = c
                keys += [(i, j) for j in range(len(self.alts.of(kind, dims, s)))]
            n = count_vars(m, keys, counts, integer=False)
            info = list(groups[tau])
            for d, u in upd[tau].items():
                least_u[d] = min(least_u.get(d, math.inf), u)
            for (i, j) in keys:
                kind, dims, s = info[i]
                alt = self.alts.of(kind, dims, s)[j]
                for d in dims:
                    head[d] = min(head.get(d, math.inf), alt.head_ns[d])
                    tail[d] = min(tail.get(d, math.inf), alt.tail_ns[d])
            for d in sorted(least_u):
                for field in self._fields():
                    new = m.var()
                    row = {new: 1.0}
                    if (d, field) in cum:
                        row[cum[d, field]] = -1.0
                    for (i, j), v in n.items():
                        kind, dims, s = info[i]
                        if d in dims:
                            coef = self._coef(self.alts.of(kind, dims, s)[j], d, field)
                            if coef:
                                row[v] = -coef / unit
                    m.row(0.0, 0.0, row)
                    cum[d, field] = new
                    const = (tau + head[d] + tail[d] + least_u[d]) / unit
                    m.row(const, math.inf, {t_var: 1.0, new: -1.0})
        solved = m.solve()
        if solved.stop != "optimal":
            return 0.0
        return max(0.0, solved.value * unit * (1.0 - SAFETY))


@dataclass(frozen=True)
class Replayed:
    """One collective of the replay of step 2: its earliest issue time ``e_ns``, what it
    is and its layer's update time (collectives in issue order, as the run issues them)."""

    e_ns: float
    kind: str
    dims: tuple[int, ...]
    sizes: tuple[int, ...]
    update_ns: float

    @property
    def shape(self) -> Shape:
        """Its chunks as the bound groups them."""
        return (self.kind, self.dims, _classes(list(self.sizes)))


def replay_issues(program: Program, network: Network, cfg: TrainingConfig,
                  timings: dict[str, Timing], law: str = "exclusive"
                  ) -> tuple[list[Replayed], float, WindowBound]:
    """Step 2 for a training ``program`` (compiled on the logical ``network``): every
    collective's earliest issue time, the replay's end, and the :class:`WindowBound`
    of the run's stage costs."""
    kind = cfg.run_kind
    engine = Engine(network, timings, kind.priority_queue("fifo"), cfg.active_chunks,
                    kind.rules())
    bound = WindowBound(Alternatives(engine, kind), cfg.active_chunks, law)
    issued: list[Replayed] = []

    def issue(run: Execution, node: Node) -> CollectiveRecord:
        ckind, size = str(node.collective), node.size_bytes
        dims = involved(network, tuple(node.mask or ()))
        sizes = kind.chunk_sizes(size, cfg.chunks)
        now = engine.now
        rep = Replayed(now, ckind, dims, tuple(sizes), float(node.finish_delay_ns))
        issued.append(rep)
        rec = CollectiveRecord(len(issued) - 1, node.layer, node.phase, ckind, size, dims, now)
        engine.at(now + bound.own_ns(rep.shape),
                  lambda: run.collective_done(rec, node, engine.now))
        return rec

    run = Execution(program, engine, issue)
    run.run()
    return issued, float(run.end_ns if run.end_ns is not None else 0.0), bound


def iteration_bound(program: Program, network: Network, cfg: TrainingConfig,
                    timings: dict[str, Timing], law: str = "exclusive") -> float:
    """The lower bound of the module docstring for a training ``program`` (compiled on
    the logical ``network``)."""
    issued, replay, bound = replay_issues(program, network, cfg, timings, law)
    return max(replay, bound.windows_ns([(r.e_ns, r.shape, r.update_ns) for r in issued]))
