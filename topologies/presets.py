"""Named networks and systems shipped with the package (``topologies/presets/``).

Network presets are the files ``*.json`` (ASTRA-sim 1.0: the tutorial's
``3d_switch``, ``tpu``, ``dgx2``, unchanged) and ``*.yml`` (ASTRA-sim 2.x:
``small-2d``, ``torus-3d``, ``4d-4096``, ...); a preset's name is its file
stem. System presets are the ``*.txt`` files (the tutorial's
``3d_switch_baseline``, ``3d_switch_themis``, ``tpu``, ``dgx2``), named by
their stem too; a network preset lists the systems whose name is its own or
starts with ``<name>_``.

:func:`resolve_network` / :func:`resolve_system` take what a user types: a path
to an existing file or a preset name.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from topologies.astra import NETWORK_SUFFIXES, read_network
from topologies.errors import InputError
from topologies.network import Network
from topologies.system import SystemConfig

__all__ = [
    "PresetInfo",
    "list_preset_systems",
    "list_presets",
    "preset_network",
    "preset_system",
    "preset_system_path",
    "presets_dir",
    "resolve_network",
    "resolve_system",
]

_SYSTEM_SUFFIX = ".txt"

#: Descriptions of the (unchanged, comment-free) ASTRA-sim tutorial JSON files.
_TUTORIAL_DESCRIPTIONS = {
    "3d_switch": "ASTRA-sim tutorial: 3 x Switch 8 (512 NPUs), 50 GB/s each, 1 ns "
    "(the Themis demo, reference R1)",
    "tpu": "ASTRA-sim tutorial: TPU-like 2D torus, Ring 16 x Ring 16 (256 NPUs), "
    "2 x 62 GB/s links per dimension, 500 ns (reference R2)",
    "dgx2": "ASTRA-sim tutorial: DGX-2-like, Switch 16 at 6 x 25 GB/s x Switch 16 at "
    "6.25 GB/s (256 NPUs), 500 ns",
}


@dataclass(frozen=True)
class PresetInfo:
    """One network preset: its name, a one-line description and its shape."""

    name: str
    description: str
    path: Path
    npus: int
    dims: int
    systems: tuple[str, ...] = ()


def presets_dir() -> Path:
    """The folder holding the preset files."""
    here = Path(__file__).resolve().parent / "presets"
    if here.is_dir():  # an ordinary install or checkout (no importlib.resources import)
        return here
    from importlib import resources

    return Path(os.fspath(cast("os.PathLike[str]",
                              resources.files("topologies").joinpath("presets"))))


def _files(suffixes: tuple[str, ...]) -> dict[str, Path]:
    folder = presets_dir()
    if not folder.is_dir():
        return {}
    return {
        p.stem: p
        for p in sorted(folder.iterdir())
        if p.is_file() and p.suffix.lower() in suffixes
    }


def _network_files() -> dict[str, Path]:
    return _files(NETWORK_SUFFIXES)


def _system_files() -> dict[str, Path]:
    return _files((_SYSTEM_SUFFIX,))


def _description(name: str, path: Path, network: Network) -> str:
    if name in _TUTORIAL_DESCRIPTIONS:
        return _TUTORIAL_DESCRIPTIONS[name]
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            break
    return f"{network.describe()} ({network.npus} NPUs)"


@functools.cache
def _load(name: str) -> Network:
    return read_network(_network_files()[name])


@functools.cache
def _infos() -> tuple[PresetInfo, ...]:
    systems = sorted(_system_files())
    infos = []
    for name, path in _network_files().items():
        network = _load(name)
        infos.append(
            PresetInfo(
                name=name,
                description=_description(name, path, network),
                path=path,
                npus=network.npus,
                dims=network.ndims,
                systems=tuple(s for s in systems if s == name or s.startswith(name + "_")),
            )
        )
    return tuple(sorted(infos, key=lambda info: info.name))


def list_presets() -> list[PresetInfo]:
    """All network presets, sorted by name."""
    return list(_infos())


def list_preset_systems() -> list[str]:
    """Names of all system presets (the ``.txt`` files), sorted."""
    return sorted(_system_files())


def _unknown_preset(kind: str, name: str, known: list[str]) -> InputError:
    return InputError(f"no such {kind} preset (known: {', '.join(known)})", "preset", name)


def preset_network(name: str) -> Network:
    """The network preset ``name`` (an :class:`InputError` if there is none)."""
    if name not in _network_files():
        raise _unknown_preset("network", name, sorted(_network_files()))
    return _load(name)


def preset_system_path(name: str) -> Path | None:
    """The path of system preset ``name`` (``.txt`` optional), or ``None``."""
    stem = name[: -len(_SYSTEM_SUFFIX)] if name.endswith(_SYSTEM_SUFFIX) else name
    return _system_files().get(stem)


def preset_system(name: str) -> SystemConfig | None:
    """The system preset ``name`` (e.g. ``3d_switch_themis``, ``tpu``), or ``None``."""
    path = preset_system_path(name)
    from topologies.astra.system_file import read_system

    return read_system(path) if path is not None else None


def resolve_network(spec: str) -> Network:
    """A network from a path to an existing ``.yml``/``.yaml``/``.json`` file or a preset name.

    An existing file with a network ending wins over a preset of the same
    name. Anything else raises ``InputError(field="NETWORK")``.
    """
    path = Path(spec)
    if path.suffix.lower() in NETWORK_SUFFIXES and path.is_file():
        return read_network(path)
    if spec in _network_files():
        return preset_network(spec)
    if path.is_file():
        return read_network(path)  # reports the unknown file type
    raise InputError("no such file or preset (see `themis presets`)", "NETWORK", spec)


def resolve_system(spec: str) -> SystemConfig:
    """A system from a path to an existing file or a system preset name.

    Anything else raises ``InputError(field="SYSTEM")``.
    """
    from topologies.astra.system_file import read_system

    path = Path(spec)
    if path.is_file():
        return read_system(path)
    preset = preset_system_path(spec)
    if preset is not None:
        return read_system(preset)
    raise InputError("no such file or preset (see `themis presets`)", "SYSTEM", spec)
