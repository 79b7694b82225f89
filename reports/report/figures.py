"""The report's plots: gap by chunks, per-dimension utilization, the largest Themis gap."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reports.records import AgOrder, Kind, MethodResult, Status
from reports.report.stats import InstanceResult

#: The plots the report draws.
PLOT_FILES: tuple[str, ...] = ("gap_by_chunks.png", "utilization.png", "gantt_largest_gap.png")


def draw_gap_by_chunks(instances: Sequence[InstanceResult], methods: Sequence[str],
                       path: Path, key: str, ylabel: str) -> None:
    """``gap_by_chunks.png``: one panel per D, mean gap per method over C."""
    from reports.plots import figure_legend, plot_gap_by_chunks, plot_order
    from themis.plots import new_figure, save_figure

    methods = plot_order(methods)

    ds = sorted({i.dims for i in instances}) or [0]
    fig, axes = new_figure(5.0 * len(ds), 4.2, ncols=len(ds))
    for ax, d in zip(axes, ds, strict=True):
        group = [i for i in instances if i.dims == d]
        series = {}
        for m in methods:
            by_c: dict[int, list[float]] = defaultdict(list)
            for i in group:
                r = i.by_method.get(m)
                if r is not None and getattr(r, key) is not None:
                    by_c[i.chunks].append(float(getattr(r, key)))
            series[m] = [(c, sum(v) / len(v)) for c, v in by_c.items()]
        plot_gap_by_chunks(series, ax=ax, title=f"D = {d} ({len(group)} instances)",
                           ylabel=ylabel, legend=False)
    figure_legend(fig, axes)
    save_figure(fig, path)


def draw_utilization(instances: Sequence[InstanceResult], methods: Sequence[str],
                     path: Path) -> None:
    """``utilization.png``: per network, mean per-dimension utilization per method."""
    from reports.plots import figure_legend, plot_dim_utilization, plot_order
    from themis.plots import new_figure, save_figure

    methods = plot_order(methods)

    nets = sorted({i.info.network_label for i in instances}) or ["-"]
    ncols = min(3, len(nets))
    nrows = math.ceil(len(nets) / ncols)
    fig, axes = new_figure(5.5 * ncols, 4.0 * nrows, nrows=nrows, ncols=ncols)
    for ax in axes[len(nets):]:
        ax.remove()
    for ax, net in zip(axes, nets, strict=False):
        group = [i for i in instances if i.info.network_label == net]
        values: dict[str, list[float]] = {}
        for m in methods:
            per_dim: list[list[float]] = []
            for i in group:
                r = i.by_method.get(m)
                if r is None or not r.dim_utilization:
                    continue
                for d, u in enumerate(r.dim_utilization):
                    if d >= len(per_dim):
                        per_dim.append([])
                    per_dim[d].append(u)
            if per_dim:
                values[m] = [sum(v) / len(v) for v in per_dim]
        shape = group[0].info.shape if group else ""
        plot_dim_utilization(values, ax=ax, title=f"{net} ({shape}, {len(group)} instances)",
                             legend=False)
    figure_legend(fig, axes[:len(nets)])
    save_figure(fig, path)


def draw_largest_gap(conn: Any, instances: Sequence[InstanceResult], path: Path,
                     key: str) -> str:
    """``gantt_largest_gap.png``: Themis next to the best schedule where Themis' gap is
    largest. Returns a sentence for the README ("" if nothing could be drawn)."""
    from reports import db
    from reports.plots import plot_gantt_pair

    best: tuple[float, InstanceResult, MethodResult] | None = None
    for i in instances:
        for m in ("themis/scf", "themis/fifo"):
            r = i.by_method.get(m)
            if r is None or getattr(r, key) is None:
                continue
            if best is None or getattr(r, key) > best[0] + 1e-12:
                best = (getattr(r, key), i, r)
    if best is None:
        return ""
    gap, inst, trow = best
    others = [r for r in inst.rows if r is not trow and r.kind != Kind.BOUND
              and r.makespan_ns is not None and r.valid and r.status != Status.ERROR
              and (r.kind == Kind.POLICY or r.ag_order == AgOrder.REVERSE)]
    others.sort(key=lambda r: (r.makespan_ns, r.kind != Kind.SOLVER))
    left = db.read_schedule(conn, inst.task_key(trow))
    right = None
    for r in others:
        right = db.read_schedule(conn, inst.task_key(r))
        if right is not None:
            other = r
            break
    if left is None:
        return ""
    tms = trow.makespan_ns or 0.0  # a row with a gap has a makespan
    items = [(f"{trow.method}: {tms / 1e3:,.1f} µs", left)]
    what = ""
    if right is not None:
        oms = other.makespan_ns or 0.0  # ``others`` have a makespan
        items.append((f"{other.name}: {oms / 1e3:,.1f} µs ({other.status})",
                      right))
        what = f" next to {other.name} ({other.status})"
    to = "to the best known" if key == "gap" else "to the lower bound"
    plot_gantt_pair(items, path, title=f"{inst.label()}: largest Themis gap {to} "
                                       f"({100 * gap:.2f}%)")
    return (f"`gantt_largest_gap.png`: {trow.method} on {inst.label()} (its largest gap "
            f"{to}, {100 * gap:.2f}%){what}.")


__all__ = ["PLOT_FILES", "draw_gap_by_chunks", "draw_largest_gap", "draw_utilization"]
