"""Resumable sweeps: a TOML grid of instances x methods into a SQLite database.

Spec (read with :mod:`tomllib`; every key is checked before anything runs)::

    title = "Optimality gap on small networks"   # optional, shown by the report
    description = "..."                          # optional, shown by the report
    time_limit_s = 10        # per solver task (required when a grid has solvers)
    ag_order = ["reverse", "free"]   # optional, string or list (default "reverse")
    threads = 1              # optional, solver threads (default: the solver's)

    [[grid]]
    networks = ["small-2d", "nets/my.yml"]  # preset names, or paths relative to this file
    sizes = ["64MiB", 1048576]
    chunks = [2, 4, 8]
    endpoint_delay_ns = [0, 10]               # optional (default [0])
    policies = ["baseline", "round-robin", "themis"]   # optional (default: these three)
    intra = ["fifo", "scf"]                   # optional (default: both)
    solvers = ["cpsat", "highs"]              # optional (default: none)
    # time_limit_s, ag_order, threads may be repeated here to override the top level

Tasks: each ``[[grid]]`` gives the instances networks x sizes x chunks x
endpoint delays; per instance one task per policy x intra (``themis/scf``...;
policies always use reverse AG orders), one per solver x ``ag_order``, and one
``bound`` task computing LB0-LB3 (for the reverse AG variant, the policies'
one). So 1 network, 1 size, 1 chunk count, 3 policies x 2 disciplines and 3
solvers x 2 AG orders make 6 + 6 = 12 method tasks plus 1 bound task: 13 rows.
A task is identified by its key ``<instance key>:<method>:<ag_order>``; a task
listed twice (e.g. the same network under two names) runs once.

Execution: the parent process submits tasks to a
:class:`concurrent.futures.ProcessPoolExecutor` (``workers`` > 1), runs them
in-process (``workers`` = 1) or on Dask (``dask`` = an address, or ``local``
for a :class:`distributed.LocalCluster`), and writes one committed row per
finished task (see :mod:`reports.db`). A rerun skips finished tasks and retries
the ones that failed.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import datetime as dt
import functools
import math
import os
import platform
import shlex
import signal
import sys
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reports.compare import AG_ORDERS, INTRAS, POLICIES, canonical_name, policy_method
from topologies.errors import InputError

#: Keys allowed at the top level and in each ``[[grid]]`` table.
TOP_KEYS: tuple[str, ...] = ("title", "description", "time_limit_s", "ag_order", "threads",
                             "grid")
GRID_KEYS: tuple[str, ...] = ("networks", "sizes", "chunks", "endpoint_delay_ns", "policies",
                              "intra", "solvers", "time_limit_s", "ag_order", "threads")

#: Policies whose schedule is stored (solvers' schedules are always stored).
SCHEDULED_POLICIES: tuple[str, ...] = ("themis", "baseline")


# -- tasks ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One unit of work: a policy run, a solver run or the bounds of one instance."""

    instance: Any  # themis.instance.Instance (kept untyped: cheap to import this module)
    network: str
    method: str
    kind: str
    ag_order: str = "reverse"
    policy: str | None = None
    intra: str | None = None
    solver: str | None = None
    time_limit_s: float | None = None
    threads: int | None = None

    @property
    def key(self) -> str:
        """``<instance key>:<method>:<ag_order>``, the row's UNIQUE key."""
        return f"{self.instance.key()}:{self.method}:{self.ag_order}"

    def label(self) -> str:
        """E.g. ``cpsat (free) on small-2d 64MiB C=4``."""
        what = f"{self.method} ({self.ag_order})" if self.kind == "solver" else self.method
        return f"{what} on {self.instance.label()}"

    def base_row(self) -> dict[str, Any]:
        """The row's columns that describe the task."""
        inst = self.instance
        net = inst.network
        return {
            "task_key": self.key, "instance_key": inst.key(), "network": self.network,
            "network_label": net.name or net.shape(), "shape": net.shape(),
            "topology": net.describe(), "dims": len(inst.dims), "npus": net.npus,
            "size_bytes": inst.size_bytes, "chunks": inst.chunks,
            "endpoint_delay_ns": inst.endpoint_delay_ns, "method": self.method,
            "kind": self.kind, "policy": self.policy, "intra": self.intra,
            "ag_order": self.ag_order, "time_limit_s": self.time_limit_s,
            "threads": self.threads,
        }


