"""The sweep database: one SQLite file (stdlib ``sqlite3``, WAL mode).

Table ``results`` holds one row per finished task, keyed by ``task_key``
(instance key + method + AG order, UNIQUE); table ``training`` one row per
finished training task (a ``[[training]]`` case x a method, keyed the same
way). Only the sweep's parent process writes, one committed transaction per
task, so a sweep killed at any moment (even ``kill -9``) keeps every finished
result and never duplicates one: a finished row is never overwritten (a rerun
skips it), a row with status ``error`` is replaced when the task is retried.
Table ``meta`` holds key/value pairs: the spec text, its path, the command
that reproduces the sweep, wall times.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

#: Columns of ``results`` in order, with their SQL types.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("task_key", "TEXT NOT NULL UNIQUE"),
    ("instance_key", "TEXT NOT NULL"),
    ("network", "TEXT"),            # as written in the spec (path or preset name)
    ("network_label", "TEXT"),      # the network's name (file stem) or shape
    ("shape", "TEXT"),              # NPUs per dimension, e.g. 4x4x4
    ("topology", "TEXT"),           # e.g. Ring4@4GB/s x Switch4@1GB/s
    ("dims", "INTEGER"),            # D: dimensions a chunk crosses
    ("npus", "INTEGER"),
    ("size_bytes", "INTEGER"),
    ("chunks", "INTEGER"),
    ("endpoint_delay_ns", "REAL"),
    ("method", "TEXT NOT NULL"),    # themis/scf, cpsat, bound, ...
    ("kind", "TEXT NOT NULL"),      # policy | solver | bound
    ("policy", "TEXT"),
    ("intra", "TEXT"),
    ("timing", "TEXT"),             # the timing model of a policy row (NULL: alpha-beta)
    ("ag_order", "TEXT NOT NULL"),  # reverse | free
    ("status", "TEXT NOT NULL"),    # simulated | optimal | feasible | unknown | bound | error
    ("error", "TEXT"),
    ("makespan_ns", "REAL"),
    ("lower_bound_ns", "REAL"),
    ("lb0_ns", "REAL"),
    ("lb1_ns", "REAL"),
    ("lb2_ns", "REAL"),
    ("lb3_ns", "REAL"),
    ("lb3_method", "TEXT"),         # how LB3 was obtained: optimal | node-limit | lp
    ("ideal_ns", "REAL"),
    ("bw_utilization", "REAL"),
    ("dim_utilization", "TEXT"),    # JSON list, one per active dimension
    ("dim_bytes", "TEXT"),          # JSON list of bytes sent per active dimension
    ("routes", "TEXT"),             # JSON route histogram
    ("runtime_s", "REAL"),
    ("time_limit_s", "REAL"),
    ("threads", "INTEGER"),
    ("solver_params", "TEXT"),      # JSON of the solver parameters asked for, if any
    ("choice", "TEXT"),             # portfolio: the winning candidate; improve: its start
    ("stopped_by", "TEXT"),         # the limit that ended a search: wall | deterministic | nodes
    ("reason", "TEXT"),             # why a solver's status is not its plain answer
    ("valid", "INTEGER"),
    ("versions", "TEXT"),           # JSON: python, ortools, pulp, highspy, themis-sched
    ("host", "TEXT"),
    ("finished_at", "TEXT"),        # UTC ISO 8601
    ("schedule_json", "BLOB"),      # zlib-compressed schedule JSON (solvers, themis, baseline)
)

COLUMN_NAMES: tuple[str, ...] = tuple(c for c, _ in COLUMNS)

#: Columns of ``training`` in order: one training task (a workload on a network under
#: one system, timing and pass count; one policy / discipline, or the iteration bound).
TRAINING_COLUMNS: tuple[tuple[str, str], ...] = (
    ("task_key", "TEXT NOT NULL UNIQUE"),
    ("case_key", "TEXT NOT NULL"),  # hash of the workload, network and configuration
    ("workload", "TEXT"),           # as written in the spec (path or bundled name)
    ("workload_label", "TEXT"),     # the bundled name or the file's stem
    ("parallelism", "TEXT"),        # the workload file's keyword
    ("network", "TEXT"),            # as written in the spec (path or preset name)
    ("network_label", "TEXT"),
    ("shape", "TEXT"),
    ("npus", "INTEGER"),
    ("system", "TEXT"),             # the system file as written in the spec ("": none)
    ("timing", "TEXT"),             # astra-sim-1.0 | alpha-beta
    ("passes", "INTEGER"),
    ("chunks", "INTEGER"),          # chunks per collective of the run
    ("config", "TEXT"),             # JSON: the TrainingConfig without policy and intra
    ("method", "TEXT NOT NULL"),    # themis/scf, ... or bound
    ("kind", "TEXT NOT NULL"),      # policy | bound
    ("policy", "TEXT"),
    ("intra", "TEXT"),
    ("status", "TEXT NOT NULL"),    # simulated | bound | error
    ("error", "TEXT"),
    ("end_ns", "REAL"),             # ASTRA-sim's "all passes finished"
    ("compute_ns", "REAL"),
    ("exposed_comm_ns", "REAL"),    # end - compute
    ("lower_bound_ns", "REAL"),     # the bound task's iteration bound
    ("collective_bytes", "INTEGER"),  # bytes of every collective issued (policy rows)
    ("dim_utilization", "TEXT"),    # JSON list, one per logical dimension
    ("runtime_s", "REAL"),
    ("versions", "TEXT"),
    ("host", "TEXT"),
    ("finished_at", "TEXT"),
)

TRAINING_COLUMN_NAMES: tuple[str, ...] = tuple(c for c, _ in TRAINING_COLUMNS)

#: The columns of each table.
TABLES: dict[str, tuple[str, ...]] = {"results": COLUMN_NAMES,
                                      "training": TRAINING_COLUMN_NAMES}

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS results ("
    + ", ".join(f"{c} {t}" for c, t in COLUMNS)
    + ");\n"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE IF NOT EXISTS training ("
    + ", ".join(f"{c} {t}" for c, t in TRAINING_COLUMNS)
    + ");\n"
)


def _insert(table: str) -> str:
    names = TABLES[table]
    return (f"INSERT INTO {table} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' for _ in names)}) "
            "ON CONFLICT(task_key) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in names if c != "task_key")
            + f" WHERE {table}.status = 'error'")


_INSERT = {table: _insert(table) for table in TABLES}


def connect(path: str | os.PathLike, create: bool = True) -> sqlite3.Connection:
    """Open a sweep database: with ``create``, for writing (created and initialised if
    missing, WAL mode; only its own folder may be created); else read-only.

    A read-only open changes nothing (an empty file stays empty); a file that
    is not a sweep database is an :class:`InputError`.
    """
    from topologies.errors import InputError

    p = Path(path)
    if not create and not p.is_file():
        raise InputError("no such database", "DB", str(p))
    if create:
        from topologies.files import make_output_dir

        make_output_dir(p.parent, "--db")
        if p.exists() and not p.is_file():  # a folder or a device: SQLite would write beside it
            raise InputError("not a regular file (a database is a file)", "--db", str(p))
    try:
        if create:
            conn = sqlite3.connect(str(p), timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            have = _columns(conn)
            with conn:  # a database from an older version: add the new columns
                for c, t in COLUMNS:
                    if c not in have:
                        conn.execute(f"ALTER TABLE results ADD COLUMN {c} {t}")
        else:
            conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
            if not conn.execute("SELECT name FROM sqlite_master "
                                "WHERE name = 'results'").fetchone():
                conn.close()
                raise InputError("not a sweep database (no results table)", "DB", str(p))
    except sqlite3.DatabaseError as err:
        raise InputError(f"cannot open the database ({err})", "DB", str(p)) from None
    conn.row_factory = sqlite3.Row
    return conn


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
    out = {r[0] for r in conn.execute("SELECT task_key FROM results WHERE status != 'error'")}
    if _has_table(conn, "training"):
        out |= {r[0] for r in conn.execute("SELECT task_key FROM training "
                                           "WHERE status != 'error'")}
    return out


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None


def read_training_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every row of ``training`` as a dict, in the order they were stored ([] for a
    database without training tasks, or from before the table existed)."""
    if not _has_table(conn, "training"):
        return []
    cur = conn.execute(f"SELECT {', '.join(TRAINING_COLUMN_NAMES)} FROM training "
                       "ORDER BY rowid")
    return [dict(zip(TRAINING_COLUMN_NAMES, r, strict=True)) for r in cur]


