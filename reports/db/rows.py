"""Rows of a sweep database: storing one task's row, reading rows back (every value this
tool cannot have written refused in one line), ``meta``, and the BLOB/JSON encodings."""

from __future__ import annotations

import json
import math
import sqlite3
import zlib
from typing import Any

from reports.db.schema import (
    _INSERT,
    _META_COUNTS,
    _META_LISTS,
    _META_NUMBERS,
    _SHAPES,
    COLUMN_NAMES,
    COLUMNS,
    JSON_COLUMNS,
    POSITIVE,
    REQUIRED,
    TABLES,
    TRAINING_COLUMN_NAMES,
    TRAINING_COLUMNS,
    _json_shape_ok,
)
from topologies.errors import InputError


def damaged(conn: sqlite3.Connection, reason: str, field: str = "",
            value: object = None) -> InputError:
    """The error of a database whose content this tool cannot have written."""
    return InputError(f"{reason} (a damaged sweep database: remake it with its sweep)",
                      field, value, getattr(conn, "path", ""))

def _columns(conn: sqlite3.Connection) -> set[str]:
    return {r[1] for r in conn.execute("PRAGMA table_info(results)")}

def store(conn: sqlite3.Connection, row: dict[str, Any], table: str = "results") -> bool:
    """Insert one task's row into ``table`` (``results`` or ``training``) and commit;
    ``True`` if it was written.

    A finished row already there is kept (never duplicated, never replaced);
    an ``error`` row is replaced.
    """
    values = [row.get(c) for c in TABLES[table]]
    with conn:
        cur = conn.execute(_INSERT[table], values)
    return cur.rowcount > 0

def finished_keys(conn: sqlite3.Connection) -> set[str]:
    """Keys of tasks finished without error, of both tables (a rerun skips them)."""
    out: set[str] = set()
    for table in ("results", "training"):
        if table != "results" and not _has_table(conn, table):
            continue
        for key, status in conn.execute(f"SELECT task_key, status FROM {table}"):
            if not isinstance(key, str) or not isinstance(status, str):
                raise damaged(conn, "a task key or status that is not text",
                              f"{table}.task_key", key)
            if status != "error":
                out.add(key)
    return out

def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None

def _allowed(table: str) -> dict[str, frozenset[str]]:
    """The values of the enumerated columns of ``table``."""
    from reports.records import Kind, Status
    from themis.plans import AgOrder

    if table == "results":
        return {"kind": frozenset(map(str, Kind)), "status": frozenset(map(str, Status)),
                "ag_order": frozenset(map(str, AgOrder))}
    return {"kind": frozenset({str(Kind.POLICY), str(Kind.BOUND)}),
            "status": frozenset({str(Status.SIMULATED), str(Status.BOUND),
                                 str(Status.ERROR)})}

