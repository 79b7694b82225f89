"""The ``themis train-report`` command: a training spec run as a sweep, then its report.

``themis train-report [--out DIR]`` runs the training report's spec
(``reports/specs/training.toml``, :data:`reports.report.training.SPEC`) as a sweep
(:func:`reports.sweep.run.run_spec`) into a database, a temporary one or ``--db
F.sqlite`` (kept; a rerun skips the finished tasks, as ``themis sweep`` does; an
interrupted or failed run keeps the temporary one too and prints the command that
resumes it), then writes the report from that database
(:func:`reports.report.training.write_report`). ``--spec S.toml`` runs another spec
(one ``[[training]]`` setting); ``--workloads``, ``--networks``, ``--system`` and
``--policies`` replace those keys of the spec's ``[[training]]`` table. Chakra traces
among ``--workloads`` run as a ``[[training]]`` table of the flags alone, and their
report is the study report of :mod:`reports.report.training_db`. ``themis
train-report --db F.sqlite --out DIR`` alone writes the study report of a sweep
database's training tasks (nothing is run).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from reports.cli.common import load_system, sweep_exit
from topologies.errors import InputError

#: The report folder when neither ``--out`` nor ``--db`` is given.
DEFAULT_OUT = "reports/training"
#: The flag of each key of the [[training]] table the flags replace.
_FLAGS = {"workloads": "--workloads", "networks": "--networks", "systems": "--system",
          "policies": "--policies", "intra": "--policies", "comm_group": "--comm-group"}
#: The keys of a ``[[training]]`` table that name files (relative to their spec).
_FILE_KEYS = ("workloads", "networks", "systems")


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``train-report`` to the ``themis`` subcommands."""
    p = sub.add_parser(
        "train-report", help="remake the training report (every workload, network and policy)",
        description="Run the training report's spec (reports/specs/training.toml, or "
                    "--spec) as a sweep into a database (temporary, or --db to keep and "
                    "resume it) and write README.md, results.csv and plots from it; or, "
                    "with --db alone, write the tables of a sweep database's training "
                    "tasks (a spec's [[training]] tables).")
    p.add_argument("--out", default=None, metavar="DIR",
                   help=f"output folder (default {DEFAULT_OUT}; needed with --db alone)")
    p.add_argument("--spec", default=None, metavar="SPEC.toml",
                   help="the sweep spec to run: one [[training]] setting (one system, "
                        "timing, pass count and chunk count; default: the training "
                        "report's, reports/specs/training.toml)")
    p.add_argument("--workloads", default=None, metavar="A,B",
                   help="comma-separated bundled workloads (default: the spec's, every "
                        "family's), or Chakra traces (a prefix, folder or .et file, as "
                        "train takes them; with --system 2.x's JSON and --networks of their "
                        "NPUs)")
    p.add_argument("--networks", default=None, metavar="A,B",
                   help="comma-separated networks (default: the spec's, {training_networks})")
    p.add_argument("--system", metavar="FILE",
                   help="ASTRA-sim system file whose values every run starts from, as "
                        "themis train --system (a key it omits gets ASTRA-sim's own "
                        "default); default: the spec's (the report's: LIFO, endpoint-delay "
                        "10, 64 splits, boost mode, localBWAware)")
    p.add_argument("--policies", default=None, metavar="A,B/D",
                   help="comma-separated methods, each a policy ({policies} | "
                        "themis-running) optionally /discipline ({disciplines}); one without "
                        "takes the system's discipline (FIFO if it names none); auto/best "
                        "is auto with its best candidate's. The first is the one speed-ups "
                        "are measured against (default: the spec's, baseline/fifo, "
                        "themis/fifo, themis/scf, themis-running/scf, portfolio/scf, "
                        "online-mix/feed, global-mix/feed, auto/best)")
    p.add_argument("--comm-group", metavar="FILE.json", default=None,
                   help="Chakra traces among --workloads: communicator groups, "
                        "{\"<id>\": [npu ids]} (as train's --comm-group)")
    p.add_argument("--db", default=None, metavar="FILE.sqlite",
                   help="the sweep database to run the spec into and keep (a rerun resumes "
                        "it); alone (no --spec, --workloads, --networks, --system, "
                        "--policies): write the report of this database's training tasks "
                        "(opened read-only; nothing is simulated)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local worker processes of the sweep (default: the CPUs; 1 runs in "
                        "this process)")
    p.set_defaults(func=cmd_train_report)


