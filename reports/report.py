"""``themis report``: README.md, results.csv and plots from a sweep database.

Every row is scored against its instance's references (see
:func:`reports.compare.reference`, reverse AG variant: the policies' one):
``gap`` to the best makespan known, ``gap_bound`` to the best valid lower
bound (the bound task's max of LB0-LB3, or what a solver proved). The README
says what was run (the spec and the command that reproduces the report, with
its wall time), summarises the gaps by D and C, how often Themis is optimal or
loses to baseline, bandwidth utilization per method and Themis' improvement
over baseline, and lists every instance. Files are written atomically.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from reports import db
from reports.compare import INTRAS, POLICIES, REL_TOL, reference, relative_gap
from reports.sweep import format_duration
from themis.schedule import write_text_atomic
from topologies.files import make_output_dir
from topologies.units import format_size

#: Extra columns of results.csv (after the database's, without schedule_json).
SCORE_COLUMNS: tuple[str, ...] = ("best_ns", "best_lower_bound_ns", "proven_optimal", "gap",
                                  "gap_bound")

#: The plots the report draws.
PLOT_FILES: tuple[str, ...] = ("gap_by_chunks.png", "utilization.png", "gantt_largest_gap.png")


@dataclass
class InstanceResult:
    """All rows of one instance, scored."""

    key: str
    rows: list[dict[str, Any]]
    best_ns: float | None = None
    lower_bound_ns: float | None = None
    proven: bool = False
    by_method: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def first(self) -> dict[str, Any]:
        """Any row (for the instance's columns)."""
        return self.rows[0]

    @property
    def dims(self) -> int:
        """D, the dimensions a chunk crosses."""
        return int(self.first["dims"])

    @property
    def chunks(self) -> int:
        """C."""
        return int(self.first["chunks"])

    def label(self) -> str:
        """E.g. ``small-2d 64MiB C=4, delay 10 ns``."""
        r = self.first
        delay = f", delay {r['endpoint_delay_ns']:g} ns" if r["endpoint_delay_ns"] else ""
        return f"{r['network_label']} {format_size(r['size_bytes'])} C={r['chunks']}{delay}"

    def makespan(self, method: str) -> float | None:
        """The makespan of a (reverse-variant) method, if it finished."""
        r = self.by_method.get(method)
        return None if r is None else r.get("makespan_ns")


def row_name(row: dict[str, Any]) -> str:
    """``themis/scf``, ``cpsat``, ``cpsat (free)``, ``bound``."""
    if row["kind"] == "solver" and row["ag_order"] != "reverse":
        return f"{row['method']} ({row['ag_order']})"
    return str(row["method"])


def score(rows: Iterable[dict[str, Any]]) -> list[InstanceResult]:
    """Group rows by instance and add ``gap``, ``gap_bound``, ``best_ns``... to each."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["instance_key"]].append(r)
    out = []
    for key, group in groups.items():
        scored = [SimpleNamespace(kind=r["kind"], ag_order=r["ag_order"], status=r["status"],
                                  makespan_ns=r["makespan_ns"],
                                  lower_bound_ns=r["lower_bound_ns"], valid=bool(r["valid"]))
                  for r in group]
        best, lb, proven = reference(scored, "reverse")  # type: ignore[arg-type]
        res = InstanceResult(key, sorted(group, key=_row_order), best, lb, proven)
        for r in res.rows:
            r["best_ns"] = best
            r["best_lower_bound_ns"] = lb
            r["proven_optimal"] = int(proven)
            r["gap"] = relative_gap(r["makespan_ns"], best)
            r["gap_bound"] = relative_gap(r["makespan_ns"], lb)
            res.by_method[row_name(r)] = r
        out.append(res)
    out.sort(key=lambda i: (i.dims, i.first["network_label"], i.first["size_bytes"],
                            i.chunks, i.first["endpoint_delay_ns"]))
    return out


def _row_order(r: dict[str, Any]) -> tuple[int, int, str]:
    kinds = {"bound": 0, "policy": 1, "solver": 2}
    policy, _, intra = str(r["method"]).partition("/")
    rank = (POLICIES.index(policy) * len(INTRAS) + INTRAS.index(intra)
            if policy in POLICIES and intra in INTRAS else 99)
    return kinds.get(r["kind"], 3), rank, f"{r['method']}/{r['ag_order'] != 'reverse'}"


# -- statistics ------------------------------------------------------------------------
def policy_methods(instances: Sequence[InstanceResult]) -> list[str]:
    """Policy methods present, in POLICIES x INTRAS order."""
    present = {row_name(r) for i in instances for r in i.rows if r["kind"] == "policy"}
    return [m for m in (f"{p}/{q}" for p in POLICIES for q in INTRAS) if m in present] + \
        sorted(present - {f"{p}/{q}" for p in POLICIES for q in INTRAS})


def solver_methods(instances: Sequence[InstanceResult]) -> list[str]:
    """Solver methods present (``cpsat``, ``cpsat (free)``...)."""
    return sorted({row_name(r) for i in instances for r in i.rows if r["kind"] == "solver"})


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _max(xs: Sequence[float]) -> float | None:
    return max(xs) if xs else None


def _pct(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}x"


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e3:,.3f}"


def _values(instances: Iterable[InstanceResult], method: str, key: str) -> list[float]:
    out = []
    for i in instances:
        r = i.by_method.get(method)
        if r is not None and r.get(key) is not None and r["status"] != "error":
            out.append(float(r[key]))
    return out


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join("---" if j == 0 else "---:" for j in range(len(headers))) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _themis_pairs(methods: Sequence[str]) -> list[tuple[str, str]]:
    """(themis/q, baseline/q) pairs present."""
    return [(f"themis/{q}", f"baseline/{q}") for q in INTRAS
            if f"themis/{q}" in methods and f"baseline/{q}" in methods]


def improvements(instances: Sequence[InstanceResult], themis: str, baseline: str
                 ) -> list[float]:
    """Per instance, baseline makespan / Themis makespan (bandwidth-utilization ratio)."""
    out = []
    for i in instances:
        t, b = i.makespan(themis), i.makespan(baseline)
        if t and b:
            out.append(b / t)
    return out


# -- the README ------------------------------------------------------------------------
def _header(meta: dict[str, str], command: str, report_s: float,
            rows: Sequence[dict[str, Any]]) -> list[str]:
    title = meta.get("title") or "Sweep report"
    sweep_s = float(meta.get("sweep_wall_s", 0.0) or 0.0)
    total = sweep_s + report_s
    sweep_cmd = meta.get("command", "themis sweep SPEC.toml --db DB")
    lines = [f"# {title}", ""]
    if meta.get("description"):
        lines += [meta["description"].strip(), ""]
    lines += [
        f"Regenerate with one command (took {format_duration(total)} of wall time here: "
        f"sweep {format_duration(sweep_s)} ({meta.get('executor', '?')}, "
        f"{meta.get('cpu_count', '?')} CPUs), report {format_duration(report_s)}):",
        "",
        "```sh",
        f"{sweep_cmd} && {command}",
        "```",
        "",
        "The sweep resumes where it stopped if interrupted (rerun the same command); "
        "the database is not committed.",
        "",
    ]
    versions = sorted({r["versions"] for r in rows if r.get("versions")})
    if versions:
        v = json.loads(versions[-1])
        lines += ["Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val), ""]
    return lines


def _what_was_run(meta: dict[str, str], instances: Sequence[InstanceResult],
                  rows: Sequence[dict[str, Any]]) -> list[str]:
    kinds: dict[str, int] = defaultdict(int)
    statuses: dict[str, int] = defaultdict(int)
    for r in rows:
        kinds[r["kind"]] += 1
        statuses[r["status"]] += 1
    finished = sorted(r["finished_at"] for r in rows if r.get("finished_at"))
    expected = meta.get("tasks_total")
    lines = ["## What was run", "",
             f"{len(instances)} instances, {len(rows)} tasks"
             + (f" (of {expected} in the spec)" if expected and int(expected) != len(rows)
                else "")
             + ": " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
             + "; statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
             + (f"; finished {finished[0]} to {finished[-1]} (UTC)" if finished else "") + ".",
             "",
             "Each instance is one all-reduce (alpha-beta timing, one stage per dimension at a "
             "time). A policy task simulates one inter-dimension policy with one intra-dimension "
             "discipline (reverse AG orders); a solver task solves the exact problem "
             "(model.md §7) for one AG variant within the time limit; the bound task computes "
             "LB0-LB3 for the reverse AG variant. `gap` = (makespan - best known) / best known "
             "for the reverse variant (the optimum where proven), `gap bound` = (makespan - "
             "LB) / LB with LB the best valid lower bound (an upper bound on the gap to the "
             "optimum).",
             "", "Spec (`" + meta.get("spec_path", "?") + "`):", "", "```toml",
             meta.get("spec_text", "").rstrip(), "```", ""]
    return lines


def _summary_solved(instances: Sequence[InstanceResult], methods: Sequence[str]) -> list[str]:
    proven = [i for i in instances if i.proven]
    lines = ["## Optimality gap of the policies", "",
             f"The optimum (reverse AG variant) is proven for {len(proven)} of "
             f"{len(instances)} instances; elsewhere `gap` is to the best known makespan "
             "and the gap to the optimum lies between 0 and `gap bound`.", ""]
    rows = []
    for m in methods:
        gaps = _values(instances, m, "gap")
        gaps_p = _values(proven, m, "gap")
        bounds = _values(instances, m, "gap_bound")
        opt = sum(1 for g in gaps_p if g <= REL_TOL)
        rows.append([m, len(gaps), _pct(_mean(gaps)), _pct(_max(gaps)),
                     f"{opt}/{len(gaps_p)}" if gaps_p else "-", _pct(_mean(bounds)),
                     _pct(_max(bounds))])
    lines += [_table(["method", "instances", "mean gap", "max gap", "optimal (proven inst.)",
                      "mean gap bound", "max gap bound"], rows), ""]

    by_d: dict[tuple[int, ...], list[InstanceResult]] = defaultdict(list)
    by_dc: dict[tuple[int, ...], list[InstanceResult]] = defaultdict(list)
    for i in instances:
        by_d[(i.dims,)].append(i)
        by_dc[(i.dims, i.chunks)].append(i)
    lines += ["Mean / max gap (%) to the best known (the optimum where proven) by D, then by D "
              "and C:", "", _gap_grid(by_d, ["D"], methods), "",
              _gap_grid(by_dc, ["D", "C"], methods), ""]

    # Themis optimal / loses to baseline
    lines += ["How often Themis is optimal (within 1e-6 relative, among instances with a "
              "proven optimum) and how often it is slower than baseline with the same "
              "discipline:", ""]
    rows = []
    themis = [m for m in methods if m.startswith("themis/")]
    for m in themis:
        gaps_p = _values(proven, m, "gap")
        opt = sum(1 for g in gaps_p if g <= REL_TOL)
        base = "baseline/" + m.split("/", 1)[1]
        loses = [i for i in instances if i.makespan(m) and i.makespan(base)
                 and i.makespan(m) > i.makespan(base) * (1 + REL_TOL)]  # type: ignore[operator]
        n_pair = sum(1 for i in instances if i.makespan(m) and i.makespan(base))
        rows.append([m, f"{opt}/{len(gaps_p)}" + (f" ({100 * opt / len(gaps_p):.0f}%)"
                                                  if gaps_p else ""),
                     f"{len(loses)}/{n_pair}" if n_pair else "-"])
    if len(themis) > 1:
        both = [i for i in proven if any(i.makespan(m) is not None for m in themis)]
        opt = sum(1 for i in both if min((i.by_method[m]["gap"] for m in themis
                                          if m in i.by_method
                                          and i.by_method[m]["gap"] is not None),
                                         default=math.inf) <= REL_TOL)
        rows.append(["themis (best of " + ", ".join(q.split("/")[1] for q in themis) + ")",
                     f"{opt}/{len(both)}" + (f" ({100 * opt / len(both):.0f}%)" if both
                                             else ""), "-"])
    lines += [_table(["method", "optimal", "slower than baseline"], rows), ""]
    return lines


def _gap_grid(groups: dict[tuple[int, ...], list[InstanceResult]], keys: list[str],
              methods: Sequence[str]) -> str:
    """A table of mean / max gap per method, one row per group."""
    rows = []
    for key, group in sorted(groups.items()):
        cells: list[Any] = [*key, len(group), sum(1 for i in group if i.proven)]
        for m in methods:
            gaps = _values(group, m, "gap")
            cells.append(f"{100 * sum(gaps) / len(gaps):.2f} / {100 * max(gaps):.2f}"
                         if gaps else "-")
        rows.append(cells)
    return _table(keys + ["instances", "proven"] + list(methods), rows)


def _headline(instances: Sequence[InstanceResult], methods: Sequence[str],
              solved: bool) -> list[str]:
    """Two or three sentences with the numbers a reader looks for first."""
    out = []
    for m in (m for m in methods if m.startswith("themis/")):
        if solved:
            proven = [i for i in instances if i.proven]
            gaps = _values(proven, m, "gap")
            if gaps:
                opt = sum(1 for g in gaps if g <= REL_TOL)
                out.append(f"**{m}**: mean gap to the proven optimum {_pct(_mean(gaps))}, "
                           f"max {_pct(_max(gaps))}; optimal on {opt} of {len(gaps)} "
                           f"instances ({100 * opt / len(gaps):.0f}%).")
        base = "baseline/" + m.split("/", 1)[1]
        util = _values(instances, m, "bw_utilization")
        imp = improvements(instances, m, base)
        if util and imp:
            out.append(f"**{m}**: mean bandwidth utilization {_pct(_mean(util), 1)} (baseline "
                       f"{_pct(_mean(_values(instances, base, 'bw_utilization')), 1)}); "
                       f"improvement over {base} {_ratio(_mean(imp))} on average, "
                       f"{_ratio(_max(imp))} at most, slower on "
                       f"{sum(1 for x in imp if x < 1 - REL_TOL)} of {len(imp)} instances.")
    return ["## Headline", ""] + [f"- {line}" for line in out] + [""] if out else []


def _summary_solvers(instances: Sequence[InstanceResult], solvers: Sequence[str]) -> list[str]:
    rows = []
    for s in solvers:
        rs = [i.by_method[s] for i in instances if s in i.by_method]
        st: dict[str, int] = defaultdict(int)
        for r in rs:
            st[r["status"]] += 1
        times = [float(r["runtime_s"]) for r in rs if r.get("runtime_s") is not None]
        limits = sorted({r["time_limit_s"] for r in rs if r.get("time_limit_s")})
        rows.append([s, len(rs), st.get("optimal", 0), st.get("feasible", 0),
                     sum(n for k, n in st.items() if k not in ("optimal", "feasible")),
                     f"{_mean(times) or 0:.2f}", f"{_max(times) or 0:.2f}",
                     ", ".join(f"{x:g}" for x in limits)])
    lines = ["## Solvers", "",
             _table(["solver (AG variant)", "tasks", "optimal", "feasible", "other",
                     "mean runtime (s)", "max runtime (s)", "time limit (s)"], rows), ""]
    # reverse vs free optimum
    pairs = []
    for i in instances:
        rev = [r for r in i.rows if r["kind"] == "solver" and r["ag_order"] == "reverse"
               and r["status"] == "optimal"]
        free = [r for r in i.rows if r["kind"] == "solver" and r["ag_order"] == "free"
                and r["status"] == "optimal"]
        if rev and free:
            pairs.append((min(r["makespan_ns"] for r in rev),
                          min(r["makespan_ns"] for r in free)))
    if pairs:
        gains = [(a - b) / a for a, b in pairs]
        lines += [f"Free AG orders: on the {len(pairs)} instances where both variants were "
                  f"solved to optimality, the free optimum is {_pct(_mean(gains))} below the "
                  f"reverse one on average (max {_pct(_max(gains))}; equal on "
                  f"{sum(1 for g in gains if g <= REL_TOL)}).", ""]
    return lines


def _summary_utilization(instances: Sequence[InstanceResult], methods: Sequence[str],
                         solved: bool) -> list[str]:
    lines = ["## Bandwidth utilization and Themis' improvement over baseline", "",
             "Bandwidth utilization = ideal time (LB0: the bytes over the sum of the "
             "bandwidths) / makespan, for a single all-reduce.", ""]
    rows = []
    for m in methods:
        u = _values(instances, m, "bw_utilization")
        gb = _values(instances, m, "gap_bound")
        rows.append([m, len(u), _pct(_mean(u), 1), _pct(min(u) if u else None, 1),
                     _pct(_max(u), 1), _pct(_mean(gb)), _pct(_max(gb))])
    lines += [_table(["method", "instances", "mean utilization", "min", "max",
                      "mean gap to LB", "max gap to LB"], rows), ""]
    lb3 = [i for i in instances
           if any(r["kind"] == "bound" and r.get("lb3_ns") is not None for r in i.rows)]
    if lb3 and not solved:
        binding = sum(1 for i in lb3 for r in i.rows if r["kind"] == "bound"
                      and r["lb3_ns"] is not None and r["lower_bound_ns"] is not None
                      and r["lb3_ns"] >= r["lower_bound_ns"] * (1 - REL_TOL))
        lines += [f"LB = the bound task's max of LB0-LB3; LB3 is the largest on {binding} of "
                  f"{len(lb3)} instances.", ""]
    pairs = _themis_pairs(methods)
    if pairs:
        rows = []
        for t, b in pairs:
            imp = improvements(instances, t, b)
            rows.append([f"{t} vs {b}", len(imp), _ratio(_mean(imp)), _ratio(_max(imp)),
                         _ratio(min(imp) if imp else None),
                         sum(1 for x in imp if x > 1 + REL_TOL),
                         sum(1 for x in imp if x < 1 - REL_TOL)])
        lines += ["Improvement = baseline makespan / Themis makespan (= the ratio of their "
                  "bandwidth utilizations):", "",
                  _table(["pair", "instances", "mean", "max", "min", "Themis faster",
                          "Themis slower"], rows), ""]
        # per network
        nets = sorted({i.first["network_label"] for i in instances})
        if len(nets) > 1:
            rows = []
            for net in nets:
                group = [i for i in instances if i.first["network_label"] == net]
                cells: list[Any] = [net, group[0].first["topology"], len(group)]
                for m in methods:
                    cells.append(_pct(_mean(_values(group, m, "bw_utilization")), 1))
                for t, b in pairs:
                    imp = improvements(group, t, b)
                    cells.append(f"{_ratio(_mean(imp))} / {_ratio(_max(imp))}")
                rows.append(cells)
            lines += ["Per network: mean utilization per method, and mean / max improvement:",
                      "", _table(["network", "topology", "instances"] + list(methods)
                                 + [f"{t} vs {b}" for t, b in pairs], rows), ""]
    return lines


def _per_instance(instances: Sequence[InstanceResult]) -> list[str]:
    lines = ["## Per instance", "",
             "Makespans in µs; `gap` to the best known (reverse variant), `gap bound` to the "
             "lower bound.", ""]
    for i in instances:
        head = (f"**{i.label()}** ({i.first['topology']}, {i.first['npus']} NPUs): LB "
                f"{_us(i.lower_bound_ns)} µs, best {_us(i.best_ns)} µs"
                + (" (proven optimal)" if i.proven else ""))
        rows = []
        for r in i.rows:
            if r["kind"] == "bound":
                lbs = " / ".join(_us(r.get(f"lb{k}_ns")) for k in range(4))
                rows.append(["bound (LB0/1/2/3)", lbs, r["status"], "-", "-", "-",
                             f"{r['runtime_s'] or 0:.2f}"])
                continue
            rows.append([row_name(r), _us(r["makespan_ns"]),
                         r["status"] if r["status"] != "error" else
                         f"error: {str(r.get('error') or '')[:60]}",
                         _pct(r["gap"]), _pct(r["gap_bound"]), _pct(r["bw_utilization"], 1),
                         f"{r['runtime_s'] or 0:.2f}"])
        lines += [head, "", _table(["method", "makespan (µs)", "status", "gap", "gap bound",
                                    "utilization", "runtime (s)"], rows), ""]
    return lines


# -- plots -----------------------------------------------------------------------------
def draw_gap_by_chunks(instances: Sequence[InstanceResult], methods: Sequence[str],
                       path: Path, key: str, ylabel: str) -> None:
    """``gap_by_chunks.png``: one panel per D, mean gap per method over C."""
    from reports.plots import figure_legend, plot_gap_by_chunks
    from themis.plots import new_figure, save_figure

    ds = sorted({i.dims for i in instances}) or [0]
    fig, axes = new_figure(5.0 * len(ds), 4.2, ncols=len(ds))
    for ax, d in zip(axes, ds, strict=True):
        group = [i for i in instances if i.dims == d]
        series = {}
        for m in methods:
            by_c: dict[int, list[float]] = defaultdict(list)
            for i in group:
                r = i.by_method.get(m)
                if r is not None and r.get(key) is not None:
                    by_c[i.chunks].append(float(r[key]))
            series[m] = [(c, sum(v) / len(v)) for c, v in by_c.items()]
        plot_gap_by_chunks(series, ax=ax, title=f"D = {d} ({len(group)} instances)",
                           ylabel=ylabel, legend=False)
    figure_legend(fig, axes)
    save_figure(fig, path)


def draw_utilization(instances: Sequence[InstanceResult], methods: Sequence[str],
                     path: Path) -> None:
    """``utilization.png``: per network, mean per-dimension utilization per method."""
    from reports.plots import figure_legend, plot_dim_utilization
    from themis.plots import new_figure, save_figure

    nets = sorted({i.first["network_label"] for i in instances}) or ["-"]
    ncols = min(3, len(nets))
    nrows = math.ceil(len(nets) / ncols)
    fig, axes = new_figure(5.5 * ncols, 4.0 * nrows, nrows=nrows, ncols=ncols)
    for ax in axes[len(nets):]:
        ax.remove()
    for ax, net in zip(axes, nets, strict=False):
        group = [i for i in instances if i.first["network_label"] == net]
        values: dict[str, list[float]] = {}
        for m in methods:
            per_dim: list[list[float]] = []
            for i in group:
                r = i.by_method.get(m)
                if r is None or not r.get("dim_utilization"):
                    continue
                for d, u in enumerate(json.loads(r["dim_utilization"])):
                    if d >= len(per_dim):
                        per_dim.append([])
                    per_dim[d].append(u)
            if per_dim:
                values[m] = [sum(v) / len(v) for v in per_dim]
        shape = group[0].first["shape"] if group else ""
        plot_dim_utilization(values, ax=ax, title=f"{net} ({shape}, {len(group)} instances)",
                             legend=False)
    figure_legend(fig, axes[:len(nets)])
    save_figure(fig, path)


def draw_largest_gap(conn: Any, instances: Sequence[InstanceResult], path: Path,
                     key: str) -> str:
    """``gantt_largest_gap.png``: Themis next to the best schedule where Themis' gap is
    largest. Returns a sentence for the README ("" if nothing could be drawn)."""
    from reports.plots import plot_gantt_pair

    best: tuple[float, InstanceResult, dict[str, Any]] | None = None
    for i in instances:
        for m in ("themis/scf", "themis/fifo"):
            r = i.by_method.get(m)
            if r is None or r.get(key) is None:
                continue
            if best is None or r[key] > best[0] + 1e-12:
                best = (r[key], i, r)
    if best is None:
        return ""
    gap, inst, trow = best
    others = [r for r in inst.rows if r is not trow and r["kind"] != "bound"
              and r["makespan_ns"] is not None and r["valid"] and r["status"] != "error"
              and (r["kind"] == "policy" or r["ag_order"] == "reverse")]
    others.sort(key=lambda r: (r["makespan_ns"], r["kind"] != "solver"))
    left = db.read_schedule(conn, trow["task_key"])
    right = None
    for r in others:
        right = db.read_schedule(conn, r["task_key"])
        if right is not None:
            other = r
            break
    if left is None:
        return ""
    items = [(f"{trow['method']}: {trow['makespan_ns'] / 1e3:,.1f} µs", left)]
    what = ""
    if right is not None:
        items.append((f"{row_name(other)}: {other['makespan_ns'] / 1e3:,.1f} µs "
                      f"({other['status']})", right))
        what = f" next to {row_name(other)} ({other['status']})"
    to = "to the best known" if key == "gap" else "to the lower bound"
    plot_gantt_pair(items, path, title=f"{inst.label()}: largest Themis gap {to} "
                                       f"({100 * gap:.2f}%)")
    return (f"`gantt_largest_gap.png`: {trow['method']} on {inst.label()} (its largest gap "
            f"{to}, {100 * gap:.2f}%){what}.")


# -- build -----------------------------------------------------------------------------
def build_report(db_path: str | os.PathLike, out_dir: str | os.PathLike,
                 command: str | None = None) -> list[Path]:
    """Write README.md, results.csv and the plots to ``out_dir``; return the paths."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    if command is None:
        command = shlex.join(["themis", "report", str(db_path), "--out", str(out)])
    conn = db.connect(db_path, create=False)
    try:
        meta = db.get_meta(conn)
        rows = db.read_rows(conn)
        instances = score(rows)
        methods = policy_methods(instances)
        solvers = solver_methods(instances)
        solved = bool(solvers)
        make_output_dir(out, "--out")
        written = [_write_csv(out / "results.csv", [r for i in instances for r in i.rows])]
        key, ylabel = ("gap", "mean gap to the best known (%)") if solved else \
            ("gap_bound", "mean gap to the lower bound (%)")
        draw_gap_by_chunks(instances, methods, out / "gap_by_chunks.png", key, ylabel)
        util_methods = list(methods) + [s for s in solvers if "(" not in s]
        draw_utilization(instances, util_methods, out / "utilization.png")
        written += [out / "gap_by_chunks.png", out / "utilization.png"]
        gantt = draw_largest_gap(conn, instances, out / "gantt_largest_gap.png", key)
        if gantt:
            written.append(out / "gantt_largest_gap.png")
        body: list[str] = _headline(instances, methods, solved)
        if solved:
            body += _summary_solved(instances, methods)
            body += _summary_solvers(instances, solvers)
        body += _summary_utilization(instances, methods + ([] if not solved else
                                                           [s for s in solvers]), solved)
        body += ["## Plots", "",
                 f"- `gap_by_chunks.png`: {ylabel.replace(' (%)', '')} per policy against the "
                 "number of chunks, one panel per D.",
                 "- `utilization.png`: mean per-dimension utilization (busy time / makespan) "
                 "per method, one panel per network."]
        if gantt:
            body.append(f"- {gantt}")
        body += ["", "![gap by chunks](gap_by_chunks.png)", "",
                 "![utilization](utilization.png)", ""]
        if gantt:
            body += ["![largest gap](gantt_largest_gap.png)", ""]
        body += _what_was_run(meta, instances, rows)
        body += _per_instance(instances)
        head = _header(meta, command, time.perf_counter() - t0, rows)
        write_text_atomic(out / "README.md", "\n".join(head + body).rstrip() + "\n")
        written.append(out / "README.md")
    finally:
        conn.close()
    return written


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    cols = [c for c in db.COLUMN_NAMES if c != "schedule_json"] + list(SCORE_COLUMNS)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r.get(c) is None else _csv_cell(r.get(c)) for c in cols])
    write_text_atomic(path, buf.getvalue())
    return path


def _csv_cell(v: Any) -> Any:
    if isinstance(v, float):
        return repr(v)
    return v


__all__: list[str] = ["InstanceResult", "PLOT_FILES", "SCORE_COLUMNS", "build_report",
                      "draw_gap_by_chunks", "draw_largest_gap", "draw_utilization",
                      "improvements", "policy_methods", "row_name", "score",
                      "solver_methods"]
