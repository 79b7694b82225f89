"""The ``themis compare``, ``themis sweep`` and ``themis report`` commands.

Imported by the CLI at start-up, so nothing heavy is imported here: the
handlers import matplotlib, the solvers, Dask and the report code when they run.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from reports.cli.common import (
    DEFAULT_CHUNKS,
    add_instance_args,
    check_output,
    float_arg,
    int_arg,
    positive_arg,
    resolve_inputs,
    sweep_exit,
    wall_limit_s,
)
from reports.formatting import print_json
from topologies.errors import InputError


class _TimingHelp(str):
    """The --timing help, listing the timing registry when the help is printed (the
    registry is not imported at start-up)."""

    def _text(self) -> str:
        from themis.timing import timing_names

        return (f"comma-separated timing models the policies are simulated with: "
                f"{', '.join(timing_names())} (default alpha-beta); the solvers and bounds "
                f"are of the alpha-beta model, and each row says its timing")

    def __mod__(self, params: object) -> str:
        return self._text() % params

    def strip(self, chars: str | None = None) -> str:
        return self._text().strip(chars)


def _add_timing(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timing", default="alpha-beta", metavar="LIST",
                   help=_TimingHelp("the timing models the policies are simulated with"))


def _timings(text: str) -> tuple[str, ...]:
    """--timing LIST as registered timing names (at least one)."""
    from reports.methods import parse_names

    timings = parse_names(text, "timing", "--timing")
    if not timings:
        raise InputError("name at least one timing model", "--timing", text)
    return timings


def _add_methods(p: argparse.ArgumentParser, solvers: str | None, time_limit_s: float,
                 ag_help: str, dtime_s: float | None = None) -> None:
    """--policies, --intra, --solvers, --time-limit, --deterministic-time, --ag-order.

    --policies and --intra default to every registered policy and discipline
    (:func:`reports.methods.every_policy`, read when the command runs).
    """
    p.add_argument("--policies", default=None, metavar="LIST",
                   help="comma-separated policies: any name simulate accepts, including "
                        "registered ones, or a fixed route like 2,0,1 (consecutive numbers "
                        "form one route) (default: every registered policy, "
                        "{policy_list})")
    p.add_argument("--intra", default=None, metavar="LIST",
                   help="comma-separated intra-dimension disciplines (default: every "
                        "registered one, {discipline_list})")
    p.add_argument("--solvers", default=solvers, metavar="LIST",
                   help=f"comma-separated solvers (default {solvers or 'every solver'}; "
                        "'' for none)")
    if dtime_s is None:  # compare: a deterministic budget lifts the default wall limit
        p.add_argument("--time-limit", type=positive_arg("--time-limit",
                       " of seconds"), default=None,
                       metavar="SECONDS",
                       help="wall clock for the whole command: the bounds and the "
                            "policies run first (bounded work), then the solvers share "
                            "what is left, each an equal part of the rest (as solve's "
                            "--time-limit: bounds, hints, sub-solves, model build, "
                            "search), and a solver reached after it is not started (its "
                            f"row says so) (default {time_limit_s:g} per solver; with "
                            "--deterministic-time none, so the budget alone stops CP-SAT)")
        p.add_argument("--deterministic-time", type=positive_arg("--deterministic-time",
                       " of seconds"),
                       default=None, metavar="SECONDS",
                       help="CP-SAT's deterministic time limit per solver task, with one "
                            "worker: the same result on any machine and load")
    else:  # spec: written to the spec
        p.add_argument("--time-limit", type=positive_arg("--time-limit",
                       " of seconds"), default=None,
                       metavar="SECONDS",
                       help=f"per solver task, wall clock (default: none in effect when every "
                            f"solver has a deterministic budget, so the numbers reproduce on "
                            f"any machine; else {time_limit_s:g})")
        p.add_argument("--deterministic-time", type=float_arg("--deterministic-time"),
                       default=dtime_s, metavar="SECONDS",
                       help="CP-SAT's deterministic time limit per solver task, one worker, "
                            f"written to [solver_params.cpsat] (default {dtime_s:g}; 0: "
                            "none, and then the wall-clock time_limit_s decides)")
    p.add_argument("--ag-order", default="reverse", metavar="LIST", help=ag_help)


#: The endpoint delay when neither a flag nor a system file gives one: 0, except where a
#: listed timing's simulator aborts on 0 (ASTRA-sim 2.x's runner), which gets 2.x's own
#: default, 10 ns (one rule for compare, spec and sweep specs).
ASTRA2_ENDPOINT_DELAY_NS = 10.0


def default_endpoint_delay_ns(timings: tuple[str, ...]) -> float:
    """The endpoint-delay default for a run of these timings (see above)."""
    from themis.timing.base import timing_meaning

    return ASTRA2_ENDPOINT_DELAY_NS if any(
        timing_meaning(t).runner == "astra-2" for t in timings) else 0.0


#: ``themis spec``'s deterministic budgets (docs/sweeps.md): a spec reproduces on any
#: machine unless a budget is turned off (0).
SPEC_DTIME_S = 20.0
SPEC_NODE_LIMIT = 100_000
#: The wall limit spec writes when some solver has no deterministic budget.
SPEC_WALL_S = 30.0


def register(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``compare``, ``sweep`` and ``report`` to the ``themis`` subcommands."""
    p = sub.add_parser(
        "compare", help="every policy and solver on one instance, with optimality gaps",
        description="Run each policy under each intra-dimension discipline through the "
                    "simulator (k = 1; alpha-beta, or each --timing model), each exact solver "
                    "and the lower bounds (of the alpha-beta model) on one all-reduce; print "
                    "makespans, gaps to the best found under the same timing and to the "
                    "lower bound (alpha-beta rows).")
    add_instance_args(p)
    _add_timing(p)
    _add_methods(p, None, 10.0,
                 "the solvers' AG variant: reverse of the RS route (default) or free")
    p.add_argument("--threads", type=int_arg("--threads"), default=None, metavar="N",
                   help="solver threads (default: the solver's own)")
    p.add_argument("--gantt", metavar="FILE.png",
                   help="draw Themis (scf, else the first policy) next to the best solver "
                        "(.png, .pdf or .svg by the file name)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "spec", help="write a sweep spec (TOML) for one or more networks",
        description="Write a one-grid sweep spec for NETWORK(s): file paths are written "
                    "relative to the spec's folder. Checked like `themis sweep` checks it.")
    p.add_argument("networks", nargs="+", metavar="NETWORK",
                   help="network files (.yml/.yaml/.json) or preset names")
    p.add_argument("--sizes", default="64MiB", metavar="LIST", help="default 64MiB")
    p.add_argument("--chunks", default="2,4,6,8", metavar="LIST",
                   help="the grid's chunk counts (default 2,4,6,8: a grid around the one "
                        f"chunk default of the other commands, {DEFAULT_CHUNKS})")
    p.add_argument("--endpoint-delay", default=None, metavar="LIST",
                   help="endpoint delays in ns (default 0; 10, ASTRA-sim 2.x's own, when a "
                        "--timing runs 2.x's simulator, which aborts on 0)")
    _add_timing(p)
    _add_methods(p, "cpsat", SPEC_WALL_S, "reverse, free or reverse,free (default reverse)",
                 dtime_s=SPEC_DTIME_S)
    p.add_argument("--node-limit", type=int_arg("--node-limit"), default=SPEC_NODE_LIMIT,
                   metavar="N", help="cbc/highs: the branch-and-bound node limit written to "
                                     f"their solver_params (default {SPEC_NODE_LIMIT}; 0: none)")
    p.add_argument("--title", default="", help="the report's title")
    p.add_argument("--out", default=None, metavar="SPEC.toml",
                   help="write here (default: print on stdout)")
    p.set_defaults(func=cmd_spec)

    p = sub.add_parser(
        "sweep", help="run a TOML grid of instances x methods into a SQLite database",
        description="Run (or resume) a sweep: every task of SPEC.toml not yet in the "
                    "database, locally or on Dask. Finished results are committed one by "
                    "one; rerun the same command to resume after an interruption. One sweep "
                    "at a time per database: a second sweep on a database in use stops with "
                    "an error (the lock is released when the first exits, even if killed). "
                    "Worker processes exit when the sweep driver dies.")
    p.add_argument("spec", metavar="SPEC.toml", help="the sweep spec")
    p.add_argument("--db", required=True, metavar="FILE.sqlite",
                   help="results database (created if missing; its folder too, one "
                        "level, if the folder's parent exists)")
    p.add_argument("--workers", type=int_arg("--workers"), default=None, metavar="N",
                   help="worker processes (default: the CPU count; 1 runs in-process); "
                        "more than the spec's tasks or the CPUs is capped, with a note")
    p.add_argument("--dask", default=None, metavar="ADDRESS|local",
                   help="run on a Dask scheduler at ADDRESS, or 'local' for a LocalCluster "
                        "of --workers processes (needs pip install '.[dask]')")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "report", help="README, CSV and plots from a sweep database",
        description="Write DIR/README.md (what was run, tables, summary), DIR/results.csv "
                    "and PNG plots from a sweep database. The database is opened read-only.")
    p.add_argument("db", metavar="RESULTS.sqlite", help="a database written by themis sweep")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output folder (created if missing, one level: its parent must exist)")
    p.set_defaults(func=cmd_report)