def comma_names(text: str | None, flag: str) -> list[str] | None:
    """A comma-separated list of names (``None`` when the flag is not given)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError("names nothing (give comma-separated names)", flag, text)
    return names


def _given(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The flags that choose what runs, as (flag, value)."""
    return [(flag, value) for flag, value in
            (("--spec", args.spec), ("--workloads", args.workloads),
             ("--networks", args.networks), ("--system", args.system),
             ("--policies", args.policies), ("--comm-group", args.comm_group))
            if value is not None]


def cmd_train_report(args: argparse.Namespace) -> int:
    """``themis train-report [--out DIR] [--spec S.toml] [--db F.sqlite] [--workers N]
    [--workloads A,B] [--networks A,B] [--system FILE] [--policies A,B]``, or
    ``themis train-report --db F.sqlite --out DIR``."""
    if args.db is not None and not _given(args):
        return _from_database(args)
    if args.workers is not None and args.workers < 1:
        raise InputError("must be at least 1", "--workers", args.workers)
    from topologies.chakra.ranks import is_et_source

    out = args.out if args.out is not None else DEFAULT_OUT
    workloads = comma_names(args.workloads, "--workloads")
    networks = comma_names(args.networks, "--networks")
    traces = any(is_et_source(w) for w in workloads or ())
    if args.comm_group is not None and not traces:
        raise InputError("only Chakra traces among --workloads take communicator groups",
                         "--comm-group", args.comm_group)
    if traces and args.spec is not None:
        raise InputError("Chakra traces among --workloads run as a table of the flags "
                         "alone (give them in the spec instead)", "--spec", args.spec)
    if traces and not networks:  # the bundled networks' NPU counts are not the traces' ranks
        raise InputError("Chakra traces need the network they ran on (one NPU per rank): "
                         "give --networks", "--networks", None)
    command = ["themis", "train-report", "--out", out] + [
        x for flag, value in _given(args) for x in (flag, value)]
    spec, system = _spec(args, workloads, networks, traces)
    if not traces:
        _check_one_setting(spec)
        _check_small(spec, system, args)
    from reports.report.training_db import report_folder

    t0 = time.perf_counter()
    tmp: Path | None = None
    db_path = args.db or ""
    try:
        with report_folder(out, "--out") as folder:  # checked and locked before any run
            if args.db is None:
                tmp = Path(tempfile.mkdtemp(prefix="themis-train-report-"))
                db_path = str(tmp / "training.sqlite")
            resume = shlex.join([*command, "--db", db_path]
                                + (["--workers", str(args.workers)] if args.workers else []))
            code = _sweep(spec, db_path, args.workers, resume)
            if code:
                raise _Stopped(code)
            written = _write(folder, spec, system, db_path, traces, shlex.join(command), t0,
                             _spec_words(args))
    except _Stopped as stop:
        return stop.code
    except BaseException:
        if tmp is not None:
            if Path(db_path).is_file() and Path(db_path).stat().st_size:
                sys.stderr.write(f"themis: the sweep's database is kept: {db_path}\n")
            else:
                shutil.rmtree(tmp, ignore_errors=True)
        raise
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {len(written)} files to {out} in {time.perf_counter() - t0:.1f} s: "
          + ", ".join(sorted(p.name for p in written)))
    return 0


