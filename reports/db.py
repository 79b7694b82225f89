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

import fcntl
import json
import math
import os
import sqlite3
import zlib
from pathlib import Path
from typing import IO, Any

from topologies.errors import InputError
from topologies.files import file_kind

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
    ("scaling_error_ns", "REAL"),   # a solver's model on a rounded time grid: its "optimal"
                                    # is within this of the exact optimum (0: exact)
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
    ("parallelism", "TEXT"),        # the workload file's keyword, chakra-et for ETs
    ("network", "TEXT"),            # as written in the spec (path or preset name)
    ("network_label", "TEXT"),
    ("shape", "TEXT"),
    ("npus", "INTEGER"),
    ("system", "TEXT"),             # the system file as written in the spec ("": none)
    ("timing", "TEXT"),             # astra-sim-1.0 | alpha-beta (ETs: any timing)
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


#: ``PRAGMA application_id`` of a sweep database ("THMS"): a database this tool created.
APPLICATION_ID = 0x54484D53

#: Columns holding JSON text, per table, with the shape each must have (checked when a
#: database is read): ``numbers`` a list of numbers, ``counts`` an object of
#: counts (a route histogram), ``object`` a JSON object, ``texts`` an object of texts.
JSON_COLUMNS: dict[str, dict[str, str]] = {
    "results": {"dim_utilization": "numbers", "dim_bytes": "numbers", "routes": "counts",
                "solver_params": "object", "versions": "texts"},
    "training": {"config": "object", "dim_utilization": "numbers", "versions": "texts"},
}


def _number(v: object) -> bool:
    return v is None or (not isinstance(v, bool) and isinstance(v, int | float))


def _json_shape_ok(value: Any, shape: str) -> bool:
    """Whether parsed JSON ``value`` has the column's ``shape`` (see :data:`JSON_COLUMNS`)."""
    if shape == "numbers":
        return isinstance(value, list) and all(_number(v) for v in value)
    if shape == "counts":
        return isinstance(value, dict) and all(_number(v) for v in value.values())
    if shape == "texts":
        return isinstance(value, dict) and all(isinstance(v, str | None)
                                               for v in value.values())
    return isinstance(value, dict)


#: Columns every row of a table has (``*``) and those a row of a status has, as this tool
#: writes them; a report of a row without them would fail.
REQUIRED: dict[str, dict[str, tuple[str, ...]]] = {
    "results": {"*": ("dims", "size_bytes", "chunks")},
    "training": {"*": ("workload", "network", "npus", "passes", "chunks"),
                 "simulated": ("end_ns", "compute_ns", "exposed_comm_ns"),
                 "bound": ("lower_bound_ns",)},
}
#: Time columns that are positive wherever they are set.
POSITIVE: dict[str, frozenset[str]] = {
    "results": frozenset(), "training": frozenset({"end_ns", "lower_bound_ns"})}

_SHAPES = {"numbers": "a JSON list of numbers", "counts": "a JSON object of counts",
           "texts": "a JSON object of texts", "object": "a JSON object"}

#: ``meta`` keys whose values are numbers, and those that are JSON lists.
_META_NUMBERS = frozenset({"tasks_total", "instances", "cpu_count", "sweep_wall_s",
                           "last_run_wall_s", "training_cases"})
_META_COUNTS = frozenset({"tasks_total", "instances", "cpu_count", "training_cases"})
_META_LISTS = frozenset({"training_order"})

_SQLITE_MAGIC = b"SQLite format 3\x00"


class Database(sqlite3.Connection):
    """A connection to a sweep database that knows its file (named in every error) and
    holds the file's lock (released when the connection closes)."""

    path: str = ""
    lock: IO[bytes] | None = None
    #: Opened read-only while a sweep held the file's lock: the sweep is still running.
    running: bool = False

    def close(self) -> None:
        """Close the connection, then release the lock."""
        try:
            super().close()
        finally:
            if self.lock is not None:
                self.lock.close()
                self.lock = None


def damaged(conn: sqlite3.Connection, reason: str, field: str = "",
            value: object = None) -> InputError:
    """The error of a database whose content this tool cannot have written."""
    return InputError(f"{reason} (a damaged sweep database: remake it with its sweep)",
                      field, value, getattr(conn, "path", ""))


