"""Plots of training iterations (``themis train --timeline``, ``reports/training/``).

Each function takes ``ax=None`` (a new figure when ``None``) and returns the
axes it drew on; matplotlib is imported lazily and drawn with the Agg canvas
(:func:`themis.plots.new_figure`).

:func:`plot_training_timeline` draws one row for the NPU's compute and one row
per network dimension. Compute steps are grey; every stage of a collective has
that collective's colour (all its chunks alike; :data:`COLLECTIVE_COLORS`,
repeating after 17 collectives), so one can follow a collective across the
dimensions. Where the NPU computes nothing, the compute
row is shaded red: that is the exposed communication. :func:`write_speedups` writes
a training report's speed-up plot (``speedups.png``) of its rows.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from reports.report.training_tables import Row, cases_of, labels_of, rows_by_key
from themis.plots import new_figure, save_figure

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: The colours collectives cycle through, in the order of their first stage: a
#: qualitative palette of saturated colours (``tab10`` without its grey, the distinct
#: ones of ``Dark2``, then a few more), each at least 25 CIELAB units from every
#: other and none pale or grey (compute is grey), so that up to 17 collectives in a
#: row each have their own colour.
COLLECTIVE_COLORS: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#1b9e77", "#e7298a", "#e6ab02", "#a6761d", "#800000", "#911eb4", "#f032e6",
    "#4363d8")
_COMPUTE_COLOR = "0.45"
_EXPOSED_COLOR = "tab:red"


def timeline_colors(stages: Sequence[tuple[int, Any, float, float]]) -> dict[Any, str]:
    """Each collective's colour: :data:`COLLECTIVE_COLORS` in turn, in the order of the
    collectives' first stage (``stages``: (dim, collective id, start, end))."""
    first = dict.fromkeys(c for _, c, _, _ in sorted(stages, key=lambda s: s[2]))
    return {cid: COLLECTIVE_COLORS[i % len(COLLECTIVE_COLORS)] for i, cid in enumerate(first)}


def _time_unit(end_ns: float) -> tuple[float, str]:
    if end_ns >= 5e6:
        return 1e6, "ms"
    if end_ns >= 5e3:
        return 1e3, "us"
    return 1.0, "ns"


