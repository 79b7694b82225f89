"""Plots of schedules (matplotlib is imported lazily, Agg backend, no pyplot).

:func:`plot_gantt` draws one row per dimension with one bar per stage: each
chunk has its own colour (a qualitative colormap, cycled), reduce-scatter
stages are solid, all-gather stages hatched and lighter, all-reduce stages (the
localBWAware baseline's last dimension) cross-hatched. With more chunks than a
colour map can tell apart, every bar wide enough for it carries its chunk's
number, so each chunk can be followed across the dimensions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

from themis.schedule import Schedule
from topologies.errors import InputError
from topologies.files import atomic_write

#: How each phase is drawn: (alpha, hatch).
PHASE_STYLE: dict[str, tuple[float, str | None]] = {
    "RS": (0.95, None),
    "AG": (0.55, "///"),
    "AR": (0.75, "xxx"),
}

#: The qualitative colormap chunks cycle through.
CHUNK_COLORMAP = "tab20"


def new_figure(width: float = 10.0, height: float = 4.0, nrows: int = 1, ncols: int = 1,
               sharex: bool = False) -> tuple[Figure, list[Axes]]:
    """A figure with a grid of axes (row by row), drawn by the Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, sharex=sharex, squeeze=False)
    return fig, list(axes.flat)


#: File types a figure can be saved as, by file name ending.
FIGURE_FORMATS: dict[str, str] = {".png": "png", ".pdf": "pdf", ".svg": "svg"}


def figure_format(path: str | os.PathLike, field: str = "") -> str:
    """The matplotlib format for ``path`` by its ending; other endings are an InputError."""
    suffix = Path(path).suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise InputError(f"unsupported figure type (expected {', '.join(FIGURE_FORMATS)})",
                         field, str(path))
    return FIGURE_FORMATS[suffix]


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> None:
    """Save ``fig`` safely (:func:`topologies.files.atomic_write`) as PNG, PDF or SVG.

    The format follows the file name ending (``.png``, ``.pdf``, ``.svg``);
    any other ending is an :class:`InputError`.
    """
    fmt = figure_format(path)
    # bbox_inches="tight": a legend outside the axes is kept even on a figure
    # without a layout engine (e.g. a caller's single panel).
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=dpi, format=fmt,
                                               bbox_inches="tight"))


def plot_gantt(schedule: Schedule, ax: Axes | None = None, path: str | os.PathLike | None = None,
               title: str | None = None) -> Axes:
    """Draw ``schedule`` as a Gantt chart, one row per dimension, x in µs.

    ``ax``: the axes to draw on (a new figure when ``None``); ``path``: save the
    figure there as a PNG (atomically); ``title``: the axes title (default:
    the schedule's policy or solver and makespan). Returns the axes.
    """
    from matplotlib.patches import Patch

    if ax is None:
        dims = sorted({s.dim for s in schedule.stages}) or [0]
        _, (ax,) = new_figure(10.0, 1.4 + 0.55 * len(dims))
    colors = chunk_colors(len(schedule.chunks))
    chunk_index = {(c.collective, c.chunk): i for i, c in enumerate(schedule.chunks)}
    dims = sorted({s.dim for s in schedule.stages} | set(schedule.network.active_dims))
    row = {d: i for i, d in enumerate(dims)}
    height = 0.8
    by_style: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for s in schedule.stages:
        color = chunk_index.get((s.collective, s.chunk), s.chunk) % max(len(colors), 1)
        by_style.setdefault((s.phase, color), []).append(
            (s.start_ns / 1e3, (s.end_ns - s.start_ns) / 1e3, row[s.dim]))
    for (phase, color), bars in by_style.items():
        alpha, hatch = PHASE_STYLE.get(phase, (0.8, None))
        ax.barh([b[2] for b in bars], [b[1] for b in bars], left=[b[0] for b in bars],
                height=height, color=colors[color], alpha=alpha, hatch=hatch,
                edgecolor="black", linewidth=0.3)
    if len(schedule.chunks) > LABEL_CHUNKS_ABOVE:
        _label_chunks(ax, schedule, chunk_index, row)
    ax.set_yticks(range(len(dims)), [f"dim {d}" for d in dims])
    ax.set_ylim(len(dims) - 0.5, -0.5)
    ax.set_xlabel("time (µs)")
    ax.set_xlim(0, max(schedule.makespan_ns / 1e3, 1e-9) * 1.01)
    present = {s.phase for s in schedule.stages}
    handles = [Patch(facecolor="lightgray", edgecolor="black", alpha=alpha, hatch=hatch,
                     label=_PHASE_NAMES[p])
               for p, (alpha, hatch) in PHASE_STYLE.items() if p in present]
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  fontsize="small", frameon=False)
    ax.set_title(title if title is not None else _default_title(schedule), fontsize="medium")
    if path is not None:
        save_figure(ax.figure, path)  # type: ignore[arg-type]
    return ax


