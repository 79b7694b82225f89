"""Benchmark the exact solvers: how large an instance each one proves optimal.

For networks with unequal bandwidths (D = 2, 3, 4) and C = 2 ... 32 chunks of a
64 MiB all-reduce, run CP-SAT (every C) and the PuLP MILPs with CBC and HiGHS
(small C only) under a time limit, and print one row per run: status,
makespan, proven lower bound, gap, time, and LB3 (our best a-priori bound)
relative to the makespan. The last lines give the frontier: the largest C
proven optimal per network and solver (every smaller C proven too), with the
deterministic units (CP-SAT, its doubling chain included) and CPU seconds of
that proof.

The networks: ``D3`` = Ring 4x4x4 @ 4/2/1 GB/s and ``D4`` = Ring 4x2x4x2 @
8/4/2/1 GB/s (latency ``--latency-ns``, default 0: issue 16's targets), and
the mixed Ring/Switch networks with per-hop latencies (``8x8``, ``4x4x4``,
``2x8x4``, ``4x2x4x2``).

    python benchmarks/bench_solvers.py                    # 60 s, 2 workers
    python benchmarks/bench_solvers.py --quick            # a smoke run
    python benchmarks/bench_solvers.py --time-limit 20 --max-chunks 8 --json out.jsonl
    python benchmarks/bench_solvers.py --deterministic-time 20 --node-limit 2000  # reproducible
    python benchmarks/bench_solvers.py --networks D3,D4 --solvers cpsat \
        --deterministic-time 60 --time-limit 3600 --chunks 4,8,16,32   # the frontier

Columns: "LB3 how" is LB3's method (optimal / node-limit / lp), "stop" the limit that
ended the search (wall, deterministic, nodes; "-" when the solver finished).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

from reports.formatting import format_table
from solvers import SolverParams, bounds, solve
from themis.instance import Instance
from topologies.network import Network

MiB = 2**20


@dataclass(frozen=True)
class Case:
    """A benchmark network."""

    name: str
    kinds: tuple[str, ...]
    npus: tuple[int, ...]
    bandwidths: tuple[float, ...]
    latencies: tuple[float, ...]

    def network(self) -> Network:
        """The network."""
        return Network.build(list(self.kinds), list(self.npus), list(self.bandwidths),
                             list(self.latencies), name=self.name)


def targets(latency_ns: float) -> list[Case]:
    """Issue 16's D3 and D4 (all rings) with a uniform per-hop latency."""
    return [Case("D3", ("Ring",) * 3, (4, 4, 4), (4, 2, 1), (latency_ns,) * 3),
            Case("D4", ("Ring",) * 4, (4, 2, 4, 2), (8, 4, 2, 1), (latency_ns,) * 4)]


CASES = [
    Case("8x8", ("Ring", "Switch"), (8, 8), (2, 1), (20, 500)),
    Case("4x4x4", ("Ring", "Ring", "Switch"), (4, 4, 4), (4, 2, 1), (20, 50, 500)),
    Case("2x8x4", ("Ring", "Switch", "Switch"), (2, 8, 4), (4, 2, 1), (20, 50, 500)),
    Case("4x2x4x2", ("Ring", "Ring", "Switch", "Switch"), (4, 2, 4, 2), (8, 4, 2, 1),
         (20, 50, 500, 500)),
]
CHUNKS = (2, 4, 6, 8, 12, 16, 32)
HEADERS = ["network", "D", "C", "solver", "status", "makespan us", "bound us", "gap %",
           "time s", "LB3 us", "LB3 how", "LB3/makespan", "themis us", "stop"]


def run(args: argparse.Namespace) -> list[dict]:
    """Run every case and print rows as they finish."""
    rows: list[dict] = []
    cases = [c for c in targets(args.latency_ns) + CASES if not args.quick or len(c.npus) <= 3]
    if args.networks:
        cases = [c for c in cases if c.name in args.networks]
    chunk_list = [c for c in (args.chunks or CHUNKS) if c <= args.max_chunks]
    headers = HEADERS
    print(f"# time limit {args.time_limit:g} s, {args.threads} worker(s); MILPs for "
          f"C <= {args.milp_max_chunks}; AG order {args.ag_order}", flush=True)
    print("  ".join(headers), flush=True)
    for case in cases:
        for chunks in chunk_list:
            inst = Instance(case.network(), args.size_mib * MiB, chunks)
            b = bounds(inst, args.ag_order)
            themis = min(inst.simulate("themis", i).makespan_ns for i in ("scf", "fifo"))
            solvers = ["cpsat"] + (["cbc", "highs"] if chunks <= args.milp_max_chunks else [])
            for solver in solvers:
                if solver not in args.solvers:
                    continue
                t0 = time.perf_counter()
                cpu0 = time.process_time()
                det = args.deterministic_time if solver == "cpsat" else None
                nodes = args.node_limit if solver != "cpsat" else None
                params = SolverParams(time_limit_s=args.time_limit, ag_order=args.ag_order,
                                      threads=1 if det is not None else args.threads,
                                      deterministic_time_s=det, node_limit=nodes)
                res = solve(inst, solver, params, bounds=b)
                wall = time.perf_counter() - t0
                cpu = time.process_time() - cpu0
                mk = res.makespan_ns
                row = {
                    "network": case.name, "D": len(case.npus), "C": chunks, "solver": solver,
                    "status": res.status, "makespan_ns": mk,
                    "lower_bound_ns": res.lower_bound_ns, "gap": res.gap,
                    "runtime_s": wall, "cpu_s": cpu,
                    "deterministic_units": res.meta.get("deterministic_time_total_s"),
                    "grid": res.meta.get("grid"), "lb3_ns": b.lb3_ns, "lb_ns": b.lb_ns,
                    "lb3_over_makespan": None if mk is None else b.lb3_ns / mk,
                    "themis_ns": themis, "valid": res.valid,
                    "scaling_error_ns": res.scaling_error_ns,
                    "proof": res.meta.get("proof"),
                    "lb3_method": str(b.lb3_method), "stopped_by": res.meta.get("stopped_by"),
                    "reason": res.reason,
                }
                rows.append(row)
                print("  ".join(str(c) for c in _cells(row)), flush=True)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(row) + "\n")
    return rows


