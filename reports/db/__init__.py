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

The package: :mod:`reports.db.schema` (columns, shapes, SQL), :mod:`reports.db.files`
(opening a file for writing or read-only) and :mod:`reports.db.rows` (storing and
reading rows and ``meta``); every name is re-exported here.
"""

from reports.db.files import Database, check_owned, connect
from reports.db.files import _has_log as _has_log  # a test reads it
from reports.db.rows import (
    check_rows,
    damaged,
    dumps,
    finished_keys,
    get_meta,
    pack,
    read_rows,
    read_schedule,
    read_training_rows,
    set_meta,
    store,
    tasks_done,
    unpack,
)
from reports.db.schema import (
    APPLICATION_ID,
    COLUMN_NAMES,
    COLUMNS,
    JSON_COLUMNS,
    TABLES,
    TRAINING_COLUMN_NAMES,
    TRAINING_COLUMNS,
)

__all__ = ["APPLICATION_ID", "COLUMN_NAMES", "COLUMNS", "JSON_COLUMNS", "TABLES",
           "TRAINING_COLUMN_NAMES", "TRAINING_COLUMNS", "check_owned", "check_rows",
           "connect", "damaged", "Database", "dumps", "finished_keys",
           "get_meta", "pack", "read_rows", "read_schedule", "read_training_rows",
           "set_meta", "store", "tasks_done", "unpack"]
