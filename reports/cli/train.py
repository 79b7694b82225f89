"""The ``themis train`` command: a training iteration from an ASTRA-sim 1.0 workload file.

``themis train WORKLOAD NETWORK`` runs the workload's compute and collectives
on one NPU's timeline (:mod:`themis.training`) and prints the end time, the
compute, the exposed communication (end - compute, as ASTRA-sim defines it),
the iteration bound and a per-layer table; ``--compare`` also runs the
baseline (baseline / FIFO) and prints the speed-up over it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

from reports.cli.common import (
    BASELINE,
    CHUNKS_DEFAULT_HELP,
    GANTT_HELP,
    add_network_args,
    check_output,
    defaults_note,
    int_arg,
    load_network,
    load_system,
    positive_arg,
    print_solved,
    source_key,
    user_keys,
)
from reports.formatting import format_table, print_json
from topologies.errors import InputError
from topologies.network import Network
from topologies.system import SystemConfig

#: The inter policy when neither ``--policy`` nor the system file names one.
DEFAULT_POLICY = "themis"


def register(sub: argparse._SubParsersAction, parser_class: type) -> None:
    """Add ``train`` to the ``themis`` subcommands (``train-report``:
    :mod:`reports.cli.train_report`)."""
    p = sub.add_parser(
        "train", help="simulate training iterations of an ASTRA-sim workload file",
        description="Simulate training iterations of an ASTRA-sim 1.0 workload file. With "
                    "--system, the file's keys (a key it omits gets ASTRA-sim 1.0's own "
                    "default: ascending = baseline, FIFO, endpoint-delay 10, boost-mode 0, "
                    "active-chunks-per-dimension 1; scheduling-policy, "
                    "collective-optimization and preferred-dataset-splits are required, as "
                    "ASTRA-sim stops without them). Without --system: themis / fifo, 4 "
                    "chunks (the one chunk default of every command), endpoint delay 10 ns, "
                    "localBWAware, boost mode on, LIFO, 1 active chunk (the values of "
                    "ASTRA-sim's tutorial system files).")
    p.add_argument("workload", metavar="WORKLOAD",
                   help="ASTRA-sim 1.0 workload file or bundled name (vgg16, gpt3, resnet50, "
                        "dlrm, transformer, mlp, ...), or Chakra execution traces: a prefix "
                        "(<prefix>.<rank>.et, as ASTRA-sim 2.x's --workload-configuration), "
                        "a folder of them or one .et file (run with --timing astra-sim-2 "
                        "and a 2.x --system JSON)")
    add_network_args(p)
    p.add_argument("--comm-group", metavar="FILE.json", default=None,
                   help="Chakra traces: communicator groups, {\"<id>\": [npu ids]} "
                        "(ASTRA-sim 2.x's --comm-group-configuration)")
    p.add_argument("--passes", type=int_arg("--passes"), default=None,
                   help="training passes, ASTRA-sim's --num-passes (default 1)")
    p.add_argument("--policy", default=None,
                   help="inter-dimension policy: {policies} | {training_policies} (default: the "
                        "system file's inter-dimension-scheduling, baseline if it omits it "
                        "as in ASTRA-sim; without --system themis)")
    p.add_argument("--intra", default=None,
                   help="intra-dimension discipline: {disciplines} (default: the system "
                        "file's intra-dimension-scheduling, FIFO if it omits it as in "
                        "ASTRA-sim; without --system fifo)")
    p.add_argument("--timing", default=None,
                   help="astra-sim-1.0 (default; reproduces ASTRA-sim 1.0) | alpha-beta "
                        "(astra-sim-2 times single collectives only: refused here)")
    p.add_argument("--chunks", type=int_arg("--chunks"), default=None,
                   help=f"chunks per collective ({CHUNKS_DEFAULT_HELP})")
    p.add_argument("--comm-scale", type=positive_arg("--comm-scale"), default=None, metavar="X",
                   help="multiply every collective size (ASTRA-sim's --comm-scale, default 1)")
    p.add_argument("--compute-scale", type=positive_arg("--compute-scale"), default=None,
                   metavar="X", help="multiply every compute time (default 1)")
    p.add_argument("--compare", action="store_true",
                   help="also run baseline / FIFO and print the speed-up over it")
    p.add_argument("--solve", action="store_true",
                   help="also solve the iteration exactly (CP-SAT over every chunk's route "
                        "and every dimension's order, and on Chakra traces every slot's "
                        "order; small iterations only, larger ones are refused; on traces "
                        "under astra-sim-2 or astra-sim-1.0 only)")
    p.add_argument("--solve-budget", type=positive_arg("--solve-budget",
                       " of deterministic seconds"), default=None,
                   metavar="S", help="CP-SAT deterministic time for --solve (default 20): "
                                     "it bounds the search on any machine, as the size "
                                     "cap (refused up front) bounds the model; without "
                                     "--time-limit the answer reproduces on any machine")
    p.add_argument("--time-limit", type=positive_arg("--time-limit",
                       " of seconds"), default=None,
                   metavar="SECONDS",
                   help="wall-clock limit of --solve (model build and search), on top of "
                        "--solve-budget; a search it stops is labelled stopped_by 'wall', "
                        "and its answer depends on the machine (default: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--timeline", metavar="FILE",
                   help="draw compute and each dimension's collectives over time "
                        "(.png, .pdf or .svg)")
    p.add_argument("--gantt", metavar="FILE.png",
                   help=GANTT_HELP + ": every stage of the run, one row per (logical) "
                        "dimension")
    p.set_defaults(func=cmd_train)


class LongRunProgress:
    """Progress of a long run on stderr, called as ``progress(done, total)``
    (or, for a training run, ``progress(issued, ended, total)``: issues and ends
    count half each, as a run issues its collectives, then drains them).

    On a terminal, a :mod:`rich` bar (as the sweeps show) appears once the run
    has taken ``after_s`` and is cleared at the end; otherwise, once the run has
    taken ``plain_after_s``, one plain line every ``plain_every_s`` (logs stay
    readable). Short runs print nothing.
    """

    def __init__(self, label: str, unit: str, stream: IO[str] | None = None,
                 tty: bool | None = None, after_s: float = 1.0, plain_after_s: float = 10.0,
                 plain_every_s: float = 10.0) -> None:
        self.label, self.unit = label, unit
        self.stream = stream or sys.stderr
        try:
            self.tty = self.stream.isatty() if tty is None else tty
        except (AttributeError, ValueError):
            self.tty = False
        self.t0 = time.perf_counter()
        self._after = after_s if self.tty else plain_after_s
        self._next = self.t0 + self._after
        self._every = 0.2 if self.tty else plain_every_s
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, *counts: int) -> None:
        now = time.perf_counter()
        if now < self._next:
            return
        self._next = now + self._every
        if len(counts) == 3:
            issued, ended, total = counts
            done, total = issued + ended, 2 * total
            what = f"{issued} issued, {ended} ended of {total // 2} {self.unit}"
        else:
            done, total = counts
            what = f"{done}/{total} {self.unit}"
        from reports.sweep.progress import format_duration

        elapsed = now - self.t0
        left = "-" if not done else format_duration(elapsed / done * max(total - done, 0))
        if not self.tty:
            self.stream.write(f"themis: {self.label}: {100 * done / max(total, 1):.0f}% "
                              f"({what}), {format_duration(elapsed)}, ETA {left}\n")
            self.stream.flush()
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn(self.label), BarColumn(),
                                 TaskProgressColumn(), TextColumn("{task.description}"),
                                 TimeRemainingColumn(),
                                 console=Console(file=self.stream, force_terminal=True),
                                 auto_refresh=False, transient=True)
            self._bar.start()
            self._task = self._bar.add_task("", total=total)
        self._bar.update(self._task, completed=done, total=total, description=what)
        self._bar.refresh()

    def phase(self, name: str) -> None:
        """A step after the counted work (e.g. the iteration bound): said on the bar, or in
        one plain line when the run is long enough to have shown progress."""
        now = time.perf_counter()
        from reports.sweep.progress import format_duration

        what = f"all {self.unit} done in {format_duration(now - self.t0)}; computing {name}"
        if self._bar is not None:
            self._bar.update(self._task, description=what)
            self._bar.refresh()
        elif now - self.t0 >= self._after:
            self.stream.write(f"themis: {self.label}: {what}\n")
            self.stream.flush()

    def close(self) -> None:
        """Clear the bar, if one is shown."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    checks = [("--passes", args.passes, 1), ("--chunks", args.chunks, 1)]
    for flag, value, low in checks:
        if value is not None and value < low:
            raise InputError(f"must be at least {low}", flag, value)
    from themis.timing import timing_meaning, timing_names

    if args.timing is not None and args.timing in timing_names() \
            and not timing_meaning(args.timing).training:
        ok = " or ".join(t for t in timing_names() if timing_meaning(t).training)
        raise InputError(f"training iterations are not modelled under the {args.timing} timing "
                         "yet (ASTRA-sim 2.x runs Chakra traces, not these 1.0 workload files; "
                         f"it times single collectives with themis simulate): use {ok}",
                         "--timing", args.timing)
    check_output(args.timeline, "--timeline", figure=True)
    check_output(args.gantt, "--gantt", figure=True)
    values = {"passes": args.passes, "policy": args.policy, "intra": args.intra,
              "timing": args.timing, "chunks": args.chunks, "comm_scale": args.comm_scale,
              "compute_scale": args.compute_scale}
    return {k: v for k, v in values.items() if v is not None}


