"""The ``themis improve`` command: offline improvement of one instance's schedule."""

from __future__ import annotations

import argparse
from typing import Any

from reports.cli.common import (
    GANTT_HELP,
    add_instance_args,
    add_lb3_nodes_arg,
    check_lb3_nodes,
    check_output,
    float_arg,
    int_arg,
    positive_arg,
    resolve_inputs,
    user_keys,
)
from reports.cli.solve import print_result_table
from reports.formatting import print_json
from topologies.errors import InputError

DEFAULT_EVALUATIONS = 2000


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``improve`` to the ``themis`` subcommands."""
    p = sub.add_parser("improve", help="improve the best practical schedule: local search "
                                       "with the simulator, then warm-started CP-SAT")
    add_instance_args(p)
    p.add_argument("--evaluations", type=int_arg("--evaluations"), default=None, metavar="N",
                   help=f"simulator runs of the local search (deterministic; default "
                        f"{DEFAULT_EVALUATIONS}, or unlimited with --time-limit)")
    p.add_argument("--cpsat-dtime", type=float_arg("--cpsat-dtime"), default=None,
                   metavar="S", help="CP-SAT deterministic time, one worker (default 0 = no "
                                     "CP-SAT; with --time-limit CP-SAT gets the second half)")
    p.add_argument("--time-limit", type=positive_arg("--time-limit",
                       " of seconds"), default=None,
                   metavar="S", help="wall-clock limit of the whole run (results then "
                                     "depend on the machine): the local search gets the "
                                     "first half when CP-SAT runs, CP-SAT (and the chain, the "
                                     "doubling bound) start only when the time left fits "
                                     "them (the JSON's meta.skipped says which did not); "
                                     "the lower bounds and the portfolio start always run")
    p.add_argument("--seed", type=int_arg("--seed"), default=0, help="search seed (default 0)")
    p.add_argument("--seeds", type=int_arg("--seeds"), default=1, metavar="N",
                   help="run the local search with seeds SEED ... SEED+N-1 (each with the "
                        "whole budget) and keep the best (default 1)")
    p.add_argument("--target-gap", type=float_arg("--target-gap"), default=1e-4, metavar="G",
                   help="stop searching once within this relative gap of the lower bound "
                        "(default 1e-4)")
    p.add_argument("--chain-dtime", type=float_arg("--chain-dtime"), default=0.0, metavar="S",
                   help="doubling chain: CP-SAT deterministic time (one worker) at the largest "
                        "C/2^j <= --chain-chunks, split into C as a start (default 0 = off)")
    p.add_argument("--chain-chunks", type=int_arg("--chain-chunks"), default=32, metavar="N",
                   help="largest chunk count the doubling chain solves (default 32)")
    p.add_argument("--no-doubling", dest="doubling", action="store_false",
                   help="do not raise the bound to LB3(2C) at latency 0 (the doubling bound; "
                        "on by default, as in solve)")
    p.add_argument("--no-latency0", dest="latency0", action="store_false",
                   help="with per-hop latency or delays, CP-SAT (the chain's and "
                        "--cpsat-dtime's) does not solve the latency-0 instance first for "
                        "hints replayed on this network")
    p.add_argument("--sequence", action="store_true",
                   help="also start from list schedules of LB3's route mix (every dimension "
                        "from t = 0; solvers.sequence), where shorter than the portfolio's")
    add_lb3_nodes_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--schedule-out", metavar="FILE", help="write the schedule as JSON")
    p.add_argument("--gantt", metavar="FILE.png", help=GANTT_HELP)
    p.set_defaults(func=cmd_improve)


def cmd_improve(args: argparse.Namespace) -> int:
    """``themis improve``."""
    if args.evaluations is not None and args.evaluations < 0:
        raise InputError("must be at least 0", "--evaluations", args.evaluations)
    if args.cpsat_dtime is not None and not 0 <= args.cpsat_dtime < float("inf"):
        raise InputError("must be a finite number >= 0", "--cpsat-dtime", args.cpsat_dtime)
    if args.seeds < 1:
        raise InputError("must be at least 1", "--seeds", args.seeds)
    lb3_nodes = check_lb3_nodes(args)
    if not 0 <= args.target_gap < 1:
        raise InputError("must be a relative gap in [0, 1)", "--target-gap", args.target_gap)
    check_output(args.schedule_out, "--schedule-out")
    check_output(args.gantt, "--gantt", figure=True)
    evaluations = args.evaluations
    if evaluations is None:
        evaluations = 10**9 if args.time_limit is not None else DEFAULT_EVALUATIONS
    dtime = args.cpsat_dtime
    if dtime is None:
        dtime = None if args.time_limit is not None else 0.0
    inputs = resolve_inputs(args)
    instance = inputs.instance()

    from solvers.improve import improve

    with user_keys(inputs.keys):
        result = improve(instance, evaluations=evaluations, cpsat_dtime_s=dtime,
                         time_limit_s=args.time_limit, seed=args.seed,
                         target_gap=args.target_gap, chain_dtime_s=args.chain_dtime,
                         chain_chunks=args.chain_chunks, doubling=args.doubling,
                         latency0=args.latency0, seeds=args.seeds, sequence=args.sequence,
                         lb3_nodes=lb3_nodes)
    if args.schedule_out and result.schedule is not None:
        result.schedule.save(args.schedule_out)
    if args.gantt and result.schedule is not None:
        from themis.plots import plot_gantt

        plot_gantt(result.schedule, path=args.gantt)
    checker = {True: "valid", False: "INVALID", None: "-"}[result.valid]
    if args.json:
        out = result.to_dict() | instance.collective.chunking()
        out["certified_gap"] = result.gap
        out["checker"] = checker
        out["instance"] = instance.to_dict()
        print_json(out)
        return 0
    print(f"all-reduce of {instance.size_bytes} bytes in {result.chunks} chunks on "
          f"{instance.network.describe()} ({instance.network.npus} NPUs)")
    gap = result.gap
    meta = result.meta
    rows: list[list[Any]] = [
        ["status", result.status],
        ["makespan (us)", (result.makespan_ns or 0.0) / 1e3],  # improve always has one
        ["start: " + str(meta.get("start", "")), meta.get("start_ns", 0.0) / 1e3],
        ["after local search (us)", meta.get("search_ns", 0.0) / 1e3],
        *([[f"doubling chain: C = {meta['chain'].get('from_chunks')} "
            f"({meta['chain'].get('status', meta['chain'].get('skipped', ''))}) split (us)",
            (meta["chain"].get("makespan_ns") or 0.0) / 1e3]] if "chain" in meta else []),
        ["lower bound (us)", result.lower_bound_ns / 1e3],
        ["certified gap", "-" if gap is None else f"{100 * gap:.3f}%"],
        ["evaluations", meta.get("evaluations", 0)],
        ["runtime (s)", f"{result.runtime_s:.2f}"],
        ["checker", checker],
    ]
    print_result_table(result, rows)
    return 0
