"""The ``themis train-report`` command: the training report, simulated or from a sweep.

``themis train-report [--out DIR]`` runs every bundled workload family on the
report's networks under its policies (:mod:`reports.report.training`); ``--system
FILE`` starts every run from a system file's values (as ``themis train
--system`` does), ``--policies`` names the methods. ``themis train-report --db
F.sqlite --out DIR`` writes the same tables from the training tasks of a sweep
database (:mod:`reports.report.training_db`).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from reports.cli.common import load_network, load_system, user_keys
from reports.cli.train import LongRunProgress, system_keys, training_system
from topologies.errors import InputError

#: The report folder when neither ``--out`` nor ``--db`` is given.
DEFAULT_OUT = "reports/training"


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``train-report`` to the ``themis`` subcommands."""
    p = sub.add_parser(
        "train-report", help="remake the training report (every workload, network and policy)",
        description="Simulate every workload on every network under every policy and write "
                    "README.md, results.csv and plots; or, with --db, write the same tables "
                    "from the training tasks of a sweep database (a spec's [[training]] "
                    "tables).")
    p.add_argument("--out", default=None, metavar="DIR",
                   help=f"output folder (default {DEFAULT_OUT}; needed with --db)")
    p.add_argument("--workloads", default=None, metavar="A,B",
                   help="comma-separated bundled workloads (default: every family's), "
                        "or Chakra traces (a prefix, folder or .et file, as train takes "
                        "them; with --system 2.x's JSON and --networks of their NPUs)")
    p.add_argument("--networks", default=None, metavar="A,B",
                   help="comma-separated networks (default: {training_networks})")
    p.add_argument("--system", metavar="FILE",
                   help="ASTRA-sim system file whose values every run starts from, as "
                        "themis train --system (a key it omits gets ASTRA-sim's own "
                        "default); default: the report's own system (LIFO, endpoint-delay "
                        "10, 64 splits, boost mode, localBWAware)")
    p.add_argument("--policies", default=None, metavar="A,B/D",
                   help="comma-separated methods, each a policy ({policies} | "
                        "themis-running) optionally /discipline ({disciplines}); one without "
                        "takes the system's discipline (FIFO if it names none). The first is "
                        "the one speed-ups are measured against (default: baseline/fifo, "
                        "themis/fifo, themis/scf, themis-running/scf, portfolio/scf)")
    p.add_argument("--comm-group", metavar="FILE.json", default=None,
                   help="Chakra traces among --workloads: communicator groups, "
                        "{\"<id>\": [npu ids]} (as train's --comm-group)")
    p.add_argument("--db", default=None, metavar="FILE.sqlite",
                   help="write the report of this sweep database's training tasks (opened "
                        "read-only; nothing is simulated)")
    p.set_defaults(func=cmd_train_report)