@dataclass
class Spec:
    """A validated sweep spec: its source, its tasks (deduplicated) and labels."""

    path: str
    text: str
    tasks: list[Task]
    instances: int
    title: str = ""
    description: str = ""
    duplicates: int = 0

    def counts(self) -> dict[str, int]:
        """Tasks per kind."""
        out: dict[str, int] = {"policy": 0, "solver": 0, "bound": 0}
        for t in self.tasks:
            out[t.kind] += 1
        return out


# -- spec validation -------------------------------------------------------------------
def load_spec(path: str | os.PathLike) -> Spec:
    """Read and validate a TOML spec; every problem is an :class:`InputError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", "SPEC", str(p)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the spec ({err})", "SPEC", str(p)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"invalid TOML ({err})", "spec", None, str(p)) from None
    return parse_spec(data, text, str(p))


def parse_spec(data: dict[str, Any], text: str = "", path: str = "spec.toml") -> Spec:
    """Validate a parsed spec and expand it into tasks (see the module docstring)."""
    from themis.instance import Instance
    from topologies.units import parse_size

    file = str(path)
    folder = Path(path).parent

    def fail(reason: str, key: str, value: object) -> InputError:
        return InputError(reason, key, value, file)

    _check_keys(data, TOP_KEYS, "", file)
    title = _text(data, "title", file)
    description = _text(data, "description", file)
    top = _options(data, "", file)
    grids = data.get("grid")
    if not isinstance(grids, list) or not grids or not all(isinstance(g, dict) for g in grids):
        raise fail("the spec needs at least one [[grid]] table", "grid",
                   None if grids is None else grids)
    networks: dict[str, Any] = {}
    tasks: dict[str, Task] = {}
    duplicates = 0
    instance_keys: set[str] = set()
    for gi, grid in enumerate(grids):
        g = f"grid[{gi}]"
        _check_keys(grid, GRID_KEYS, g, file)
        opts = {**top, **{k: v for k, v in _options(grid, g, file).items() if v is not None}}
        nets = _items(grid, "networks", g, file, required=True)
        sizes = _items(grid, "sizes", g, file, required=True)
        chunks = _items(grid, "chunks", g, file, required=True)
        delays = _items(grid, "endpoint_delay_ns", g, file, default=[0])
        policies = [canonical_name(v, "policy", f"{g}.policies[{i}]", file)
                    for i, v in enumerate(_items(grid, "policies", g, file,
                                                 default=list(POLICIES)))]
        intras = [canonical_name(v, "intra", f"{g}.intra[{i}]", file)
                  for i, v in enumerate(_items(grid, "intra", g, file, default=list(INTRAS)))]
        solvers = [canonical_name(v, "solver", f"{g}.solvers[{i}]", file)
                   for i, v in enumerate(_items(grid, "solvers", g, file, default=[]))]
        if policies and not intras:
            raise fail("policies need at least one intra-dimension discipline", f"{g}.intra",
                       [])
        if solvers and opts["time_limit_s"] is None:
            raise fail("solvers need a time limit (seconds per solver task)", "time_limit_s",
                       None)
        resolved = []
        for i, name in enumerate(nets):
            key = f"{g}.networks[{i}]"
            if not isinstance(name, str) or not name.strip():
                raise fail("must be a preset name or a network file path", key, name)
            if name not in networks:
                networks[name] = _resolve_network(name, folder, key, file)
            resolved.append((name, networks[name]))
        size_values = []
        for i, v in enumerate(sizes):
            try:
                size_values.append(parse_size(v, f"{g}.sizes[{i}]"))
            except InputError as err:
                raise err.in_file(file) from None
        for i, c in enumerate(chunks):
            if isinstance(c, bool) or not isinstance(c, int) or c < 1:
                raise fail("chunks must be a positive integer", f"{g}.chunks[{i}]", c)
        for i, d in enumerate(delays):
            if isinstance(d, bool) or not isinstance(d, int | float) or not math.isfinite(d) \
                    or d < 0:
                raise fail("endpoint delay must be a number of ns >= 0",
                           f"{g}.endpoint_delay_ns[{i}]", d)
        for name, net in resolved:
            for size in size_values:
                for c in chunks:
                    for d in delays:
                        try:
                            inst = Instance(net, size, c, float(d))
                        except InputError as err:
                            raise fail(f"invalid instance ({err})", g,
                                       f"{name} {size} bytes C={c}") from None
                        instance_keys.add(inst.key())
                        new = [Task(inst, name, "bound", "bound")]
                        new += [Task(inst, name, policy_method(p, q), "policy", policy=p,
                                     intra=q) for p in policies for q in intras]
                        new += [Task(inst, name, s, "solver", ag_order=a, solver=s,
                                     time_limit_s=opts["time_limit_s"],
                                     threads=opts["threads"])
                                for s in solvers for a in opts["ag_order"]]
                        for t in new:
                            if t.key in tasks:
                                duplicates += 1
                            else:
                                tasks[t.key] = t
    return Spec(file, text, list(tasks.values()), len(instance_keys), title, description,
                duplicates)


def _check_keys(table: dict[str, Any], allowed: Sequence[str], prefix: str, file: str) -> None:
    for k, v in table.items():
        if k not in allowed:
            where = f"{prefix}.{k}" if prefix else k
            raise InputError(f"unknown key (expected one of {', '.join(allowed)})", where,
                             v if not isinstance(v, dict) else None, file)


def _text(data: dict[str, Any], key: str, file: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise InputError("must be a string", key, value, file)
    return value


def _items(table: dict[str, Any], key: str, prefix: str, file: str, required: bool = False,
           default: list[Any] | None = None) -> list[Any]:
    where = f"{prefix}.{key}"
    if key not in table:
        if required:
            raise InputError("missing required key", where, None, file)
        return list(default or [])
    value = table[key]
    values = value if isinstance(value, list) else [value]
    if required and not values:
        raise InputError("must not be empty", where, value, file)
    return values


def _options(table: dict[str, Any], prefix: str, file: str) -> dict[str, Any]:
    """``time_limit_s``, ``ag_order`` (a list), ``threads`` of a table (``None`` if absent)."""
    def key(k: str) -> str:
        return f"{prefix}.{k}" if prefix else k

    out: dict[str, Any] = {"time_limit_s": None, "ag_order": None, "threads": None}
    if "time_limit_s" in table:
        v = table["time_limit_s"]
        if isinstance(v, bool) or not isinstance(v, int | float) or not (0 < v < math.inf):
            raise InputError("must be a positive number of seconds", key("time_limit_s"), v,
                             file)
        out["time_limit_s"] = float(v)
    if "threads" in table:
        v = table["threads"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError("must be a positive integer", key("threads"), v, file)
        out["threads"] = v
    if "ag_order" in table:
        v = table["ag_order"]
        values = v if isinstance(v, list) else [v]
        if not values:
            raise InputError(f"must name at least one of {', '.join(AG_ORDERS)}",
                             key("ag_order"), v, file)
        orders: list[str] = []
        for i, a in enumerate(values):
            name = canonical_name(a, "ag_order",
                                  key("ag_order") + (f"[{i}]" if isinstance(v, list) else ""),
                                  file)
            if name not in orders:
                orders.append(name)
        out["ag_order"] = orders
    elif not prefix:
        out["ag_order"] = ["reverse"]
    return out


def _resolve_network(name: str, folder: Path, key: str, file: str) -> Any:
    from topologies.presets import resolve_network

    candidate = Path(os.path.normpath(folder / name))  # the folder may not exist yet
    try:
        if candidate.is_file():
            return resolve_network(str(candidate))
        return resolve_network(name)
    except InputError as err:
        if err.field == "NETWORK" or not err.file:
            raise InputError(f"{err.reason}" if err.field == "NETWORK"
                             else f"invalid network ({err})", key, name, file) from None
        raise


# -- running one task (in a worker) ----------------------------------------------------
@functools.cache
def versions() -> dict[str, str]:
    """Versions of Python and the packages results depend on."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("themis-sched", "ortools", "pulp", "highspy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = ""
    return out


