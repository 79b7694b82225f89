"""Time per collective of the policies beyond Themis (and Themis, baseline for scale).

Run: python benchmarks/bench_policies.py [--repeat N] [--chunks 64,256,1024]
One all-reduce of 1 GiB on the 4-D preset ``4d-4096`` (alpha-beta timing,
endpoint delay 10 ns), at 64, 256 and 1024 chunks. For each policy: the time of
one ``simulate`` call (policy + simulation; best of N runs, wall clock) and the
makespan. ``portfolio`` runs with its cache cleared each time (so every run pays
for every candidate) and chooses its discipline (FIFO, SCF or LRW); the others
run under SCF. Also shown: the portfolio's winning candidate. ``--cpu`` measures
this process's CPU time (for a machine shared with other work).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from themis.collective import Collective  # noqa: E402
from themis.planning.portfolio import clear_cache  # noqa: E402
from themis.simulator import simulate  # noqa: E402
from themis.timing import make_timing  # noqa: E402
from topologies.presets import resolve_network  # noqa: E402

POLICIES = ("baseline", "themis", "guarded", "lb-mix", "portfolio")


def main(argv: list[str] | None = None) -> int:
    """Print one row per chunk count and policy."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunks", default="64,256,1024")
    ap.add_argument("--network", default="4d-4096")
    ap.add_argument("--cpu", action="store_true",
                    help="this process's CPU time instead of wall time (for loaded machines)")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    net = resolve_network(args.network)
    tm = make_timing("alpha-beta", net, None, 10.0)
    print(f"1 GiB all-reduce on {args.network} ({net.describe()}), alpha-beta, "
          f"best of {args.repeat}, {'CPU' if args.cpu else 'wall'} time")
    print(f"{'chunks':>6} {'policy':<10} {'s/collective':>12} {'makespan us':>12}  choice")
    for c in (int(x) for x in args.chunks.split(",")):
        coll = Collective("all-reduce", 1 << 30, c)
        for p in POLICIES:
            best, res = float("inf"), None
            for _ in range(args.repeat):
                clear_cache()
                t0 = clock()
                res = simulate(net, coll, policy=p, intra=None if p == "portfolio" else "scf",
                               timing=tm)
                best = min(best, clock() - t0)
            assert res is not None
            choice = res.schedule.meta.get("policy_choice", "")
            print(f"{c:>6} {p:<10} {best:12.4f} {res.makespan_ns / 1e3:12.1f}  {choice}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
