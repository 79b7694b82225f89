"""The sweep database's schema: the columns of ``results`` and ``training``, what each
holds (JSON shapes, required and positive values, enumerated meta keys), the SQL that
creates and fills them, and the file's ``PRAGMA application_id``."""

from __future__ import annotations

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
