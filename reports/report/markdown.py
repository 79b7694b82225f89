"""The README's sections. A section is a function ``(ReportData) -> list[str]`` (Markdown
lines, or ``[]`` when it does not apply) listed in :data:`SECTIONS`; to add one, write
the function and insert it into the list (or call :func:`add_section`).

Methods flow into the tables from the data: a new policy name (or route) appears in
every per-method table and plot without a change here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reports.records import AgOrder, Kind, Status
from reports.report.stats import (
    InstanceResult,
    improvements,
    maximum,
    mean,
    pct,
    ratio,
    themis_pairs,
    us,
    values,
)
from reports.report.stats import md_table as table
from reports.scoring import REL_TOL
from reports.sweep.progress import format_duration


@dataclass
class ReportData:
    """What the sections read: the sweep's meta, its raw rows and the scored instances.

    ``methods``: the policy methods present (display names, in table order);
    ``solvers``: the solver methods present; ``gap_key``: ``gap`` when solvers
    ran (gaps to the best known), else ``gap_bound``; ``gantt``: the sentence
    describing the Gantt plot ("" if none was drawn); ``instances`` hold the
    alpha-beta rows, ``every`` (when set) every row, other timings' too.
    """

    meta: dict[str, str]
    rows: list[dict[str, Any]]
    instances: list[InstanceResult]
    methods: list[str]
    solvers: list[str]
    gap_key: str
    ylabel: str
    gantt: str = ""
    every: list[InstanceResult] | None = None
    #: How far the sweep got when it is not finished (:func:`reports.sweep.progress.sweep_state`).
    state: str = ""

    @property
    def solved(self) -> bool:
        """Some solver ran."""
        return bool(self.solvers)


Section = Callable[[ReportData], list[str]]


def header(data: ReportData, command: str, report_s: float) -> list[str]:
    """Title, description, the command that regenerates the report, versions."""
    meta = data.meta
    title = meta.get("title") or "Sweep report"
    sweep_s = float(meta.get("sweep_wall_s", 0.0) or 0.0)
    sweep_cmd = meta.get("command", "themis sweep SPEC.toml --db DB")
    lines = [f"# {title}", ""]
    if meta.get("description"):
        lines += [meta["description"].strip(), ""]
    took = (f"took {format_duration(sweep_s + report_s)} of wall time here: sweep "
            f"{format_duration(sweep_s)} ({meta.get('executor', '?')}, "
            f"{meta.get('cpu_count', '?')} CPUs), report {format_duration(report_s)}"
            if not data.state else f"report {format_duration(report_s)} here; {data.state}")
    lines += [
        f"Regenerate with one command ({took}):",
        "", "```sh", f"{sweep_cmd} && {command}", "```", "",
        "The sweep resumes where it stopped if interrupted (rerun the same command); "
        "the database is not committed.", "",
    ]
    import json

    versions = sorted({r["versions"] for r in data.rows if r.get("versions")})
    if versions:
        v = json.loads(versions[-1])
        lines += ["Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val), ""]
    return lines


def headline(data: ReportData) -> list[str]:
    """Two or three sentences with the numbers a reader looks for first."""
    instances, out = data.instances, []
    for m in (m for m in data.methods if m.startswith("themis/")):
        if data.solved:
            gaps = values([i for i in instances if i.proven], m, "gap")
            if gaps:
                opt = sum(1 for g in gaps if g <= REL_TOL)
                out.append(f"**{m}**: mean gap to the proven optimum {pct(mean(gaps))}, "
                           f"max {pct(maximum(gaps))}; optimal on {opt} of {len(gaps)} "
                           f"instances ({100 * opt / len(gaps):.0f}%).")
        base = "baseline/" + m.split("/", 1)[1]
        util = values(instances, m, "bw_utilization")
        imp = improvements(instances, m, base)
        if util and imp:
            out.append(f"**{m}**: mean bandwidth utilization {pct(mean(util), 1)} (baseline "
                       f"{pct(mean(values(instances, base, 'bw_utilization')), 1)}); "
                       f"improvement over {base} {ratio(mean(imp))} on average, "
                       f"{ratio(maximum(imp))} at most, slower on "
                       f"{sum(1 for x in imp if x < 1 - REL_TOL)} of {len(imp)} instances.")
    out += certified_line(instances)
    return ["## Headline", ""] + [f"- {line}" for line in out] + [""] if out else []


#: The distances to the bound the headline counts the best schedule within.
CERTIFIED_LEVELS: tuple[float, ...] = (0.001, 0.005, 0.01)


def certified_line(instances: Sequence[InstanceResult]) -> list[str]:
    """How close the best known schedule is to the optimum, certified by the strongest
    lower bound and counted at :data:`CERTIFIED_LEVELS`: the optimum lies between the
    two, so an instance counts within a level when its best schedule is within it of
    the bound (a proven optimum counts at 0). Nothing when every instance is proven
    optimal, or none has both numbers."""
    gaps = []
    for i in instances:
        best, lb = i.best_ns, i.lower_bound_ns
        if i.proven:
            gaps.append(0.0)
        elif best and lb:
            gaps.append(best / lb - 1)
    n_proven = sum(1 for i in instances if i.proven)
    if not gaps or n_proven == len(gaps):
        return []
    n = len(gaps)
    counts = ", ".join(f"within {pct(level, 1)} on {sum(1 for g in gaps if g <= level + REL_TOL)}"
                       + (f" of {n} instances" if k == 0 else "")
                       for k, level in enumerate(CERTIFIED_LEVELS))
    return [f"**best schedule vs the optimum** (certified by the lower bound): {counts} "
            f"({n_proven} proven optimal); at most {pct(maximum(gaps))} above it."]


def rounded_grid_note(proven: Sequence[InstanceResult]) -> str:
    """" N of them ..." for the proven instances whose every optimal solver row (reverse
    AG variant) modelled a rounded time grid: "optimal" there means within the row's
    ``scaling_error_ns`` of the exact optimum (the CSV column); "" when none (or the
    database predates the column)."""
    errors = []
    for i in proven:
        opt = [r for r in i.rows if r.kind == Kind.SOLVER and r.status == Status.OPTIMAL
               and r.ag_order == AgOrder.REVERSE]
        if opt and all(r.scaling_error_ns for r in opt):
            errors.append(min(float(r.scaling_error_ns or 0.0) for r in opt))
    if not errors:
        return ""
    verb = "is" if len(errors) == 1 else "are"
    return (f" {len(errors)} of these optima {verb} on a rounded time grid: optimal within the "
            f"row's `scaling_error_ns` (at most {max(errors):,.1f} ns), not exactly.")


def policy_gaps(data: ReportData) -> list[str]:
    """The policies' gaps to the best known (solved sweeps only)."""
    if not data.solved:
        return []
    instances, methods = data.instances, data.methods
    proven = [i for i in instances if i.proven]
    lines = ["## Optimality gap of the policies", "",
             f"The optimum (reverse AG variant) is proven for {len(proven)} of "
             f"{len(instances)} instances; elsewhere `gap` is to the best known makespan "
             "and the gap to the optimum lies between 0 and `gap bound`."
             + rounded_grid_note(proven), ""]
    rows = []
    for m in methods:
        gaps = values(instances, m, "gap")
        gaps_p = values(proven, m, "gap")
        bounds = values(instances, m, "gap_bound")
        opt = sum(1 for g in gaps_p if g <= REL_TOL)
        rows.append([m, len(gaps), pct(mean(gaps)), pct(maximum(gaps)),
                     f"{opt}/{len(gaps_p)}" if gaps_p else "-", pct(mean(bounds)),
                     pct(maximum(bounds))])
    lines += [table(["method", "instances", "mean gap", "max gap", "optimal (proven inst.)",
                     "mean gap bound", "max gap bound"], rows), ""]
    by_d: dict[tuple[int, ...], list[InstanceResult]] = defaultdict(list)
    by_dc: dict[tuple[int, ...], list[InstanceResult]] = defaultdict(list)
    for i in instances:
        by_d[(i.dims,)].append(i)
        by_dc[(i.dims, i.chunks)].append(i)
    lines += ["Mean / max gap (%) to the best known (the optimum where proven) by D, then by D "
              "and C:", "", _gap_grid(by_d, ["D"], methods), "",
              _gap_grid(by_dc, ["D", "C"], methods), ""]
    lines += ["How often Themis is optimal (within 1e-6 relative, among instances with a "
              "proven optimum) and how often it is slower than baseline with the same "
              "discipline:", ""]
    rows = []
    themis = [m for m in methods if m.startswith("themis/")]
    for m in themis:
        gaps_p = values(proven, m, "gap")
        opt = sum(1 for g in gaps_p if g <= REL_TOL)
        base = "baseline/" + m.split("/", 1)[1]
        both_ns = [(i.makespan(m), i.makespan(base)) for i in instances]
        pairs = [(t, b) for t, b in both_ns if t and b]
        loses = len([1 for t, b in pairs if t > b * (1 + REL_TOL)])
        rows.append([m, f"{opt}/{len(gaps_p)}" + (f" ({100 * opt / len(gaps_p):.0f}%)"
                                                  if gaps_p else ""),
                     f"{loses}/{len(pairs)}" if pairs else "-"])
    if len(themis) > 1:
        both = [i for i in proven if any(i.makespan(m) is not None for m in themis)]
        opt = len([1 for i in both if min((g for m in themis if m in i.by_method
                                            and (g := i.by_method[m].gap) is not None),
                                           default=math.inf) <= REL_TOL])
        rows.append(["themis (best of " + ", ".join(q.split("/")[1] for q in themis) + ")",
                     f"{opt}/{len(both)}" + (f" ({100 * opt / len(both):.0f}%)" if both
                                             else ""), "-"])
    lines += [table(["method", "optimal", "slower than baseline"], rows), ""]
    return lines


