"""Speed of ``themis train`` on Chakra ETs: the R5 runs of ASTRA-sim 2.x (and the other
converted runs' inputs), whole process, best of N, with the nodes per rank.

    python benchmarks/bench_et.py [--repeat 3] [--all] [--astra-sim DIR]

``--all`` also times every ET folder of ../shared/reference/chakra/runs whose trace the
astra-sim-2 timing runs (no all-to-all), against the system and network files beside it.
``--astra-sim DIR`` (an ASTRA-sim 2.x tree built with ``./build/astra_analytical/build.sh``;
never part of this project) also times its congestion-unaware binary on the same inputs,
best of N, and prints the end it printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
R5 = SHARED / "reference" / "astra-sim-2.x" / "training" / "runs-R5.json"
RUNS = SHARED / "reference" / "chakra" / "runs"


def _time(argv: list[str], repeat: int) -> tuple[float, dict | None, str]:
    best, data, err = float("inf"), None, ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "reports.cli", *argv], cwd=ROOT,
                              capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - t0)
        if proc.returncode == 0:
            data = json.loads(proc.stdout)
        else:
            err = proc.stderr.strip()[:60]
    return best, data, err


def _time_binary(astra: Path, prefix: str, net: str, system: str,
                 repeat: int) -> tuple[float, int | None]:
    binary = astra / "build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware"
    memory = astra / "examples/remote_memory/analytical/no_memory_expansion.json"
    argv = [str(binary), f"--workload-configuration={prefix}", f"--system-configuration={system}",
            f"--network-configuration={net}", f"--remote-memory-configuration={memory}"]
    best, end = float("inf"), None
    with tempfile.TemporaryDirectory() as cwd:  # the binary writes log/ into its cwd
        for _ in range(repeat):
            t0 = time.perf_counter()
            proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
            best = min(best, time.perf_counter() - t0)
            ends = re.findall(r"finished, (\d+) cycles", proc.stdout)
            end = max(map(int, ends)) if ends else None
    return best, end


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--astra-sim", type=Path, metavar="DIR",
                    help="an ASTRA-sim 2.x source tree with the analytical binary built")
    args = ap.parse_args()
    jobs = []
    for run in json.loads(R5.read_text()):
        jobs.append((run["name"], str(SHARED / run["prefix"]), str(SHARED / run["network"]),
                     str(SHARED / run["system"]), run["end_ns"]))
    if args.all:
        seen = {j[0] for j in jobs}
        for folder in sorted(RUNS.iterdir()):
            if folder.name not in seen and any(folder.glob("*.et")):
                jobs.append((folder.name, str(folder), str(folder / "network.yml"),
                             str(folder / "system.json"), None))
    extra = f" {'2.x printed':>14} {'2.x wall s':>10}" if args.astra_sim else ""
    print(f"{'run':42} {'nodes/rank':>10} {'end_ns':>14} {'2.x end_ns':>14} {'wall s':>8}{extra}")
    for name, prefix, net, system, want in jobs:
        wall, data, err = _time(["train", prefix, net, "--system", system, "--timing",
                                 "astra-sim-2", "--json"], args.repeat)
        if data is None:
            print(f"{name:42} {'-':>10} {'refused: ' + err:>40}")
            continue
        nodes = max(len(c["nodes"]) for c in data["rank_classes"])
        extra = ""
        if args.astra_sim:
            bwall, bend = _time_binary(args.astra_sim, prefix, net, system, args.repeat)
            extra = f" {(f'{bend:,}' if bend is not None else '-'):>14} {bwall:>10.3f}"
        print(f"{name:42} {nodes:>10} {data['end_ns']:>14,} "
              f"{(f'{want:,}' if want is not None else '-'):>14} {wall:>8.3f}{extra}")
    print(f"(whole process, best of {args.repeat}; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
