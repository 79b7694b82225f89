"""The ``themis convert`` command: an ASTRA-sim 1.0 workload to Chakra ETs, node for node as
chakra's text converter writes them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.cli.common import int_arg
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
                   help="output prefix: writes PREFIX.0.et .. PREFIX.<npus-1>.et")
    p.add_argument("--schema", default="1.0.0", choices=("0.0.4", "1.0.0"),
                   help="the chakra version whose schema string is written (0.0.4: what "
                        "ASTRA-sim 2.x's reference runs used; default 1.0.0)")
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
    if not prefix.parent.is_dir():
        raise InputError(f"no such folder: {prefix.parent}", "--out", args.out)
    text = read_text(path)
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
