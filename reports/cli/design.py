"""The ``themis design`` command: per-dimension bandwidth under a budget, for a policy."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from reports.cli.common import (
    CHUNKS_DEFAULT_HELP,
    DEFAULT_CHUNKS,
    check_output,
    float_arg,
    int_arg,
    load_network,
)
from reports.formatting import format_table, print_json
from topologies.errors import InputError

DEFAULT_DESIGN_SIZE = "1GiB"


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``design`` to the ``themis`` subcommands."""
    p = sub.add_parser(
        "design", help="design the network: per-dimension bandwidth under a budget for the "
                       "scheduler that will run, and the regret of designing for another")
    p.add_argument("network", metavar="NETWORK",
                   help="a network file or preset (its shape and latencies; bandwidths are "
                        "ignored) or a LIBRA network file (Topology, NpusCount, CostDimension)")
    p.add_argument("--policy", default="themis",
                   help="the scheduler to design for: a policy ({policies}), 'bound' (the "
                        "route-LP lower bound) or 'libra' (LIBRA's fluid fixed-order model); "
                        "default themis")
    p.add_argument("--regret", default=None, metavar="P1,P2,...",
                   help="policies of the regret table: a design for each, every design run "
                        "under each (default: baseline, --policy and bound)")
    p.add_argument("--total-bandwidth", type=float_arg("--total-bandwidth"), default=None,
                   metavar="GBps", help="budget: total bandwidth per NPU over the dimensions")
    p.add_argument("--cost", metavar="FILE",
                   help="a cost model: LIBRA's (with a LIBRA network) or a YAML "
                        "'cost_per_GBps: [..]' ($ per GB/s per NPU, one per dimension)")
    p.add_argument("--budget", type=float_arg("--budget"), default=None, metavar="X",
                   help="budget in the cost model's unit (with --cost)")
    p.add_argument("--size", default=None,
                   help=f"one all-reduce of this size (default {DEFAULT_DESIGN_SIZE}; not with "
                        "--workload)")
    p.add_argument("--chunks", type=int_arg("--chunks"), default=None,
                   help=f"chunks per collective ({CHUNKS_DEFAULT_HELP})")
    p.add_argument("--timing", default=None,
                   help="timing of simulated policies: alpha-beta (default; astra-sim-2 for "
                        "Chakra traces) or an ASTRA-sim timing, which runs --system as "
                        "simulate --timing does (then no bound and no libra)")
    p.add_argument("--system", metavar="FILE",
                   help="ASTRA-sim system file (1.0 text or 2.x JSON): its splits, discipline, "
                        "endpoint delay and algorithms, unless flags say otherwise")
    p.add_argument("--workload", metavar="FILE",
                   help="with --communicator: a LIBRA workload file (its collectives, each on "
                        "its phase's group, times summed as LIBRA does); without: an ASTRA-sim "
                        "1.0 workload file or bundled name, designed for its training iteration "
                        "(train's engine, alpha-beta timing)")
    p.add_argument("--communicator", metavar="FILE",
                   help="a LIBRA communicator file (group size per dimension per phase)")
    for flag, what in (("--min-bandwidth", "minimum"), ("--max-bandwidth", "maximum"),
                       ("--fixed-bandwidth", "fixed")):
        p.add_argument(flag, default=None, metavar="D=GBps,...",
                       help=f"{what} bandwidth of dimensions, e.g. 0=100,3=12.5")
    p.add_argument("--step", type=float_arg("--step"), default=0.0, metavar="GBps",
                   help="every designed bandwidth a multiple of this (e.g. one link's speed; "
                        "the budget is then a limit); default 0: continuous")
    p.add_argument("--intra", default=None,
                   help="intra-dimension discipline of simulated policies ({disciplines}; "
                        "default: the system file's, else fifo)")
    p.add_argument("--endpoint-delay", type=float_arg("--endpoint-delay"), default=None,
                   metavar="NS", help="endpoint delay per message step (default: the system "
                                      "file's; without one 0 under alpha-beta, ASTRA-sim's "
                                      "10 under its timings)")
    p.add_argument("--evaluations", type=int_arg("--evaluations"), default=None, metavar="N",
                   help="evaluations of each policy's search (deterministic; default 200)")
    p.add_argument("--workers", type=int_arg("--workers"), default=1, metavar="N",
                   help="local processes evaluating designs in parallel (default 1; the "
                        "design does not depend on it)")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="evaluate on a Dask scheduler ('local' starts a LocalCluster)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="NET.yml|NET.json",
                   help="write the design for --policy as a network file: ASTRA-sim 2.x YAML, "
                        "or 1.0 JSON (links kept) for a .json name")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw each design's budget share per dimension side by side")
    p.set_defaults(func=cmd_design)
    r = sub.add_parser("design-report", help="remake reports/design: designs on LIBRA's 4-D "
                                             "network per scheduler, with the regret table")
    r.add_argument("--libra", required=True, metavar="DIR",
                   help="LIBRA's inputs folder (e.g. ../shared/reference/libra)")
    r.add_argument("--out", required=True, metavar="DIR", help="the report folder")
    r.add_argument("--evaluations", type=int_arg("--evaluations"), default=200, metavar="N",
                   help="evaluations of each policy's search (default 200)")
    r.set_defaults(func=cmd_design_report)