class _Stopped(Exception):
    """The sweep stopped (interrupted, a task failed, the pool broke): the exit code."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _sweep(spec: Any, db_path: str, workers: int | None, resume: str) -> int:
    """Run (or resume) ``spec`` into ``db_path``: 0 when every task finished, else the
    exit code (the database is kept; ``resume`` is the command that resumes it)."""
    from reports.sweep.run import run_spec

    outcome = run_spec(spec, db_path, workers=workers, command=resume)
    for line in outcome.errors[:10]:
        sys.stderr.write(f"  failed: {line}\n")
    return sweep_exit(outcome, db_path, resume, "runs")


def _write(folder: Path, spec: Any, system: Any, db_path: str, traces: bool, command: str,
           t0: float, words: str) -> list[Path]:
    """The report of ``spec``'s tasks in the database: the training report's, or (Chakra
    traces) the study report of :mod:`reports.report.training_db`."""
    if traces:
        from reports.report.training_db import read_rows, study_of, write_study_into

        stored, meta, state = read_rows(db_path)
        study = study_of(stored, {**meta, "title": "Training report", "direct": "1"}, state)
        if not study.settings:
            errors = "; ".join(dict.fromkeys(r["error"] for r in stored if r.get("error")))
            raise InputError(f"no case finished ({errors})", "--workloads", None)
        return write_study_into(study, folder, command, t0)
    from reports.report.training import write_report

    write_report(folder, db_path, spec.training, system, command, t0, words)
    return [folder / n for n in ("README.md", "results.csv", "speedups.png", "timeline.png")]


def _spec(args: argparse.Namespace, workloads: list[str] | None, networks: list[str] | None,
          traces: bool) -> tuple[Any, Any]:
    """The spec to run (``--spec`` or the report's, its table's keys replaced by the
    flags; Chakra traces: a table of the flags alone) and the system its runs start from
    (``None``: no system file). Errors of a key a flag gave name the flag."""
    from reports.report.training import SPEC
    from reports.sweep.spec import Spec, load_spec
    from reports.sweep.training import _system, parse_training
    from reports.sweep.training_policies import split_policy_list

    path = Path(args.spec) if args.spec is not None else SPEC
    flags = {k: v for k, v in (("workloads", workloads), ("networks", networks),
                                ("systems", [args.system] if args.system else None))
             if v is not None}
    if args.policies is not None:  # one without a discipline: the system's, else FIFO
        flags["policies"] = split_policy_list(args.policies, "--policies")
        flags["intra"] = [(load_system(args.system).intra if args.system
                           else _table_system_intra(path, traces)) or "fifo"]
    if args.comm_group is not None:
        flags["comm_group"] = args.comm_group
    if traces:
        data: dict[str, Any] = {"title": "Training report"}
        table: dict[str, Any] = dict(flags)
    elif not flags:
        spec = load_spec(path)
        return spec, _spec_system(spec, path)
    else:
        data, table = _spec_table(path)
        for key in _FILE_KEYS:  # the flags' files: relative to here, the spec's to it
            if key in flags:
                flags[key] = [str(Path(v).resolve()) if Path(v).exists() else v
                              for v in flags[key]]
        table.update(flags)
    folder = Path.cwd() if traces else path.parent
    try:
        tasks, cases, repeated = parse_training([table], folder, "")
    except InputError as err:
        m = re.fullmatch(r"training\[0\]\.(\w+)(\[\d+\])?", err.field)
        if m is None or err.file:
            raise
        if m[1] not in flags:
            raise InputError(err.reason, err.field, err.value, str(path)) from None
        flag = _FLAGS.get(m[1], m[1])
        value = getattr(args, flag[2:].replace("-", "_"), err.value)
        raise InputError(err.reason, flag, value if m[2] is None else err.value) from None
    text = "".join(f"{k} = {json.dumps(v)}\n" for k, v in data.items()
                   if k in ("title", "description")) + "\n[[training]]\n" + "".join(
        f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    spec = Spec(str(path) if not traces else "train-report", text, [], 0,
                str(data.get("title", "")), str(data.get("description", "")), repeated,
                tasks, cases)
    system = None
    if not traces and table.get("systems"):
        system = _system(table["systems"][0], folder, "training[0].systems[0]", str(path))
    return spec, system


def _table_system_intra(path: Path, traces: bool) -> str | None:
    """The discipline the system of the spec ``path``'s table names (``None``: none)."""
    from reports.sweep.training import _system

    if traces:
        return None
    names = _spec_table(path)[1].get("systems") or []
    if not names or not isinstance(names, list):
        return None
    return _system(names[0], path.parent, "training[0].systems[0]", str(path)).intra


