"""Simulator speed: stages simulated per second, and cost vs. NPU count.

Run: python benchmarks/bench_simulator.py [--repeat N]
Prints (a) 64 chunks and (b) 4096 chunks of one all-reduce on a 4D network,
Themis + SCF, alpha-beta timing, and the time at 2x4x4x8 vs 64x64x64x64 NPUs.
Each time is the best of N runs (wall clock, or with --cpu this process's CPU
time) of one ``simulate`` call, the timing model named each time (memoized after
the first run, as in any repeated use). ``stages/s`` counts the simulation and
its metrics; the schedule's Stage records are built on first access, and
``+records/s`` also builds them.
"""

from __future__ import annotations

import argparse
import time

from themis.collective import Collective
from themis.simulator import simulate
from topologies import Dimension, Network


def network_4d(sizes: tuple[int, int, int, int]) -> Network:
    """A 4D network: Ring x Switch x Switch x Switch with falling bandwidths."""
    kinds = ("Ring", "Switch", "Switch", "Switch")
    bws = (200.0, 100.0, 50.0, 25.0)
    lats = (20.0, 100.0, 300.0, 700.0)
    return Network(tuple(Dimension(k, p, b, a) for k, p, b, a in
                         zip(kinds, sizes, bws, lats, strict=True)))


def best_time(fn, repeat: int, clock=time.perf_counter) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpu", action="store_true",
                    help="time CPU seconds of this process instead of the wall clock "
                         "(steadier on a loaded machine)")
    args = ap.parse_args()
    print(f"{'case':44s} {'stages':>8s} {'seconds':>9s} {'stages/s':>10s} "
          f"{'+records/s':>11s} {'makespan us':>12s}")
    cases = [
        ("(a) 64 chunks, 4D 2x4x4x8, 64MiB", (2, 4, 4, 8), 64 << 20, 64),
        ("(b) 4096 chunks, 4D 2x4x4x8, 1GiB", (2, 4, 4, 8), 1 << 30, 4096),
        ("(c) 4096 chunks, 4D 64x64x64x64, 1GiB", (64, 64, 64, 64), 1 << 30, 4096),
    ]
    for label, sizes, size, chunks in cases:
        net = network_4d(sizes)
        coll = Collective("all-reduce", size, chunks)

        def run(net=net, coll=coll):
            return simulate(net, coll, policy="themis", intra="scf", endpoint_delay_ns=10.0)

        def run_records(net=net, coll=coll):
            r = run(net, coll)
            assert len(r.schedule.stages) == r.metrics.stages
            return r

        clock = time.process_time if args.cpu else time.perf_counter
        t, r = best_time(run, args.repeat, clock)
        t2, _ = best_time(run_records, args.repeat, clock)
        n = r.metrics.stages
        print(f"{label:44s} {n:8d} {t:9.4f} {n / t:10.0f} {n / t2:11.0f} "
              f"{r.makespan_ns / 1e3:12.1f}")
    print("NPUs do not enter the cost: (b) has 256 NPUs, (c) 16,777,216.")


if __name__ == "__main__":
    main()