def run_task(task: Task) -> dict[str, Any]:
    """Run one task and return its database row (never raises for a task's failure)."""
    from reports.db import dumps, pack
    from themis.metrics import compute_metrics, ideal_ns

    row = task.base_row()
    inst = task.instance
    t0 = time.perf_counter()
    try:
        row["ideal_ns"] = ideal_ns(inst.network, [inst.collective])
        schedule = None
        if task.kind == "policy":
            res = inst.simulate(task.policy, task.intra)
            schedule = res.schedule
            row.update(status="simulated", makespan_ns=res.makespan_ns, valid=1,
                       runtime_s=res.wall_s)
            keep = task.policy in SCHEDULED_POLICIES
        elif task.kind == "solver":
            from solvers import solve

            # Ctrl-C must interrupt the sweep, not end a CP-SAT search early as if the
            # time limit had passed (the truncated result would be recorded as done).
            extra = {"catch_sigint_signal": False} if task.solver == "cpsat" else {}
            res = solve(inst, solver=task.solver, time_limit_s=task.time_limit_s,
                        ag_order=task.ag_order, threads=task.threads, **extra)
            schedule = res.schedule
            valid = bool(res.valid) if schedule is not None else True
            row.update(status=res.status if valid else "invalid", makespan_ns=res.makespan_ns,
                       lower_bound_ns=res.lower_bound_ns, valid=int(valid),
                       runtime_s=float(res.runtime_s))
            keep = True
        else:
            from solvers import bounds

            b = bounds(inst, ag_order=task.ag_order)
            row.update(status="bound", lower_bound_ns=b.lb_ns, lb0_ns=b.lb0_ns,
                       lb1_ns=b.lb1_ns, lb2_ns=b.lb2_ns, lb3_ns=b.lb3_ns, valid=1,
                       runtime_s=time.perf_counter() - t0)
            keep = False
        if schedule is not None:
            m = compute_metrics(schedule)
            row.update(bw_utilization=m.bw_utilization,
                       dim_utilization=dumps([d.utilization for d in m.dims]),
                       dim_bytes=dumps([d.bytes for d in m.dims]), routes=dumps(m.routes))
            if keep:
                row["schedule_json"] = pack(schedule.to_json())
    except Exception as err:  # recorded, retried on the next run
        row.update(status="error", error=f"{type(err).__name__}: {err}"[:4000],
                   runtime_s=time.perf_counter() - t0, valid=0)
    row.update(versions=dumps(versions()), host=platform.node(), finished_at=_now())
    return row