def cmd_design_report(args: argparse.Namespace) -> int:
    """``themis design-report``."""
    if args.evaluations < 1:
        raise InputError("must be at least 1", "--evaluations", args.evaluations)
    from reports.report.design import build_design_report

    files = build_design_report(args.libra, args.out, args.evaluations)
    print(f"wrote {len(files)} files to {args.out}: {', '.join(files)}")
    return 0


def _dimension_values(text: str | None, flag: str, ndims: int) -> dict[int, float]:
    out: dict[int, float] = {}
    if text is None:
        return out
    for part in text.split(","):
        dim, sep, value = part.partition("=")
        try:
            d, v = int(dim), float(value)
        except ValueError:
            raise InputError("expected D=GBps items, e.g. 0=100,3=12.5", flag, part) from None
        if not sep or not 0 <= d < ndims:
            raise InputError(f"dimension must be 0..{ndims - 1}", flag, part)
        if not (v >= 0 and math.isfinite(v)):
            raise InputError("bandwidth must be a finite number >= 0", flag, part)
        out[d] = v
    return out


def _costs(args: argparse.Namespace, libra: Any, ndims: int) -> tuple[float, ...]:
    from topologies.astra.validators import as_mapping, load_yaml, read_text
    from topologies.libra import dimension_costs, parse_libra_cost

    text = read_text(args.cost)
    data = as_mapping(load_yaml(text, args.cost), args.cost, "a cost model")
    if "cost_per_GBps" in data:
        values = data["cost_per_GBps"]
        if not isinstance(values, list) or len(values) != ndims or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < math.inf
                for v in values):
            raise InputError(f"must list {ndims} positive prices, one per dimension",
                             "cost_per_GBps", values, args.cost)
        return tuple(float(v) for v in values)
    if libra is None:
        raise InputError("a LIBRA cost model needs a LIBRA network (its CostDimension); "
                         "for another network write 'cost_per_GBps: [..]'", "--cost", args.cost)
    return dimension_costs(libra, parse_libra_cost(text, args.cost), args.cost)