def _merged(intervals: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def exposed_intervals(compute: Sequence[tuple[float, float]],
                      end_ns: float) -> list[tuple[float, float]]:
    """The gaps of ``compute`` (start, end) within ``[0, end_ns]``: where no compute runs."""
    gaps, t = [], 0.0
    for start, end in _merged(compute):
        if start > t:
            gaps.append((t, start))
        t = max(t, end)
    if end_ns > t:
        gaps.append((t, end_ns))
    return gaps


def timeline_data(result: Any) -> tuple[list[tuple[float, float]],
                                        list[tuple[int, Any, float, float]], int]:
    """``(compute intervals, stages (dim, collective id, start, end), dims)`` of a result.

    ``result.timeline`` holds ``compute`` as (start_ns, end_ns, layer, phase)
    and ``stages`` as (dim, collective id, chunk, start_ns, end_ns);
    ``result.dims`` the logical dimensions.
    """
    tl = result.timeline
    compute = [(float(c[0]), float(c[1])) for c in tl.compute]
    stages = [(int(s[0]), s[1], float(s[3]), float(s[4])) for s in tl.stages]
    ndims = max(len(result.dims), 1 + max((d for d, *_ in stages), default=-1))
    return compute, stages, ndims


def plot_training_timeline(result: Any, ax: Axes | None = None,
                           path: str | os.PathLike | None = None,
                           title: str | None = None, xmax_ns: float | None = None) -> Axes:
    """Compute and each dimension's collectives of a training result over time.

    ``xmax_ns`` (default: the result's end) sets the x range and its unit, so
    that several results can share one axis.
    """
    compute, stages, ndims = timeline_data(result)
    if ax is None:
        _, (ax,) = new_figure(11.0, 1.2 + 0.55 * (ndims + 1))
    xmax = float(xmax_ns if xmax_ns is not None else result.end_ns)
    scale, unit = _time_unit(xmax)
    colors = timeline_colors(stages)
    rows = ndims + 1
    top = rows - 1  # compute on top, dimension 0 below it
    gaps = exposed_intervals(compute, float(result.end_ns))
    ax.broken_barh([(s / scale, (e - s) / scale) for s, e in gaps], (top - 0.4, 0.8),
                   facecolors=_EXPOSED_COLOR, alpha=0.25, linewidth=0)
    ax.broken_barh([(s / scale, (e - s) / scale) for s, e in compute], (top - 0.35, 0.7),
                   facecolors=_COMPUTE_COLOR, linewidth=0)
    by_key: dict[tuple[int, Any], list[tuple[float, float]]] = defaultdict(list)
    for dim, cid, start, end in stages:
        by_key[(dim, cid)].append((start / scale, (end - start) / scale))
    for (dim, cid), bars in by_key.items():
        ax.broken_barh(bars, (top - 1 - dim - 0.35, 0.7),
                       facecolors=colors[cid], edgecolors="white",
                       linewidth=0.2)
    ax.set_yticks(range(rows), [f"dim {top - 1 - r}" for r in range(rows - 1)] + ["compute"])
    ax.set_ylim(-0.6, rows - 0.4)
    ax.set_xlim(0, xmax / scale)
    return _finish(ax, f"time ({unit}); red: no compute running (exposed communication); "
                       f"colours: one per collective (repeating after "
                       f"{len(COLLECTIVE_COLORS)})", title, path)


def _finish(ax: Axes, xlabel: str, title: str | None,
            path: str | os.PathLike | None) -> Axes:
    """A timeline's x label and title, saved to ``path`` when given."""
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    if path is not None:
        save_figure(cast("Figure", ax.figure), path)
    return ax


#: Rank classes an ET timeline draws at most (the slowest).
MAX_ET_CLASSES = 8


def ranks_label(ranks: Sequence[int]) -> str:
    """``ranks 0-3, 8`` for a class of ranks (consecutive runs shortened)."""
    parts: list[str] = []
    run: list[int] = []
    for r in sorted(ranks):
        if run and r == run[-1] + 1:
            run.append(r)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [r]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    text = ", ".join(parts)
    return f"rank{'s' if len(ranks) > 1 else ''} {text if len(text) <= 24 else text[:21] + '...'}"


def plot_et_timeline(result: Any, ax: Axes | None = None,
                     path: str | os.PathLike | None = None,
                     title: str | None = None) -> Axes:
    """A Chakra-trace iteration (:class:`themis.training.et_run.ETResult`) over time: per
    class of identical ranks (top first) its compute slot (grey; red where no compute
    runs until the iteration's end: exposed communication) and its communication slot
    (one colour per collective node, the k-th in id order alike in every class)."""
    classes = list(result.classes)
    shown = len(classes)
    if shown > MAX_ET_CLASSES:  # the slowest classes, in their own order
        from themis.training.et_run import nodes_end_ns

        slow = sorted(range(shown), key=lambda c: -nodes_end_ns(classes[c][1]))[:MAX_ET_CLASSES]
        classes = [classes[c] for c in sorted(slow)]
    rows = 2 * len(classes)
    if ax is None:
        _, (ax,) = new_figure(11.0, 1.2 + 0.55 * rows)
    end = float(result.end_ns)
    scale, unit = _time_unit(end)
    labels: list[str] = []
    for c, (ranks, nodes) in enumerate(classes):
        comp_y, comm_y = rows - 1 - 2 * c, rows - 2 - 2 * c
        compute = [(float(n.issue_ns), float(n.end_ns)) for n in nodes if n.kind == "compute"]
        gaps = exposed_intervals(compute, end)
        ax.broken_barh([(a / scale, (b - a) / scale) for a, b in gaps], (comp_y - 0.4, 0.8),
                       facecolors=_EXPOSED_COLOR, alpha=0.25, linewidth=0)
        ax.broken_barh([(a / scale, (b - a) / scale) for a, b in compute],
                       (comp_y - 0.35, 0.7), facecolors=_COMPUTE_COLOR, linewidth=0)
        # the k-th collective in id order has one colour in every class (ranks' ids are
        # offset by chakra's converter)
        colls = sorted((n for n in nodes if n.kind == "collective"), key=lambda n: n.id)
        for k, n in enumerate(colls):
            if n.end_ns > n.issue_ns:
                ax.broken_barh([(n.issue_ns / scale, (n.end_ns - n.issue_ns) / scale)],
                               (comm_y - 0.35, 0.7),
                               facecolors=COLLECTIVE_COLORS[k % len(COLLECTIVE_COLORS)],
                               edgecolors="white", linewidth=0.2)
        who = ranks_label(ranks)
        labels = [f"{who}: comm", f"{who}: compute"] + labels
    ax.set_yticks(range(rows), labels)
    ax.set_ylim(-0.6, rows - 0.4)
    ax.set_xlim(0, max(end, 1.0) / scale)
    more = f"; the {len(classes)} slowest of {shown} rank classes" if shown > len(classes) \
        else ""
    return _finish(ax, f"time ({unit}); red: no compute running (exposed communication); "
                       f"colours: one per collective node{more}", title, path)


def plot_speedups(speedups: Mapping[str, Mapping[str, float]], ax: Axes | None = None,
                  path: str | os.PathLike | None = None, title: str | None = None,
                  ylabel: str = "speed-up over baseline", legend: bool = True) -> Axes:
    """Grouped bars: ``speedups[group][series]`` (e.g. workload/network -> policy -> x).

    A series named like a method (``themis/scf``) has that method's colour and
    hatch in every report (:func:`reports.plots.bar_style`); others (the bound)
    are white, cross-hatched."""
    from reports.plots import bar_style

    groups = list(speedups)
    series = list(dict.fromkeys(s for g in groups for s in speedups[g]))
    if ax is None:
        _, (ax,) = new_figure(max(6.0, 0.25 * len(groups) * max(1, len(series))), 4.5)
    width = 0.8 / max(1, len(series))
    for i, name in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        style = bar_style(name) if "/" in name else {"color": "white", "hatch": "xx"}
        ax.bar(xs, [speedups[g].get(name, float("nan")) for g in groups], width, label=name,
               edgecolor="black", linewidth=0.4, **style)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(groups)), groups, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if legend:
        ax.legend(fontsize=8, ncols=min(len(series), 6))
    if title:
        ax.set_title(title)
    if path is not None:
        save_figure(cast("Figure", ax.figure), path)
    return ax