def error_row(task: Task, err: BaseException) -> dict[str, Any]:
    """The row of a task whose worker failed (the task itself did not report)."""
    from reports.db import dumps

    row = task.base_row()
    row.update(status="error", error=f"{type(err).__name__}: {err}"[:4000], valid=0,
               versions=dumps(versions()), host=platform.node(), finished_at=_now())
    return row


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's business (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# -- progress --------------------------------------------------------------------------
def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def describe_result(row: dict[str, Any]) -> str:
    """``123.4 us``, ``123.4 us optimal in 2.1 s``, ``LB 100.0 us``, ``error: ...``."""
    if row["status"] == "error":
        return f"error: {row.get('error')}"
    if row["kind"] == "bound":
        return f"LB {row['lower_bound_ns'] / 1e3:,.1f} us"
    ms = "-" if row.get("makespan_ns") is None else f"{row['makespan_ns'] / 1e3:,.1f} us"
    if row["kind"] == "solver":
        return f"{ms} {row['status']} in {row.get('runtime_s') or 0:.1f} s"
    return ms


class Progress:
    """Done/total, failures and ETA: a one-line bar on a TTY, plain lines otherwise."""

    def __init__(self, total: int, done_before: int, stream: IO[str],
                 tty: bool | None = None) -> None:
        self.total = total
        self.done = done_before
        self.done_before = done_before
        self.failed = 0
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.t0 = time.perf_counter()

    def eta(self) -> str:
        """Remaining time estimated from this run's pace."""
        ran = self.done - self.done_before
        left = self.total - self.done
        if ran <= 0 or left <= 0:
            return "-" if left else "0s"
        return format_duration((time.perf_counter() - self.t0) / ran * left)

    def update(self, task: Task, row: dict[str, Any]) -> None:
        """Count one finished task and show it."""
        self.done += 1
        if row["status"] == "error":
            self.failed += 1
        if self.tty:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            line = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                    f"failed {self.failed}  ETA {self.eta()}  {task.label()[:40]}")
            self.stream.write(line.ljust(110)[:110])
        else:
            self.stream.write(f"[{self.done}/{self.total}] {task.label()}: "
                              f"{describe_result(row)}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# -- running a sweep -------------------------------------------------------------------
@dataclass
class SweepOutcome:
    """What a run of :func:`run_sweep` did."""

    total: int
    done_before: int
    ran: int = 0
    failed: int = 0
    interrupted: bool = False
    aborted: str = ""
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def finished(self) -> int:
        """Tasks finished without error (before and during this run)."""
        return self.done_before + self.ran - self.failed


def sweep_command(spec: str, db: str, workers: int | None = None,
                  dask: str | None = None) -> str:
    """The command line that (re)runs a sweep."""
    args = ["themis", "sweep", spec, "--db", db]
    if workers is not None:
        args += ["--workers", str(workers)]
    if dask:
        args += ["--dask", dask]
    return shlex.join(args)


def run_sweep(spec_path: str, db_path: str, workers: int | None = None,
              dask: str | None = None, stream: IO[str] | None = None,
              tty: bool | None = None) -> SweepOutcome:
    """Run (or resume) the sweep ``spec_path`` into ``db_path``.

    ``workers``: local processes (default ``os.cpu_count()``; 1 runs in this
    process) or, with ``dask = "local"``, LocalCluster workers. ``dask``: a
    scheduler address, or ``local``. Progress goes to ``stream`` (stderr).
    """
    from reports import db

    stream = stream if stream is not None else sys.stderr
    if workers is not None and workers < 1:
        raise InputError("must be at least 1", "--workers", workers)
    spec = load_spec(spec_path)
    conn = db.connect(db_path)
    t_start = time.perf_counter()
    try:
        done = db.finished_keys(conn)
        todo = [t for t in spec.tasks if t.key not in done]
        # Longest first: solver tasks lead, so the pool does not end on a long tail.
        todo.sort(key=lambda t: t.kind != "solver")
        command = sweep_command(spec_path, db_path, workers, dask)
        meta = db.get_meta(conn)
        db.set_meta(conn, {
            "spec_text": spec.text, "spec_path": str(spec_path), "command": command,
            "title": spec.title, "description": spec.description,
            "tasks_total": len(spec.tasks), "instances": spec.instances,
            "started_at": meta.get("started_at", _now()), "cpu_count": os.cpu_count() or 1,
        })
        outcome = SweepOutcome(len(spec.tasks), len(spec.tasks) - len(todo))
        counts = spec.counts()
        stream.write(
            f"{spec.instances} instances, {len(spec.tasks)} tasks ({counts['policy']} policy, "
            f"{counts['solver']} solver, {counts['bound']} bound); "
            f"{outcome.done_before} already done, {len(todo)} to run\n")
        stream.flush()
        progress = Progress(len(spec.tasks), outcome.done_before, stream, tty)

        def record(task: Task, row: dict[str, Any]) -> None:
            db.store(conn, row)
            outcome.ran += 1
            if row["status"] == "error":
                outcome.failed += 1
                outcome.errors.append(f"{task.label()}: {row.get('error')}")
            progress.update(task, row)

        try:
            if todo:
                with _executor(workers, dask, stream) as (executor, slots):
                    _drive(todo, executor, slots, record)
        except KeyboardInterrupt:
            outcome.interrupted = True
        except cf.BrokenExecutor as err:  # a worker died (killed, out of memory...)
            outcome.aborted = f"the worker pool broke ({type(err).__name__}: {err})"
        finally:
            progress.close()
        outcome.wall_s = time.perf_counter() - t_start
        meta = db.get_meta(conn)
        db.set_meta(conn, {
            "sweep_wall_s": float(meta.get("sweep_wall_s", 0.0)) + outcome.wall_s,
            "last_run_wall_s": outcome.wall_s, "last_run_at": _now(),
            "executor": _executor_label(workers, dask),
        })
    finally:
        conn.close()
    return outcome


def _executor_label(workers: int | None, dask: str | None) -> str:
    n = workers or os.cpu_count() or 1
    if dask == "local":
        return f"dask LocalCluster, {n} workers"
    if dask:
        return f"dask {dask}"
    return "in-process" if n == 1 else f"{n} local processes"


@contextlib.contextmanager
def _executor(workers: int | None, dask: str | None, stream: IO[str]
              ) -> Iterator[tuple[cf.Executor | None, int]]:
    """(executor, tasks to keep in flight); ``None`` runs tasks in this process."""
    n = workers or os.cpu_count() or 1
    if dask:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError("Dask is not installed: pip install '.[dask]'", "--dask",
                             dask) from None
        cluster = None
        try:
            if dask == "local":
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
                client = Client(cluster)
            else:
                client = Client(dask, timeout="20s")
        except (OSError, TimeoutError) as err:
            if cluster is not None:
                cluster.close()
            raise InputError(f"cannot reach the Dask scheduler ({err})", "--dask",
                             dask) from None
        try:
            slots = sum(client.nthreads().values()) or n
            stream.write(f"dask: {len(client.nthreads())} workers, {slots} threads "
                         f"({client.scheduler.address})\n")
            executor = client.get_executor(pure=False)
            try:
                yield executor, 2 * slots
            finally:
                executor.shutdown(wait=False)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    elif n == 1:
        yield None, 1
    else:
        pool = cf.ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)
        try:
            yield pool, 2 * n
        except BaseException:
            _stop_pool(pool)
            raise
        else:
            pool.shutdown(wait=True)


