"""``results.csv``, and the reproducibility check between two of them.

A report is reproduced when rerunning its commands gives the same results.csv
except for the columns that describe the run rather than the result
(:data:`RUN_COLUMNS`: runtimes, host, timestamps, package versions). Check two
files with :func:`csv_differences`, or from the shell::

    python -m reports.report reports/at-scale/results.csv new/results.csv
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from reports import db
from reports.records import DEFAULT_TIMING, SCORE_COLUMNS
from reports.report.stats import InstanceResult
from topologies.files import atomic_write

#: Columns that describe how a result was obtained, not what it is.
RUN_COLUMNS: tuple[str, ...] = ("runtime_s", "host", "finished_at", "versions")

#: The columns of results.csv: the database's (without the schedule) and the scores.
CSV_COLUMNS: tuple[str, ...] = tuple(c for c in db.COLUMN_NAMES if c != "schedule_json") \
    + SCORE_COLUMNS


def csv_cell(v: object) -> object:
    """Floats in full precision (repr), ``None`` as an empty cell."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return repr(v)
    return str(v) if hasattr(v, "value") else v  # string enums as their value


def write_csv(path: Path, instances: Sequence[InstanceResult]) -> Path:
    """Write every scored row, one per task, instances in report order."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    # The timing column only when some row was timed with another model than alpha-beta
    # (a sweep without a timing key writes what it always wrote).
    timed = any(r.timing != DEFAULT_TIMING for i in instances for r in i.rows)
    columns = [c for c in CSV_COLUMNS if timed or c != "timing"]
    w.writerow(columns)
    for i in instances:
        for r in i.rows:
            values = {"task_key": i.task_key(r), **i.info.to_row(), **r.to_row(),
                      **r.scores()}
            w.writerow([csv_cell(values.get(c)) for c in columns])
    atomic_write(path, buf.getvalue())
    return path


def _read(path: str | Path) -> tuple[list[str], dict[str, dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = {r["task_key"]: r for r in reader}
        return list(reader.fieldnames or []), rows


def csv_differences(a: str | Path, b: str | Path,
                    ignore: Sequence[str] = RUN_COLUMNS) -> list[str]:
    """How two results.csv files differ outside the ``ignore`` columns ([] if they agree).

    Rows are matched by ``task_key``; each difference is one line naming the
    task and the column with both values.
    """
    cols_a, rows_a = _read(a)
    cols_b, rows_b = _read(b)
    out = []
    if cols_a != cols_b:
        out.append(f"columns differ: {cols_a} != {cols_b}")
    for key in sorted(rows_a.keys() - rows_b.keys()):
        out.append(f"{key}: only in {a}")
    for key in sorted(rows_b.keys() - rows_a.keys()):
        out.append(f"{key}: only in {b}")
    for key in sorted(rows_a.keys() & rows_b.keys()):
        ra, rb = rows_a[key], rows_b[key]
        for c in cols_a:
            if c in ignore or c not in rb:
                continue
            if ra[c] != rb[c]:
                out.append(f"{key}: {c} = {ra[c]!r} != {rb[c]!r}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.report A.csv B.csv``: exit 0 if they agree, else 1."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        sys.stderr.write("usage: python -m reports.report A.csv B.csv\n")
        return 2
    diffs = csv_differences(*args)
    for line in diffs[:50]:
        print(line)
    if len(diffs) > 50:
        print(f"... {len(diffs) - 50} more")
    print(f"{len(diffs)} differences (ignoring {', '.join(RUN_COLUMNS)})")
    return 1 if diffs else 0


__all__ = ["CSV_COLUMNS", "RUN_COLUMNS", "csv_differences", "write_csv"]
