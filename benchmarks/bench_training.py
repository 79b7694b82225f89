"""Training-simulation speed: every bundled workload on a 3-D network, against ASTRA-sim 1.0.

Run: python benchmarks/bench_training.py [--repeat N] [--timing T] [--policy P] [--intra I]

(a) The simulation's own wall time (``wall_s`` of ``themis train --json``, best
of N) of each bundled workload on n3d, the 3-D network of the R3 reference runs
(Ring 4 at 2 x 100 GB/s, Switch 4 at 25 GB/s, Ring 4 at 2 x 50 GB/s, 1 ns; 64
chunks, LIFO, localBWAware; workloads.md §6).
(b) The six R3 reference runs like for like (same network, system file,
workload and passes): our end time and wall time beside ASTRA-sim 1.0's
(``tests/data/astra-sim-1.0/runs/workload-runs-R3.json``).
(c) The whole process, start-up included (``python -m reports.cli train ...
--json``), for the tutorial workloads vgg16 and gpt3; target < 0.5 s.
(d) Scale in the layer count (``--layers``, default 400,4000,20000): vgg16's
layers repeated to n layers on the ``tpu`` preset, as ``themis train`` runs
them (default policy and discipline, the iteration bound included); each
time and its ratio to the first. Target (issue 14): 4,000 layers at most
~10-15x 400 layers (linear would be 10x). ``--scale-only`` runs (d) alone.

ASTRA-sim 1.0 (tag tutorial-asplos2023, analytical backend) took 2-120 s per
workload run on this machine class (median 17 s over 84 runs), 20-27 s for
vgg16 on n3d and 7.6 s for its two-pass run (reference workloads.md §6).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from reports.cli.common import load_system
from reports.cli.train import DEFAULT_POLICY
from themis.training import TrainingConfig, simulate_training
from topologies.astra import parse_network_json, parse_system
from topologies.presets import resolve_network
from topologies.workload import Workload, load_workload, workload_names

ROOT = Path(__file__).resolve().parents[1]
R3 = ROOT / "tests" / "data" / "astra-sim-1.0" / "runs" / "workload-runs-R3.json"

#: The R3 runs' 3-D network (1.0 JSON) and system keys.
N3D_JSON = json.dumps({
    "dimensions-count": 3, "topologies-per-dim": ["Ring", "Switch", "Ring"],
    "units-count": [4, 4, 4], "links-count": [2, 1, 2], "link-latency": [1, 1, 1],
    "link-bandwidth": [100, 25, 50]})
N3D_SYSTEM = """scheduling-policy: LIFO
endpoint-delay: 10
active-chunks-per-dimension: 1
preferred-dataset-splits: 64
boost-mode: 1
all-reduce-implementation: ring_halvingDoubling_ring
all-gather-implementation: ring_halvingDoubling_ring
reduce-scatter-implementation: ring_halvingDoubling_ring
all-to-all-implementation: direct_direct_direct
collective-optimization: localBWAware
intra-dimension-scheduling: {intra}
inter-dimension-scheduling: {policy}
"""
#: ASTRA-sim 1.0's wall time for vgg16 on n3d (s), the one measured per workload.
ASTRA_VGG16_N3D_S = (20.0, 27.0)
ASTRA_MEDIAN_S = 17.0
TUTORIAL = ("vgg16", "gpt3")


def best_wall(workload, network, config, repeat: int) -> tuple[float, object]:
    """The best ``wall_s`` over ``repeat`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = simulate_training(workload, network, config)
        best = min(best, result.wall_s)
    return best, result


def process_time(args: list[str], repeat: int) -> tuple[float, float]:
    """The best wall and CPU (user + sys) time of a whole ``themis train`` process.

    The CPU time does not depend on what else the (shared) machine runs.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "reports.cli", "train", *args, "--json"],
                       check=True, capture_output=True, env=env, cwd=ROOT)
        best = min(best, time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best_cpu = min(best_cpu, after.ru_utime - before.ru_utime
                       + after.ru_stime - before.ru_stime)
    return best, best_cpu


def repeated_layers(workload: Workload, n: int) -> Workload:
    """``workload`` with its layers repeated (and renamed) to ``n`` layers."""
    src = workload.layers
    layers = tuple(replace(src[i % len(src)], name=f"layer{i}") for i in range(n))
    return replace(workload, layers=layers, name=f"{workload.name}x{n}")


def scale(layer_counts: list[int], repeat: int) -> None:
    """(d): the wall time of ``themis train`` (simulation + bound) against the layer count."""
    network = resolve_network("tpu")
    base = load_workload("vgg16")
    config = TrainingConfig.from_system(load_system(None), policy=DEFAULT_POLICY)
    print(f"layer scale: vgg16's layers repeated, on tpu, {config.policy} / {config.intra}, "
          f"timing {config.timing}, best of {repeat}")
    print(f"{'layers':>8s} {'wall s':>9s} {'CPU s':>9s} {'CPU x first':>12s} "
          f"{'per layer':>10s}")
    first = None
    for n in layer_counts:
        wl = repeated_layers(base, n)
        best, best_cpu = float("inf"), float("inf")
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            simulate_training(wl, network, config)
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        if first is None:
            first = (n, best_cpu)
        ratio = best_cpu / first[1]
        print(f"{n:8d} {best:9.3f} {best_cpu:9.3f} {ratio:12.1f} "
              f"{ratio / (n / first[0]):9.2f}x")
    print("(CPU x first: the CPU time over the first count's; per layer: that ratio over the "
          "layer ratio, 1.00x = linear)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timing", default="astra-sim-1.0")
    ap.add_argument("--policy", default="themis")
    ap.add_argument("--intra", default="scf")
    ap.add_argument("--layers", default="400,4000,20000",
                    help="layer counts of the scale section (d), comma-separated")
    ap.add_argument("--scale-only", action="store_true", help="run section (d) only")
    args = ap.parse_args()
    counts = [int(x) for x in args.layers.split(",") if x.strip()]
    if args.scale_only:
        scale(counts, args.repeat)
        return
    network = parse_network_json(N3D_JSON, "n3d.json")
    system_text = N3D_SYSTEM.format(policy=args.policy, intra=args.intra.upper())
    system = parse_system(system_text, "n3d_system.txt")
    config = TrainingConfig.from_system(system, timing=args.timing)
    print(f"n3d (Ring 4 x Switch 4 x Ring 4), {args.policy} / {args.intra}, timing "
          f"{args.timing}, 64 chunks, best of {args.repeat}")
    print(f"{'workload':26s} {'parallelism':32s} {'end (us)':>12s} {'wall_s':>9s} "
          f"{'vs ASTRA-sim':>13s}")
    for name in workload_names():
        wl = load_workload(name)
        wall, result = best_wall(wl, network, config, args.repeat)
        ratio = ASTRA_MEDIAN_S / wall if name != "vgg16" else ASTRA_VGG16_N3D_S[0] / wall
        print(f"{name:26s} {wl.parallelism.value:32s} {result.end_ns / 1e3:12.1f} "
              f"{wall:9.4f} {ratio:12.0f}x")
    print("vs ASTRA-sim: vgg16 against its 20 s (the low end of 20-27 s on n3d); the others "
          f"against the {ASTRA_MEDIAN_S:g} s median of the 84 reference runs.")
    if R3.is_file():
        print()
        print(f"{'R3 run (like for like)':36s} {'ASTRA-sim end':>14s} {'our end':>14s} "
              f"{'ASTRA-sim s':>12s} {'our wall_s':>11s} {'ratio':>8s}")
        for run in json.loads(R3.read_text()):
            net = parse_network_json(json.dumps(run["network"]), run["name"])
            sys_cfg = parse_system("".join(f"{k}: {v}\n" for k, v in run["system"].items()),
                                   run["name"])
            cfg = TrainingConfig.from_system(sys_cfg, passes=run["num_passes"],
                                             timing="astra-sim-1.0")
            wl = load_workload(Path(run["workload_file"]).stem)
            wall, result = best_wall(wl, net, cfg, args.repeat)
            print(f"{run['name']:36s} {run['end_ns']:14d} {result.end_ns:14.0f} "
                  f"{run['astra_wall_s']:12.2f} {wall:11.4f} {run['astra_wall_s'] / wall:7.0f}x")
    with tempfile.TemporaryDirectory() as tmp:
        net_file, sys_file = Path(tmp, "n3d.json"), Path(tmp, "n3d_system.txt")
        net_file.write_text(N3D_JSON)
        sys_file.write_text(system_text)
        print()
        print(f"{'whole process (start-up incl.)':40s} {'wall s':>8s} {'CPU s':>8s} "
              f"{'target':>8s}")
        cases = [(f"themis train {name} n3d", [name, str(net_file), "--system", str(sys_file),
                                                "--timing", args.timing]) for name in TUTORIAL]
        cases.append(("themis train vgg16 tpu", ["vgg16", "tpu"]))
        for label, argv in cases:
            wall, cpu = process_time(argv, args.repeat)
            print(f"{label:40s} {wall:8.3f} {cpu:8.3f} {'< 0.5':>8s}")
        print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: on a shared "
              "machine the CPU time is the steadier figure)")
    print()
    scale(counts, args.repeat)


if __name__ == "__main__":
    main()
