"""The training-level policies against portfolio/scf: the report's cases and tiny iterations.

Run: python benchmarks/bench_training_policies.py [--workloads A,B] [--networks A,B]
     python benchmarks/bench_training_policies.py --tiny [--seeds 0-23] [--budget 20]

Report mode (default): every case of the training report (``reports/report/training.py``:
its workloads, networks, system and ``astra-sim-1.0`` timing; 80 cases) under
``--policy auto`` (:mod:`themis.planning.training_auto`), whose candidates include
portfolio/scf; prints per case every candidate's end over portfolio/scf's, auto's
choice, then the means. Nothing is written: the committed report stays as it is.

Tiny mode (``--tiny``): random tiny iterations (3-8 layers, 2-8 chunks, four loop
keywords, 2-D and 3-D networks; the seeds are the case list, the generator below is
fixed) solved exactly by :func:`solvers.iteration.solve_iteration` (CP-SAT, one
worker, a deterministic budget, so the same numbers on any machine); prints each
policy's end over the proven optimum and the means over the proven cases.
Every number is simulated or solved with deterministic limits only.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from themis.planning.training_auto import CANDIDATES  # noqa: E402
from themis.training import TrainingConfig, simulate_training  # noqa: E402
from topologies.network import Dimension, Network  # noqa: E402
from topologies.workload import Workload, parse_workload  # noqa: E402

REFERENCE = "portfolio/scf"
LABELS = [f"{p}/{q}" for p, q in CANDIDATES]


def report_cases(workloads: list[str] | None, networks: list[str] | None) -> int:
    """Every report case under auto; per-case and mean figures."""
    from reports.report.training import SPEC, spec_table
    from topologies.presets import resolve_network, resolve_system
    from topologies.workload import load_workload

    table = spec_table()  # the training report's runs (reports/specs/training.toml)
    system = resolve_system(str(SPEC.parent / table["systems"][0])).with_astra_defaults()
    (timing,) = table["timing"]
    names = workloads or list(table["workloads"])
    nets = networks or list(table["networks"])
    print("case | " + " | ".join(f"{lb} / {REFERENCE}" for lb in LABELS) + " | auto choice | s")
    gains, worst = [], 0.0
    per_label: dict[str, list[float]] = {lb: [] for lb in LABELS}
    wins: dict[str, int] = {}
    for wname in names:
        wl = load_workload(wname)
        for nname in nets:
            cfg = TrainingConfig.from_system(system, policy="auto", timing=timing)
            t0 = time.perf_counter()
            res = simulate_training(wl, resolve_network(nname), cfg, bound=False)
            wall = time.perf_counter() - t0
            ref = res.candidates_ns[REFERENCE]
            ratios = [res.candidates_ns[lb] / ref for lb in LABELS]
            for lb, r in zip(LABELS, ratios, strict=True):
                per_label[lb].append(r)
            gains.append(1.0 - res.end_ns / ref)
            worst = max(worst, res.end_ns / ref - 1.0)
            wins[res.policy_choice] = wins.get(res.policy_choice, 0) + 1
            print(f"{wname} / {nname} | " + " | ".join(f"{r:.4f}" for r in ratios)
                  + f" | {res.policy_choice} | {wall:.1f}", flush=True)
    print()
    print(f"cases: {len(gains)}")
    for lb in LABELS:
        print(f"mean {lb} / {REFERENCE}: {mean(per_label[lb]):.4f}")
    print(f"auto: mean improvement over {REFERENCE} {100 * mean(gains):.2f}% "
          f"(max {100 * max(gains):.2f}%); worst case {100 * worst:+.4f}% (never worse: "
          f"{'yes' if worst <= 0 else 'NO'})")
    print("auto's choices: " + ", ".join(f"{k} {v}" for k, v in sorted(wins.items())))
    return 0


def tiny_case(seed: int) -> tuple[Workload, Network, int]:
    """A random tiny iteration: 3-8 layers of a DATA / MODEL / HYBRID_DATA_MODEL /
    HYBRID_TRANSFORMER loop, 2-8 chunks, a 2-D (or, one seed in four, 3-D) network."""
    rng = random.Random(seed)
    keyword = ["DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_TRANSFORMER"][seed % 4]
    n = rng.randint(3, 8)
    lines = []
    for i in range(n):
        cols = [f"l{i}", "-1"]
        for ph in range(3):
            kind = "ALLREDUCE" if ph == 2 or keyword != "DATA" else "NONE"
            if keyword != "DATA" and rng.random() < 0.4:
                kind = rng.choice(["NONE", "ALLGATHER", "REDUCESCATTER"])
            size = rng.randint(20000, 400000) if kind != "NONE" else 0
            cols += [str(rng.randint(0, 3000)), kind, str(size)]
        cols.append(str(rng.randint(1, 20)))
        lines.append(" ".join(cols))
    header = keyword + (" model_parallel_NPU_group: 2" if keyword == "HYBRID_TRANSFORMER" else "")
    wl = parse_workload(f"{header}\n{n}\n" + "\n".join(lines) + "\n", f"tiny{seed}.txt")
    dims = [Dimension("Ring", 4, float(rng.choice([25, 50, 100])), 100.0),
            Dimension(rng.choice(["Switch", "FullyConnected"]), 2,
                      float(rng.choice([100, 200])), 500.0)]
    if seed % 4 == 3:
        dims.append(Dimension("Ring", 2, float(rng.choice([12.5, 25])), 1000.0))
    chunks = rng.choice([2, 4, 8]) if n <= 5 else rng.choice([2, 4])
    return wl, Network(tuple(dims)), chunks


def tiny(seeds: list[int], budget_s: float, policies: list[str]) -> int:
    """Every tiny case: each policy's end over the CP-SAT optimum."""
    from solvers.iteration import solve_iteration

    print("seed | layers | chunks | dims | status | optimum (us) | "
          + " | ".join(f"{p} / opt" for p in policies) + " | auto choice")
    gaps: dict[str, list[float]] = {p: [] for p in policies}
    known: dict[str, list[float]] = {p: [] for p in policies}  # over the best known
    proven = 0
    for seed in seeds:
        wl, net, chunks = tiny_case(seed)
        cfg = TrainingConfig(timing="astra-sim-1.0", chunks=chunks, policy="baseline")
        ends, choice = {}, ""
        for label in policies:
            p, _, q = label.partition("/")
            res = simulate_training(wl, net, cfg.with_(policy=p, intra=q or "scf"), bound=False)
            ends[label] = res.end_ns
            choice = res.policy_choice or choice
        try:
            sol = solve_iteration(wl, net, cfg, deterministic_s=budget_s)
        except Exception as err:  # noqa: BLE001 - a refused (too large) case is listed
            print(f"{seed} | {len(wl.layers)} | {chunks} | {net.ndims} | refused ({err})")
            continue
        opt = sol.makespan_ns
        ok = str(sol.status) == "optimal" and opt
        best = min([opt or math.inf, *ends.values()])
        for label in policies:
            known[label].append(ends[label] / best)
        if ok:
            proven += 1
            for label in policies:
                gaps[label].append(ends[label] / opt)
        print(f"{seed} | {len(wl.layers)} | {chunks} | {net.ndims} | {sol.status} | "
              f"{(opt or 0) / 1e3:.2f} | "
              + " | ".join(f"{ends[lb] / opt:.4f}" if opt else "-" for lb in policies)
              + f" | {choice}", flush=True)
    print()
    print(f"proven optimal: {proven} of {len(seeds)}")
    for label in policies:
        if gaps[label]:
            print(f"mean {label} / optimum over the proven cases: {mean(gaps[label]):.4f} "
                  f"(max {max(gaps[label]):.4f})")
    for label in policies:
        if known[label]:
            print(f"mean {label} / best known (CP-SAT's incumbent or a policy) over all "
                  f"{len(known[label])} solved cases: {mean(known[label]):.4f}")
    return 0


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    """Report mode or ``--tiny`` (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default=None)
    ap.add_argument("--networks", default=None)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--seeds", default="0-23")
    ap.add_argument("--budget", type=float, default=20.0,
                    help="CP-SAT deterministic seconds per tiny case")
    ap.add_argument("--policies", default=f"{REFERENCE},auto",
                    help="tiny mode: policy/intra labels to score (auto: the planner)")
    args = ap.parse_args(argv)
    if args.tiny:
        return tiny(_seeds(args.seeds), args.budget, args.policies.split(","))
    split = (lambda s: s.split(",") if s else None)  # noqa: E731
    return report_cases(split(args.workloads), split(args.networks))


if __name__ == "__main__":
    raise SystemExit(main())
