"""The ``themis convert`` command: an ASTRA-sim 1.0 workload to Chakra ETs, node for node as
chakra's text converter writes them, faithfully (``--faithful``), or as the program the project
compiles it to (``--program``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.cli.common import float_arg, int_arg
from topologies.errors import InputError


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``convert`` to the ``themis`` subcommands."""
    p = sub.add_parser("convert", help="turn an ASTRA-sim 1.0 workload file into Chakra ETs "
                                       "exactly as chakra's text converter does")
    p.add_argument("workload", metavar="WORKLOAD",
                   help="an ASTRA-sim 1.0 workload file or a bundled workload name")
    p.add_argument("--npus", type=int_arg("--npus"), required=True,
                   help="ranks to write (chakra's --num-npus)")
    p.add_argument("--passes", type=int_arg("--passes"), default=1,
                   help="training passes (chakra's --num-passes; default 1)")
    p.add_argument("--out", required=True, metavar="PREFIX",
                   help="output prefix: writes PREFIX.0.et .. PREFIX.<npus-1>.et (an existing "
                        "folder: FOLDER/<workload name>.<rank>.et)")
    p.add_argument("--schema", default="1.0.0", choices=("0.0.4", "1.0.0"),
                   help="the chakra version whose schema string is written (0.0.4: what "
                        "ASTRA-sim 2.x's reference runs used; default 1.0.0)")
    p.add_argument("--faithful", action="store_true",
                   help="write what ASTRA-sim 1.0 runs instead of what chakra writes: compute "
                        "in microseconds (cycles / --clock-GHz / 1000, whole us), "
                        "involved_dim and pg_name from the workload's parallelism over "
                        "--network's dimensions, NONE collectives left out, and "
                        "PREFIX.comm_groups.json (needs --network)")
    p.add_argument("--program", action="store_true",
                   help="write the program the project compiles the workload to (what "
                        "themis train runs: compute in ns, written in whole us; ASTRA-sim "
                        "1.0's priorities as comm_priority; each collective's dimensions as "
                        "involved_dim over --network's) and say what an ET cannot hold (the "
                        "one-cycle state changes, update times, blocking flags, pass ends); "
                        "needs --network, takes --system for the priorities and splits")
    p.add_argument("--network", metavar="NETWORK", default=None,
                   help="--faithful, --program: the network whose dimensions the collectives "
                        "span (its NPUs are --npus)")
    p.add_argument("--system", metavar="SYSTEM", default=None,
                   help="--program: the ASTRA-sim system file the workload is compiled "
                        "under (scheduling-policy: the priorities; preferred-dataset-splits: "
                        "the chunk check); default: themis train's own defaults")
    p.add_argument("--clock-GHz", type=float_arg("--clock-GHz"), default=None, metavar="F",
                   help="--faithful: the clock of the 1.0 workload's cycles (default 1: "
                        "a cycle is 1 ns, as ASTRA-sim 1.0 reports them)")
    p.add_argument("--no-comm-groups", action="store_true",
                   help="--faithful: write involved_dim only, no pg_name or comm-group file "
                        "(ASTRA-sim 2.x runs a pg_name group smaller than the system as one "
                        "flat ring; involved_dim alone keeps 1.0's per-dimension phases)")
    p.set_defaults(func=cmd_convert)


#: Ranks a conversion may write (each is a file).
MAX_RANKS = 65_536
#: Nodes over all ranks a conversion may write.
MAX_NODES = 50_000_000