def check_rows(conn: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """Refuse (:class:`InputError` naming the database, the row, the column and the value)
    a value this tool cannot have written: text in a number column, JSON that does not
    parse, an unknown kind or status, a missing required value."""
    types = dict(COLUMNS if table == "results" else TRAINING_COLUMNS)
    allowed = _allowed(table)
    json_cols = JSON_COLUMNS[table]
    required, positive = REQUIRED[table], POSITIVE[table]
    for n, row in enumerate(rows, 1):
        for col in (*required["*"], *required.get(str(row.get("status")), ())):
            if col in row and row[col] is None:
                raise damaged(conn, f"a {row.get('status')} row without its {col}",
                              f"{table}.{col} (row {n})")
        if table == "training" and isinstance(row.get("method"), str) and (
                (row["method"] == "bound") != (row.get("kind") == "bound")):
            raise damaged(conn, f"a {row.get('kind')} row of the method {row['method']!r} (only "
                          "the bound task's method is bound)", f"training.method (row {n})",
                          row["method"])
        for col, value in row.items():
            decl = types.get(col)
            if decl is None or col == "schedule_json":
                continue
            where = f"{table}.{col} (row {n})"
            if value is None:
                if "NOT NULL" in decl:
                    raise damaged(conn, "a required value is missing", where)
                continue
            sql = decl.split()[0]
            if sql in ("REAL", "INTEGER"):
                if isinstance(value, bool) or not isinstance(value, int | float) or (
                        sql == "INTEGER" and not isinstance(value, int)):
                    raise damaged(conn, "not a number", where, value)
                if not math.isfinite(value):
                    raise damaged(conn, "not a finite number", where, value)
                if sql == "INTEGER" and value < 0:
                    raise damaged(conn, "a negative count", where, value)
                if col in positive and value <= 0:
                    raise damaged(conn, "not a positive time", where, value)
            elif not isinstance(value, str):
                raise damaged(conn, "not text", where, value)
            elif col in allowed and value not in allowed[col]:
                raise damaged(conn, f"not one of {', '.join(sorted(allowed[col]))}", where,
                              value)
            elif col in json_cols:
                try:
                    parsed = json.loads(value)
                except ValueError:
                    raise damaged(conn, "not JSON", where, value) from None
                if not _json_shape_ok(parsed, json_cols[col]):
                    raise damaged(conn, f"not {_SHAPES[json_cols[col]]}", where, value)

def read_training_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every row of ``training`` as a dict, in the order they were stored ([] for a
    database without training tasks, or from before the table existed); a damaged row
    is an :class:`InputError`."""
    if not _has_table(conn, "training"):
        return []
    have = {r[1] for r in conn.execute("PRAGMA table_info(training)")}
    missing = [c for c in TRAINING_COLUMN_NAMES if c not in have]
    if missing:
        raise damaged(conn, f"the training table lacks the columns {', '.join(missing)}")
    cur = conn.execute(f"SELECT {', '.join(TRAINING_COLUMN_NAMES)} FROM training "
                       "ORDER BY rowid")
    rows = [dict(zip(TRAINING_COLUMN_NAMES, r, strict=True)) for r in cur]
    check_rows(conn, "training", rows)
    return rows

def set_meta(conn: sqlite3.Connection, items: dict[str, Any]) -> None:
    """Store key/value pairs in ``meta`` (values that are not text as JSON)."""
    with conn:
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in items.items()])

def tasks_done(conn: sqlite3.Connection) -> int:
    """Rows stored in both tables (finished or failed tasks): what a partial sweep did."""
    return sum(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
               for table in ("results", "training") if _has_table(conn, table))

def get_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """All of ``meta``; a value this tool cannot have written is an :class:`InputError`."""
    out: dict[str, str] = {}
    for key, value in conn.execute("SELECT key, value FROM meta"):
        if not isinstance(key, str) or not isinstance(value, str | None):
            raise damaged(conn, "not text", f"meta.{key}", value)
        if value is None:
            continue
        if key in _META_NUMBERS or key in _META_LISTS:
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if key in _META_NUMBERS and (isinstance(parsed, bool)
                                         or not isinstance(parsed, int | float)
                                         or not math.isfinite(parsed) or parsed < 0):
                raise damaged(conn, "not a number >= 0", f"meta.{key}", value)
            if key in _META_COUNTS and not isinstance(parsed, int):
                raise damaged(conn, "not a whole number", f"meta.{key}", value)
            if key in _META_LISTS and not (isinstance(parsed, list)
                                           and all(isinstance(k, str) for k in parsed)):
                raise damaged(conn, "not a JSON list of task keys", f"meta.{key}", value)
        out[key] = value
    return out

def read_rows(conn: sqlite3.Connection, schedules: bool = False) -> list[dict[str, Any]]:
    """Every result row as a dict (``schedule_json`` only with ``schedules``); a damaged
    row is an :class:`InputError`."""
    have = _columns(conn)
    missing = [c for c, t in COLUMNS if "NOT NULL" in t and c not in have]
    if missing:
        raise damaged(conn, f"the results table lacks the columns {', '.join(missing)}")
    cols = [c for c in COLUMN_NAMES if (schedules or c != "schedule_json") and c in have]
    cur = conn.execute(f"SELECT {', '.join(cols)} FROM results ORDER BY rowid")
    rows = [dict(zip(cols, r, strict=True)) | {c: None for c in COLUMN_NAMES
                                               if c not in have} for r in cur]
    check_rows(conn, "results", rows)
    return rows

def read_schedule(conn: sqlite3.Connection, task_key: str) -> Any:
    """The :class:`themis.schedule.Schedule` stored with a task, or ``None`` (a damaged
    one is an :class:`InputError`)."""
    r = conn.execute("SELECT schedule_json FROM results WHERE task_key = ?",
                     (task_key,)).fetchone()
    if r is None or r[0] is None:
        return None
    from themis.schedule import Schedule

    try:
        return Schedule.from_dict(json.loads(unpack(r[0])))
    except (zlib.error, ValueError, TypeError, KeyError, IndexError, AttributeError) as err:
        raise damaged(conn, f"not a stored schedule ({type(err).__name__})",
                      f"results.schedule_json of task {task_key}") from None

def pack(text: str) -> bytes:
    """Compress text for a BLOB column."""
    return zlib.compress(text.encode(), 6)

def unpack(blob: bytes) -> str:
    """Inverse of :func:`pack`."""
    return zlib.decompress(blob).decode()

def dumps(obj: Any) -> str:
    """Compact JSON for the JSON columns."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)