def set_meta(conn: sqlite3.Connection, items: dict[str, Any]) -> None:
    """Store key/value pairs in ``meta`` (values that are not text as JSON)."""
    with conn:
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in items.items()])


def get_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """All of ``meta``."""
    return {k: v for k, v in conn.execute("SELECT key, value FROM meta")}


def read_rows(conn: sqlite3.Connection, schedules: bool = False) -> list[dict[str, Any]]:
    """Every result row as a dict (``schedule_json`` only with ``schedules``)."""
    have = _columns(conn)
    cols = [c for c in COLUMN_NAMES if (schedules or c != "schedule_json") and c in have]
    cur = conn.execute(f"SELECT {', '.join(cols)} FROM results ORDER BY rowid")
    return [dict(zip(cols, r, strict=True)) | {c: None for c in COLUMN_NAMES
                                               if c not in have} for r in cur]


def read_schedule(conn: sqlite3.Connection, task_key: str) -> Any:
    """The :class:`themis.schedule.Schedule` stored with a task, or ``None``."""
    r = conn.execute("SELECT schedule_json FROM results WHERE task_key = ?",
                     (task_key,)).fetchone()
    if r is None or r[0] is None:
        return None
    from themis.schedule import Schedule

    return Schedule.from_dict(json.loads(unpack(r[0])))


def pack(text: str) -> bytes:
    """Compress text for a BLOB column."""
    return zlib.compress(text.encode(), 6)


def unpack(blob: bytes) -> str:
    """Inverse of :func:`pack`."""
    return zlib.decompress(blob).decode()


def dumps(obj: Any) -> str:
    """Compact JSON for the JSON columns."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


__all__ = ["COLUMNS", "COLUMN_NAMES", "TABLES", "TRAINING_COLUMNS", "TRAINING_COLUMN_NAMES",
           "connect", "dumps", "finished_keys", "get_meta", "pack", "read_rows",
           "read_schedule", "read_training_rows", "set_meta", "store", "unpack"]
