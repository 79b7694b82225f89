"""Plots of sweep results. Each function takes ``ax=None`` (a new figure when
``None``) and returns the axes it drew on, PyVRP style; matplotlib is imported
lazily and drawn with the Agg canvas (see :mod:`themis.plots`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from themis.plots import new_figure, plot_gantt, save_figure

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes

    from themis.schedule import Schedule

#: One colour per method family (the disciplines of a policy share it): every bundled
#: policy and solver has its own, so no two of them look alike.
_COLORS = {"baseline": "tab:gray", "round-robin": "tab:orange", "themis": "tab:blue",
           "guarded": "tab:green", "lb-mix": "tab:purple", "portfolio": "tab:red",
           "improve": "tab:brown", "cpsat": "black", "highs": "tab:olive", "cbc": "tab:cyan"}
#: Marker, line style and bar hatch per discipline (solvers: no discipline).
_MARKERS = {"fifo": "o", "scf": "s", "lrw": "D"}
_LINES = {"fifo": "-", "scf": "--", "lrw": ":"}
_HATCHES = {"fifo": None, "scf": "//", "lrw": ".."}
_BAR_ALPHA = {"fifo": 0.95, "scf": 0.6, "lrw": 0.4}

#: Colours of other methods (new policies, routes), picked by a stable hash; none of
#: them is a bundled family's.
_OTHER_COLORS = ("tab:pink", "gold", "navy", "teal", "maroon", "lime", "indigo")


def method_style(method: str) -> dict[str, Any]:
    """Colour, marker and line style of a method (``themis/scf``, ``cpsat``...).

    A method without a colour of its own (a new policy, a route, a solver) gets
    one of :data:`_OTHER_COLORS` by a stable hash of its family name, so the
    same method has the same colour in every plot and every report.
    """
    import zlib

    policy, _, intra = method.partition("/")
    intra = intra.split("@")[0]
    family = policy.split(" ")[0]
    color = _COLORS.get(family) or _OTHER_COLORS[zlib.crc32(family.encode())
                                                  % len(_OTHER_COLORS)]
    return {"color": color, "marker": _MARKERS.get(intra, "^" if intra else "v"),
            "linestyle": _LINES.get(intra, "-." if not intra else "-")}


def plot_order(methods: Sequence[str]) -> list[str]:
    """``methods`` grouped by family (bundled families in :data:`_COLORS` order, then
    the others as given), each family's disciplines FIFO, SCF, LRW, then others:
    the legend reads family by family."""
    families = list(_COLORS)
    intras = list(_MARKERS)

    def key(item: tuple[int, str]) -> tuple[int, int, int, int]:
        i, m = item
        policy, _, intra = m.partition("/")
        fam = policy.split(" ")[0]
        first = next(j for j, x in enumerate(methods) if x.partition("/")[0].split(" ")[0]
                     == fam)
        q = intra.split("@")[0]
        return (families.index(fam) if fam in families else len(families) + first,
                first, intras.index(q) if q in intras else len(intras), i)

    return [m for _, m in sorted(enumerate(methods), key=key)]


def bar_style(method: str) -> dict[str, Any]:
    """Colour, hatch and alpha of a method's bars (the discipline sets hatch and alpha)."""
    intra = method.partition("/")[2].split("@")[0]
    return {"color": method_style(method)["color"], "hatch": _HATCHES.get(intra),
            "alpha": _BAR_ALPHA.get(intra, 0.8)}


