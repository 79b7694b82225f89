"""Benchmark ``themis design``: wall time of one design per policy on LIBRA's 4-D network
(one 1 GiB all-reduce, C = 64, 500 GB/s per NPU), in one process and with N local workers.

    python benchmarks/bench_design.py [--workers 2] [--policies baseline,themis,portfolio]

Run from the repository root on an otherwise idle machine (the parallel figure is only
meaningful then). The designs must be identical across worker counts; the script checks it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reports.formatting import format_table  # noqa: E402
from solvers.design import DesignItem, DesignProblem, design_study  # noqa: E402
from topologies.network import Dimension, Network  # noqa: E402


def problem() -> DesignProblem:
    """LIBRA's 4-D shape, one 1 GiB all-reduce in 64 chunks, 500 GB/s per NPU."""
    net = Network((Dimension("Ring", 4, 1.0), Dimension("FullyConnected", 8, 1.0),
                   Dimension("Ring", 4, 1.0), Dimension("Switch", 32, 1.0)))
    return DesignProblem(net, (DesignItem("all-reduce", 1 << 30, 64, (4, 8, 4, 32)),), 500.0,
                         intra="scf")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--policies", default="baseline,themis,portfolio")
    ap.add_argument("--evaluations", type=int, default=200)
    args = ap.parse_args()
    rows = []
    for policy in args.policies.split(","):
        times, designs = [], []
        for workers in (1, args.workers):
            t0 = time.perf_counter()
            if workers == 1:
                study = design_study(problem(), [policy], args.evaluations)
            else:
                with ProcessPoolExecutor(max_workers=workers) as pool:
                    study = design_study(problem(), [policy], args.evaluations, pool)
            times.append(time.perf_counter() - t0)
            designs.append(json.dumps(study.to_dict(), sort_keys=True))
        assert designs[0] == designs[1], f"{policy}: the design depends on the worker count"
        rows.append([policy, f"{times[0]:.2f}", f"{times[1]:.2f}", f"{times[0] / times[1]:.2f}x"])
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(format_table(["policy", "1 process (s)", f"{args.workers} workers (s)", "speed-up"],
                       rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