def _cells(r: dict) -> list:
    mk = r["makespan_ns"]
    status = r["status"] + ("*" if r.get("proof") == "lower bound" else "")
    return [r["network"], r["D"], r["C"], r["solver"], status,
            "-" if mk is None else f"{mk / 1e3:,.1f}", f"{r['lower_bound_ns'] / 1e3:,.1f}",
            "-" if r["gap"] is None else f"{100 * r['gap']:.3f}",
            f"{r['runtime_s']:.1f}", f"{r['lb3_ns'] / 1e3:,.1f}", r["lb3_method"],
            "-" if r["lb3_over_makespan"] is None else f"{r['lb3_over_makespan']:.4f}",
            f"{r['themis_ns'] / 1e3:,.1f}", r["stopped_by"] or "-"]


def summary(rows: list[dict]) -> str:
    """The final table and the largest proven C per network and solver."""
    out = [format_table(HEADERS, [_cells(r) for r in rows]),
           "optimal* = proven by our lower bound (LB0-LB3) meeting the makespan, not by the "
           "solver's search", "", "largest C proven optimal (all smaller C proven too):"]
    keys = sorted({(r["D"], r["network"], r["solver"]) for r in rows})
    lines = []
    for d, net, solver in keys:
        mine = sorted((r for r in rows if (r["D"], r["network"], r["solver"]) == (d, net, solver)),
                      key=lambda r: r["C"])
        best = None
        for r in mine:
            if r["status"] != "optimal":
                break
            best = r["C"]
        anyc = [r["C"] for r in mine if r["status"] == "optimal"]
        lines.append([d, net, solver, "-" if best is None else best,
                      ",".join(map(str, anyc)) or "-"])
    out.append(format_table(["D", "network", "solver", "largest C (prefix)",
                             "all proven C"], lines))
    out += ["", "frontier (largest C proven, every smaller C run proven too):"]
    out.append(format_table(["network", "D", "solver", "largest C proven",
                             "deterministic units", "CPU s", "grid"], frontier(rows)))
    return "\n".join(out)


def frontier(rows: list[dict]) -> list[list]:
    """Per network and solver: the largest C proven (prefix), its units and CPU time."""
    out = []
    keys = sorted({(r["D"], r["network"], r["solver"]) for r in rows})
    for d, net, solver in keys:
        mine = sorted((r for r in rows if (r["D"], r["network"], r["solver"]) == (d, net, solver)),
                      key=lambda r: r["C"])
        best = None
        for r in mine:
            if r["status"] != "optimal":
                break
            best = r
        if best is None:
            out.append([net, d, solver, "-", "-", "-", "-"])
            continue
        units = best.get("deterministic_units")
        out.append([net, d, solver, best["C"], "-" if units is None else f"{units:.2f}",
                    f"{best['cpu_s']:.1f}", best.get("grid") or "-"])
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--time-limit", type=float, default=60.0, help="per run (default 60 s)")
    p.add_argument("--max-chunks", type=int, default=16, help="largest C (default 16)")
    p.add_argument("--milp-max-chunks", type=int, default=4,
                   help="largest C given to CBC and HiGHS (default 4)")
    p.add_argument("--threads", type=int, default=2, help="solver workers (default 2)")
    p.add_argument("--deterministic-time", type=float, default=None,
                   help="CP-SAT deterministic time (one worker): reproducible rows")
    p.add_argument("--node-limit", type=int, default=None,
                   help="MILP node limit (reproducible rows)")
    p.add_argument("--size-mib", type=int, default=64, help="all-reduce size in MiB")
    p.add_argument("--ag-order", default="reverse", choices=["reverse", "free"])
    p.add_argument("--solvers", default="cpsat,cbc,highs", help="comma-separated")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: D <= 3, C <= 4, 5 s limit")
    p.add_argument("--json", metavar="FILE", help="append one JSON line per run")
    p.add_argument("--networks", default="", help="comma-separated case names (default all)")
    p.add_argument("--chunks", default="", help="comma-separated chunk counts (default "
                   f"{','.join(map(str, CHUNKS))})")
    p.add_argument("--latency-ns", type=float, default=0.0,
                   help="per-hop latency of the D3 and D4 cases (default 0)")
    args = p.parse_args(argv)
    args.solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    args.networks = [s.strip() for s in args.networks.split(",") if s.strip()]
    args.chunks = [int(c) for c in args.chunks.split(",") if c.strip()]
    if args.quick:
        args.time_limit = min(args.time_limit, 5.0)
        args.max_chunks = min(args.max_chunks, 4)
    rows = run(args)
    print()
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
