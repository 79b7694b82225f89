"""Score the policies (and ``improve``) against the committed optima and bounds.

Reads the committed ``results.csv`` of ``reports/optimality-gap`` (the optimum
of every small instance, reverse AG orders) and ``reports/at-scale`` (the lower
bound of every large instance), re-runs the policies on the same instances and
prints, per policy: mean and max gap to the reference, how many instances are
slower than baseline, how many are within 1%, and the time per collective.
A policy's makespan is its best over the disciplines it runs under (the
portfolio chooses its own). ``--improve N`` also runs ``themis improve`` with a
budget of N simulator evaluations (and ``--cpsat-dtime`` deterministic seconds
of CP-SAT) and checks its schedules. Everything here is deterministic: the
figures reproduce on any machine (only the times differ).

    python benchmarks/eval_policies.py                       # both sets, policies
    python benchmarks/eval_policies.py --set small --improve 1000 --cpsat-dtime 1
    python benchmarks/eval_policies.py --set scale --improve 10000 --target-gap 0.001
    python benchmarks/eval_policies.py --json out.json
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SETS = {"small": ROOT / "reports/optimality-gap/results.csv",
        "scale": ROOT / "reports/at-scale/results.csv"}
#: Instances nobody tuned on: the committed networks with other sizes, chunk counts
#: and endpoint delays, scored against their lower bound (LB0-LB3, computed here).
HOLDOUT = {"small": (["small-2d", "small-3d", "small-4d", "4d-4096", "3d_switch", "dgx2"],
                     [37 * 2**20, 3 * 2**20], [3, 5, 7], [0.0, 25.0]),
           "scale": (["4d-4096", "4d-large", "torus-3d", "tpu"], [96 * 2**20, 512 * 2**20],
                     [96, 384], [0.0, 25.0])}
POLICIES = ("baseline", "themis", "guarded", "lb-mix", "portfolio")


@dataclass
class Case:
    """One committed instance and its reference (optimum or lower bound)."""

    network: str
    size_bytes: int
    chunks: int
    endpoint_delay_ns: float
    reference_ns: float
    proven: bool
    label: str = ""
    results: dict[str, float] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)


def load_cases(path: Path, scale: bool) -> list[Case]:
    """Instances of a committed results.csv, with the reverse-variant reference."""
    cases: dict[str, Case] = {}
    with path.open() as fh:
        for row in csv.DictReader(fh):
            if row["ag_order"] != "reverse" or row["instance_key"] in cases:
                continue
            ref = row["best_lower_bound_ns"] if scale else row["best_ns"]
            if not ref:
                continue
            cases[row["instance_key"]] = Case(
                row["network"], int(row["size_bytes"]), int(row["chunks"]),
                float(row["endpoint_delay_ns"]), float(ref), row["proven_optimal"] == "1",
                f"{row['network']} {row['size_bytes']} C={row['chunks']}")
    return sorted(cases.values(), key=lambda c: (c.network, c.size_bytes, c.chunks))


def holdout_cases(name: str) -> list[Case]:
    """The held-out instances of :data:`HOLDOUT` with their lower bounds."""
    from solvers.bounds import bounds
    from themis.instance import Instance
    from topologies.presets import resolve_network

    nets, sizes, chunks, delays = HOLDOUT[name]
    out = []
    for net in nets:
        for size in sizes:
            for c in chunks:
                for delay in delays:
                    inst = Instance(resolve_network(net), size, c, delay)
                    out.append(Case(net, size, c, delay, bounds(inst).lb_ns, False,
                                    f"{net} {size} C={c} delay={delay:g}"))
    return out


def run_policy(case: Case, policy: str, intras: tuple[str, ...]) -> tuple[float, float]:
    """(best makespan over ``intras``, seconds per collective) of ``policy``."""
    from themis.instance import Instance
    from themis.planning.portfolio import clear_cache
    from themis.simulator import simulate
    from topologies.presets import resolve_network

    inst = Instance(resolve_network(case.network), case.size_bytes, case.chunks,
                    case.endpoint_delay_ns)
    t0 = time.perf_counter()
    if policy == "portfolio":
        clear_cache()
        best = simulate(inst.network, inst.collective, policy=policy, intra=None,
                        timing=inst.timing).makespan_ns
    else:
        best = min(simulate(inst.network, inst.collective, policy=policy, intra=q,
                            timing=inst.timing).makespan_ns for q in intras)
    return best, time.perf_counter() - t0


def run_improve(case: Case, evaluations: int, cpsat_dtime: float,
                target_gap: float) -> tuple[float, float]:
    """(makespan, seconds) of ``improve``; asserts its schedule passes the checker."""
    from solvers.improve import improve
    from themis.instance import Instance
    from topologies.presets import resolve_network

    inst = Instance(resolve_network(case.network), case.size_bytes, case.chunks,
                    case.endpoint_delay_ns)
    t0 = time.perf_counter()
    res = improve(inst, evaluations=evaluations, cpsat_dtime_s=cpsat_dtime,
                  target_gap=target_gap)
    if not res.valid:
        raise SystemExit(f"improve produced an invalid schedule on {case.label}")
    return res.makespan_ns, time.perf_counter() - t0


def summarize(cases: list[Case], method: str) -> dict:
    """Mean/max gap, slower than baseline, within 1%, time per collective."""
    gaps = [(c.results[method] - c.reference_ns) / c.reference_ns for c in cases]
    slower = sum(c.results[method] > c.results["baseline"] * (1 + 1e-9) for c in cases)
    return {
        "method": method, "instances": len(cases),
        "mean_gap": statistics.fmean(gaps), "max_gap": max(gaps),
        "slower_than_baseline": slower,
        "within_1pct": sum(g <= 0.01 + 1e-12 for g in gaps),
        "within_2pct": sum(g <= 0.02 + 1e-12 for g in gaps),
        "mean_time_s": statistics.fmean(c.times[method] for c in cases),
        "max_time_s": max(c.times[method] for c in cases),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation and print one table per instance set."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=["small", "scale", "both"], default="both")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--intra", default="fifo,scf,lrw",
                    help="disciplines a fixed policy runs under (best counts)")
    ap.add_argument("--improve", type=int, default=0, metavar="N",
                    help="also run improve with N simulator evaluations")
    ap.add_argument("--cpsat-dtime", type=float, default=0.0, metavar="S",
                    help="improve's CP-SAT deterministic time (0: no CP-SAT)")
    ap.add_argument("--target-gap", type=float, default=1e-4,
                    help="improve's target gap to the bound (the at-scale spec uses 0.001)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N instances")
    ap.add_argument("--networks", default="", help="only these networks (comma-separated)")
    ap.add_argument("--holdout", action="store_true",
                    help="instances not tuned on (other sizes, chunks, delays), vs their bound")
    ap.add_argument("--verbose", action="store_true", help="one line per instance")
    ap.add_argument("--json", metavar="FILE", help="write the summaries as JSON")
    args = ap.parse_args(argv)
    from themis.simulator import intra_names

    intras = tuple(q for q in args.intra.split(",") if q in intra_names())
    policies = [p for p in args.policies.split(",") if p]
    out: dict[str, list[dict]] = {}
    for name in (["small", "scale"] if args.set == "both" else [args.set]):
        cases = holdout_cases(name) if args.holdout else \
            load_cases(SETS[name], scale=name == "scale")
        if args.networks:
            cases = [c for c in cases if c.network in args.networks.split(",")]
        if args.limit:
            cases = cases[:args.limit]
        methods = list(dict.fromkeys(["baseline", *policies]))
        for c in cases:
            for p in methods:
                c.results[p], c.times[p] = run_policy(c, p, intras)
            if args.improve:
                c.results["improve"], c.times["improve"] = run_improve(
                    c, args.improve, args.cpsat_dtime, args.target_gap)
            if args.verbose:
                print(c.label, " ".join(f"{m}={(v - c.reference_ns) / c.reference_ns:+.4f}"
                                        for m, v in c.results.items()), flush=True)
        if args.improve:
            methods.append("improve")
        rows = [summarize(cases, m) for m in methods]
        out[name] = rows
        ref = "optimum" if name == "small" and not args.holdout else "lower bound"
        print(f"\n{name} set: {len(cases)} instances, gap to the {ref}")
        print(f"{'method':<10} {'mean gap':>9} {'max gap':>9} {'slower':>7} {'<=1%':>5} "
              f"{'<=2%':>5} {'s/coll':>8} {'max s':>7}")
        for r in rows:
            print(f"{r['method']:<10} {100 * r['mean_gap']:8.3f}% {100 * r['max_gap']:8.3f}% "
                  f"{r['slower_than_baseline']:7d} {r['within_1pct']:5d} {r['within_2pct']:5d} "
                  f"{r['mean_time_s']:8.4f} {r['max_time_s']:7.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
