"""Every series of a picture is distinguishable (issue 14 §5, plots)."""

from __future__ import annotations

import itertools
import warnings

from reports.methods import every_intra, every_policy
from reports.plots import bar_style, method_style, plot_gap_by_chunks, plot_order
from themis.collective import Collective
from themis.plots import LABEL_CHUNKS_ABOVE, plot_gantt
from themis.simulator import simulate
from topologies.presets import preset_network

SOLVERS = ("cpsat", "highs", "cbc", "improve")


def test_every_bundled_method_has_its_own_look() -> None:
    COMPARE_POLICIES, COMPARE_INTRAS = every_policy(), every_intra()  # noqa: N806
    methods = [f"{p}/{q}" for p in COMPARE_POLICIES for q in COMPARE_INTRAS] + list(SOLVERS)
    looks = {m: tuple(sorted(method_style(m).items())) for m in methods}
    assert len(set(looks.values())) == len(methods)  # lines and markers
    bars = {m: tuple(sorted(bar_style(m).items())) for m in methods}
    assert len(set(bars.values())) == len(methods)  # bars: colour, hatch, alpha
    # One colour per family, one marker / line style / hatch per discipline.
    families = list(COMPARE_POLICIES) + list(SOLVERS)
    assert len({method_style(f"{p}/fifo")["color"] for p in families}) == len(families)
    for a, b in itertools.combinations(COMPARE_INTRAS, 2):
        sa, sb = method_style(f"themis/{a}"), method_style(f"themis/{b}")
        assert sa["marker"] != sb["marker"] and sa["linestyle"] != sb["linestyle"]
        assert bar_style(f"themis/{a}")["hatch"] != bar_style(f"themis/{b}")["hatch"]
    # A timing suffix keeps the method's look.
    assert method_style("themis/scf@astra-sim-1.0") == method_style("themis/scf")


def test_plot_order_groups_families() -> None:
    assert plot_order(["themis/scf", "baseline/lrw", "portfolio/fifo", "baseline/fifo",
                       "themis/fifo", "mine/scf"]) == [
        "baseline/fifo", "baseline/lrw", "themis/fifo", "themis/scf", "portfolio/fifo",
        "mine/scf"]


def test_coinciding_lines_stay_visible() -> None:
    """Equal series are dodged along x and drawn with shrinking markers."""
    series = {m: [(2, 0.1), (4, 0.1)] for m in ("baseline/fifo", "themis/fifo", "lb-mix/fifo")}
    ax = plot_gap_by_chunks(series)
    lines = ax.get_lines()
    xs = [tuple(line.get_xdata()) for line in lines]
    assert len(set(xs)) == 3
    assert all(abs(x / c - 1) < 0.08 for row in xs for x, c in zip(row, (2, 4), strict=True))
    sizes = [line.get_markersize() for line in lines]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 3


def test_gantt_labels_chunks_and_shows_the_users_names() -> None:
    from themis.astra_run import simulate_astra
    from topologies.presets import preset_system

    net = preset_network("3d_switch")
    res = simulate_astra(net, preset_system("3d_switch_themis"),
                         Collective("all-reduce", 1 << 30, 64))
    assert res.schedule.meta["intra"] == "astra-scf"
    ax = plot_gantt(res.schedule)
    assert ax.get_title().startswith("themis/scf:")
    labels = {t.get_text() for t in ax.texts}
    assert labels >= {"0", "63"}
    small = simulate(preset_network("small-2d"),
                     Collective("all-reduce", LABEL_CHUNKS_ABOVE << 16, LABEL_CHUNKS_ABOVE))
    assert not plot_gantt(small.schedule).texts


def test_speedup_panel_of_one_workload_is_not_squeezed(tmp_path) -> None:
    """One workload, two networks: no layout warning (constrained_layout could not fit
    the panel before), every series in one legend."""
    from reports.report.training_plots import write_speedups
    from reports.report.training_tables import Row

    rows = [Row("f", "w", n, 16, lb, e, 0.5, 0.5 - e / 2, 0.4, 1.0 / e, 2.0)
            for n in ("a", "b") for lb, e in (("baseline/fifo", 1.0), ("themis/scf", 0.8),
                                              ("portfolio/scf", 0.7))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = write_speedups(tmp_path, rows)
    assert path.stat().st_size > 0