def _gap_grid(groups: dict[tuple[int, ...], list[InstanceResult]], keys: list[str],
              methods: Sequence[str]) -> str:
    """A table of mean / max gap per method, one row per group."""
    rows = []
    for key, grp in sorted(groups.items()):
        cells: list[Any] = [*key, len(grp), sum(1 for i in grp if i.proven)]
        for m in methods:
            gaps = values(grp, m, "gap")
            cells.append(f"{100 * sum(gaps) / len(gaps):.2f} / {100 * max(gaps):.2f}"
                         if gaps else "-")
        rows.append(cells)
    return table(keys + ["instances", "proven"] + list(methods), rows)


def solvers(data: ReportData) -> list[str]:
    """Solver statuses and runtimes; free against reverse optima."""
    if not data.solved:
        return []
    instances, rows = data.instances, []
    for s in data.solvers:
        rs = [i.by_method[s] for i in instances if s in i.by_method]
        st: dict[str, int] = defaultdict(int)
        for r in rs:
            st[r.status] += 1
        times = [float(r.runtime_s) for r in rs if r.runtime_s is not None]
        limits = sorted({r.time_limit_s for r in rs if r.time_limit_s})
        rows.append([s, len(rs), st.get(Status.OPTIMAL, 0), st.get(Status.FEASIBLE, 0),
                     sum(n for k, n in st.items() if k not in (Status.OPTIMAL, Status.FEASIBLE)),
                     f"{mean(times) or 0:.2f}", f"{maximum(times) or 0:.2f}",
                     ", ".join(f"{x:g}" for x in limits)])
    lines = ["## Solvers", "",
             table(["solver (AG variant)", "tasks", "optimal", "feasible", "other",
                    "mean runtime (s)", "max runtime (s)", "time limit (s)"], rows), ""]
    params = sorted({r.solver_params for i in instances for r in i.rows
                     if r.kind == Kind.SOLVER and r.solver_params})
    if params:
        lines += ["Solver parameters (besides the time limit): "
                  + "; ".join(f"`{p}`" for p in params) + ".", ""]
    wall = [r for i in instances for r in i.rows if r.kind == Kind.SOLVER
            and not r.reproducible]
    if wall:
        lines += [f"{len(wall)} solver tasks were stopped by the wall-clock time limit: their "
                  "results depend on the machine and its load (a deterministic budget, "
                  "`solver_params.deterministic_time_s` or `node_limit`, makes them "
                  "reproducible).", ""]
    pairs = []
    for i in instances:
        opt = {v: [ns for r in i.rows if r.kind == Kind.SOLVER and r.ag_order == v
                   and r.status == Status.OPTIMAL and (ns := r.makespan_ns) is not None]
               for v in AgOrder}
        if opt[AgOrder.REVERSE] and opt[AgOrder.FREE]:
            pairs.append((min(opt[AgOrder.REVERSE]), min(opt[AgOrder.FREE])))
    if pairs:
        gains = [(a - b) / a for a, b in pairs]
        lines += [f"Free AG orders: on the {len(pairs)} instances where both variants were "
                  f"solved to optimality, the free optimum is {pct(mean(gains))} below the "
                  f"reverse one on average (max {pct(maximum(gains))}; equal on "
                  f"{sum(1 for g in gains if g <= REL_TOL)}).", ""]
    return lines


