"""Reading a spec's tables: keys, lists and the files they name (shared by every table kind).

Every helper raises :class:`~topologies.errors.InputError` naming the spec
file, the key (``grid[0].chunks``, ``training[1].workloads[2]``) and the value.
Files named in a spec are relative to the spec's folder; a name that is no
such file is a preset (networks, systems) or a bundled workload.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from topologies.errors import InputError


def check_keys(table: dict[str, Any], allowed: Sequence[str], prefix: str, file: str) -> None:
    """Refuse a key of ``table`` that is not in ``allowed``."""
    for k, v in table.items():
        if k not in allowed:
            where = f"{prefix}.{k}" if prefix else k
            raise InputError(f"unknown key (expected one of {', '.join(allowed)})", where,
                             v if not isinstance(v, dict) else None, file)


def text_value(data: dict[str, Any], key: str, file: str) -> str:
    """An optional string (``""`` if absent)."""
    value = data.get(key, "")
    if not isinstance(value, str):
        raise InputError("must be a string", key, value, file)
    return value


def items(table: dict[str, Any], key: str, prefix: str, file: str, required: bool = False,
          default: list[Any] | None = None, scalar: bool = False) -> list[Any]:
    """``table[key]``, a list (a TOML array): another value is refused, naming the key
    (``networks = "small-2d"`` for ``networks = ["small-2d"]``); with ``scalar`` (the
    keys also taken as one value, like ``timing``) a single value is a list of one."""
    where = f"{prefix}.{key}"
    if key not in table:
        if required:
            raise InputError("missing required key", where, None, file)
        return list(default or [])
    value = table[key]
    if not isinstance(value, list) and not scalar:
        example = f"[{value!r}]".replace("'", '"') if isinstance(value, str | int | float) \
            else "[...]"
        raise InputError(f"must be a list (a TOML array: {key} = {example})", where, value,
                         file)
    values = value if isinstance(value, list) else [value]
    if required and not values:
        raise InputError("must not be empty", where, value, file)
    return values


def _relative(name: str, folder: Path) -> Path:
    return Path(os.path.normpath(folder / name))  # the folder may not exist yet


def resolve_entry(name: str, folder: Path, key: str, file: str,
                  resolve: Callable[[str], Any], what: str) -> Any:
    """``resolve`` of the file ``name`` relative to the spec's folder if there is one,
    else of ``name`` itself (a preset or bundled name). ``what``: the resolver's own
    field for a name it does not know (``NETWORK``, ``WORKLOAD``, ``SYSTEM``): such an
    error names the spec's key instead; an error inside the named file stays as it is."""
    candidate = _relative(name, folder)
    try:
        if candidate.is_file() or (candidate.exists() or candidate.is_symlink()) \
                and not Path(name).is_file():  # a folder, FIFO... beside the spec: say so
            return resolve(str(candidate))
        return resolve(name)
    except InputError as err:
        if err.field == what or not err.file:
            raise InputError(f"{err.reason}" if err.field == what
                             else f"invalid {what.lower()} ({err})", key, name, file) from None
        raise


def resolve_network(name: str, folder: Path, key: str, file: str) -> Any:
    """A network file (relative to the spec) or preset."""
    from topologies.presets import resolve_network as resolve

    return resolve_entry(name, folder, key, file, resolve, "NETWORK")


__all__ = ["check_keys", "items", "resolve_entry", "resolve_network", "text_value"]