def cmd_convert(args: argparse.Namespace) -> int:
    """``themis convert``."""
    from topologies.astra.validators import read_text
    from topologies.chakra.convert import CYCLES_WARNING, convert_workload
    from topologies.chakra.trace import et_bytes
    from topologies.files import atomic_write
    from topologies.workload import bundled_workload_path

    if not 1 <= args.npus <= MAX_RANKS:
        raise InputError(f"must be 1 to {MAX_RANKS} (one file per rank)", "--npus", args.npus)
    if not 1 <= args.passes <= 10_000:
        raise InputError("must be 1 to 10000", "--passes", args.passes)
    path = Path(args.workload)
    if not path.is_file():
        bundled = bundled_workload_path(args.workload)
        if bundled is None:
            raise InputError("no such file or bundled workload", "WORKLOAD", args.workload)
        path = bundled
    prefix = Path(args.out)
    if args.out.endswith(("/", "\\")) or prefix.is_dir():  # a folder: the workload's name in it
        if not prefix.is_dir():
            raise InputError("no such folder", "--out", args.out)
        prefix = prefix / path.stem
    if not prefix.parent.is_dir():
        raise InputError(f"no such folder: {prefix.parent}", "--out", args.out)
    if args.program and args.faithful:
        raise InputError("one of --program and --faithful", "--program", True)
    if args.system is not None and not args.program:
        raise InputError("only with --program", "--system", args.system)
    if args.program:
        for flag, value in (("--clock-GHz", args.clock_GHz),
                            ("--no-comm-groups", args.no_comm_groups or None)):
            if value is not None:
                raise InputError("only with --faithful", flag, value)
        return _program(args, path, prefix)
    text = read_text(path)
    if args.faithful:
        return _faithful(args, text, path, prefix)
    for flag, value in (("--network", args.network), ("--clock-GHz", args.clock_GHz),
                        ("--no-comm-groups", args.no_comm_groups or None)):
        if value is not None:
            raise InputError("only with --faithful or --program", flag, value)
    one = convert_workload(text, 1, args.passes, args.schema, str(path))[0]
    if len(one.nodes) * args.npus > MAX_NODES:
        raise InputError(f"would write {len(one.nodes) * args.npus:,} nodes (at most "
                         f"{MAX_NODES:,}): fewer --npus or --passes", "--npus", args.npus)
    traces = convert_workload(text, args.npus, args.passes, args.schema, str(path))
    sys.stderr.write(f"themis: warning: {CYCLES_WARNING}\n")
    for rank, trace in traces.items():
        atomic_write(f"{prefix}.{rank}.et", et_bytes(trace))
    print(f"wrote {len(traces)} ETs ({len(one.nodes)} nodes each) to "
          f"{prefix}.<0..{args.npus - 1}>.et")
    return 0


def _faithful(args: argparse.Namespace, text: str, path: Path, prefix: Path) -> int:
    """``themis convert --faithful``: ETs that mean what ASTRA-sim 1.0 runs."""
    import json

    from topologies.chakra.faithful import convert_faithful
    from topologies.chakra.trace import et_bytes
    from topologies.files import atomic_write

    network = _network_of(args, "--faithful")
    sizes = tuple(d.npus for d in network.dims)
    clock = args.clock_GHz if args.clock_GHz is not None else 1.0
    one = convert_faithful(text, (1,), args.passes, args.schema, str(path), clock)
    if len(one.traces[0].nodes) * args.npus > MAX_NODES:
        raise InputError(f"would write {len(one.traces[0].nodes) * args.npus:,} nodes (at "
                         f"most {MAX_NODES:,}): fewer --npus or --passes", "--npus", args.npus)
    ets = convert_faithful(text, sizes, args.passes, args.schema, str(path), clock,
                           not args.no_comm_groups)
    if ets.rounded:
        sys.stderr.write(f"themis: warning: {ets.rounded} compute times rounded to whole "
                         f"microseconds (an ET's unit), by up to {ets.max_rounding_ns:g} ns "
                         "each\n")
    for rank, trace in ets.traces.items():
        atomic_write(f"{prefix}.{rank}.et", et_bytes(trace))
    groups = ""
    if not args.no_comm_groups:
        atomic_write(f"{prefix}.comm_groups.json", json.dumps(ets.groups, indent=1) + "\n")
        groups = f" and {len(ets.groups)} communicator groups to {prefix}.comm_groups.json"
    print(f"wrote {len(ets.traces)} faithful ETs ({len(ets.traces[0].nodes)} nodes each, "
          f"{ets.dropped} NONE or dimensionless collectives left out; compute at "
          f"{clock:g} GHz) to {prefix}.<0..{args.npus - 1}>.et{groups}")
    return 0


