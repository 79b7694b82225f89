"""The ``themis solve`` and ``themis bound`` commands.

Nothing heavy is imported here: OR-Tools, PuLP and HiGHS are loaded by the
handlers only, so ``themis --help`` stays fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from reports.cli.common import (
    GANTT_HELP,
    add_instance_args,
    add_lb3_nodes_arg,
    check_lb3_nodes,
    check_output,
    int_arg,
    positive_arg,
    resolve_inputs,
    user_keys,
    wall_limit_s,
)
from reports.formatting import format_table, print_json
from topologies.errors import InputError

DEFAULT_TIME_LIMIT_S = 10.0


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``solve`` and ``bound`` to the ``themis`` subcommands."""
    p = sub.add_parser("solve", help="solve the chunk scheduling problem exactly "
                                     "(CP-SAT, or a MILP with CBC or HiGHS)")
    add_instance_args(p)
    p.add_argument("--solver", default="cpsat",
                   help="cpsat (default) | cbc | highs")
    p.add_argument("--time-limit", type=positive_arg("--time-limit",
                       " of seconds"),
                   default=None, metavar="SECONDS",
                   help="wall-clock seconds for the whole solve: lower bounds, hint "
                        "simulations, the latency-0 and C/2 sub-solves, model building and "
                        "search; a phase that does not fit in the time left is skipped "
                        "(the JSON's meta says which) and a model whose build would not "
                        "fit is not built: the answer is then the best hint, 'stopped by "
                        "the wall-clock limit'. Only the first bounds and one hint "
                        "simulation always run. "
                        f"(default {DEFAULT_TIME_LIMIT_S:g}; with --deterministic-time or "
                        "--node-limit none, so the result reproduces: every phase then "
                        "runs and a --time-limit given too stops only the search)")
    p.add_argument("--deterministic-time",
                   type=positive_arg("--deterministic-time",
                       " of deterministic seconds"),
                   default=None, metavar="UNITS",
                   help="cpsat only: CP-SAT's deterministic time limit (one worker, or "
                        "--threads N interleaved), so "
                        "the result is the same on any machine (a --time-limit given too "
                        "may stop it first; the output says which limit stopped the solve)")
    p.add_argument("--node-limit", type=int_arg("--node-limit"), default=None, metavar="N",
                   help="cbc/highs only: branch-and-bound node limit (the MILPs' "
                        "deterministic work limit; lifts the default wall-clock limit)")
    p.add_argument("--seed", type=int_arg("--seed"), default=0, metavar="N",
                   help="the solver's random seed (default 0)")
    p.add_argument("--solver-log", metavar="FILE",
                   help="write the solver's log here when the solver failed")
    p.add_argument("--ag-order", default="reverse",
                   help="reverse (AG along the reversed route, default) | free "
                        "(each chunk picks its AG order)")
    p.add_argument("--threads", type=int_arg("--threads"), default=None, metavar="N",
                   help="solver threads/workers (default: the solver's choice; with "
                        "--deterministic-time, CP-SAT's N workers interleaved in "
                        "deterministic batches: the same result on any machine for the "
                        "same N, not across N; --json's meta.search says which)")
    p.add_argument("--no-latency0", dest="latency0", action="store_false",
                   help="cpsat: with per-hop latency or delays, do not solve the latency-0 "
                        "instance first (up to 75%% of the budget) for hints "
                        "replayed on this network")
    add_lb3_nodes_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--schedule-out", metavar="FILE", help="write the schedule as JSON")
    p.add_argument("--gantt", metavar="FILE.png", help=GANTT_HELP)
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("bound", help="lower bounds LB0-LB3 on the makespan")
    add_instance_args(p)
    p.add_argument("--ag-order", default="reverse", help="reverse (default) | free")
    add_lb3_nodes_arg(p)
    p.add_argument("--time-indexed", nargs="?", const=200, default=None,
                   type=int_arg("--time-indexed"), metavar="SLOTS",
                   help="also the time-indexed LP bound (reverse AG only; SLOTS slots over "
                        "the best of LB0-LB3, default 200; larger is slower and tighter, "
                        "models above 60,000 columns are refused)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bound)


def _check_common(args: argparse.Namespace) -> None:
    from themis.plans import AgOrder

    if args.ag_order not in set(AgOrder):
        raise InputError(f"unknown AG order (expected {' or '.join(AgOrder)})",
                         "--ag-order", args.ag_order)


def _with_limit(work_limit: str) -> list[str]:
    """The registered solvers whose deterministic limit is ``work_limit``."""
    from solvers.registry import backend_names, get_backend

    return [n for n in backend_names() if get_backend(n).work_limit == work_limit]


def _check_work_limits(args: argparse.Namespace) -> None:
    if args.deterministic_time is not None:
        if args.solver not in (dtime := _with_limit("deterministic_time_s")):
            raise InputError(f"applies to --solver {' or '.join(dtime)} only (the MILPs: "
                             "--node-limit)",
                             "--deterministic-time", args.deterministic_time)
    if args.node_limit is not None:
        if args.node_limit < 1:
            raise InputError("must be at least 1", "--node-limit", args.node_limit)
        if args.solver not in (nodes := _with_limit("node_limit")):
            raise InputError(f"applies to --solver {' or '.join(nodes)} only (cpsat: "
                             "--deterministic-time)", "--node-limit", args.node_limit)
    if args.seed < 0:
        raise InputError("must be at least 0", "--seed", args.seed)


def cmd_solve(args: argparse.Namespace) -> int:
    """``themis solve``."""
    _check_common(args)
    from solvers import backend_names

    if args.solver not in (names := backend_names()):
        raise InputError(f"unknown solver (expected one of {', '.join(names)})",
                         "--solver", args.solver)
    if args.time_limit is None:
        deterministic = args.deterministic_time is not None or args.node_limit is not None
        args.time_limit = wall_limit_s(deterministic, DEFAULT_TIME_LIMIT_S)
    if args.threads is not None and args.threads < 1:
        raise InputError("must be at least 1", "--threads", args.threads)
    check_output(args.schedule_out, "--schedule-out")
    check_output(args.gantt, "--gantt", figure=True)
    check_output(args.solver_log, "--solver-log")
    _check_work_limits(args)
    inputs = resolve_inputs(args)
    instance = inputs.instance()

    from solvers import SolverParams, solve

    params = SolverParams(time_limit_s=args.time_limit, ag_order=args.ag_order,
                          threads=args.threads, deterministic_time_s=args.deterministic_time,
                          node_limit=args.node_limit, seed=args.seed,
                          latency0=args.latency0, lb3_nodes=check_lb3_nodes(args))
    with user_keys(inputs.keys):
        result = solve(instance, args.solver, params)
    if args.solver_log and result.solver_log is not None:
        from topologies.files import atomic_write

        atomic_write(args.solver_log, result.solver_log)
    if args.schedule_out and result.schedule is not None:
        result.schedule.save(args.schedule_out)
    if args.gantt and result.schedule is not None:
        from themis.plots import plot_gantt

        plot_gantt(result.schedule, path=args.gantt)
    if args.json:
        _print_json_for(result, instance)
        return 0
    print(f"all-reduce of {instance.size_bytes} bytes in "
          f"{instance.collective.describe_chunks()} on "
          f"{instance.network.describe()} ({instance.network.npus} NPUs), "
          f"AG order {result.ag_order}")
    gap = result.gap
    rows: list[list[Any]] = [
        ["status", result.status],
        ["reason", result.reason or "-"],
        ["makespan (us)", "-" if result.makespan_ns is None else result.makespan_ns / 1e3],
        ["lower bound (us)", result.lower_bound_ns / 1e3],
        ["bound from", f"{result.bound_source} (LB3: {result.lb3_method})"],
        ["gap", "-" if gap is None else f"{100 * gap:.3f}%"],
        ["best reference (us)", min(result.reference_ns.values()) / 1e3
         if result.reference_ns else "-"],
        *([[f"latency-0 answer ({result.meta['latency0'].get('status', '-')}), "
            "replayed (us)", min(result.meta["latency0"]["candidates"].values()) / 1e3]]
          if (result.meta.get("latency0") or {}).get("candidates") else []),
        ["solver", result.solver],
        ["runtime (s)", f"{result.runtime_s:.2f}"],
        ["stopped by", stopped_by_text(result.meta.get("stopped_by", ""), args)],
        ["scaling error (ns)", f"{result.scaling_error_ns:.3g}"],
        ["checker", {True: "valid", False: "INVALID", None: "-"}[result.valid]],
    ]
    print_result_table(result, rows)
    return 0


def stopped_by_text(stopped_by: str, args: argparse.Namespace) -> str:
    """Which limit ended the search, in words (``-``: none did, the search finished)."""
    if stopped_by == "wall":
        return f"the wall-clock limit ({args.time_limit:g} s): not reproducible"
    if stopped_by == "deterministic":
        return f"the deterministic time ({args.deterministic_time:g})"
    if stopped_by == "nodes":
        return f"the node limit ({args.node_limit})"
    return stopped_by or "- (the search finished)"


def cmd_bound(args: argparse.Namespace) -> int:
    """``themis bound``."""
    _check_common(args)
    instance = resolve_inputs(args).instance()

    from solvers.bounds import bounds

    b = bounds(instance, args.ag_order, node_limit=check_lb3_nodes(args))
    ti = None
    if args.time_indexed is not None:
        if args.ag_order != "reverse":
            raise InputError("the time-indexed bound is for reverse AG orders only",
                             "--ag-order", args.ag_order)
        from solvers.bounds_ti import time_indexed_bound

        ti = time_indexed_bound(instance, slots=args.time_indexed, reference_ns=b.lb_ns)
    if args.json:
        _print_json_for(b, instance, **({} if ti is None else {"time_indexed": ti.to_dict()}))
        return 0
    print(f"lower bounds for an all-reduce of {instance.size_bytes} bytes in "
          f"{instance.collective.describe_chunks()} on {instance.network.describe()}, "
          f"AG order {args.ag_order} (valid for this AG variant only)")
    print(format_table(["bound", "us", "what"], [
        ["LB0", b.lb0_ns / 1e3, "ideal bandwidth"],
        ["LB1", b.lb1_ns / 1e3, "largest chunk alone on its best route"],
        ["LB2", b.lb2_ns / 1e3, "LP over route fractions: every dimension's load"],
        ["LB3", b.lb3_ns / 1e3, f"integer route counts + unavoidable head and tail "
                                f"({b.lb3_method}, {b.lb3_nodes} nodes)"],
        ["LB", b.lb_ns / 1e3, "the best of them"],
    ] + ([] if ti is None else [
        ["TI", ti.value_ns / 1e3, f"time-indexed LP, {ti.horizon_slots} slots of "
                                  f"{ti.delta_ns:.6g} ns ({ti.grid}, {ti.status})"],
    ])))
    return 0


def _print_json_for(answer: Any, instance: Any, **extra: Any) -> None:
    """A solver result or bounds as JSON, with the instance, its chunking and ``extra``
    fields (e.g. ``time_indexed``, before the instance, as ``bound --json`` prints it)."""
    out = answer.to_dict() | instance.collective.chunking() | extra
    out["instance"] = instance.to_dict()
    print_json(out)


def print_result_table(result: Any, rows: list[list[Any]]) -> None:
    """A solver result's table (``rows``), its route histogram and its first violations."""
    print(format_table(["", "value"], rows))
    if result.routes:
        print()
        print(format_table(["route", "chunks"], [[r, n] for r, n in result.routes.items()]))
    for v in result.violations[:10]:
        print(f"violation: {v}")
