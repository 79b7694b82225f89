"""CLI details: help defaults, presets, --version, policy errors, Gantt charts."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from reports.cli import main

ROOT = Path(__file__).parents[2]


def test_simulate_help_states_the_chunk_default_it_uses(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "preferred-dataset- splits, else 4," in help_text or \
        "preferred-dataset-splits, else 4," in help_text
    assert main(["simulate", "small-2d", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chunks"] == 4


def test_presets_lists_networks_and_systems(capsys) -> None:
    from topologies.presets import list_preset_systems

    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert "networks (NETWORK):" in out and "system files (--system):" in out
    for name in list_preset_systems():
        assert re.search(rf"^{re.escape(name)}\s", out, re.M), name
    assert main(["presets", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in data["systems"]] == list_preset_systems()
    themis = next(s for s in data["systems"] if s["name"] == "3d_switch_themis")
    # topologies/presets/3d_switch_themis.txt: preferred-dataset-splits 64, themis, SCF.
    assert (themis["splits"], themis["inter"], themis["intra"]) == (64, "themis", "scf")
    assert themis["all_reduce_algorithms"] == ["halvingDoubling"] * 3
    assert "small-2d" in [n["name"] for n in data["networks"]]
    # The bundled workloads (the tour says presets lists them): vgg16 is DATA, 16 layers.
    vgg = next(w for w in data["workloads"] if w["name"] == "vgg16")
    assert (vgg["file"], vgg["parallelism"], vgg["layers"]) == ("vgg16.txt", "DATA", 16)
    assert "workloads (WORKLOAD" in out and re.search(r"^dlrm\s", out, re.M)


def test_version(capsys) -> None:
    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"themis {want}"


def test_policy_error_lists_only_names_that_work(capsys) -> None:
    assert main(["simulate", "small-2d", "--chunks", "2", "--policy", "nosuch"]) == 2
    err = capsys.readouterr().err
    listed = re.search(r"expected one of (.*), or a route", err).group(1).split(", ")
    assert "fixed" not in listed and "themis" in listed
    for name in listed:
        assert main(["simulate", "small-2d", "--chunks", "2", "--policy", name]) == 0, name
        capsys.readouterr()


def test_gantt_title_names_network_size_and_chunks() -> None:
    from themis.collective import Collective
    from themis.plots import plot_gantt
    from themis.simulator import simulate
    from topologies.presets import resolve_network

    sim = simulate(resolve_network("small-2d"), Collective("all-reduce", 64 << 20, 8),
                   policy="themis", intra="scf")
    title = plot_gantt(sim.schedule).get_title()
    assert "small-2d" in title and "64MiB" in title and "8 chunks" in title


@pytest.mark.parametrize("n", [4, 20, 21, 64, 300])
def test_every_chunk_has_its_own_colour(n: int) -> None:
    from themis.plots import chunk_colors

    colors = chunk_colors(n)
    assert len(colors) == n
    assert len({tuple(round(c, 4) for c in rgba) for rgba in colors}) == n


def test_legend_is_kept_on_a_single_panel_without_layout(tmp_path: Path) -> None:
    # A caller's own one-panel figure (no layout engine): the legend sits right of
    # the axes, outside the 6 x 2 in canvas; the saved image must grow to hold it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    from themis.collective import Collective
    from themis.plots import plot_gantt
    from themis.simulator import simulate
    from topologies.presets import resolve_network

    fig = Figure(figsize=(6, 2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    sim = simulate(resolve_network("small-2d"), Collective("all-reduce", 1 << 20, 2))
    out = tmp_path / "g.png"
    plot_gantt(sim.schedule, ax=ax, path=out)
    legend = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert legend.x1 > fig.bbox.width  # the legend does stick out of the canvas
    height, width = imread(out).shape[:2]
    assert width >= legend.x1 * 120 / fig.dpi - 1  # saved at dpi 120: it is inside