def utilization(data: ReportData) -> list[str]:
    """Bandwidth utilization per method, LB3, Themis against baseline (overall, per net)."""
    instances = data.instances
    methods = data.methods + (list(data.solvers) if data.solved else [])
    lines = ["## Bandwidth utilization and Themis' improvement over baseline", "",
             "Bandwidth utilization = ideal time (LB0: the bytes over the sum of the "
             "bandwidths) / makespan, for a single all-reduce.", ""]
    rows = []
    for m in methods:
        u = values(instances, m, "bw_utilization")
        gb = values(instances, m, "gap_bound")
        rows.append([m, len(u), pct(mean(u), 1), pct(min(u) if u else None, 1),
                     pct(maximum(u), 1), pct(mean(gb)), pct(maximum(gb))])
    lines += [table(["method", "instances", "mean utilization", "min", "max",
                     "mean gap to LB", "max gap to LB"], rows), ""]
    reverse_bounds = [r for i in instances for r in i.bounds()
                      if r.ag_order == AgOrder.REVERSE and r.lb3_ns is not None]
    if reverse_bounds and not data.solved:
        binding = len([1 for r in reverse_bounds
                       if r.lower_bound_ns is not None and r.lb3_ns is not None
                       and r.lb3_ns >= r.lower_bound_ns * (1 - REL_TOL)])
        lines += [f"LB = the bound task's max of LB0-LB3; LB3 is the largest on {binding} of "
                  f"{len(reverse_bounds)} instances.", ""]
    pairs = themis_pairs(data.methods)
    if pairs:
        rows = []
        for t, b in pairs:
            imp = improvements(instances, t, b)
            rows.append([f"{t} vs {b}", len(imp), ratio(mean(imp)), ratio(maximum(imp)),
                         ratio(min(imp) if imp else None),
                         sum(1 for x in imp if x > 1 + REL_TOL),
                         sum(1 for x in imp if x < 1 - REL_TOL)])
        lines += ["Improvement = baseline makespan / Themis makespan (= the ratio of their "
                  "bandwidth utilizations):", "",
                  table(["pair", "instances", "mean", "max", "min", "Themis faster",
                         "Themis slower"], rows), ""]
        nets = sorted({i.info.network_label for i in instances})
        if len(nets) > 1:
            rows = []
            for net in nets:
                grp = [i for i in instances if i.info.network_label == net]
                cells: list[Any] = [net, grp[0].info.topology, len(grp)]
                cells += [pct(mean(values(grp, m, "bw_utilization")), 1) for m in methods]
                for t, b in pairs:
                    imp = improvements(grp, t, b)
                    cells.append(f"{ratio(mean(imp))} / {ratio(maximum(imp))}")
                rows.append(cells)
            lines += ["Per network: mean utilization per method, and mean / max improvement:",
                      "", table(["network", "topology", "instances"] + list(methods)
                                + [f"{t} vs {b}" for t, b in pairs], rows), ""]
    return lines


