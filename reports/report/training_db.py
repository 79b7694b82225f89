"""``themis train-report --db``: the training tables of a sweep database's training tasks.

A sweep spec's ``[[training]]`` tables (:mod:`reports.sweep.training`) store
one row per (case, method) in the database's ``training`` table. This module
reads them back (read-only) into :class:`reports.report.training_tables.Row` rows, one
group per *setting* (system, timing, passes, chunks: the cases of one setting
differ only in workload and network), and writes ``README.md`` (per setting the
speed-up, iteration-time and exposed-communication tables and the findings of
the training report), ``results.csv`` (the report's columns, then the
setting's) and one speed-up plot per setting. Cases and methods are in the
spec's order (the sweep stores it); a case is in the tables once every one of
its methods has finished.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports.report.training_plots import has_speedups, write_speedups
from reports.report.training_tables import (
    FAMILIES,
    Row,
    case_table,
    findings,
    labels_of,
    rows_csv,
    speedup_table,
)
from topologies.errors import InputError
from topologies.files import atomic_write, make_output_dir


@dataclass(frozen=True)
class SweepRow(Row):
    """A :class:`Row` of a sweep, with its setting."""

    system: str
    timing: str
    passes: int
    chunks: int


@dataclass(frozen=True)
class Setting:
    """What the cases of one group share."""

    system: str
    timing: str
    passes: int
    chunks: int

    def label(self) -> str:
        """E.g. ``astra-sim-1.0, 64 chunks, 1 pass, system sys.txt``."""
        passes = f"{self.passes} pass{'es' if self.passes != 1 else ''}"
        system = f"system {self.system}" if self.system else "no system file"
        return f"{self.timing}, {self.chunks} chunks, {passes}, {system}"


@dataclass
class Study:
    """A database's training tasks, as the report shows them."""

    meta: dict[str, str]
    settings: list[tuple[Setting, list[SweepRow]]]
    tasks: int
    finished: int
    failed: int
    incomplete: list[str]
    earlier: int
    #: How far the sweep got when it is not finished (:func:`reports.sweep.progress.sweep_state`).
    state: str = ""


def _setting(row: dict[str, Any]) -> Setting:
    return Setting(row["system"] or "", row["timing"], int(row["passes"]), int(row["chunks"]))


def _ordered(rows: list[dict[str, Any]], meta: dict[str, str]) -> tuple[list[dict], int]:
    """The rows of the spec's tasks in its order, and how many rows are of earlier specs
    (an order that is not stored: every row, by names)."""
    order = json.loads(meta["training_order"]) if meta.get("training_order") else None
    if order is None:
        return sorted(rows, key=lambda r: (r["workload"], r["network"], r["task_key"])), 0
    index = {k: i for i, k in enumerate(order)}
    mine = sorted((r for r in rows if r["task_key"] in index), key=lambda r: index[r["task_key"]])
    return mine, len(rows) - len(mine)


def read_rows(db_path: str | os.PathLike) -> tuple[list[dict[str, Any]], dict[str, str], str]:
    """The training rows of the database ``db_path`` (opened read-only), its meta and how
    far its sweep got (:func:`reports.sweep.progress.sweep_state`; empty when finished)."""
    from reports import db
    from reports.sweep.progress import sweep_state

    conn = db.connect(db_path, create=False, field="--db")
    try:
        meta = db.get_meta(conn)
        stored = db.read_training_rows(conn)
        state = sweep_state(meta, db.tasks_done(conn), conn.running)
    finally:
        conn.close()
    if not stored:
        raise InputError("holds no training task (a spec's [[training]] tables make them: "
                         "themis sweep SPEC.toml --db DB)", "--db", str(db_path))
    return stored, meta, state


def read_study(db_path: str | os.PathLike) -> Study:
    """The training tasks of the database ``db_path`` (opened read-only)."""
    return study_of(*read_rows(db_path))