def _open_file(path: Path, field: str) -> IO[bytes]:
    """``path`` opened for reading, after checking it is a regular file (one-line errors)."""
    kind = file_kind(path)
    if kind:
        reason = "no such database" if kind == "no such file" else \
            f"is {kind}, not a database file"
        raise InputError(reason, field, str(path))
    try:
        return open(path, "rb")  # noqa: SIM115 (the caller closes it)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", field, str(path)) from None


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def check_owned(path: Path, field: str) -> bool:
    """Whether the existing file ``path`` may be written as a sweep database (``False``:
    it is new, empty); refuse, before anything is written, another application's
    database and a damaged sweep database."""
    with _open_file(path, field) as f:
        head = f.read(len(_SQLITE_MAGIC))
    if not head:
        return False
    if head != _SQLITE_MAGIC:
        raise InputError("not an SQLite database (never written: give a new file)", field,
                         str(path))
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{_read_query(path, True)}",
                               uri=True, timeout=30.0, factory=Database)
        conn.path = str(path)
        try:
            app = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = _tables(conn)
            ours = {"results", "meta", "training"}
            if app not in (0, APPLICATION_ID) or (tables - ours and app != APPLICATION_ID):
                other = ", ".join(sorted(tables - ours)) or f"application id {app}"
                raise InputError(f"another application's database ({other}), not a themis "
                                 "sweep database: never written (give a new file)", field,
                                 str(path))
            if not tables:
                return False
            missing = sorted({"results", "meta"} - tables)
            if missing:
                raise InputError(f"no {' and no '.join(missing)} table (a damaged or foreign "
                                 "database: never written; give a new file)", field, str(path))
            get_meta(conn)
            finished_keys(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as err:
        raise InputError(f"cannot open the database ({err})", field, str(path)) from None
    return True


def connect(path: str | os.PathLike, create: bool = True, field: str = "DB") -> Database:
    """Open a sweep database: with ``create``, for writing (created and initialised if
    missing, WAL mode; only its own folder may be created); else read-only.

    Writing: an existing file must be empty or a sweep database (another
    application's SQLite file is never written). Reading changes nothing and
    leaves no file beside the database: without a running sweep (the file's
    lock is free) and without a write-ahead log to replay, the file is opened
    ``immutable`` (so read-only storage and immutable folders work); a file
    that is not a sweep database is an :class:`InputError` naming ``field``.
    """
    p = Path(path)
    if create:
        from topologies.files import make_output_dir

        make_output_dir(p.parent, field)
        if p.exists() or p.is_symlink():
            check_owned(p, field)
        return _open_write(p, field)
    return _open_read(p, field)


def _open_write(p: Path, field: str) -> Database:
    try:
        conn = sqlite3.connect(str(p), timeout=30.0, factory=Database)
        conn.path = str(p)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.executescript(_SCHEMA)
        have = _columns(conn)
        with conn:  # a database from an older version: add the new columns
            for c, t in COLUMNS:
                if c not in have:
                    conn.execute(f"ALTER TABLE results ADD COLUMN {c} {t}")
    except sqlite3.DatabaseError as err:
        raise InputError(f"cannot open the database for writing ({_why_unwritable(p, err)})",
                         field, str(p)) from None
    conn.row_factory = sqlite3.Row
    return conn


def _why_unwritable(p: Path, err: sqlite3.DatabaseError) -> str:
    """Why SQLite could not open ``p`` for writing, in the operating system's words."""
    import tempfile

    if "unable to open" not in str(err):
        return str(err)
    try:
        os.close(os.open(p, os.O_RDWR | os.O_CREAT, 0o666))
    except OSError as os_err:
        return f"{p}: {os_err.strerror or os_err}"
    try:  # SQLite writes its -wal and -shm files beside the database
        with tempfile.TemporaryFile(dir=p.parent):
            pass
    except OSError as os_err:
        return (f"its folder {p.parent} takes no new file ({os_err.strerror or os_err}): "
                "a sweep writes -wal and -shm files beside its database")
    return str(err)


def _has_log(p: Path) -> bool:
    """Whether ``p`` has a write-ahead log with content (a sweep running, or killed)."""
    wal = Path(f"{p}-wal")
    return wal.is_file() and wal.stat().st_size > 0


def _read_query(p: Path, idle: bool) -> str:
    """The URI query of a read-only open: ``immutable`` (no -shm or -wal file is made, so
    read-only storage works) when no sweep holds the file (``idle``) and there is no
    log to replay."""
    return "mode=ro&immutable=1" if idle and not _has_log(p) else "mode=ro"


def _open_read(p: Path, field: str) -> Database:
    handle = _open_file(p, field)
    try:
        head = handle.read(len(_SQLITE_MAGIC))
        if not head:
            raise InputError("an empty file, not a sweep database", field, str(p))
        if head != _SQLITE_MAGIC:
            raise InputError("not an SQLite database", field, str(p))
        idle = True
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # a sweep holds it (or the file system has no locks): read live
            idle = False
        wal = Path(f"{p}-wal")
        replay = _has_log(p)
        try:
            conn = sqlite3.connect(f"{p.resolve().as_uri()}?{_read_query(p, idle)}", uri=True,
                                   timeout=30.0, factory=Database)
            conn.path = str(p)
            tables = _tables(conn)
        except sqlite3.DatabaseError as err:
            why = str(err)
            if "unable to open" in why and replay:
                why = (f"its write-ahead log {wal.name} cannot be read on this storage ({why}); "
                       "copy the database with its -wal file to writable storage")
            raise InputError(f"cannot open the database read-only ({why})", field,
                             str(p)) from None
    except BaseException:
        handle.close()
        raise
    conn.lock = handle
    conn.running = not idle
    if "results" not in tables:
        conn.close()
        raise InputError("not a sweep database (no results table)", field, str(p))
    if "meta" not in tables:
        conn.close()
        raise InputError("no meta table (a damaged sweep database: remake it with its sweep)",
                         field, str(p))
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


__all__ = ["APPLICATION_ID", "COLUMN_NAMES", "COLUMNS", "JSON_COLUMNS", "TABLES",
           "TRAINING_COLUMN_NAMES", "TRAINING_COLUMNS", "check_owned", "check_rows",
           "connect", "damaged", "Database", "dumps", "finished_keys",
           "get_meta", "pack", "read_rows", "read_schedule", "read_training_rows",
           "set_meta", "store", "unpack"]