def plots(data: ReportData) -> list[str]:
    """What each plot shows, and the plots."""
    lines = ["## Plots", "",
             f"- `gap_by_chunks.png`: {data.ylabel.replace(' (%)', '')} per policy against "
             "the number of chunks, one panel per D.",
             "- `utilization.png`: mean per-dimension utilization (busy time / makespan) "
             "per method, one panel per network."]
    if data.gantt:
        lines.append(f"- {data.gantt}")
    lines += ["", "![gap by chunks](gap_by_chunks.png)", "",
              "![utilization](utilization.png)", ""]
    if data.gantt:
        lines += ["![largest gap](gantt_largest_gap.png)", ""]
    return lines


def what_was_run(data: ReportData) -> list[str]:
    """Task counts, statuses, what a task is, how gaps are defined, the spec."""
    meta, rows = data.meta, data.rows
    kinds: dict[str, int] = defaultdict(int)
    statuses: dict[str, int] = defaultdict(int)
    for r in rows:
        kinds[r["kind"]] += 1
        statuses[r["status"]] += 1
    finished = sorted(r["finished_at"] for r in rows if r.get("finished_at"))
    expected = meta.get("tasks_total")
    return ["## What was run", "",
            f"{len(data.instances)} instances, {len(rows)} tasks"
            + (f" (of {expected} in the spec)" if expected and int(expected) != len(rows)
               else "")
            + ": " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            + "; statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
            + (f"; finished {finished[0]} to {finished[-1]} (UTC)" if finished else "") + ".",
            "",
            "Each instance is one all-reduce (alpha-beta timing, one stage per dimension at a "
            "time). A policy task simulates one inter-dimension policy with one intra-dimension "
            "discipline (reverse AG orders); a solver task solves the exact problem "
            "(model.md §7) for one AG variant within its budget; a bound task computes "
            "LB0-LB3 for one AG variant (each bound is valid for its variant only: reverse, "
            "and free where the spec solves it). Every row is scored against its own AG "
            "variant (policies: reverse): `gap` = (makespan - best known) / best known (the "
            "optimum where proven), `gap bound` = (makespan - LB) / LB with LB the best valid "
            "lower bound (an upper bound on the gap to the optimum).",
            "", "Spec (`" + meta.get("spec_path", "?") + "`):", "", "```toml",
            meta.get("spec_text", "").rstrip(), "```", ""]


