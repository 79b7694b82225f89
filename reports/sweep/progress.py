"""Progress of a sweep: a :mod:`rich` progress bar on a terminal, plain lines otherwise.

rich is used (rather than tqdm) because it also renders the text tables of
:mod:`reports.formatting`, so one well-kept library covers both; it writes no
control codes when the stream is not a terminal, and this module then prints
one plain line per finished task (logs and CI stay readable and greppable).
"""

from __future__ import annotations

import time
from typing import IO, Any

from reports.records import Kind, Status


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def sweep_state(meta: dict[str, str], done: int, running: bool) -> str:
    """How far a sweep got, for a report made from its database: ``""`` when its last run
    finished every task (the sweep's time is then known), else what is partial.

    ``done``: rows stored (finished or failed tasks); ``running``: a sweep held the
    database's lock when the report opened it."""
    total = meta.get("tasks_total")
    of = f"{done} of {int(float(total))}" if total else f"{done}"
    if running:
        return (f"the sweep is still running, {of} tasks done: a partial report; remake it "
                "when the sweep has finished")
    if total and done < int(float(total)):
        return (f"the sweep stopped before its end, {of} tasks done: a partial report; "
                "rerun the sweep to finish it, then remake the report")
    if not meta.get("sweep_wall_s"):
        return f"{of} tasks done; the sweep's time was not recorded (its run was killed)"
    return ""


def describe_result(row: dict[str, Any]) -> str:
    """``123.4 us``, ``123.4 us optimal in 2.1 s``, ``LB 100.0 us``, ``error: ...``
    (a training row's end, ``end_ns``, as a makespan)."""
    if row["status"] == Status.ERROR:
        return f"error: {row.get('error')}"
    if row["kind"] == Kind.BOUND:
        return f"LB {row['lower_bound_ns'] / 1e3:,.1f} us"
    end = row.get("makespan_ns") if "makespan_ns" in row else row.get("end_ns")
    ms = "-" if end is None else f"{end / 1e3:,.1f} us"
    if row["kind"] == Kind.SOLVER:
        return f"{ms} {row['status']} in {row.get('runtime_s') or 0:.1f} s"
    return ms


class Progress:
    """Done/total, failures and ETA: a rich bar on a TTY, one plain line per task otherwise."""

    def __init__(self, total: int, done_before: int, stream: IO[str],
                 tty: bool | None = None) -> None:
        self.total = total
        self.done = done_before
        self.done_before = done_before
        self.failed = 0
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.t0 = time.perf_counter()
        self._bar: Any = None
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
            from rich.progress import Progress as RichProgress

            console = Console(file=stream, force_terminal=True)
            self._bar = RichProgress(
                BarColumn(), MofNCompleteColumn(),
                TextColumn("failed {task.fields[failed]}  ETA {task.fields[eta]}"),
                TextColumn("{task.description}"), console=console, auto_refresh=False)
            self._bar.start()
            self._id = self._bar.add_task("", total=total, completed=done_before, failed=0,
                                          eta=self.eta())
            self._bar.refresh()

    def eta(self) -> str:
        """Remaining time estimated from this run's pace."""
        ran = self.done - self.done_before
        left = self.total - self.done
        if ran <= 0 or left <= 0:
            return "-" if left else "0s"
        return format_duration((time.perf_counter() - self.t0) / ran * left)

    def update(self, label: str, row: dict[str, Any]) -> None:
        """Count one finished task (``label`` says which) and show it."""
        self.done += 1
        if row["status"] == Status.ERROR:
            self.failed += 1
        if self._bar is not None:
            self._bar.update(self._id, completed=self.done, failed=self.failed,
                             eta=self.eta(), description=label[:40])
            self._bar.refresh()
        else:
            self.stream.write(f"[{self.done}/{self.total}] {label}: {describe_result(row)}\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop the bar (its last state stays on screen)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


__all__ = ["Progress", "describe_result", "format_duration"]