def study_of(stored: list[dict[str, Any]], meta: dict[str, str], state: str = "") -> Study:
    """The study of training rows (as the database stores them, or as
    :func:`~reports.sweep.training.run_training_task` returns them) and the sweep's meta
    (``training_order``: the tasks' order); ``state`` says how far an unfinished sweep
    got (empty when it finished)."""
    rows, earlier = _ordered(stored, meta)
    family_of = {w: f for f, ws in FAMILIES.items() for w in ws}
    groups: dict[Setting, dict[tuple[str, str], dict[str, dict]]] = {}
    labels: dict[Setting, list[str]] = {}
    for r in rows:
        s = _setting(r)
        case = groups.setdefault(s, {}).setdefault((r["workload"], r["network"]), {})
        case[r["method"]] = r
        if r["kind"] == "policy" and r["method"] not in labels.setdefault(s, []):
            labels[s].append(r["method"])
    settings, incomplete = [], []
    for s, cases in groups.items():
        out: list[SweepRow] = []
        for (wname, nname), methods in cases.items():
            done = {m: r for m, r in methods.items() if r["status"] != "error"}
            missing = [m for m in labels.get(s, []) if m not in done]
            if missing or not labels.get(s):
                incomplete.append(f"{wname} on {nname} ({s.label()}): "
                                  f"{', '.join(missing) or 'no policy'}")
                continue
            bound = done.get("bound", {}).get("lower_bound_ns")
            bound = math.nan if bound is None else float(bound)
            base = float(done[labels[s][0]]["end_ns"])
            for m in labels[s]:
                r = done[m]
                end = float(r["end_ns"])
                out.append(SweepRow(family_of.get(r["workload_label"], ""), wname, nname,
                                    int(r["npus"]), m, end, float(r["compute_ns"]),
                                    float(r["exposed_comm_ns"]), bound, base / end,
                                    base / bound, s.system, s.timing, s.passes, s.chunks))
        if out:
            settings.append((s, out))
    failed = sum(r["status"] == "error" for r in rows)
    return Study(meta, settings, len(rows), len(rows) - failed, failed, incomplete, earlier,
                 state)


@contextmanager
def report_folder(out: str | Path, field: str = "--out") -> Iterator[Path]:
    """The output folder ``out``, checked and locked for one writer, before any run.

    Created if missing (one level), it must be writable (a file is created and
    removed in it), and it is locked (``flock`` on the folder itself, released
    when the process ends, even by ``kill -9``): a second report into the same
    folder is refused instead of racing the first. A folder this call created
    is removed again if the run stops (an error, Ctrl-C) while it is still empty.
    """
    import fcntl
    import os
    import tempfile

    from topologies.errors import InputError
    from topologies.files import output_error

    existed = Path(out).is_dir()
    folder = make_output_dir(out, field)
    fd = -1
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError("another train-report is writing into this folder (wait for it "
                             "or choose another --out)", field, str(out)) from None
        try:
            probe, name = tempfile.mkstemp(dir=folder, prefix=".write-test.")
            os.close(probe)
            os.unlink(name)
        except OSError as err:
            raise output_error(err, folder, field) from None
        yield folder
    except BaseException:
        if not existed and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def write_db_report(db_path: str | os.PathLike, out_dir: str | os.PathLike,
                    command: str | None = None) -> list[Path]:
    """Write README.md, results.csv and the speed-up plots of the database's training
    tasks to ``out_dir`` (checked and locked first); returns the files written."""

    t0 = time.perf_counter()
    study = read_study(db_path)
    if not study.settings:
        raise InputError("has no training case whose methods have all finished (rerun "
                         "the sweep)", "--db", str(db_path))
    command = command or shlex.join(["themis", "train-report", "--db", str(db_path),
                                     "--out", str(out_dir)])
    return write_study(study, out_dir, command, t0)


def write_study(study: Study, out_dir: str | os.PathLike, command: str,
                t0: float | None = None) -> list[Path]:
    """Write README.md, results.csv and the speed-up plots of ``study`` to ``out_dir``
    (``t0``: when the work began, for the wall time the README quotes)."""
    with report_folder(Path(out_dir), "--out") as out:
        return write_study_into(study, out, command, t0)


