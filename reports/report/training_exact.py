"""The training report's small-iteration table: policies vs the proven optimum vs the bound.

Tiny iterations (the first :data:`LAYERS` layers of bundled workloads, :data:`CHUNKS`
chunks per collective, 2-D networks) are solved exactly by
:func:`solvers.iteration.solve_iteration` with a deterministic CP-SAT budget (the
same numbers on any machine) and set beside every report policy's end and the
window bound of :mod:`themis.training.bound`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import mean

#: Bundled workloads cut to their first LAYERS layers.
WORKLOADS: tuple[str, ...] = ("vgg16", "resnet50", "transformer", "mlp-model", "mlp-model-data")
NETWORKS: tuple[str, ...] = ("small-2d", "nvlink-x-ib")
LAYERS = 3
CHUNKS = 2
#: CP-SAT deterministic time per case (s, one worker).
BUDGET_S = 20.0


@dataclass(frozen=True)
class SmallRow:
    """One tiny iteration: every policy's end, the exact answer and the bound (ns)."""

    case: str
    ends_ns: dict[str, float]
    status: str
    optimum_ns: float | None
    proven_lb_ns: float
    bound_ns: float


def run_small(system, timing: str, policies: Sequence[tuple[str, str, str]],
              workloads: Sequence[str] = WORKLOADS, networks: Sequence[str] = NETWORKS
              ) -> list[SmallRow]:
    """Solve every tiny case and simulate every policy on it."""
    from solvers.iteration import solve_iteration
    from themis.training import TrainingConfig, simulate_training
    from topologies.presets import resolve_network
    from topologies.workload import load_workload

    rows = []
    for wname in workloads:
        full = load_workload(wname)
        wl = replace(full, layers=full.layers[:LAYERS], name=f"{wname}[:{LAYERS}]")
        for nname in networks:
            net = resolve_network(nname)
            ends = {}
            for label, policy, intra in policies:
                cfg = TrainingConfig.from_system(system, policy=policy, intra=intra,
                                                 timing=timing, chunks=CHUNKS)
                ends[label] = simulate_training(wl, net, cfg, bound=False).end_ns
            cfg = TrainingConfig.from_system(system, timing=timing, chunks=CHUNKS)
            res = solve_iteration(wl, net, cfg, deterministic_s=BUDGET_S)
            rows.append(SmallRow(f"{wl.name} / {nname}", ends, str(res.status),
                                 res.makespan_ns, res.lower_bound_ns, res.iteration_bound_ns))
    return rows


def small_table(rows: Sequence[SmallRow]) -> str:
    """Markdown: end (us) per policy, the optimum (or incumbent) and the bound."""
    if not rows:
        return "(no case)"
    labels = list(rows[0].ends_ns)
    head = ["tiny iteration", *labels, "exact (status)", "window bound",
            "best policy / exact", "bound / exact"]
    lines = ["| " + " | ".join(head) + " |",
             "| --- |" + " ---: |" * (len(head) - 1)]
    for r in rows:
        opt = r.optimum_ns
        cells = [r.case, *[f"{r.ends_ns[lb] / 1e3:.2f}" for lb in labels],
                 "-" if opt is None else f"{opt / 1e3:.2f} ({r.status})",
                 f"{r.bound_ns / 1e3:.2f}",
                 "-" if not opt else f"{min(r.ends_ns.values()) / opt:.4f}",
                 "-" if not opt else f"{r.bound_ns / opt:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def small_summary(rows: Sequence[SmallRow]) -> str:
    """One paragraph of means over the cases the solver proved."""
    proven = [r for r in rows if r.status == "optimal" and r.optimum_ns]
    if not proven:
        return f"CP-SAT proved none of the {len(rows)} cases within its budget."
    labels = list(proven[0].ends_ns)
    per = {lb: mean(r.ends_ns[lb] / r.optimum_ns for r in proven) for lb in labels}  # type: ignore[operator]
    best = mean(min(r.ends_ns.values()) / r.optimum_ns for r in proven)  # type: ignore[operator]
    bound = mean(r.bound_ns / r.optimum_ns for r in proven)  # type: ignore[operator]
    at = sum(math.isclose(r.bound_ns, r.optimum_ns, rel_tol=1e-6) for r in proven)  # type: ignore[arg-type]
    return (f"CP-SAT proved {len(proven)} of {len(rows)} cases optimal. Over those, end / "
            "optimum on average: " + ", ".join(f"{lb} {v:.3f}" for lb, v in per.items())
            + f"; the best policy per case {best:.3f}. The window bound is {bound:.4f} of "
            f"the optimum on average and equal to it (to 1e-6) in {at}.")


__all__ = ["SmallRow", "run_small", "small_summary", "small_table"]