def _problem(args: argparse.Namespace) -> tuple[Any, str, Any]:
    from solvers.design import DesignItem, DesignProblem, workload_items
    from topologies.astra.validators import read_text
    from topologies.libra import (
        is_libra_network,
        parse_libra_network,
        read_libra_communicator,
        read_libra_workload,
    )
    from topologies.units import parse_size

    libra = None
    path = Path(args.network)
    if path.suffix.lower() in (".yml", ".yaml") and path.is_file():
        text = read_text(path)
        if is_libra_network(text):
            libra = parse_libra_network(text, str(path))
    network = libra.network() if libra is not None else load_network(args.network)
    n = network.ndims
    if (args.total_bandwidth is None) == (args.cost is None):
        raise InputError("give a budget: --total-bandwidth GBps, or --cost FILE with --budget",
                         "--total-bandwidth", args.total_bandwidth)
    if args.cost is not None:
        if args.budget is None:
            raise InputError("--cost needs --budget (in the cost model's unit)", "--budget", None)
        costs, budget = _costs(args, libra, n), args.budget
    else:
        if args.budget is not None:
            raise InputError("--budget goes with --cost", "--budget", args.budget)
        costs, budget = (1.0,) * n, args.total_bandwidth
    if args.chunks < 1:
        raise InputError("must be at least 1", "--chunks", args.chunks)
    training: Any = None
    if args.traces:
        from solvers.design import TraceSpec
        from topologies.chakra.ranks import read_et_source

        traces, _ = read_et_source(args.workload, network.npus)
        training = TraceSpec(traces, args.system_config, args.timing)
        items: tuple = ()
        what = "end_ns"
    elif args.workload is not None and args.communicator is None:
        if args.size is not None:
            raise InputError("--size is for one all-reduce; a workload gives its sizes",
                             "--size", args.size)
        from solvers.design import TrainingSpec
        from themis.training import TrainingConfig
        from topologies.workload import load_workload

        training = TrainingSpec(load_workload(args.workload), TrainingConfig(
            timing="alpha-beta", intra=args.intra, chunks=args.chunks,
            endpoint_delay_ns=float(args.endpoint_delay)))
        items = ()
        what = "end_ns"
    elif args.workload is not None:
        if args.size is not None:
            raise InputError("--size is for one all-reduce; a workload gives its sizes",
                             "--size", args.size)
        if args.communicator is None:
            raise InputError("a LIBRA workload needs --communicator FILE", "--communicator", None)
        comm = read_libra_communicator(args.communicator)
        if len(comm["Forward"]) != n:
            raise InputError(f"has {len(comm['Forward'])} dimensions, the network {n}",
                             "Forward", list(comm["Forward"]), args.communicator)
        items = workload_items(read_libra_workload(args.workload), comm, args.chunks,
                               args.workload)
        what = "end_ns"
    else:
        if args.communicator is not None:
            raise InputError("--communicator goes with --workload", "--communicator",
                             args.communicator)
        size = parse_size(args.size if args.size is not None else DEFAULT_DESIGN_SIZE, "--size")
        items = (DesignItem("all-reduce", size, args.chunks,
                            tuple(d.npus for d in network.dims), 1.0, "all-reduce"),)
        what = "makespan_ns"
    lo = [0.0] * n
    hi = [math.inf] * n
    for d, v in _dimension_values(args.min_bandwidth, "--min-bandwidth", n).items():
        lo[d] = v
    for d, v in _dimension_values(args.max_bandwidth, "--max-bandwidth", n).items():
        hi[d] = v
    for d, v in _dimension_values(args.fixed_bandwidth, "--fixed-bandwidth", n).items():
        lo[d] = hi[d] = v
    for d in range(n):
        if lo[d] > hi[d]:
            raise InputError(f"minimum {lo[d]:g} above maximum {hi[d]:g} GB/s",
                             "--max-bandwidth", f"{d}={hi[d]:g}")
    if not (0 <= args.step < math.inf):
        raise InputError("must be a finite number >= 0", "--step", args.step)
    problem = DesignProblem(network, items, float(budget), costs, tuple(lo), tuple(hi),
                            float(args.endpoint_delay), args.intra, float(args.step), training,
                            args.timing if not args.traces else "alpha-beta",
                            args.system_config if args.runner and not args.traces else None)
    return problem, what, libra


def _settle(args: argparse.Namespace) -> tuple[Any, str]:
    """The system file and the timing's runner; --chunks, --intra and --endpoint-delay
    resolved against the file (flags win)."""
    import dataclasses

    from reports.cli.common import load_system
    from themis.disciplines import canonical_intra
    from themis.timing.base import timing_meaning
    from topologies.chakra.ranks import is_et_source

    args.traces = bool(args.workload and args.communicator is None
                       and is_et_source(args.workload))
    if args.timing is None:
        args.timing = "astra-sim-2" if args.traces else "alpha-beta"
    runner = timing_meaning(args.timing).runner
    system = load_system(args.system)
    if args.chunks is None:
        args.chunks = system.chunks or DEFAULT_CHUNKS
    if args.intra is None:
        args.intra = canonical_intra(system.intra) if system.intra else "fifo"
    if args.endpoint_delay is not None:
        system = dataclasses.replace(system, endpoint_delay_ns=float(args.endpoint_delay))
    else:
        args.endpoint_delay = system.endpoint_delay_ns if system.endpoint_delay_ns is not None \
            else (10.0 if runner else 0.0)
    return system, runner