def cmd_compare(args: argparse.Namespace) -> int:
    """``themis compare``."""
    from reports.compare import compare, format_comparison
    from reports.methods import canonical_name, parse_names
    from solvers import backend_names

    timings = _timings(args.timing)
    _default_methods(args, timings)
    if args.endpoint_delay is None and not getattr(args, "system", None):
        args.endpoint_delay = default_endpoint_delay_ns(timings) or None
    policies = parse_names(args.policies, "policy", "--policies")
    intra = parse_names(args.intra, "intra", "--intra")
    solvers = None if args.solvers is None else parse_names(args.solvers, "solver",
                                                            "--solvers")
    ag_order = canonical_name(args.ag_order, "ag_order", "--ag-order")
    if args.time_limit is None:
        n_solvers = len(solvers) if solvers is not None else len(backend_names())
        args.time_limit = wall_limit_s(args.deterministic_time is not None,
                                       10.0 * max(n_solvers, 1))
    deadline = time.monotonic() + args.time_limit
    if args.threads is not None and args.threads < 1:
        raise InputError("must be at least 1", "--threads", args.threads)
    if policies and not intra:
        raise InputError("policies need at least one discipline", "--intra", args.intra)
    if not policies and solvers == ():
        raise InputError("nothing to compare: no policy and no solver", "--policies",
                         args.policies)
    check_output(args.gantt, "--gantt", figure=True)
    inputs = resolve_inputs(args)
    instance = inputs.instance()
    from reports.limits import check_stage_count

    field, file = inputs.chunks_key  # every method simulates or models the whole instance
    check_stage_count(instance.collective.chunk_count, 2 * max(len(instance.dims), 1),
                      field, inputs.chunks, file, escape="use fewer chunks")
    comp = compare(instance, policies, intra, solvers, args.time_limit, ag_order, args.threads,
                   _solver_params(args), timings, deadline=deadline)
    if args.gantt:
        _compare_gantt(comp, args.gantt)
    if args.json:
        print_json(comp.to_dict())
    else:
        print(format_comparison(comp))
    return 0


