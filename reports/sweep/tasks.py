"""A sweep's unit of work: one :class:`reports.methods.Method` on one instance.

:func:`run_task` runs in a worker (a local process, this process or a Dask
worker) and returns the task's database row: the instance's columns, the
:class:`reports.records.MethodResult` columns and the compressed schedule.
"""

from __future__ import annotations

import datetime as dt
import functools
import platform
from dataclasses import dataclass, field, replace
from typing import Any

from reports.methods import Method, run_method
from reports.records import InstanceInfo, Kind, MethodResult, Status, task_key

#: The key of a bound task's row that carries its :class:`solvers.Bounds` back to the
#: driver (not a database column).
BOUNDS_KEY = "_bounds"


@dataclass(frozen=True)
class Task:
    """One method on one instance (``network``: the name the spec gave it).

    ``bounds``: the :class:`solvers.Bounds` of the instance for a solver task's AG
    variant, when the sweep has computed them (its bound task): the solver then does
    not compute them again.
    """

    instance: Any  # themis.instance.Instance (untyped: cheap to import this module)
    network: str
    method: Method
    bounds: Any = field(default=None, compare=False, repr=False)

    @property
    def bounds_key(self) -> tuple[str, str]:
        """(instance key, AG variant): the bound task a solver task shares."""
        return self.instance.key(), str(self.method.ag_order)

    def with_bounds(self, bounds: Any) -> Task:
        """This task, given its instance's bounds."""
        return replace(self, bounds=bounds)

    @property
    def key(self) -> str:
        """``<instance key>:<method>:<ag_order>``, the row's UNIQUE key."""
        return task_key(self.instance.key(), self.method.label, str(self.method.ag_order))

    @property
    def kind(self) -> Kind:
        """The method's kind."""
        return self.method.kind

    def label(self) -> str:
        """E.g. ``cpsat (free) on small-2d 64MiB C=4``."""
        what = self.method.display if self.kind == Kind.SOLVER else self.method.label
        return f"{what} on {self.instance.label()}"

    def info(self) -> InstanceInfo:
        """The instance's columns."""
        return InstanceInfo.of(self.instance, self.network)


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


def now() -> str:
    """The UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def task_row(task: Task, result: MethodResult) -> dict[str, Any]:
    """The database row of a task's result (stamped with versions, host and time)."""
    from reports.db import pack

    result.versions = versions()
    result.host = platform.node()
    result.finished_at = now()
    row = {"task_key": task.key, **task.info().to_row(), **result.to_row()}
    if result.schedule is not None and task.method.keeps_schedule():
        row["schedule_json"] = pack(result.schedule.to_json())
    return row


def run_task(task: Task) -> dict[str, Any]:
    """Run one task and return its database row (never raises for a task's failure).

    A bound task's row also carries its :class:`solvers.Bounds` under
    :data:`BOUNDS_KEY`, for the solver tasks of the same instance and AG variant.
    """
    try:
        result = run_method(task.instance, task.method, catch_sigint=False,
                            bounds=task.bounds)
    except Exception as err:  # recorded, retried on the next run
        result = task.method.result(Status.ERROR, valid=False,
                                    error=f"{type(err).__name__}: {err}"[:4000])
    row = task_row(task, result)
    if task.kind == Kind.BOUND and result.status == Status.BOUND:
        row[BOUNDS_KEY] = result.detail
    return row


def error_row(task: Task, err: BaseException) -> dict[str, Any]:
    """The row of a task whose worker failed (the task itself did not report)."""
    return task_row(task, task.method.result(Status.ERROR, valid=False,
                                             error=f"{type(err).__name__}: {err}"[:4000]))


__all__ = ["BOUNDS_KEY", "Task", "error_row", "now", "run_task", "task_row", "versions"]