def plot_gap_by_chunks(series: Mapping[str, Sequence[tuple[int, float]]], ax: Axes | None = None,
                       title: str | None = None, ylabel: str = "mean gap (%)",
                       legend: bool = True) -> Axes:
    """One line per method: ``series[method] = [(chunks, gap fraction), ...]``.

    x: chunks (log2 axis), y: the gap in percent (linear up to 0.1%, then
    logarithmic, so small and large gaps both show). Methods whose lines coincide
    stay visible: each series is shifted a little along x (a dodge, at most a
    tenth of a doubling), its hollow markers shrink series by series, and the
    earlier, wider lines lie underneath.
    """
    from matplotlib.ticker import FuncFormatter

    if ax is None:
        _, (ax,) = new_figure(6.0, 4.0)
    chunks: set[int] = set()
    top = 0.0
    drawn = [(m, sorted(p)) for m, p in series.items() if p]
    n = len(drawn)
    for k, (method, pts) in enumerate(drawn):
        chunks.update(c for c, _ in pts)
        top = max([top] + [100 * g for _, g in pts])
        dodge = 2 ** (0.1 * ((k - (n - 1) / 2) / max(n - 1, 1))) if n > 1 else 1.0
        ax.plot([c * dodge for c, _ in pts], [100 * g for _, g in pts], label=method,
                markersize=max(9.0 - 0.35 * k, 4.0), markerfacecolor="none",
                markeredgewidth=1.2, linewidth=max(2.6 - 0.1 * k, 1.0), zorder=2 + k / 100,
                **method_style(method))
    ax.set_xscale("log", base=2)
    ax.set_yscale("symlog", linthresh=0.1, linscale=0.5)
    ax.set_ylim(0, max(top * 1.6, 0.2))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if chunks:
        ax.set_xticks(sorted(chunks), [str(c) for c in sorted(chunks)])
        ax.minorticks_off()
    ax.set_xlabel("chunks C")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title, fontsize="medium")
    if series and legend:
        ax.legend(fontsize="small")
    return ax


def _grouped_bars(values: Mapping[str, Sequence[float]], ax: Axes | None, ylabel: str,
                  title: str | None, legend: bool) -> Axes:
    """Per dimension, one bar per series (``values[name][dim]`` in 0..1, drawn in %)."""
    if ax is None:
        _, (ax,) = new_figure(6.0, 4.0)
    names = list(values)
    ndims = max((len(v) for v in values.values()), default=0)
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        xs = [d - 0.4 + width * (i + 0.5) for d in range(len(values[name]))]
        ax.bar(xs, [100 * u for u in values[name]], width=width, label=name,
               edgecolor="black", linewidth=0.3, **bar_style(name))
    ax.set_xticks(range(ndims), [f"dim {d}" for d in range(ndims)])
    ax.set_ylim(0, 105)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize="medium")
    if names and legend:
        ax.legend(fontsize="x-small", ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    return ax


def plot_dim_utilization(values: Mapping[str, Sequence[float]], ax: Axes | None = None,
                         title: str | None = None, legend: bool = True) -> Axes:
    """Grouped bars: per dimension, one bar per method (``values[method][dim]`` in 0..1).

    Dimensions are numbered as in ``values`` (the active dimensions, in order).
    """
    return _grouped_bars(values, ax, "utilization (% of makespan busy)", title, legend)


def plot_designs(shares: Mapping[str, Sequence[float]], ax: Axes | None = None,
                 title: str | None = None) -> Axes:
    """Grouped bars: per dimension, one bar per design, the share of the budget it spends
    there (``shares[design][dim]`` in 0..1): the designs per policy side by side."""
    return _grouped_bars(shares, ax, "share of the budget (%)", title, True)


def figure_legend(fig: Any, axes: Sequence[Axes]) -> None:
    """One legend below the figure for every labelled artist of ``axes``."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="outside lower center",
                   ncols=min(len(seen), 6), fontsize="small")


def plot_gantt_pair(items: Sequence[tuple[str, Schedule]], path: str | os.PathLike | None = None,
                    title: str | None = None) -> list[Axes]:
    """Gantt charts stacked on a shared time axis, one per ``(label, schedule)``."""
    rows = sum(max(len(s.network.active_dims), 1) for _, s in items)
    fig, axes = new_figure(11.0, 1.5 + 0.5 * rows + 0.6 * len(items), nrows=len(items),
                           sharex=True)
    for k, (ax, (label, schedule)) in enumerate(zip(axes, items, strict=True)):
        plot_gantt(schedule, ax=ax, title=label)
        if k < len(items) - 1:
            ax.set_xlabel("")
    end = max(s.makespan_ns for _, s in items) / 1e3
    axes[0].set_xlim(0, max(end, 1e-9) * 1.01)
    if title:
        fig.suptitle(title)
    if path is not None:
        save_figure(fig, path)
    return axes


__all__ = ["bar_style", "figure_legend", "method_style", "plot_designs", "plot_dim_utilization",
           "plot_gantt_pair",
           "plot_gap_by_chunks", "plot_order"]