def cmd_design(args: argparse.Namespace) -> int:
    """``themis design``."""
    from solvers.design import DEFAULT_EVALUATIONS, design_policy_names
    from themis.disciplines import discipline_names

    system, runner = _settle(args)
    args.system_config, args.runner = system, runner
    names = design_policy_names(args.workload is not None and args.communicator is None,
                                runner or ("trace" if args.traces else ""))
    if args.policy not in names:
        raise InputError(f"unknown policy (one of {', '.join(names)})", "--policy", args.policy)
    if args.intra not in discipline_names():
        raise InputError(f"unknown discipline (one of {', '.join(discipline_names())})",
                         "--intra", args.intra)
    regret = ["baseline", args.policy, *([] if runner or args.traces else ["bound"])] \
        if args.regret is None else [p.strip() for p in args.regret.split(",")]
    for p in regret:
        if p not in names:
            raise InputError(f"unknown policy (one of {', '.join(names)})", "--regret", p)
    if args.policy not in regret:
        regret.insert(0, args.policy)
    regret = list(dict.fromkeys(regret))
    evaluations = DEFAULT_EVALUATIONS if args.evaluations is None else args.evaluations
    if evaluations < 1:
        raise InputError("must be at least 1", "--evaluations", evaluations)
    if not (0 <= args.endpoint_delay < math.inf):
        raise InputError("must be a finite number >= 0", "--endpoint-delay", args.endpoint_delay)
    if args.total_bandwidth is not None and not (0 < args.total_bandwidth < math.inf):
        raise InputError("must be a positive finite number", "--total-bandwidth",
                         args.total_bandwidth)
    if args.budget is not None and not (0 < args.budget < math.inf):
        raise InputError("must be a positive finite number", "--budget", args.budget)
    check_output(args.out, "--out")
    check_output(args.plot, "--plot", figure=True)
    if args.workers < 1:
        raise InputError("must be at least 1", "--workers", args.workers)
    problem, what, _ = _problem(args)
    study = _study(problem, regret, evaluations, args.workers, args.dask)
    chosen = study.designs[args.policy]
    if args.out:
        from topologies.astra import write_network_json, write_network_yaml

        designed = problem.network_with(chosen.bandwidths_GBps)
        if args.out.lower().endswith(".json"):  # ASTRA-sim 1.0's format (links kept)
            write_network_json(designed, args.out)
        else:
            write_network_yaml(designed, args.out)
    if args.plot:
        from reports.plots import plot_designs
        from themis.plots import new_figure, save_figure

        fig, (ax,) = new_figure(6.5, 4.0)
        shares = {name: [c * b / problem.budget for c, b in zip(problem.costs, bw, strict=True)]
                  for name, bw in study.table.designs.items()}
        plot_designs(shares, ax=ax, title=f"designs on {_shape(problem.network)}")
        save_figure(fig, args.plot)
    if args.json:
        out = {"policy": args.policy, "splits": args.chunks,
               "bandwidths_GBps": list(chosen.bandwidths_GBps),
               what: chosen.time_ns, "cost": chosen.cost, "budget": problem.budget,
               "costs_per_GBps": list(problem.costs), "start": chosen.start,
               "starts_ns": chosen.starts_ns, "evaluations": chosen.evaluations,
               "regret_table": study.table.to_dict()}
        print_json(out)
        return 0
    _print(problem, study, args.policy, what)
    return 0


def _study(problem: Any, policies: list[str], evaluations: int, workers: int,
           dask: str | None) -> Any:
    """The design study, its batches evaluated on the sweep executors when asked."""
    import sys

    from solvers.design import design_study

    if workers == 1 and not dask:
        return design_study(problem, policies, evaluations)
    import os

    from reports.sweep.executors import open_executor

    workers = min(workers, os.cpu_count() or 1, 64)
    with open_executor(workers, dask, sys.stderr) as (pool, _):
        return design_study(problem, policies, evaluations, pool)


def _shape(network: Any) -> str:
    return " x ".join(f"{d.kind}{d.npus}" for d in network.dims)


def _print(problem: Any, study: Any, policy: str, what: str) -> None:
    from solvers.design import TraceSpec

    chosen = study.designs[policy]
    unit = "GB/s per NPU (total bandwidth)" if set(problem.costs) == {1.0} else \
        "per NPU (cost model)"
    first = problem.items[0] if problem.items else None
    if isinstance(problem.training, TraceSpec):
        work = f"one iteration of {len(problem.training.traces)} ranks' Chakra traces " \
               f"({problem.training.timing})"
    elif problem.training is not None:
        work = f"one training iteration of {problem.training.workload.name}"
    elif what == "makespan_ns":
        assert first is not None
        work = f"one all-reduce of {first.size_bytes} bytes in {first.chunks} chunks"
    else:
        work = f"{len(problem.items)} collectives (weighted sum)"
    print(f"design for {policy}: {work} on {_shape(problem.network)} "
          f"({problem.network.npus} NPUs), budget {problem.budget:g} {unit}")
    rows = [[d, dim.kind, dim.npus, bw, f"{100 * c * bw / problem.budget:.1f}%"]
            for d, (dim, bw, c) in enumerate(zip(problem.network.dims, chosen.bandwidths_GBps,
                                                  problem.costs, strict=True))]
    print(format_table(["dim", "kind", "npus", "GB/s", "budget share"], rows))
    print(f"time under {policy}: {chosen.time_ns / 1e3:,.1f} us (search from the {chosen.start} "
          f"design, {chosen.evaluations} evaluations)")
    print()
    table = study.table
    headers = ["design \\ run under", *table.policies]
    body = []
    for name in table.designs:
        row: list[Any] = [name]
        for p in table.policies:
            r = table.regret(name, p)
            row.append(f"{table.time_ns[name][p] / 1e3:,.1f}"
                       + ("" if r is None else f" (+{100 * r:.2f}%)"))
        body.append(row)
    print("time (us) of each design under each policy (regret: above the design made for it)")
    print(format_table(headers, body))