def comma_names(text: str | None, flag: str) -> list[str] | None:
    """A comma-separated list of names (``None`` when the flag is not given)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError("names nothing (give comma-separated names)", flag, text)
    return names


def report_policies(text: str, system: Any, networks: list[Any], workloads: list[Any]
                    ) -> list[tuple[str, str, str]]:
    """``--policies`` as (label, policy, intra), every entry checked on every network (a
    fixed route on every model-parallel split of the workloads too)."""
    from reports.report.training import TIMING, default_system
    from reports.sweep.training_policies import check_policies, parse_policies, split_policy_list
    from themis.training import TrainingConfig
    from themis.training.dims import TRANSFORMERS

    run_system = system if system is not None else default_system()
    with user_keys(system_keys(run_system, policy_flag="--policies", intra_flag="--policies")):
        base = TrainingConfig.from_system(run_system, timing=TIMING)
    methods = parse_policies(split_policy_list(text, "--policies"), [base.intra], "--policies",
                             indexed=False)
    from reports.methods import is_route

    routes = [m for m in methods if is_route(m.policy)]
    groups = {wl.model_parallel_npu_group for wl in workloads
              if wl.parallelism in TRANSFORMERS} - {None}
    for net in networks:
        check_policies(net, base, methods, ["--policies"] * len(methods))
        for group in sorted(groups) if routes else ():
            check_policies(net, base, routes, ["--policies"] * len(routes), group=group)
    return [(m.label, m.policy, m.intra) for m in methods]


def cmd_train_report(args: argparse.Namespace) -> int:
    """``themis train-report [--out DIR] [--workloads A,B] [--networks A,B] [--system FILE]
    [--policies A,B]``, or ``themis train-report --db F.sqlite --out DIR``."""
    if args.db is not None:
        return _from_database(args)
    from topologies.workload import load_workload

    out = args.out if args.out is not None else DEFAULT_OUT
    workloads = comma_names(args.workloads, "--workloads")
    networks = comma_names(args.networks, "--networks")
    from topologies.chakra.ranks import is_et_source

    if any(is_et_source(w) for w in workloads or ()):
        return _with_traces(args, out, workloads or [], networks)
    if args.comm_group is not None:
        raise InputError("only Chakra traces among --workloads take communicator groups",
                         "--comm-group", args.comm_group)
    loaded = [load_workload(name) for name in workloads or ()]
    from reports.report.training import FAMILIES, NETWORKS, TIMING, write_report

    nets = [load_network(name) for name in networks or NETWORKS]
    system = training_system(args.system, nets) if args.system else None
    if system is not None:
        from themis.training import TrainingConfig

        with user_keys(system_keys(system)):
            TrainingConfig.from_system(system, timing=TIMING)  # refused keys: before any run
    policies = None
    if args.policies is not None:  # checked on the small-iteration table's cases too
        from reports.report import training_exact as tx

        every = (loaded or [load_workload(w) for ws in FAMILIES.values() for w in ws]) \
            + [load_workload(w) for w in tx.WORKLOADS]
        small = [load_network(n) for n in tx.NETWORKS if n not in (networks or NETWORKS)]
        policies = report_policies(args.policies, system, nets + small, every)
    command = ["themis", "train-report", "--out", out]
    for flag, value in (("--workloads", args.workloads), ("--networks", args.networks),
                        ("--system", args.system), ("--policies", args.policies)):
        if value:
            command += [flag, value]
    progress = LongRunProgress("train-report", "runs")
    try:
        given = "--policies" if policies else None  # the methods' own flag, else the file's
        keys = system_keys(system, given, given, policy_flag="--policies",
                           intra_flag="--policies") if system is not None else {}
        with user_keys(keys):
            wall_s = write_report(out, workloads, networks or NETWORKS, shlex.join(command),
                                  policies=policies, progress=progress, system=system)
    finally:
        progress.close()
    print(f"wrote {out}/README.md, results.csv, speedups.png, timeline.png in {wall_s:.1f} s")
    return 0


#: The flag of each key of the [[training]] table a report with Chakra traces runs.
_FLAGS = {"workloads": "--workloads", "networks": "--networks", "systems": "--system",
          "policies": "--policies", "comm_group": "--comm-group"}


def _with_traces(args: argparse.Namespace, out: str, workloads: list[str],
                 networks: list[str] | None) -> int:
    """``train-report --workloads PREFIX[,...] --networks N --system S.json``: the cases
    run as a ``[[training]]`` table of them would (:mod:`reports.sweep.training`, each ET
    case as ``themis train PREFIX``), in this process, and the report is the one
    ``train-report --db`` writes of such a sweep."""
    import json
    import re
    import time
    from pathlib import Path

    from reports.report.training_db import study_of, write_study
    from reports.sweep.training import parse_training, run_training_task
    from reports.sweep.training_policies import split_policy_list

    if not networks:  # the bundled networks' NPU counts are not the traces' ranks
        raise InputError("Chakra traces need the network they ran on (one NPU per rank): "
                         "give --networks", "--networks", None)
    table: dict[str, Any] = {"workloads": workloads, "networks": networks}
    if args.system:
        table["systems"] = [args.system]
    if args.policies is not None:  # one without a discipline: the system's, else FIFO
        table["policies"] = split_policy_list(args.policies, "--policies")
        table["intra"] = [(load_system(args.system).intra if args.system else None)
                          or "fifo"]
    if args.comm_group is not None:
        table["comm_group"] = args.comm_group
    t0 = time.perf_counter()
    try:
        tasks, _, _ = parse_training([table], Path.cwd(), "")
    except InputError as err:
        m = re.fullmatch(r"training\[0\]\.(\w+)(\[\d+\])?", err.field)
        if m is None or err.file:
            raise
        flag = _FLAGS.get(m[1], m[1])
        value = getattr(args, flag[2:].replace("-", "_"), err.value) \
            if flag.startswith("--") else err.value
        raise InputError(err.reason, flag, value if m[2] is None else err.value) from None
    command = ["themis", "train-report", "--out", out]
    for flag, value in (("--workloads", args.workloads), ("--networks", args.networks),
                        ("--system", args.system), ("--policies", args.policies),
                        ("--comm-group", args.comm_group)):
        if value:
            command += [flag, value]
    progress = LongRunProgress("train-report", "runs")
    rows = []
    try:
        for i, task in enumerate(tasks):
            rows.append(run_training_task(task))
            progress(i + 1, len(tasks))
    finally:
        progress.close()
    study = study_of(rows, {"title": "Training report", "direct": "1",
                            "training_order": json.dumps([t.key for t in tasks])})
    if not study.settings:
        errors = "; ".join(dict.fromkeys(r["error"] for r in rows if r.get("error")))
        raise InputError(f"no case finished ({errors})", "--workloads", args.workloads)
    written = write_study(study, out, shlex.join(command), t0)
    print(f"wrote {len(written)} files to {out}: "
          + ", ".join(sorted(p.name for p in written)))
    return 0


def _from_database(args: argparse.Namespace) -> int:
    """``train-report --db F.sqlite --out DIR``."""
    for flag, value in (("--workloads", args.workloads), ("--networks", args.networks),
                        ("--system", args.system), ("--policies", args.policies),
                        ("--comm-group", args.comm_group)):
        if value is not None:
            raise InputError("not with --db (the sweep's spec chose the workloads, networks, "
                             "systems and policies)", flag, value)
    if args.out is None:
        raise InputError("needs --out DIR (the folder to write the report into)", "--db",
                         args.db)
    from reports.report.training_db import write_db_report

    command = shlex.join(["themis", "train-report", "--db", args.db, "--out", args.out])
    written = write_db_report(args.db, args.out, command)
    print(f"wrote {len(written)} files to {args.out}: "
          + ", ".join(sorted(p.name for p in written)))
    return 0


__all__ = ["DEFAULT_OUT", "cmd_train_report", "comma_names", "register", "report_policies"]
