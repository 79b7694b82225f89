"""Where a sweep's tasks run: this process, a local process pool, or Dask.

Local worker processes watch their parent: when the driver dies (even by
``kill -9``) they exit within :data:`WATCH_S` seconds instead of running on
for good (a watchdog thread polls the parent pid; it changes when the process
is re-parented). Ctrl-C is the driver's business: workers ignore SIGINT and the
driver stops them.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from topologies.errors import InputError

#: How often a worker checks that its driver is alive (seconds).
WATCH_S = 0.5


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(WATCH_S)
        if os.getppid() != parent:  # re-parented: the driver is gone
            os._exit(3)


def worker_init() -> None:
    """Worker initializer: ignore Ctrl-C, and exit when the driver dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True,
                     name="themis-parent-watch").start()


def executor_label(workers: int | None, dask: str | None) -> str:
    """How the tasks run, for the report."""
    n = workers or os.cpu_count() or 1
    if dask == "local":
        return f"dask LocalCluster, {n} workers"
    if dask:
        return f"dask {dask}"
    return "in-process" if n == 1 else f"{n} local processes"


@contextlib.contextmanager
def open_executor(workers: int | None, dask: str | None, stream: IO[str]
                  ) -> Iterator[tuple[cf.Executor | None, int]]:
    """(executor, tasks to keep in flight); ``None`` runs tasks in this process.

    A Dask scheduler that cannot be reached is an :class:`InputError` raised
    on entry, before anything is written.
    """
    n = workers or os.cpu_count() or 1
    if dask:
        with _dask_executor(dask, n, stream) as out:
            yield out
    elif n == 1:
        yield None, 1
    else:
        pool = cf.ProcessPoolExecutor(max_workers=n, initializer=worker_init)
        try:
            yield pool, 2 * n
        except BaseException:
            stop_pool(pool)
            raise
        else:
            pool.shutdown(wait=True)


@contextlib.contextmanager
def _dask_executor(dask: str, n: int, stream: IO[str]
                   ) -> Iterator[tuple[cf.Executor, int]]:
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
            client = Client(dask, timeout="10s")
    except (OSError, TimeoutError, ValueError) as err:
        if cluster is not None:
            cluster.close()
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"cannot reach the Dask scheduler ({reason})", "--dask",
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


def stop_pool(pool: cf.Executor | None) -> None:
    """Drop queued tasks and stop a process pool's workers now (running tasks are lost)."""
    if not isinstance(pool, cf.ProcessPoolExecutor):
        return
    processes = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes.values():
        with contextlib.suppress(Exception):
            p.terminate()


def drive(todo: list[Any], run: Callable[[Any], dict[str, Any]],
          error_row: Callable[[Any, BaseException], dict[str, Any]],
          executor: cf.Executor | None, slots: int,
          record: Callable[[Any, dict[str, Any]], None]) -> None:
    """Run ``todo`` with ``run``, keeping ``slots`` tasks in flight, recording each as it
    finishes (a worker that failed, rather than its task, still gives an error row)."""
    if executor is None:
        for task in todo:
            record(task, run(task))
        return
    pending = iter(todo)
    inflight: dict[cf.Future[dict[str, Any]], Any] = {}

    def fill() -> None:
        while len(inflight) < slots:
            task = next(pending, None)
            if task is None:
                return
            inflight[executor.submit(run, task)] = task

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
                record(task, error_row(task, err) if err is not None else fut.result())
            fill()
    except BaseException:
        for fut in inflight:
            fut.cancel()
        raise


__all__ = ["WATCH_S", "drive", "executor_label", "open_executor", "stop_pool", "worker_init"]
