"""``themis train`` on Chakra execution traces (a prefix, folder or ``.et`` file).

One iteration under ASTRA-sim 2.x's semantics (:func:`themis.training.et_run.simulate_et`):
the end, compute, exposed communication, slot bound and iteration bound, ``--compare``
against 2.x's own baseline / FIFO, ``--solve`` (the exact optimum under 2.x's slots,
:mod:`solvers.iteration.et`), each rank class's end where ranks differ, ``--json`` with every
node's issue and end, ``--timeline``. The flags are ``themis train``'s (:mod:`reports.cli.train`).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from reports.cli.common import (
    BASELINE,
    DEFAULT_CHUNKS,
    check_output,
    load_network,
    load_system,
    print_solved,
)
from reports.formatting import format_table, print_json
from topologies.errors import InputError

#: Rank classes the text output of a Chakra-trace run lists at most (the slowest).
MAX_CLASS_ROWS = 20


def train_et(args: argparse.Namespace) -> int:
    """``themis train PREFIX|FOLDER|FILE.et NETWORK --timing astra-sim-2 --system S.json``:
    one iteration of Chakra traces under ASTRA-sim 2.x's semantics."""
    from themis.timing import timing_meaning
    from themis.training.et_run import simulate_et
    from topologies.chakra.ranks import read_comm_groups, read_et_source

    timing = args.timing or "astra-sim-2"
    try:
        timing_meaning(timing)
    except InputError as err:
        raise InputError(err.reason, "--timing", timing) from None
    for flag, value in (("--passes", args.passes), ("--comm-scale", args.comm_scale),
                        ("--compute-scale", args.compute_scale), ("--gantt", args.gantt)):
        if value is not None:
            raise InputError("not taken with Chakra traces yet (a trace holds its passes, "
                             "sizes and compute times)", flag, value)
    budget = None
    if args.solve:
        from solvers.iteration import DETERMINISTIC_S

        budget = args.solve_budget if args.solve_budget is not None else DETERMINISTIC_S
    check_output(args.timeline, "--timeline", figure=True)
    network = load_network(args.network)
    # Without --system: ASTRA-sim 2.x's own defaults (endpoint delay 10, localBWAware,
    # each dimension's default algorithm) and the one chunk default of every command.
    system = load_system(args.system)
    if args.chunks is not None or system.chunks is None:
        system = dataclasses.replace(system, chunks=args.chunks or DEFAULT_CHUNKS)
    traces, names = read_et_source(args.workload, network.npus)
    groups = {}
    if args.comm_group:
        groups = {str(k): v for k, v in read_comm_groups(args.comm_group,
                                                         network.npus).items()}
    t0 = time.perf_counter()
    policy = args.policy or system.inter or "baseline"
    intra = args.intra or system.intra or "fifo"
    result = simulate_et(traces, network, system, names, groups, policy, intra, timing,
                         bound=True)
    runtime_s = time.perf_counter() - t0
    baseline = None
    if args.compare:  # 2.x's own baseline / FIFO on the same traces and timing
        baseline = simulate_et(traces, network, system, names, groups, BASELINE["policy"],
                               BASELINE["intra"], timing)
    solved = None
    if budget is not None:
        from solvers.iteration.et import solve_et

        solved = solve_et(traces, network, result, timing, names, groups,
                          deterministic_s=budget, time_limit_s=args.time_limit)
    compared = {} if baseline is None else {
        "baseline_end_ns": baseline.end_ns,
        "speedup_over_baseline": baseline.end_ns / result.end_ns if result.end_ns else None}
    if args.timeline:
        from reports.report.training_plots import plot_et_timeline

        plot_et_timeline(result, path=args.timeline,
                         title=f"{Path(args.workload).name} on {args.network}: {policy} / "
                               f"{intra}, {timing}, {result.end_ns / 1e3:,.1f} us")
    if args.json:
        print_json({"workload": str(args.workload), "format": "chakra-et",
                    "timing": timing, "policy": policy, "intra": intra, "npus": network.npus,
                    "splits": system.chunks, "runtime_s": runtime_s, **result.to_dict(),
                    **compared, **({} if solved is None else {"solve": solved.to_dict()})})
        return 0
    nodes = sum(len(n) for _, n in result.classes)
    print(f"{args.workload}: {result.ranks} ranks ({len(result.classes)} rank classes, "
          f"{nodes} nodes simulated) on {network.npus} NPUs, timing {timing}, policy "
          f"{policy}, intra {intra}")
    print(format_table(["metric", "value"], [
        ["end (ns)", f"{result.end_ns:,}"],
        ["compute (ns)", f"{result.compute_ns:,}"],
        ["exposed communication (ns)", f"{result.exposed_comm_ns:,}"],
        ["slot bound, this run's collective times (ns)", f"{result.lower_bound_ns:,}"],
        ["end / slot bound", f"{result.end_ns / result.lower_bound_ns:.4f}"
         if result.lower_bound_ns else "-"],
        ["iteration bound, every policy (ns)", f"{result.iteration_bound_ns:,}"],
        ["end / iteration bound", f"{result.end_ns / result.iteration_bound_ns:.4f}"
         if result.iteration_bound_ns else "-"],
        *([] if baseline is None else [
            ["baseline / fifo end (ns)", f"{baseline.end_ns:,}"],
            ["speed-up over baseline", f"{baseline.end_ns / result.end_ns:.4f}x"
             if result.end_ns else "-"]]),
    ]))
    if len(result.classes) > 1:  # ranks that differ: each class's end
        from reports.report.training_plots import ranks_label
        from themis.training.et_run import nodes_end_ns

        print()
        ends = [(ranks, nodes, nodes_end_ns(nodes)) for ranks, nodes in result.classes]
        if len(ends) > MAX_CLASS_ROWS:
            print(f"the {MAX_CLASS_ROWS} slowest of {len(ends)} rank classes (every one: "
                  "--json)")
            ends = sorted(ends, key=lambda e: -e[2])[:MAX_CLASS_ROWS]
        print(format_table(["ranks", "nodes", "end (ns)"], [
            [ranks_label(ranks), len(nodes), f"{end:,}"] for ranks, nodes, end in ends]))
    print("(every node's issue and end: --json; both slots over time: --timeline FILE)")
    if solved is not None:
        print_solved(result.end_ns, solved, "ns")
    return 0