def _stop_pool(pool: cf.ProcessPoolExecutor) -> None:
    """Drop queued tasks and stop the workers now (their running tasks are lost)."""
    processes = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes.values():
        with contextlib.suppress(Exception):
            p.terminate()


def _drive(todo: list[Task], executor: cf.Executor | None, slots: int,
           record: Callable[[Task, dict[str, Any]], None]) -> None:
    """Run ``todo``, keeping ``slots`` tasks in flight, recording each as it finishes."""
    if executor is None:
        for task in todo:
            record(task, run_task(task))
        return
    pending = iter(todo)
    inflight: dict[cf.Future[dict[str, Any]], Task] = {}

    def fill() -> None:
        while len(inflight) < slots:
            task = next(pending, None)
            if task is None:
                return
            inflight[executor.submit(run_task, task)] = task

    try:
        fill()
        while inflight:
            finished, _ = cf.wait(inflight, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                task = inflight.pop(fut)
                if fut.cancelled():
                    continue
                err = fut.exception()
                if isinstance(err, KeyboardInterrupt):
                    raise KeyboardInterrupt
                # A worker that failed (rather than its task) still gives an error row.
                record(task, error_row(task, err) if err is not None else fut.result())
            fill()
    except BaseException:
        for fut in inflight:
            fut.cancel()
        raise


__all__ = ["GRID_KEYS", "TOP_KEYS", "Progress", "Spec", "SweepOutcome", "Task", "load_spec",
           "parse_spec", "run_sweep", "run_task", "sweep_command", "versions"]