def _program(args: argparse.Namespace, path: Path, prefix: Path) -> int:
    """``themis convert --program``: the workload's compiled program
    (:mod:`themis.training.compile10`) as per-rank ETs
    (:func:`themis.program_et.program_to_ets`)."""
    import json

    from reports.cli.train import training_system
    from themis.program_et import program_to_ets
    from themis.training import TrainingConfig
    from themis.training.compile10 import compile_workload
    from themis.training.simulate import prepare
    from topologies.chakra.trace import et_bytes
    from topologies.chakra.types import NodeType
    from topologies.files import atomic_write
    from topologies.workload import load_workload

    network = _network_of(args, "--program")
    workload = load_workload(str(path))
    system = training_system(args.system, [network])
    cfg = TrainingConfig.from_system(system, passes=args.passes)
    wl, lnet, b, _, _ = prepare(workload, network, cfg)
    if [d.npus for d in lnet.dims] != [d.npus for d in network.dims]:
        raise InputError(f"{workload.file or workload.name}: its model-parallel group splits "
                         "a dimension of the network (the program's collectives span the "
                         f"split dimensions {[d.npus for d in lnet.dims]}, which no "
                         "involved_dim over the network can say): not exported",
                         "--network", args.network)
    program = compile_workload(wl, lnet, b, cfg)
    if len(program.nodes) * args.npus > MAX_NODES:
        raise InputError(f"would write {len(program.nodes) * args.npus:,} nodes (at most "
                         f"{MAX_NODES:,}): fewer --npus or --passes", "--npus", args.npus)
    ets = program_to_ets(program, tuple(d.npus for d in network.dims), args.schema)
    for rank, trace in ets.traces.items():
        atomic_write(f"{prefix}.{rank}.et", et_bytes(trace))
    groups = ""
    if ets.groups:
        atomic_write(f"{prefix}.comm_groups.json", json.dumps(ets.groups, indent=1) + "\n")
        groups = f" and {len(ets.groups)} communicator groups to {prefix}.comm_groups.json"
    nodes = ets.traces[0].nodes
    colls = sum(n.type == NodeType.COMM_COLL_NODE for n in nodes)
    print(f"wrote {len(ets.traces)} ETs of {workload.name}'s compiled program "
          f"({len(nodes)} nodes each: {len(nodes) - colls} compute, {colls} collectives) to "
          f"{prefix}.<0..{args.npus - 1}>.et{groups}")
    print(program_note(ets.dropped, ets.rounded, ets.max_rounding_ns))
    return 0


#: What :attr:`themis.program_et.ProgramETs.dropped` counts, as ``convert`` says it.
DROPPED_WORDS = {"delay": "delay nodes (one-cycle state changes; their dependents take "
                          "their dependencies)",
                 "finish_delay_ns": "update times (finish_delay_ns)",
                 "blocking": "blocking flags", "pass_end": "pass-end markers"}


def program_note(dropped: dict[str, int], rounded: int, max_rounding_ns: int) -> str:
    """One line: what an ET could not hold, and the compute times rounded to whole us."""
    gone = ", ".join(f"{n} {DROPPED_WORDS.get(k, k)}" for k, n in dropped.items() if n)
    parts = [f"left out (an ET has no such field): {gone}" if gone else "nothing left out"]
    parts.append(f"{rounded} compute times rounded to whole microseconds, by up to "
                 f"{max_rounding_ns} ns each" if rounded else "no compute time rounded")
    return "; ".join(parts)


def _network_of(args: argparse.Namespace, flag: str):
    """``--network`` (needed by ``flag``: the dimensions each collective spans), loaded and
    checked to have ``--npus`` NPUs."""
    from reports.cli.common import load_network

    if args.network is None:
        raise InputError("needs --network (the dimensions each collective spans)", flag, True)
    network = load_network(args.network)
    if network.npus != args.npus:
        raise InputError(f"the network has {network.npus} NPUs", "--npus", args.npus)
    return network
