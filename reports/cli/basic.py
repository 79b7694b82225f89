"""The ``themis presets``, ``themis network`` and ``themis simulate`` commands."""

from __future__ import annotations

import argparse
import sys
import time

from reports.cli.common import (
    GANTT_HELP,
    add_instance_args,
    add_network_args,
    check_output,
    defaults_note,
    int_arg,
    resolve_inputs,
    source_key,
    user_keys,
)
from reports.formatting import format_table, print_json
from reports.limits import BYTES_PER_STAGE, MAX_STAGES, SECONDS_PER_STAGE, check_stage_count
from topologies.errors import InputError


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``presets``, ``network`` and ``simulate`` to the ``themis`` subcommands."""
    p = sub.add_parser("presets", help="list the bundled networks and system files",
                       description="List the bundled networks (NETWORK) and ASTRA-sim "
                                   "system files (--system) by name. --json prints "
                                   '{"networks": [...], "systems": [...]}.')
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_presets)

    p = sub.add_parser("network", help="print a network's dimensions and NPU count")
    add_network_args(p, system=False)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_network)

    p = sub.add_parser("simulate", help="simulate a collective under a policy")
    add_instance_args(p)
    p.add_argument("--collective", default="all-reduce",
                   choices=["all-reduce", "reduce-scatter", "all-gather"])
    p.add_argument("--policy", default=None,
                   help="{policies} (default: the system file's inter-dimension-scheduling, "
                        "baseline if it omits it as in ASTRA-sim; without --system themis, "
                        "under --timing astra-sim-2 baseline, 2.x's own)")
    p.add_argument("--intra", default=None,
                   help="{disciplines} (default: the system file's "
                        "intra-dimension-scheduling, FIFO if it omits it as in ASTRA-sim; "
                        "without --system fifo, or portfolio's own choice)")
    p.add_argument("--active-chunks", type=int_arg("--active-chunks"), default=None,
                   help="stages a dimension runs at once, k (default: the system file's "
                        "active-chunks-per-dimension, else 1)")
    p.add_argument("--timing", default="alpha-beta",
                   help="alpha-beta (default, the project's model) | astra-sim-1.0 "
                        "(ASTRA-sim 1.0's numbers) | astra-sim-2 (ASTRA-sim 2.x's numbers, "
                        "analytical backend; its chunks and phase lists)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--schedule-out", metavar="FILE", help="write the schedule as JSON")
    p.add_argument("--gantt", metavar="FILE.png", help=GANTT_HELP)
    p.add_argument("--no-limit", action="store_true",
                   help=f"run even past {MAX_STAGES:,} stages (chunks x stages per chunk), "
                        f"which are refused by default: each stage takes about "
                        f"{BYTES_PER_STAGE} bytes of memory and {SECONDS_PER_STAGE * 1e6:g} us")
    p.set_defaults(func=cmd_simulate)



def below_ideal_note(utilization: float, timing: str = "astra-sim-1.0") -> str:
    """Why a makespan under ``timing`` (a congestion-free backend) can beat the
    bandwidth bound (one line; the timing's :class:`~themis.timing.base.Meaning`)."""
    from themis.timing import timing_meaning

    return (f"themis: note: the makespan is below the ideal (bandwidth utilization "
            f"{100 * utilization:.0f}%): {timing_meaning(timing).below_ideal}")


def cmd_presets(args: argparse.Namespace) -> int:
    """``themis presets``: the network presets, the system presets, the bundled workloads."""
    from topologies.presets import list_preset_systems, list_presets, preset_system
    from topologies.workload import bundled_workload_path, load_workload, workload_names

    presets = list_presets()
    systems = [(name, preset_system(name)) for name in list_preset_systems()]
    workloads = []
    for name in workload_names():
        wl = load_workload(name)
        path = bundled_workload_path(name)
        workloads.append({"name": name, "file": path.name if path else "",
                          "parallelism": str(wl.parallelism), "layers": len(wl.layers)})
    if args.json:
        print_json({
            "networks": [{"name": p.name, "description": p.description, "npus": p.npus,
                          "ndims": p.dims, "systems": list(p.systems)} for p in presets],
            "systems": [{"name": name, **_system_summary(cfg)} for name, cfg in systems],
            "workloads": workloads,
        })
        return 0
    rows = [[p.name, p.npus, p.dims, p.description] for p in presets]
    print("networks (NETWORK):")
    print(format_table(["name", "NPUs", "dimensions", "description"], rows))
    print()
    print("system files (--system):")
    print(format_table(
        ["name", "chunks", "inter", "intra", "all-reduce"],
        [[name, s["splits"] or "-", s["inter"] or "baseline (omitted)",
          s["intra"] or "fifo (omitted)",
          "_".join(s["all_reduce_algorithms"] or []) or "-"]
         for name, s in ((n, _system_summary(c)) for n, c in systems)]))
    print()
    print("workloads (WORKLOAD of train, design --workload, convert):")
    print(format_table(["name", "file", "parallelism", "layers"],
                       [[w["name"], w["file"], w["parallelism"], w["layers"]]
                        for w in workloads]))
    return 0


def _system_summary(cfg) -> dict:
    return {"splits": cfg.chunks, "inter": cfg.inter, "intra": cfg.intra,
            "all_reduce_algorithms": list(cfg.all_reduce_algorithms or []) or None}


def cmd_network(args: argparse.Namespace) -> int:
    """``themis network NETWORK [--json]``."""
    from reports.cli.common import load_network

    net = load_network(args.network)
    dims = [{"topology": d.kind, "npus": d.npus, "bandwidth_GBps": d.bandwidth_GBps,
             "latency_ns": d.latency_ns, "links": d.links_count,
             "nic_latency_ns": net.nic_latency(i), "router_latency_ns": net.router_latency(i)}
            for i, d in enumerate(net.dims)]
    if args.json:
        print_json({"dims": dims, "npus": net.npus})
        return 0
    rows = [[i, d.kind, d.npus, d.bandwidth_GBps, d.latency_ns, d.links_count,
             net.nic_latency(i), net.router_latency(i)]
            for i, d in enumerate(net.dims)]
    print(format_table(["dim", "topology", "NPUs", "bandwidth GB/s", "latency ns", "links",
                        "NIC ns", "router ns"], rows))
    print(f"total NPUs: {net.npus}")
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    """``themis simulate``."""
    from themis.timing import has_timing, timing_meaning, timing_names

    check_output(args.schedule_out, "--schedule-out")
    check_output(args.gantt, "--gantt", figure=True)
    inputs = resolve_inputs(args)
    system = inputs.system
    if not has_timing(args.timing):
        raise InputError(f"unknown timing model (expected one of {', '.join(timing_names())})",
                         "--timing", args.timing)
    keys = {
        "policy": source_key(args.policy, "--policy", "inter-dimension-scheduling",
                             system.source if system.inter else ""),
        "intra": source_key(args.intra, "--intra", "intra-dimension-scheduling",
                            system.source if system.intra else ""),
        **inputs.keys,
    }
    keys["route"] = keys["policy"]
    with user_keys(keys):
        if timing_meaning(args.timing).runner == "astra-2":
            return _simulate_astra2(args, inputs)
        return _simulate(args, inputs, system, keys)


def _simulate(args: argparse.Namespace, inputs, system, keys) -> int:
    """``simulate`` once its inputs are read (errors name the user's keys)."""
    import dataclasses

    from themis.collective import Collective
    from themis.disciplines import canonical_intra
    from themis.policies import make_policy
    from themis.runkind import RunKind
    from themis.system_run import run_system

    policy_name = args.policy or system.inter or "themis"
    policy = make_policy(policy_name)
    # A policy that chooses its discipline (portfolio) does so unless one is given
    # (by --intra or by the file itself, not by ASTRA-sim's default for an omitted key).
    chooses = bool(getattr(policy, "chooses_intra", False))
    file_intra = system.intra
    if chooses and "intra-dimension-scheduling" in system.defaulted:
        file_intra = None
    intra_arg = args.intra or file_intra or (None if chooses else "fifo")
    intra = canonical_intra(intra_arg) if intra_arg is not None else None
    k = args.active_chunks if args.active_chunks is not None else (system.active_chunks or 1)
    if k < 1:
        raise InputError("must be at least 1", "--active-chunks", k)
    collective = Collective(args.collective, inputs.size_bytes, inputs.chunks)
    if not args.no_limit:
        per_chunk = len(inputs.network.active_dims) * (2 if args.collective == "all-reduce" else 1)
        field, file = inputs.chunks_key
        check_stage_count(collective.chunk_count, max(per_chunk, 1), field, inputs.chunks, file)
    inputs.algorithms(args.collective)  # checked here to name the file's key
    t0 = time.perf_counter()
    if RunKind.of(args.timing).meaning.runner == "astra-1.0" and args.collective == "all-reduce":
        system.require("collective-optimization")
    sys_cfg = dataclasses.replace(system, endpoint_delay_ns=inputs.endpoint_delay_ns,
                                  active_chunks=k)
    result = run_system(inputs.network, sys_cfg, collective, args.timing, policy, intra)
    wall_s = time.perf_counter() - t0
    run_coll = result.schedule.collectives[0]
    chunking = collective.chunking()
    chunks_text = None
    if run_coll != collective:  # the timing's own chunking (ASTRA-sim 1.0's stream)
        chunking = {"splits": collective.splits, "chunk_count": run_coll.chunk_count,
                    "chunk_sizes": run_coll.chunking()["chunk_sizes"]}
        chunks_text = f"{run_coll.describe_chunks()} ({args.timing}'s chunking of " \
                      f"{collective.splits} splits)"
    return _report_simulation(args, inputs, result, collective, chunking, k,
                              policy.name, intra, wall_s, chunks_text=chunks_text)


def _simulate_astra2(args: argparse.Namespace, inputs) -> int:
    """``themis simulate --timing astra-sim-2``: the system file run as ASTRA-sim 2.x runs it.

    The file's ``inter-`` / ``intra-dimension-scheduling`` (which 2.x ignores) are
    honoured together when ``--policy`` is not given (default baseline / FIFO, 2.x's
    own); ``--policy`` replaces both, with ``--intra`` (default FIFO) as the discipline.
    """
    import dataclasses

    from themis.astra2_run import ignored_keys_note
    from themis.collective import Collective
    from themis.disciplines import canonical_intra
    from themis.system_run import run_system

    system = inputs.system
    if args.endpoint_delay is not None and args.endpoint_delay == 0:
        raise InputError("ASTRA-sim 2.x aborts with endpoint delay 0 (an event-queue "
                         "assertion): give a positive delay (2.x's default is 10)",
                         "--endpoint-delay", 0)
    note = ignored_keys_note(system) if system.source else None
    if args.policy is None:
        policy_name, intra_arg = system.inter or "baseline", args.intra or system.intra
        if note:
            sys.stderr.write(note + "\n")
    else:
        policy_name, intra_arg = args.policy, args.intra
        if note:
            sys.stderr.write(note.replace("; this tool honours them",
                                          "; --policy replaces them here (--intra gives the "
                                          "discipline, default FIFO)") + "\n")
    from themis.policies import make_policy

    chooses = bool(getattr(make_policy(policy_name), "chooses_intra", False))
    intra = canonical_intra(intra_arg) if intra_arg else (None if chooses else "fifo")
    k = args.active_chunks if args.active_chunks is not None else (system.active_chunks or 1)
    if k < 1:
        raise InputError("must be at least 1", "--active-chunks", k)
    requested = Collective(args.collective, inputs.size_bytes, inputs.chunks)
    t0 = time.perf_counter()
    delay = args.endpoint_delay if args.endpoint_delay is not None else system.endpoint_delay_ns
    result = run_system(inputs.network,
                        dataclasses.replace(system, endpoint_delay_ns=delay, active_chunks=k),
                        requested, args.timing, policy_name, intra, network_file=args.network)
    wall_s = time.perf_counter() - t0
    run = result.schedule.collectives[0]
    chunking = {"splits": requested.splits, "chunk_count": run.chunk_count,
                "chunk_sizes": run.chunking()["chunk_sizes"],
                "astra2_size_bytes": run.size_bytes}
    return _report_simulation(args, inputs, result, requested, chunking, k,
                              result.schedule.meta["policy"], intra, wall_s,
                              chunks_text=f"{run.chunk_count} chunks of "
                                          f"{run.chunk_bytes} B (ASTRA-sim 2.x's chunking of "
                                          f"{requested.splits} splits)")


def _report_simulation(args: argparse.Namespace, inputs, result, collective, chunking: dict,
                       k: int, policy_name: str, intra: str | None, wall_s: float,
                       chunks_text: str | None = None) -> int:
    """Print a simulation (text or ``--json``) and write its outputs."""
    from themis.timing import timing_meaning

    m = result.metrics
    if timing_meaning(args.timing).below_ideal and m.makespan_ns < m.ideal_ns * (1 - 1e-9):
        sys.stderr.write(below_ideal_note(m.bw_utilization, args.timing) + "\n")
    intra = intra or result.schedule.meta.get("intra", "fifo")
    choice = result.schedule.meta.get("policy_choice")
    if args.schedule_out:
        result.schedule.save(args.schedule_out)
    if args.gantt:
        from themis.plots import plot_gantt

        plot_gantt(result.schedule, path=args.gantt)
    if args.json:
        print_json({
            "makespan_ns": m.makespan_ns,
            "ideal_ns": m.ideal_ns,
            "bw_utilization": m.bw_utilization,
            "policy": policy_name,
            "intra": intra,
            "timing": args.timing,
            "collective": collective.kind,
            "size_bytes": collective.size_bytes,
            "chunks": chunking["chunk_count"],
            **chunking,
            "active_chunks": k,
            "npus": inputs.network.npus,
            "stages": m.stages,
            "dims": [{"dim": d.dim, "busy_ns": d.busy_ns, "sent_bytes": d.bytes,
                      "utilization": d.utilization} for d in m.dims],
            "routes": m.routes,
            "runtime_s": wall_s,
        } | ({"portfolio_choice": choice} if choice else {}))
        return 0
    print(f"{collective.kind} of {inputs.size_bytes} bytes in "
          f"{chunks_text or collective.describe_chunks()} "
          f"on {inputs.network.describe()} ({inputs.network.npus} NPUs)")
    print(f"policy {policy_name}, intra {intra}, timing {args.timing}, k = {k}")
    note = defaults_note(inputs.system)
    if note:
        print(note)
    if choice:
        print(f"chosen candidate: {choice}")
    print(format_table(["metric", "value"], [
        ["makespan (us)", m.makespan_ns / 1e3],
        ["ideal (us)", m.ideal_ns / 1e3],
        ["bandwidth utilization", f"{100 * m.bw_utilization:.1f}%"],
        ["stages simulated", m.stages],
        ["wall time (s)", f"{wall_s:.4f}"],
    ]))
    print()
    print(format_table(["dim", "busy (us)", "MiB sent", "utilization"], [
        [d.dim, d.busy_ns / 1e3, d.bytes / 2**20, f"{100 * d.utilization:.1f}%"]
        for d in m.dims]))
    print()
    print(format_table(["route", "chunks"], [[r, n] for r, n in m.routes.items()]))
    return 0