def per_instance(data: ReportData) -> list[str]:
    """One table per instance, every row."""
    lines = ["## Per instance", "",
             "Makespans in µs; `gap` to the best known, `gap bound` to the lower bound, both "
             "for the row's own AG variant.", ""]
    for i in data.instances:
        head = (f"**{i.label()}** ({i.info.topology}, {i.info.npus} NPUs): LB "
                f"{us(i.lower_bound_ns)} µs, best {us(i.best_ns)} µs"
                + (" (proven optimal)" if i.proven else ""))
        free = i.references.get(AgOrder.FREE)
        if free is not None:
            head += (f"; free AG: LB {us(free.lower_bound_ns)} µs, best {us(free.best_ns)} µs"
                     + (" (proven optimal)" if free.proven else ""))
        rows = []
        for r in i.rows:
            if r.kind == Kind.BOUND:
                lbs = " / ".join(us(getattr(r, f"lb{k}_ns")) for k in range(4))
                name = "bound" if r.ag_order == AgOrder.REVERSE else f"bound ({r.ag_order})"
                status = str(r.status) if r.lb3_method in (None, "optimal") else \
                    f"{r.status} (LB3 {r.lb3_method})"
                rows.append([f"{name} (LB0/1/2/3)", lbs, status, "-", "-", "-",
                             f"{r.runtime_s or 0:.2f}"])
                continue
            rows.append([r.name, us(r.makespan_ns),
                         str(r.status) if r.status != Status.ERROR else
                         f"error: {str(r.error or '')[:60]}",
                         pct(r.gap), pct(r.gap_bound), pct(r.bw_utilization, 1),
                         f"{r.runtime_s or 0:.2f}"])
        lines += [head, "", table(["method", "makespan (µs)", "status", "gap", "gap bound",
                                   "utilization", "runtime (s)"], rows), ""]
    return lines


#: The README's sections after the header, in order.
SECTIONS: list[Section] = [headline, policy_gaps, solvers, utilization, plots, what_was_run,
                           per_instance]


def add_section(section: Section, before: Section | None = None) -> None:
    """Insert ``section`` before another (default: before "What was run")."""
    if section in SECTIONS:
        return
    SECTIONS.insert(SECTIONS.index(before or what_was_run), section)


def body(data: ReportData) -> list[str]:
    """Every section's lines."""
    out: list[str] = []
    for section in SECTIONS:
        out += section(data)
    return out


__all__ = ["SECTIONS", "ReportData", "Section", "add_section", "body", "header", "headline",
           "per_instance", "plots", "policy_gaps", "solvers", "utilization", "what_was_run"]