def cmd_train(args: argparse.Namespace) -> int:
    """``themis train WORKLOAD NETWORK [...]``."""
    from topologies.chakra.ranks import is_et_source
    from topologies.workload import load_workload

    if args.time_limit is not None and not args.solve:
        raise InputError("only limits --solve; add --solve", "--time-limit", args.time_limit)
    if args.solve_budget is not None and not args.solve:
        raise InputError("only limits --solve; add --solve", "--solve-budget",
                         args.solve_budget)
    if is_et_source(args.workload):
        from reports.cli.train_et import train_et

        return train_et(args)

    overrides = _overrides(args)
    workload = load_workload(args.workload)
    network = load_network(args.network)
    system = training_system(args.system, [network])
    with user_keys(system_keys(system, args.policy, args.intra, args.chunks)):
        return _train(args, overrides, workload, network, system)


def training_system(spec: str | None, networks: Sequence[Network]) -> SystemConfig:
    """``--system FILE``'s configuration (ASTRA-sim's defaults for the keys it omits),
    checked against every network; without a file, an empty one (the command's own
    defaults). What ``train`` and ``train-report`` run with."""
    from topologies.astra.algorithms import validate_system

    system = load_system(spec)
    for network in networks:
        validate_system(network, system)
    return system


def system_keys(system: SystemConfig, policy: object = None, intra: object = None,
                chunks: object = None, policy_flag: str = "--policy",
                intra_flag: str = "--intra") -> dict[str, tuple]:
    """For :func:`~reports.cli.common.user_keys`: where a run's policy, discipline and
    chunks came from (the flag, given, else the system file's key) and the file's own
    keys a run may refuse."""
    src = system.source
    keys: dict[str, tuple] = {
        "policy": source_key(policy, policy_flag, "inter-dimension-scheduling",
                             src if system.inter else ""),
        "intra": source_key(intra, intra_flag, "intra-dimension-scheduling",
                            src if system.intra else ""),
        "chunks": source_key(chunks, "--chunks", "preferred-dataset-splits",
                             src if system.chunks is not None else ""),
        "timing": ("--timing", ""),
        "all-to-all-implementation": ("all-to-all-implementation", src),
        "scheduling-policy": ("scheduling-policy", src),
    }
    keys["route"] = keys["policy"]
    return keys


