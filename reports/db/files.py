"""Opening a sweep database file: for writing (created, or checked to be one of ours
before anything is written; locked by the caller) or read-only (``immutable`` when no
sweep runs and no log is left to replay, so nothing is written beside it)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path
from typing import IO

from reports.db.rows import _columns, finished_keys, get_meta
from reports.db.schema import _SCHEMA, APPLICATION_ID, COLUMNS
from topologies.errors import InputError
from topologies.files import file_kind

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