def write_study_into(study: Study, out: Path, command: str, t0: float | None = None
                     ) -> list[Path]:
    """:func:`write_study` into the folder ``out``, already checked and locked by the
    caller (:func:`report_folder`)."""
    t0 = time.perf_counter() if t0 is None else t0
    written = []
    plots: list[str | None] = []
    for i, (setting, rows) in enumerate(study.settings):
        if not has_speedups(rows):  # one policy and no bound: nothing to draw
            plots.append(None)
            continue
        name = "speedups.png" if len(study.settings) == 1 else f"speedups-{i + 1}.png"
        written.append(write_speedups(out, rows, name, rows[0].timing,
                                      setting=setting.label()))
        plots.append(name)
    every = [r for _, rows in study.settings for r in rows]
    atomic_write(out / "results.csv", rows_csv(every))
    atomic_write(out / "README.md", readme(study, command, plots,
                                           time.perf_counter() - t0))
    return [out / "README.md", out / "results.csv", *written]


def readme(study: Study, command: str, plots: list[str | None], wall_s: float) -> str:
    """The README's text."""
    meta = study.meta
    lines = [f"# {meta.get('title') or 'Training study'}", ""]
    if meta.get("description"):
        lines += [meta["description"], ""]
    sweep = meta.get("command", "themis sweep SPEC.toml --db DB")
    made = (f"Made by `{command}` ({wall_s:.1f} s): {study.tasks} tasks, {study.finished} "
            f"finished, {study.failed} failed. Every value is simulated, so a rerun writes "
            "the same numbers." if meta.get("direct") else
            f"Made by `{command}` ({wall_s:.1f} s) from the training tasks of the sweep "
            f"`{sweep}`: {study.tasks} tasks, {study.finished} finished, {study.failed} "
            "failed. Every value is simulated, so a rerun of both commands writes the "
            "same numbers.")
    lines += [made + " Speed-up = the first policy's end / a policy's end; the bound "
              "is the iteration lower bound of `themis.training.bound` (the window LP; for "
              "Chakra traces `themis.training.et_bound`, the slot windows), valid for "
              "every policy and discipline; its own task per case, `-` without one; the "
              "bound's speed-up = the first policy's end / bound. Raw numbers: "
              "`results.csv`.", ""]
    if study.state:
        lines += [study.state[0].upper() + study.state[1:] + ".", ""]
    if study.incomplete:
        lines += [f"Not in the tables ({len(study.incomplete)} cases with a method not "
                  "finished; rerun the sweep to retry failed tasks): "
                  + "; ".join(study.incomplete[:20])
                  + (" ..." if len(study.incomplete) > 20 else "") + ".", ""]
    if study.earlier:
        lines += [f"{study.earlier} rows of tasks the spec no longer names are left out.", ""]
    for (setting, rows), plot in zip(study.settings, plots, strict=True):
        labels = labels_of(rows)
        lines += [f"## {setting.label()}", "",
                  f"Workloads {', '.join(dict.fromkeys(r.workload for r in rows))}; networks "
                  f"{', '.join(dict.fromkeys(r.network for r in rows))}; policies "
                  f"{', '.join(labels)}. "
                  + (f"Plot: `{plot}`." if plot else
                     "No plot: one policy and no bound task, so there is no speed-up to "
                     "draw (name a second policy, or leave `bound` on)."), "",
                  f"### Speed-up over {labels[0]} (mean / max over the networks)", "",
                  speedup_table(rows), "", "### Iteration time (ms)", "",
                  case_table(rows, "end_ns"), "",
                  "### Exposed communication (ms; end - compute)", "",
                  case_table(rows, "exposed_comm_ns"), "", "### What the runs show", "",
                  findings(rows), ""]
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["Setting", "Study", "SweepRow", "read_rows", "read_study", "readme", "report_folder",
           "study_of",
           "write_db_report", "write_study", "write_study_into"]