def _train(args: argparse.Namespace, overrides: dict[str, Any], workload, network,
           system) -> int:
    """``train`` once its inputs are read (errors name the user's keys)."""
    from themis.training import TrainingConfig, simulate_training

    overrides.setdefault("policy", system.inter or DEFAULT_POLICY)
    config = TrainingConfig.from_system(system, **overrides)
    from themis.training.simulate import check_scales, check_size

    check_scales(workload, config, "--comm-scale", "--compute-scale")
    check_size(workload, network, config,
               ("--passes" if "passes" in overrides else "passes",
                "--chunks" if "chunks" in overrides else "preferred-dataset-splits"))
    progress = LongRunProgress(f"train {workload.name}", "collectives")
    try:
        result = simulate_training(workload, network, config, progress=progress)
    finally:
        progress.close()
    solved = None
    if args.solve:
        from solvers.iteration import DETERMINISTIC_S, solve_iteration

        budget = args.solve_budget if args.solve_budget is not None else DETERMINISTIC_S
        solved = solve_iteration(workload, network, config, deterministic_s=budget,
                                 time_limit_s=args.time_limit)
    baseline = None
    if args.compare:
        progress = LongRunProgress(f"train {workload.name} (baseline)", "collectives")
        try:
            baseline = simulate_training(workload, network,
                                         dataclasses.replace(config, **BASELINE),
                                         progress=progress)
        finally:
            progress.close()
    if args.timeline:
        from reports.report.training_plots import plot_training_timeline

        plot_training_timeline(result, path=args.timeline,
                               title=f"{workload.name} on {args.network}: "
                                     f"{config.policy} / {config.intra}")
    if args.gantt:
        from themis.plots import plot_gantt

        assert result.schedule is not None  # simulate_training always records it
        plot_gantt(result.schedule, path=args.gantt,
                   title=f"{workload.name} on {args.network}: {config.policy} / "
                         f"{config.intra}, {result.end_ns / 1e3:,.1f} us")
    data = result.to_dict()
    if baseline is not None:
        data["baseline_end_ns"] = baseline.end_ns
        data["speedup_over_baseline"] = baseline.end_ns / result.end_ns
    if solved is not None:
        data["solve"] = solved.to_dict()
    if args.json:
        data.update(workload=workload.name, workload_file=workload.file,
                    parallelism=str(workload.parallelism), network=args.network,
                    npus=network.npus)
        print_json(data)
        return 0
    _print_text(workload, network, result.config, result, baseline, defaults_note(system))
    if solved is not None:
        print_solved(result.end_ns, solved)  # reports.cli.common
    return 0


