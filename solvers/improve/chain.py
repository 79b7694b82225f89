"""The doubling chain of :func:`solvers.improve.improve`: CP-SAT at C0 <= ``CHAIN_CHUNKS``
(and its latency-0 answers), split into C; and CP-SAT warm-started from a schedule."""

from __future__ import annotations

from solvers.bounds import Bounds
from solvers.doubling import split_schedule, splits, with_chunks
from solvers.params import SolverParams
from solvers.result import Result
from themis.instance import Instance
from themis.schedule import Schedule
from topologies.errors import InputError

#: Largest chunk count the doubling chain solves with CP-SAT (then splits for C).
CHAIN_CHUNKS = 32
#: Chain base results by (instance key, deterministic time, seed): the base solve is
#: deterministic, so C = 64 ... 1024 of one network and size share it.
_CHAIN_CACHE: dict[tuple[str, float, int, bool], tuple[Result, dict[str, Schedule]]] = {}


def _cpsat(instance: Instance, schedule: Schedule, bnds: Bounds, dtime_s: float | None,
           time_limit_s: float | None, seed: int, latency0: bool = True) -> Result | None:
    """CP-SAT warm-started from ``schedule`` on a deterministic budget (None if the
    model is too large to build).

    Without ``time_limit_s`` there is in effect no wall-clock limit (a week), so
    that only the deterministic limit binds, however loaded the machine.
    """
    # Looked up when called (a test spies on solvers.solve.solve); not a cycle:
    # nothing solvers.solve imports imports this module.
    from solvers.solve import solve

    wall = time_limit_s if time_limit_s is not None else 7 * 24 * 3600.0
    params = SolverParams(time_limit_s=wall, deterministic_time_s=dtime_s, threads=1,
                          seed=seed, latency0=latency0)
    try:
        return solve(instance, "cpsat", params, bounds=bnds, hint=[schedule])
    except InputError:  # e.g. a model too large to build: keep the search's schedule
        return None


def chain_base(chunks: int, instance: Instance, chain_chunks: int = CHAIN_CHUNKS) -> int | None:
    """The largest C0 = chunks / 2^j <= ``chain_chunks`` (j >= 1) whose chunks split
    exactly into ``chunks / C0`` pieces each, or ``None``."""
    c0, factor = chunks, 1
    while c0 % 2 == 0 and c0 // 2 >= 2:
        c0, factor = c0 // 2, factor * 2
        if c0 <= chain_chunks:
            base = with_chunks(instance, c0)
            return c0 if splits(base, factor) else None
    return None


def _chain(instance: Instance, dtime_s: float, chain_chunks: int, seed: int,
           time_limit_s: float | None, latency0: bool = True) -> tuple[Schedule | None, dict]:
    """The doubling chain's candidate for ``instance`` (see the module docstring).

    With latency, the C0 solve's latency-0 answers (replayed on the network,
    :func:`solvers.solve.latency0_hints`) are split into C too, and the
    shortest split is the candidate (``meta["chain"]["splits"]`` lists them).
    """
    from solvers.solve import _solve  # looked up when called, as in _cpsat

    c = instance.chunks
    c0 = chain_base(c, instance, chain_chunks)
    if c0 is None:
        return None, {"skipped": f"no chunk count C/2^j <= {chain_chunks} splits into C"}
    base = with_chunks(instance, c0)
    key = (base.key(), float(dtime_s), seed, latency0)
    cached = _CHAIN_CACHE.get(key) if time_limit_s is None else None
    if cached is None:
        wall = time_limit_s if time_limit_s is not None else max(60.0, 30 * dtime_s)
        params = SolverParams(time_limit_s=wall, deterministic_time_s=dtime_s, threads=1,
                              seed=seed, latency0=latency0)
        kept: dict[str, Schedule] = {}
        try:
            res = _solve(base, "cpsat", params, None, None, None, {}, kept)
        except InputError as err:
            return None, {"from_chunks": c0, "skipped": str(err)}
        cached = (res, {k: v for k, v in kept.items() if k.startswith("latency0-")})
        if time_limit_s is None:
            _CHAIN_CACHE[key] = cached
    res, lat0 = cached
    info = {"from_chunks": c0, "status": str(res.status), "from_makespan_ns": res.makespan_ns,
            "from_lower_bound_ns": res.lower_bound_ns,
            "deterministic_time_s": res.meta.get("deterministic_time_total_s")}
    sources = {} if res.schedule is None else {"solve": res.schedule}
    sources.update(lat0)
    best: Schedule | None = None
    found: dict[str, float] = {}
    for name, sched in sources.items():
        split = split_schedule(sched, instance, c // c0)
        if split is None:
            continue
        found[name] = split.makespan_ns
        if best is None or split.makespan_ns < best.makespan_ns * (1 - 1e-12):
            best = split
    if not sources:
        return None, info
    info["makespan_ns"] = None if best is None else best.makespan_ns
    if lat0:
        info["splits"] = found
    return best, info