#: Bars are labelled with their chunk number when there are more chunks than this.
LABEL_CHUNKS_ABOVE = 20


def _label_chunks(ax: Axes, schedule: Schedule, chunk_index: dict[tuple[int, int], int],
                  row: dict[int, int]) -> None:
    """Write each chunk's number on its bars that are wide enough for it."""
    fig = cast("Figure", ax.figure)
    width_px = fig.get_figwidth() * fig.dpi * 0.8
    span = max(schedule.makespan_ns, 1e-9)
    for s in schedule.stages:
        i = chunk_index.get((s.collective, s.chunk), s.chunk)
        text = str(i)
        if (s.end_ns - s.start_ns) / span * width_px < 4.5 * len(text) + 3:
            continue
        ax.text((s.start_ns + s.end_ns) / 2e3, row[s.dim], text, ha="center",
                va="center", fontsize=5.5, color="black", clip_on=True,
                bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "alpha": 0.6,
                      "linewidth": 0})


def chunk_colors(n: int) -> list[tuple[float, float, float, float]]:
    """One RGBA colour per chunk, all different.

    Up to 20 chunks: the qualitative ``tab20`` map, all dark hues first. More
    chunks: hues stepped by the golden ratio (never repeating) at three
    saturation/brightness levels, so every chunk keeps its own colour.
    """
    import colorsys

    import matplotlib

    if n <= 20:
        cmap = matplotlib.colormaps[CHUNK_COLORMAP]
        return [cmap((2 * i) % 20 + (i // 10) % 2) for i in range(n)]
    levels = ((0.75, 0.85), (0.45, 0.95), (0.9, 0.6))
    out = []
    for i in range(n):
        s, v = levels[i % 3]
        r, g, b = colorsys.hsv_to_rgb((i * 0.6180339887498949) % 1.0, s, v)
        out.append((r, g, b, 1.0))
    return out


#: How internal names are shown: ASTRA-sim 1.0's exact SmallestFirst queue is the
#: ``scf`` the user asked for (``--intra scf``, ``intra-dimension-scheduling: SCF``).
DISPLAY_NAMES: dict[str, str] = {"astra-scf": "scf"}

_PHASE_NAMES: dict[str, str] = {"RS": "reduce-scatter", "AG": "all-gather", "AR": "all-reduce"}


def _default_title(schedule: Schedule) -> str:
    """Who, on which network, what size and how many chunks, and the makespan."""
    from topologies.units import format_size

    meta: dict[str, Any] = schedule.meta or {}
    who = meta.get("solver") or meta.get("policy") or ""
    if meta.get("intra") and not meta.get("solver") and meta.get("intra") != "replay":
        who = f"{who}/{DISPLAY_NAMES.get(meta['intra'], meta['intra'])}"
    net = schedule.network
    where = f"{net.name} ({net.describe()})" if net.name else net.describe()
    colls = schedule.collectives
    if len(colls) == 1:
        what = f"{colls[0].kind} {format_size(colls[0].size_bytes)}"
    else:
        what = f"{len(colls)} collectives"
    return (f"{who + ': ' if who else ''}{what} on {where}, {len(schedule.chunks)} chunks, "
            f"makespan {schedule.makespan_ns / 1e3:,.1f} µs")


__all__ = ["CHUNK_COLORMAP", "DISPLAY_NAMES", "FIGURE_FORMATS", "LABEL_CHUNKS_ABOVE", "PHASE_STYLE",
           "chunk_colors", "figure_format", "new_figure", "plot_gantt", "save_figure"]