def _us(ns: float) -> float:
    return ns / 1e3


#: Layers printed in full; a larger workload gets the ones that expose the most.
MAX_LAYER_ROWS = 200


def _print_text(workload, network, config, result, baseline, note: str | None = None) -> None:
    passes = getattr(config, "passes", 1)
    print(f"{workload.name or workload.file} ({workload.parallelism}, "
          f"{len(workload.layers)} layers) on {network.describe()} ({network.npus} NPUs), "
          f"{passes} pass{'es' if passes != 1 else ''}")
    print(f"policy {config.policy}, intra {config.intra}, timing {config.timing}, "
          f"{config.chunks} chunks")
    if result.policy_choice:
        print(f"{config.policy} chose {result.policy_choice} (ends: " + ", ".join(
            f"{k} {v / 1e3:,.1f} us" for k, v in result.candidates_ns.items()) + ")")
    if note:
        print(note)
    rows: list[list[Any]] = [
        ["end (us)", _us(result.end_ns)],
        ["compute (us)", _us(result.compute_ns)],
        ["exposed communication (us)", _us(result.exposed_comm_ns)],
        ["exposed share", f"{100 * result.exposed_comm_ns / result.end_ns:.1f}%"
         if result.end_ns else "-"],
    ]
    if result.lower_bound_ns:
        rows += [["iteration bound (us)", _us(result.lower_bound_ns)],
                 ["end / bound", f"{result.end_ns / result.lower_bound_ns:.3f}"]]
    if len(result.pass_end_ns) > 1:
        rows.insert(1, ["pass ends (us)", ", ".join(f"{_us(t):g}" for t in result.pass_end_ns)])
    if baseline is not None:
        rows += [["baseline / fifo end (us)", _us(baseline.end_ns)],
                 ["speed-up over baseline", f"{baseline.end_ns / result.end_ns:.3f}x"]]
    rows.append(["wall time (s)", f"{result.wall_s:.4f}"])
    print(format_table(["metric", "value"], rows))
    print()
    print(format_table(["dim", "topology", "busy (us)", "utilization"], [
        [d.dim, f"{d.kind} {d.npus}", _us(d.busy_ns), f"{100 * d.utilization:.1f}%"]
        for d in result.dims]))
    print()
    cols = [(p, q) for p in ("fwd", "ig", "wg") for q in ("compute", "comm", "exposed")]
    cols = [c for c in cols if any(getattr(ly, f"{c[0]}_{c[1]}_ns") for ly in result.layers)]
    layers = list(result.layers)
    if len(layers) > MAX_LAYER_ROWS:  # a summary: the layers that expose the most
        exposed = [c for c in cols if c[1] == "exposed"]
        layers = sorted(layers, key=lambda ly: -sum(getattr(ly, f"{p}_{q}_ns")
                                                    for p, q in exposed))[:MAX_LAYER_ROWS]
        print(f"the {MAX_LAYER_ROWS} of {len(result.layers)} layers with the most exposed "
              "communication (every layer: --json)")
    print(format_table(["layer"] + [f"{p} {q} (us)" for p, q in cols],
                       [[ly.name] + [_us(getattr(ly, f"{p}_{q}_ns")) for p, q in cols]
                        for ly in layers]))
    print("(columns that are 0 for every layer are left out)")
