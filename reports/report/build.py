"""``themis report``: README.md, results.csv and plots from a sweep database.

The database is opened read-only (:func:`reports.db.connect` with
``create=False``): the report never changes it. Files are written atomically.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from reports import db
from reports.report import beyond, markdown, timings  # noqa: F401  (they add sections)
from reports.report.csvfile import write_csv
from reports.report.figures import draw_gap_by_chunks, draw_largest_gap, draw_utilization
from reports.report.stats import alpha_beta_view, group, policy_methods, solver_methods
from reports.sweep.progress import sweep_state
from topologies.files import atomic_write, make_output_dir


def build_report(db_path: str | os.PathLike, out_dir: str | os.PathLike,
                 command: str | None = None) -> list[Path]:
    """Write README.md, results.csv and the plots to ``out_dir``; return the paths."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    if command is None:
        command = shlex.join(["themis", "report", str(db_path), "--out", str(out)])
    conn = db.connect(db_path, create=False)
    try:
        meta = db.get_meta(conn)
        rows = db.read_rows(conn)
        every = group(rows)
        # The sections, plots and per-instance tables are of the alpha-beta model (the
        # solvers' and bounds'); rows of other timings get their own section.
        instances = alpha_beta_view(every)
        methods = policy_methods(instances)
        solvers = solver_methods(instances)
        key, ylabel = ("gap", "mean gap to the best known (%)") if solvers else \
            ("gap_bound", "mean gap to the lower bound (%)")
        data = markdown.ReportData(meta, rows, instances, methods, solvers, key, ylabel,
                                   every=every,
                                   state=sweep_state(meta, db.tasks_done(conn), conn.running))
        make_output_dir(out, "--out")
        written = [write_csv(out / "results.csv", every)]
        draw_gap_by_chunks(instances, methods, out / "gap_by_chunks.png", key, ylabel)
        util_methods = list(methods) + [s for s in solvers if "(" not in s]
        draw_utilization(instances, util_methods, out / "utilization.png")
        written += [out / "gap_by_chunks.png", out / "utilization.png"]
        data.gantt = draw_largest_gap(conn, instances, out / "gantt_largest_gap.png", key)
        if data.gantt:
            written.append(out / "gantt_largest_gap.png")
        body = markdown.body(data)
        head = markdown.header(data, command, time.perf_counter() - t0)
        atomic_write(out / "README.md", "\n".join(head + body).rstrip() + "\n")
        written.append(out / "README.md")
    finally:
        conn.close()
    return written


__all__ = ["build_report"]
