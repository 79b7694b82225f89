"""``reports/design/``: network designs on LIBRA's 4-D network, per scheduler, with regret.

Built by ``themis design-report`` from LIBRA's own input files (read where they are,
``../shared/reference/libra``): its 4-D network and cost model, one all-reduce and its
four workloads with their communicators. Every number is deterministic (fixed evaluation
budgets, no wall-clock limit), so the report regenerates byte for byte.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from solvers.design import (
    BOUND,
    DesignItem,
    DesignProblem,
    DesignStudy,
    design_study,
    workload_items,
)
from topologies.errors import InputError
from topologies.files import atomic_write, make_output_dir
from topologies.libra import (
    dimension_costs,
    read_libra_communicator,
    read_libra_cost,
    read_libra_network,
    read_libra_workload,
)

#: The command at the top of the committed report.
COMMAND = ("themis design-report --libra ../shared/reference/libra --out reports/design")
#: The LIBRA workloads with a 4-D communicator file (DLRM has none: all-to-all).
WORKLOADS = ("GPT_3", "Turing_NLG", "MSFT_1T", "ResNet_50")
#: Simulated policies of the single all-reduce cases (portfolio is slower: one case).
AR_POLICIES = ("baseline", "themis", "guarded", "portfolio", BOUND)
WORKLOAD_POLICIES = ("baseline", "themis", "guarded", BOUND)
TOTAL_GBPS = 500.0
BUDGET_DOLLARS = 10_000.0
AR_SIZE_BYTES = 1 << 30
CHUNKS = 64


@dataclass(frozen=True)
class Case:
    """One design question of the report."""

    name: str
    title: str
    problem: DesignProblem
    policies: tuple[str, ...]


def _communicator(libra: Path, workload: str) -> Path:
    for name in (f"{workload}_4d.yml", f"{workload}_4D.yml"):
        if (libra / "communicator" / name).is_file():
            return libra / "communicator" / name
    raise InputError("no 4-D communicator file", "--libra", str(libra / "communicator"))


def cases(libra: Path) -> list[Case]:
    """The report's design questions, from LIBRA's files in ``libra``."""
    shape = read_libra_network(libra / "network" / "4d_network.yml")
    network = shape.network()
    costs = dimension_costs(shape, read_libra_cost(libra / "cost_model" / "4d_cost_model.yml"))
    everything = (DesignItem("all-reduce", AR_SIZE_BYTES, CHUNKS, shape.npus, 1.0,
                             "all-reduce"),)
    out = [
        Case("ar-total", f"One 1 GiB all-reduce (C = {CHUNKS}), {TOTAL_GBPS:g} GB/s per NPU",
             DesignProblem(network, everything, TOTAL_GBPS, intra="scf"), AR_POLICIES),
        Case("ar-cost", f"One 1 GiB all-reduce (C = {CHUNKS}), ${BUDGET_DOLLARS:,.0f} per NPU "
                        "(LIBRA's cost model)",
             DesignProblem(network, everything, BUDGET_DOLLARS, costs, intra="scf"),
             AR_POLICIES),
    ]
    for w in WORKLOADS:
        items = workload_items(read_libra_workload(libra / "workload" / f"{w}.txt"),
                               read_libra_communicator(_communicator(libra, w)), CHUNKS)
        out.append(Case(w, f"{w.replace('_', '-')}: its collectives on their communicators, "
                           f"${BUDGET_DOLLARS:,.0f} per NPU",
                        DesignProblem(network, items, BUDGET_DOLLARS, costs, intra="scf"),
                        WORKLOAD_POLICIES))
    return out


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.1f}"


def _case_markdown(case: Case, study: DesignStudy) -> list[str]:
    p = case.problem
    lines = [f"### {case.title}", ""]
    if len(p.items) > 1 or p.items[0].label != "all-reduce":
        lines += ["Collectives (group size per dimension, -1: not in it; weight = count):", ""]
        lines += [f"- {i.label}, {i.size_bytes:,} bytes on {list(i.group)}, weight {i.weight:g}"
                  for i in p.items]
        lines.append("")
    lines += ["| design for | " + " | ".join(f"dim {d} GB/s" for d in range(p.network.ndims))
              + " | start of the search |",
              "|---" * (p.network.ndims + 2) + "|"]
    for name, d in study.designs.items():
        lines.append(f"| {name} | " + " | ".join(f"{b:,.1f}" for b in d.bandwidths_GBps)
                     + f" | {d.start} |")
    lines += ["", "Time (us) of each design under each policy; in brackets the regret: how much "
                  "slower than the design made for that policy.", "",
              "| design \\ run under | " + " | ".join(study.table.policies) + " |",
              "|---" * (len(study.table.policies) + 1) + "|"]
    for name in study.table.designs:
        cells = []
        for pol in study.table.policies:
            r = study.table.regret(name, pol)
            cells.append(_us(study.table.time_ns[name][pol])
                         + ("" if r is None else f" (+{100 * r:.1f}%)"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _headline(studies: dict[str, DesignStudy]) -> list[str]:
    out = []
    for name, study in studies.items():
        t = study.table
        if "baseline" in t.designs and "themis" in t.policies:
            wrong = t.regret("baseline", "themis")
            back = t.regret("themis", "baseline")
            if wrong is not None and back is not None:
                out.append(f"- **{name}**: Themis on the design made for the baseline (LIBRA's "
                           f"assumption) is {100 * wrong:.1f}% slower than on a design made for "
                           f"Themis; the baseline on Themis' design loses {100 * back:.1f}%.")
    return out


def build_design_report(libra: str | os.PathLike, out_dir: str | os.PathLike,
                        evaluations: int = 200,
                        progress: Callable[[str], None] | None = None) -> list[str]:
    """Run every case and write README.md, results.json and designs.png to ``out_dir``."""
    libra_dir = Path(libra)
    if not (libra_dir / "network" / "4d_network.yml").is_file():
        raise InputError("not LIBRA's inputs folder (no network/4d_network.yml)", "--libra",
                         str(libra_dir))
    todo = cases(libra_dir)
    folder = make_output_dir(out_dir, "--out")
    say = progress or (lambda line: sys.stderr.write(line + "\n"))
    studies: dict[str, DesignStudy] = {}
    for i, case in enumerate(todo, 1):
        say(f"[{i}/{len(todo)}] {case.title}")
        studies[case.name] = design_study(case.problem, case.policies, evaluations)
    lines = [
        "# Designing the network for the scheduler that will run",
        "",
        "Per-dimension bandwidth of LIBRA's 4-D network (Ring 4 x FullyConnected 8 x Ring 4 x "
        "Switch 32, 4,096 NPUs; latency 0) under a budget, designed for each scheduler by "
        "`themis design` (a deterministic pattern search on the simulated time; `bound`: the "
        "route-LP lower bound, no scheduler beats it on that network), then every design run "
        "under every scheduler. LIBRA's own files are read where they are; its cost model "
        "prices 1 GB/s per NPU at $2.00, $4.00, $4.00 and $57.40 on the four dimensions. "
        "Workloads: each collective alone on its phase's communicator, times summed as LIBRA "
        f"does (no overlap with compute). Alpha-beta timing, SCF queues, {CHUNKS} chunks per "
        f"collective, {evaluations} evaluations per policy's search.",
        "",
        "Regenerate with one command:",
        "",
        "```sh",
        COMMAND if evaluations == 200 else f"{COMMAND} --evaluations {evaluations}",
        "```",
        "",
        "## Headline",
        "",
        *_headline(studies),
        "",
        "The `bound` column is each design's lower bound; with a total-bandwidth budget it is "
        "the same for every design that lets routes spread the bytes (LB0: all bytes over the "
        "total bandwidth), so the bound alone does not pick a design there.",
        "",
        "## Cases",
        "",
    ]
    for case in todo:
        lines += _case_markdown(case, studies[case.name])
    lines += ["![budget share per dimension of each design](designs.png)", ""]
    results = {name: s.to_dict() for name, s in studies.items()}
    from reports.plots import plot_designs
    from themis.plots import new_figure, save_figure

    fig, axes = new_figure(13.0, 7.5, nrows=2, ncols=3)
    for ax, case in zip(axes, todo, strict=False):
        s = studies[case.name]
        p = case.problem
        shares = {n: [c * b / p.budget for c, b in zip(p.costs, bw, strict=True)]
                  for n, bw in s.table.designs.items()}
        plot_designs(shares, ax=ax, title=case.name)
    atomic_write(folder / "README.md", "\n".join(lines))
    atomic_write(folder / "results.json", json.dumps(results, indent=1, sort_keys=True) + "\n")
    save_figure(fig, folder / "designs.png")
    return ["README.md", "results.json", "designs.png"]