def _spec_words(args: argparse.Namespace) -> str:
    """The README's words for the spec a run ran: ``reports/specs/training.toml`` (or
    ``--spec``), and which of its keys the flags replaced."""
    spec = f"`{args.spec or 'reports/specs/training.toml'}`"
    flags = [flag for flag, _ in _given(args) if flag != "--spec"]
    return f"{spec} ({', '.join(flags)} replacing its keys)" if flags else spec


def _spec_table(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The spec ``path`` as read and its one ``[[training]]`` table (the flags replace
    keys of it, so it must have exactly one)."""
    from topologies.files import read_input_text

    try:
        data = tomllib.loads(read_input_text(path, "--spec"))
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"invalid TOML ({err})", "spec", None, str(path)) from None
    tables = data.get("training")
    if not isinstance(tables, list) or len(tables) != 1 or data.get("grid") \
            or not isinstance(tables[0], dict):
        raise InputError("the flags replace keys of one [[training]] table: this spec "
                         "needs exactly one (and no [[grid]])", "training", None, str(path))
    return data, dict(tables[0])


def _spec_system(spec: Any, path: Path) -> Any:
    """The system of a loaded spec's runs (its first table's first ``systems`` entry;
    ``None`` without one)."""
    from reports.sweep.training import _system

    tables = tomllib.loads(spec.text).get("training") or [{}]
    names = tables[0].get("systems") or []
    if not names:
        return None
    return _system(names[0], path.parent, "training[0].systems[0]", str(path))


def _check_one_setting(spec: Any) -> None:
    """The training report is of one setting of 1.0 workloads: one system, timing, pass
    count and chunk count."""
    from reports.sweep.training_et import ETWorkload

    if not spec.training:
        raise InputError("has no [[training]] table (the training report runs one)",
                         "--spec", spec.path)
    settings = {(t.case.system_name, t.case.config.timing, t.case.config.passes,
                 t.case.config.chunks) for t in spec.training}
    if len(settings) != 1 or any(isinstance(t.case.workload, ETWorkload)
                                 for t in spec.training):
        raise InputError(f"the training report is of one setting of 1.0 workloads (one "
                         f"system, timing, pass count and chunk count), this spec has "
                         f"{len(settings)}: run it with themis sweep and report it with "
                         "themis train-report --db", "--spec", spec.path)


def _check_small(spec: Any, system: Any, args: argparse.Namespace) -> None:
    """The small-iteration table's cases (:mod:`reports.report.training_exact`) take the
    spec's methods too: checked before any run (a route on their networks...)."""
    from reports.report import training_exact as tx
    from reports.sweep.training import parse_training

    methods = list({t.name: t.method for t in spec.training
                    if t.method is not None}.values())
    table = {"workloads": list(tx.WORKLOADS), "networks": list(tx.NETWORKS),
             "policies": [m.label for m in methods],
             **({"systems": [system.source]} if system is not None else {}),
             "timing": [spec.training[0].case.config.timing], "chunks": [tx.CHUNKS],
             "bound": False}
    try:
        parse_training([table], Path.cwd(), "")
    except InputError as err:
        if args.policies is None or err.file:
            raise
        raise InputError(f"{err.reason} (the small-iteration table's cases)", "--policies",
                         args.policies) from None


def _from_database(args: argparse.Namespace) -> int:
    """``train-report --db F.sqlite --out DIR``."""
    if args.workers is not None:
        raise InputError("not with --db alone (nothing is run)", "--workers", args.workers)
    if args.out is None:
        raise InputError("needs --out DIR (the folder to write the report into)", "--db",
                         args.db)
    from reports.report.training_db import write_db_report

    command = shlex.join(["themis", "train-report", "--db", args.db, "--out", args.out])
    written = write_db_report(args.db, args.out, command)
    print(f"wrote {len(written)} files to {args.out}: "
          + ", ".join(sorted(p.name for p in written)))
    return 0


__all__ = ["DEFAULT_OUT", "cmd_train_report", "comma_names", "register"]
