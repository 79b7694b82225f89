"""Running (or resuming) a sweep into its database.

The driver reads the spec, connects to the executor (a Dask scheduler that
cannot be reached stops here, before any file is written), opens the database
and locks it: one sweep at a time per database (an exclusive ``flock`` on the
database file, released when the driver exits, even by ``kill -9``); a second
sweep on the same database stops with an error instead of running every task
again. It then submits the tasks not yet finished and writes one committed row
per finished task (see :mod:`reports.db`). A rerun skips finished tasks and
retries the ones that failed.

The lower bounds LB0-LB3 are computed once per instance and AG variant: the
bound tasks run first, and each solver task gets its instance's bounds (a bound
task finished by an earlier run is computed again, not stored again, when a
solver task of its instance is still to run). Training tasks (the spec's
``[[training]]`` tables, :mod:`reports.sweep.training`) run beside the policy
and solver tasks, in the same pool, and go to the database's ``training``
table, resumed the same way.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reports.records import Kind, Status
from reports.sweep.executors import drive, executor_label, open_executor, stop_pool
from reports.sweep.progress import Progress
from reports.sweep.spec import Spec, load_spec
from reports.sweep.tasks import BOUNDS_KEY, Task, error_row, now, run_task
from reports.sweep.training import TrainingTask, run_training_task, training_error_row
from topologies.errors import InputError


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


@contextlib.contextmanager
def locked_database(path: str | os.PathLike) -> Iterator[Any]:
    """Open (creating it if needed) and lock a sweep database for this driver."""
    import fcntl

    from reports import db

    p = Path(path)
    handle = conn = None

    def lock() -> Any:
        f = open(p, "rb")  # noqa: SIM115 (closed after the connection)
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise InputError("another themis sweep or report is using this database (one "
                             "sweep per database, never while it is reported); wait for "
                             "it, or stop it and rerun", "--db", str(path)) from None
        return f

    try:
        if p.is_file() and p.stat().st_size:  # an existing database: checked, locked, opened
            db.check_owned(p, "--db")
            handle = lock()
        conn = db.connect(path, field="--db")
        if handle is None:
            handle = lock()
        yield conn
    finally:
        if conn is not None:
            conn.close()
        if handle is not None:
            handle.close()


def run_sweep(spec_path: str, db_path: str, workers: int | None = None,
              dask: str | None = None, stream: IO[str] | None = None,
              tty: bool | None = None) -> SweepOutcome:
    """Run (or resume) the sweep ``spec_path`` into ``db_path``.

    ``workers``: local processes (default ``os.cpu_count()``; 1 runs in this
    process) or, with ``dask = "local"``, LocalCluster workers. ``dask``: a
    scheduler address, or ``local``. Progress goes to ``stream`` (stderr).
    """
    if workers is not None and workers < 1:
        raise InputError("must be at least 1", "--workers", workers)
    return run_spec(load_spec(spec_path), db_path, workers, dask, stream, tty)


def run_spec(spec: Spec, db_path: str, workers: int | None = None, dask: str | None = None,
             stream: IO[str] | None = None, tty: bool | None = None,
             command: str | None = None) -> SweepOutcome:
    """Run (or resume) the loaded sweep ``spec`` into ``db_path``, as :func:`run_sweep`
    does; ``command`` (default: ``themis sweep SPEC --db DB``) is the command stored as
    the one that (re)runs it (``themis train-report`` runs its spec through here)."""
    from reports import db

    stream = stream if stream is not None else sys.stderr
    if workers is not None and workers < 1:
        raise InputError("must be at least 1", "--workers", workers)
    spec_path = spec.path
    t_start = time.perf_counter()
    asked, tasks = workers, len(spec.tasks) + len(spec.training)
    workers = worker_count(workers, tasks, remote=bool(dask and dask != "local"))
    if asked is not None and workers < asked:
        stream.write(f"--workers {asked}: capped at {workers} ({tasks} tasks, "
                     f"{cpu_count()} CPUs)\n")
    with open_executor(workers, dask, stream) as (executor, slots), \
            locked_database(db_path) as conn:
        done = db.finished_keys(conn)
        todo = [t for t in spec.tasks if t.key not in done]
        # Longest first: solver tasks lead, so the pool does not end on a long tail.
        todo.sort(key=lambda t: t.kind != Kind.SOLVER)
        first = _bound_tasks(spec.tasks, todo)
        training = [t for t in spec.training if t.key not in done]
        total = len(spec.tasks) + len(spec.training)
        meta = db.get_meta(conn)
        db.set_meta(conn, {
            "spec_text": spec.text, "spec_path": str(spec_path),
            "command": command or sweep_command(spec_path, db_path, workers, dask),
            "title": spec.title, "description": spec.description,
            "tasks_total": total, "instances": spec.instances,
            "started_at": meta.get("started_at", now()), "cpu_count": os.cpu_count() or 1,
        })
        if spec.training:  # the report's order of cases and methods: the spec's
            db.set_meta(conn, {"training_cases": spec.cases,
                               "training_order": [t.key for t in spec.training]})
        outcome = SweepOutcome(total, total - len(todo) - len(training))
        stream.write(_summary(spec) + f"; {outcome.done_before} already done, "
                     f"{len(todo) + len(training)} to run\n")
        stream.flush()
        progress = Progress(total, outcome.done_before, stream, tty)

        found: dict[tuple[str, str], Any] = {}

        def record_bound(task: Task, row: dict[str, Any]) -> None:
            bounds = row.pop(BOUNDS_KEY, None)
            if bounds is not None:
                found[task.bounds_key] = bounds
            if task.key not in done:
                record(task, row)

        def record(task: Task | TrainingTask, row: dict[str, Any]) -> None:
            row.pop(BOUNDS_KEY, None)
            db.store(conn, row, "training" if isinstance(task, TrainingTask) else "results")
            outcome.ran += 1
            if row["status"] == Status.ERROR:
                outcome.failed += 1
                outcome.errors.append(f"{task.label()}: {row.get('error')}")
            progress.update(task.label(), row)

        try:
            drive(first, run_task, error_row, executor, slots, record_bound)
            rest: list[Task | TrainingTask] = [
                t.with_bounds(found.get(t.bounds_key)) if t.kind == Kind.SOLVER else t
                for t in todo if t.kind != Kind.BOUND]
            drive(rest + training, run_any, any_error_row, executor, slots, record)
        except KeyboardInterrupt:
            outcome.interrupted = True
            stop_pool(executor)
        except cf.BrokenExecutor as err:  # a worker died (killed, out of memory...)
            outcome.aborted = f"the worker pool broke ({type(err).__name__}: {err})"
            stop_pool(executor)
        finally:
            progress.close()
        outcome.wall_s = time.perf_counter() - t_start
        meta = db.get_meta(conn)
        db.set_meta(conn, {
            "sweep_wall_s": float(meta.get("sweep_wall_s", 0.0)) + outcome.wall_s,
            "last_run_wall_s": outcome.wall_s, "last_run_at": now(),
            "executor": executor_label(workers, dask),
        })
    return outcome


def cpu_count() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worker_count(workers: int | None, tasks: int, remote: bool = False) -> int:
    """Local worker processes for ``tasks`` tasks: ``workers`` (default: the CPUs), capped
    at the tasks and the CPUs (more only wait for a CPU and cost memory); a remote Dask
    scheduler's workers are its own (``workers`` is kept)."""
    if remote:
        return workers or 1
    n = workers or cpu_count()
    return max(1, min(n, tasks, cpu_count()))