def _compare_gantt(comp: Any, path: str) -> None:
    from reports.plots import plot_gantt_pair
    from reports.records import Kind

    policies = [r for r in comp.rows if r.kind == Kind.POLICY and r.schedule is not None]
    solved = [r for r in comp.rows if r.kind == Kind.SOLVER and r.schedule is not None
              and r.valid]
    left = next((r for r in policies if r.method == "themis/scf"), None) or \
        (policies[0] if policies else None)
    right = min(solved, key=lambda r: r.makespan_ns) if solved else None
    shown = [r for r in (left, right) if r is not None]
    if not shown:
        raise InputError("no schedule to draw", "--gantt", path)
    plot_gantt_pair([(f"{r.method}: {r.makespan_ns / 1e3:,.1f} us ({r.status})", r.schedule)
                     for r in shown], path, title=comp.instance.label())


def _split(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _numbers(text: str, flag: str, kind: type) -> list:
    try:
        return [kind(x) for x in _split(text)]
    except ValueError:
        raise InputError(f"expected comma-separated {kind.__name__}s", flag, text) from None


def cmd_spec(args: argparse.Namespace) -> int:
    """``themis spec``."""
    from reports.methods import parse_names
    from reports.sweep.spec_writer import spec_text, write_spec

    check_output(args.out, "--out")
    timings = _timings(args.timing)
    _default_methods(args, timings)
    solvers = list(parse_names(args.solvers, "solver", "--solvers"))
    params = _spec_solver_params(args, solvers)
    if args.time_limit is None:
        budgeted = {n for n, p in (params or {}).items() if p}
        args.time_limit = wall_limit_s(all(str(n) in budgeted for n in solvers), SPEC_WALL_S)
    if args.endpoint_delay is None:
        args.endpoint_delay = f"{default_endpoint_delay_ns(timings):g}"
    delays = _numbers(args.endpoint_delay, "--endpoint-delay", float)
    if default_endpoint_delay_ns(timings) > 0 and 0 in delays:
        raise InputError("ASTRA-sim 2.x aborts with endpoint delay 0 (an event-queue "
                         "assertion): the spec would not run; give a positive delay (2.x's "
                         "default is 10)", "--endpoint-delay", args.endpoint_delay)
    text = spec_text(
        args.networks, _split(args.sizes), _numbers(args.chunks, "--chunks", int),
        list(parse_names(args.policies, "policy", "--policies")),
        list(parse_names(args.intra, "intra", "--intra")),
        solvers, args.time_limit,
        [str(a) for a in parse_names(args.ag_order, "ag_order", "--ag-order")],
        delays, out=args.out, title=args.title, solver_params=params,
        timings=list(timings))
    if args.out:
        write_spec(text, args.out)
        print(f"wrote {args.out}; run: themis sweep {args.out} --db results.sqlite")
    else:
        sys.stdout.write(text)
    return 0


def _spec_solver_params(args: argparse.Namespace, solvers: list) -> dict[str, Any] | None:
    """``themis spec``'s per-solver deterministic budgets (0 turns one off):
    ``[solver_params.cpsat] deterministic_time_s`` and the MILPs' ``node_limit``."""
    for flag, value in (("--deterministic-time", args.deterministic_time),
                        ("--node-limit", args.node_limit)):
        if not value >= 0 or value == float("inf"):
            raise InputError("must be >= 0 (0: no such budget)", flag, value)
    solvers = [str(n) for n in solvers]
    out: dict[str, Any] = {}
    if args.deterministic_time and "cpsat" in solvers:
        out["cpsat"] = {"deterministic_time_s": float(args.deterministic_time)}
    for name in ("cbc", "highs"):
        if args.node_limit and name in solvers:
            out[name] = {"node_limit": int(args.node_limit)}
    return out or None


def _default_methods(args: argparse.Namespace, timings: tuple[str, ...] = ()) -> None:
    """--policies / --intra not given: every registered policy / discipline (those each
    of ``timings`` runs: ASTRA-sim 1.0 runs FIFO and SCF)."""
    from reports.methods import every_intra, every_policy, timing_intras

    if args.policies is None:
        args.policies = ",".join(every_policy())
    if args.intra is None:
        intras = list(every_intra())
        for t in timings:
            allowed = timing_intras(t)
            if allowed is not None:
                intras = [q for q in intras if q in allowed]
        args.intra = ",".join(intras)


def _solver_params(args: argparse.Namespace) -> dict[str, Any] | None:
    """The solver parameters the flags ask for (checked by the solvers)."""
    if args.deterministic_time is None:
        return None
    return {"deterministic_time_s": args.deterministic_time}


def cmd_sweep(args: argparse.Namespace) -> int:
    """``themis sweep``."""
    from reports.sweep import run_sweep, sweep_command

    out = run_sweep(args.spec, args.db, workers=args.workers, dask=args.dask)
    resume = sweep_command(args.spec, args.db, args.workers, args.dask)
    print(f"{out.finished}/{out.total} tasks done ({out.ran} run now, {out.failed} failed) "
          f"in {out.wall_s:.1f} s; results in {args.db}")
    for line in out.errors[:10]:
        print(f"  failed: {line}")
    return sweep_exit(out, args.db, resume)


def cmd_report(args: argparse.Namespace) -> int:
    """``themis report``."""
    import shlex

    from reports import db
    from reports.report import build_report

    conn = db.connect(args.db, create=False)
    try:
        collective = conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        training = len(db.read_training_rows(conn))
    finally:
        conn.close()
    also = shlex.join(["themis", "train-report", "--db", args.db, "--out", "DIR"])
    if not training and not collective:
        raise InputError("holds no finished or failed task (an empty sweep database: run "
                         "its sweep first)", "DB", args.db)
    if training and not collective:
        raise InputError(f"holds training tasks only: their report is `{also}`", "DB",
                         args.db)
    command = shlex.join(["themis", "report", args.db, "--out", args.out])
    written = build_report(args.db, args.out, command=command)
    print(f"wrote {len(written)} files to {args.out}: "
          + ", ".join(sorted(p.name for p in written)))
    if training:
        print(f"the database also holds {training} training tasks: their report is `{also}`")
    return 0
