"""Named presets and resolving what a user types."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from topologies import (
    InputError,
    list_preset_systems,
    list_presets,
    preset_network,
    preset_system,
    preset_system_path,
    read_network,
    resolve_network,
    resolve_system,
    write_network_yaml,
)
from topologies.presets import presets_dir

TUTORIAL = Path(__file__).parents[1] / "data" / "astra-sim-1.0" / "tutorial"
TUTORIAL_FILES = [
    "3d_switch.json", "tpu.json", "dgx2.json",
    "3d_switch_baseline.txt", "3d_switch_themis.txt", "tpu.txt", "dgx2.txt",
]
EXPECTED = {
    "3d_switch": 512, "tpu": 256, "dgx2": 256, "small-2d": 16, "small-3d": 64,
    "small-4d": 64, "nvlink-x-ib": 256, "torus-2d": 256, "torus-3d": 512,
    "4d-4096": 4096, "4d-large": 64**4,
}


def test_list_presets() -> None:
    infos = list_presets()
    names = [p.name for p in infos]
    assert names == sorted(names)
    assert set(EXPECTED) <= set(names)
    for info in infos:
        network = preset_network(info.name)
        assert network.name == info.name
        assert (info.npus, info.dims) == (network.npus, network.ndims)
        assert info.description and "\n" not in info.description
        assert info.path.is_file()
        if info.name in EXPECTED:
            assert info.npus == EXPECTED[info.name]
    by_name = {p.name: p for p in infos}
    assert by_name["3d_switch"].systems == ("3d_switch_baseline", "3d_switch_themis")
    assert by_name["tpu"].systems == ("tpu",)
    assert by_name["small-2d"].systems == ()


def test_preset_shapes() -> None:
    small = preset_network("small-2d")
    assert [(d.kind, d.npus, d.bandwidth_GBps) for d in small.dims] == [
        ("Ring", 4, 4.0), ("Switch", 4, 1.0)
    ]
    ib = preset_network("nvlink-x-ib")
    assert [(d.kind, d.npus, d.bandwidth_GBps) for d in ib.dims] == [
        ("Switch", 8, 300.0), ("Switch", 32, 25.0)
    ]
    assert ib.dims[1].latency_ns == 700.0
    for info in list_presets():
        for d in preset_network(info.name).dims:
            assert 0 < d.latency_ns <= 700


@pytest.mark.parametrize("name", TUTORIAL_FILES)
def test_tutorial_files_copied_unchanged(name: str) -> None:
    assert filecmp.cmp(presets_dir() / name, TUTORIAL / name, shallow=False)


def test_preset_systems() -> None:
    assert list_preset_systems() == ["3d_switch_baseline", "3d_switch_themis", "dgx2", "tpu"]
    assert preset_system_path("3d_switch_themis") == presets_dir() / "3d_switch_themis.txt"
    assert preset_system_path("tpu.txt") == presets_dir() / "tpu.txt"
    assert preset_system_path("3d_switch") is None
    assert preset_system("3d_switch") is None
    system = preset_system("3d_switch_themis")
    assert system is not None and system.inter == "themis" and system.chunks == 64


def test_unknown_preset_network() -> None:
    with pytest.raises(InputError, match="preset = 'nope': no such network preset"):
        preset_network("nope")


def test_resolve_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_network("tpu") == preset_network("tpu")
    path = tmp_path / "mine.yml"
    write_network_yaml(preset_network("small-3d"), path)
    mine = resolve_network(str(path))
    assert mine == preset_network("small-3d") and mine.name == "mine"
    # an existing file wins over a preset of the same name
    monkeypatch.chdir(tmp_path)
    write_network_yaml(preset_network("small-2d"), tmp_path / "torus-2d.yml")
    assert resolve_network("torus-2d.yml") == read_network(tmp_path / "torus-2d.yml")
    assert resolve_network("torus-2d") == preset_network("torus-2d")
    for spec in ("nope", "missing.yml", str(tmp_path / "nothing.json")):
        with pytest.raises(InputError) as info:
            resolve_network(spec)
        assert str(info.value) == (
            f"NETWORK = {spec!r}: no such file or preset (see `themis presets`)"
        )


def test_resolve_system(tmp_path: Path) -> None:
    assert resolve_system("tpu").chunks == 4
    path = tmp_path / "s.txt"
    path.write_text("preferred-dataset-splits: 3\n")
    assert resolve_system(str(path)).chunks == 3
    with pytest.raises(InputError, match=r"SYSTEM = 'nope': no such file or preset"):
        resolve_system("nope")
