"""Benchmark the peak memory of ``themis train`` on long synthetic workloads.

Writes an ASTRA-sim 1.0 DATA-parallel workload of N layers (each: compute, then a
weight-gradient all-reduce of 4-28 KiB) to a temporary folder, runs
``themis train FILE NETWORK --policy themis --json`` as a user would (a new
process) and reads the child's peak resident set size from ``getrusage``. The
per-layer slope between the sizes says whether memory is linear and how much
each layer costs (each layer's all-reduce has chunks x 2 x dims stages).

    python benchmarks/bench_memory.py                      # 1000, 5000, 20000 layers on small-2d
    python benchmarks/bench_memory.py --layers 2000 8000 --network small-3d
    python benchmarks/bench_memory.py --json

Measured (2026-12-05, small-2d, 64 chunks, 256 stages per layer): 2,000 / 5,000 /
20,000 layers 253 / 603 / 2,708 MB before the timeline of stages was made on
first use, about 117 KB per layer; 1,000 / 5,000 / 20,000 layers 75 / 187 / 581 MB with the
window LP capped; see docs/benchmarks.md for the current figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_workload(path: Path, layers: int) -> None:
    """A DATA-parallel workload of ``layers`` layers, each with one wg all-reduce."""
    lines = ["DATA", str(layers)]
    lines += [f"l{i}\t-1\t3429\tNONE\t0\t3429\tNONE\t0\t3429\tALLREDUCE\t{4096 * (1 + i % 7)}\t1"
              for i in range(layers)]
    path.write_text("\n".join(lines) + "\n")


def peak_rss_mb(argv: list[str]) -> tuple[float, float]:
    """(peak resident set size in MB, wall seconds) of one child process running ``argv``.

    ``getrusage(RUSAGE_CHILDREN)`` reports the largest child so far, so each
    measurement runs in its own intermediate Python process."""
    code = ("import resource, subprocess, sys, json; "
            "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip()) / 1024, time.perf_counter() - t0


def main() -> int:
    """Run the benchmark and print one line per size (or ``--json``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--network", default="small-2d")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    themis = shutil.which("themis") or str(Path(sys.executable).parent / "themis")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.layers:
            wl = Path(tmp) / f"layers{n}.txt"
            write_workload(wl, n)
            mb, wall = peak_rss_mb([themis, "train", str(wl), args.network, "--policy", "themis",
                                    "--json"])
            rows.append({"layers": n, "peak_rss_MB": round(mb, 1), "wall_s": round(wall, 2)})
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        slope_kB = 1024 * (b["peak_rss_MB"] - a["peak_rss_MB"]) / (b["layers"] - a["layers"])
    else:
        slope_kB = None
    if args.json:
        print(json.dumps({"network": args.network, "rows": rows,
                          "per_layer_kB": slope_kB}, indent=2))
        return 0
    for r in rows:
        print(f"{r['layers']:>7} layers: peak {r['peak_rss_MB']:>8.1f} MB, {r['wall_s']:.1f} s")
    if slope_kB is not None:
        print(f"about {slope_kB:.0f} kB per layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