def has_speedups(rows: Sequence[Row]) -> bool:
    """Whether :func:`write_speedups` has a bar to draw: a second policy, or a bound."""
    return len(labels_of(rows)) > 1 or any(math.isfinite(r.ideal_speedup) for r in rows)


def write_speedups(out: Path, rows: Sequence[Row], name: str = "speedups.png",
                   timing: str = "astra-sim-1.0", setting: str = "") -> Path:
    """``out/name`` (``speedups.png``): one panel per workload, one legend below them all;
    speed-ups over the rows' first policy, run under ``timing``.

    ``setting`` (e.g. :meth:`reports.report.training_db.Setting.label`) replaces the
    timing in the title, so that the plots of different settings differ. The
    bound's bars are left out when no row has a bound (:func:`has_speedups`
    says whether anything is left to draw). At least ~9 inches wide whatever
    the workload count: the title and the legend need the room, so one or two
    panels are not squeezed."""
    from themis import plots  # looked up at call time (tests watch what is saved)

    labels = labels_of(rows)
    got = rows_by_key(rows)
    bounded = any(math.isfinite(r.ideal_speedup) for r in rows)
    workloads = list(dict.fromkeys(r.workload for r in rows))
    ncols = min(3, len(workloads))
    nrows = -(-len(workloads) // ncols)
    fig, axes = plots.new_figure(max(4.2 * ncols, 9.0), 3.6 * nrows + 0.8, nrows=nrows,
                           ncols=ncols)
    for i, (ax, wname) in enumerate(zip(axes, workloads, strict=False)):
        data = {n: {**{lb: got[w, n, lb].speedup for lb in labels[1:]},
                    **({"bound (Ideal)": got[w, n, labels[0]].ideal_speedup} if bounded
                       else {})}
                for w, n in cases_of(rows) if w == wname}
        plot_speedups(data, ax=ax, title=wname, legend=False,
                      ylabel=f"speed-up over {labels[0]}" if i % ncols == 0 else "")
    for ax in axes[len(workloads):]:
        ax.set_axis_off()
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=min(len(names), 5),
               fontsize=9)
    fig.suptitle(f"Training iteration speed-up over {labels[0]} by workload and network "
                 f"({setting or f'{timing} timing'})")
    plots.save_figure(fig, out / name)
    return out / name