def _summary(spec: Any) -> str:
    """``N instances, M tasks (p policy, s solver, b bound)``, and the training cases'."""
    counts = spec.counts()
    parts = []
    if spec.tasks or not spec.training:
        parts.append(f"{spec.instances} instances, {len(spec.tasks)} tasks ({counts['policy']} "
                     f"policy, {counts['solver']} solver, {counts['bound']} bound)")
    if spec.training:
        bounds = sum(t.kind == Kind.BOUND for t in spec.training)
        parts.append(f"{spec.cases} training cases, {len(spec.training)} training tasks "
                     f"({len(spec.training) - bounds} policy, {bounds} bound)")
    return "; ".join(parts)


def run_any(task: Task | TrainingTask) -> dict[str, Any]:
    """Run a collective task or a training task (in a worker): its row."""
    if isinstance(task, TrainingTask):
        return run_training_task(task)
    return run_task(task)


def any_error_row(task: Task | TrainingTask, err: BaseException) -> dict[str, Any]:
    """The row of a task whose worker failed, of either kind."""
    if isinstance(task, TrainingTask):
        return training_error_row(task, err)
    return error_row(task, err)


def _bound_tasks(tasks: list[Task], todo: list[Task]) -> list[Task]:
    """The bound tasks to run first: those to do, and the finished ones whose bounds a
    solver task to do needs (in the spec's order)."""
    needed = {t.bounds_key for t in todo if t.kind == Kind.SOLVER}
    pending = {t.key for t in todo}
    return [t for t in tasks if t.kind == Kind.BOUND
            and (t.key in pending or t.bounds_key in needed)]


__all__ = ["SweepOutcome", "any_error_row", "cpu_count", "locked_database", "run_any",
           "run_spec", "run_sweep", "sweep_command", "worker_count"]
