"""A rank set of ETs (``<prefix>.<rank>.et``, as ASTRA-sim 2.x's ``--workload-configuration``) and
communicator-group files (``--comm-group-configuration``: ``{"<id>": [npu ids]}``, ids > 0).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from topologies.chakra.trace import Trace, read_et
from topologies.errors import InputError

_RANK = re.compile(r"^(?P<stem>.+)\.(?P<rank>\d+)\.et$")


def et_files(source: str | Path, npus: int | None = None) -> dict[int, Path]:
    """Rank -> file for a PREFIX, a FOLDER holding one ``<name>.<rank>.et`` set, or one FILE.et.

    A single file stands for every rank. Ranks must be 0..n-1, none missing (n = ``npus`` if given).
    """
    src = Path(source)
    if src.is_file():
        return {0: src}
    if src.is_dir():
        stems = {m["stem"] for p in src.iterdir() if (m := _RANK.match(p.name))}
        if len(stems) != 1:
            found = ", ".join(sorted(stems)) or "none"
            raise InputError(
                f"a folder of ETs must hold one <name>.<rank>.et set (found: {found})",
                file=str(src),
            )
        folder, stem = src, stems.pop()
    else:
        folder, stem = src.parent, src.name
    files = {
        int(m["rank"]): folder / p.name
        for p in (folder.iterdir() if folder.is_dir() else [])
        if (m := _RANK.match(p.name)) and m["stem"] == stem
    }
    if not files:
        raise InputError("no <prefix>.<rank>.et file", file=str(src))
    count = npus if npus is not None else max(files) + 1
    for rank in range(count):
        if rank not in files:
            raise InputError(
                "missing rank", field="rank", value=rank, file=f"{folder / stem}.{rank}.et"
            )
    extra = sorted(r for r in files if r >= count)
    if extra:
        raise InputError(
            f"rank beyond the {count} NPUs", field="rank", value=extra[0], file=str(files[extra[0]])
        )
    return files


def read_ets(source: str | Path, npus: int | None = None) -> dict[int, Trace]:
    """Every rank's trace, each read and checked (a rank that is the first one up to an id
    offset, as chakra's converter writes them, is checked by that comparison)."""
    out: dict[int, Trace] = {}
    first: Trace | None = None
    for rank, path in sorted(et_files(source, npus).items()):
        out[rank] = read_et(path, first)
        first = first or out[rank]
    return out


def is_et_source(spec: str | Path) -> bool:
    """Whether ``spec`` names Chakra execution traces: a ``.et`` file, a folder holding
    ``<name>.<rank>.et`` files, or a prefix with a ``<prefix>.0.et`` beside it."""
    path = Path(spec)
    if path.is_file():
        return path.suffix == ".et"
    if path.is_dir():
        return any(p.suffix == ".et" for p in path.iterdir())
    return Path(f"{spec}.0.et").is_file()


def read_et_source(spec: str | Path, npus: int) -> tuple[dict[int, Trace], dict[int, str]]:
    """Every rank's trace of a PREFIX, FOLDER or one FILE.et (which stands for every rank),
    and each rank's file name for messages (what ``themis train`` and ``[[training]]``
    specs read)."""
    files = et_files(spec, None if Path(spec).is_file() else npus)
    traces: dict[int, Trace] = {}
    for r, p in sorted(files.items()):  # ranks equal to the first up to an id offset are
        traces[r] = read_et(p, traces.get(0))  # checked by that comparison
    names = {r: str(p) for r, p in files.items()}
    if len(files) == 1 and npus > 1:  # one file stands for every rank
        traces = {r: traces[0] for r in range(npus)}
        names = {r: names[0] for r in range(npus)}
    return traces, names


def read_comm_groups(path: str | Path, npus: int) -> dict[int, list[int]]:
    """A comm-group file: group id (> 0) -> its NPUs (each in 0..npus-1, none twice)."""
    from topologies.files import read_input_text

    p = Path(path)
    text = read_input_text(p, "--comm-group")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not JSON: {err}", file=str(p)) from None
    if not isinstance(raw, dict):
        raise InputError('must be an object {"<id>": [npu ids]}', file=str(p))
    groups: dict[int, list[int]] = {}
    for key, members in raw.items():
        if not key.isdigit() or int(key) <= 0:
            raise InputError(
                "group id must be an integer > 0", field="group id", value=key, file=str(p)
            )
        if not isinstance(members, list) or not members:
            raise InputError(
                "must be a non-empty list of NPU ids", field=key, value=members, file=str(p)
            )
        for npu in members:
            if isinstance(npu, bool) or not isinstance(npu, int) or not 0 <= npu < npus:
                raise InputError(
                    f"unknown NPU (the system has {npus})", field=key, value=npu, file=str(p)
                )
        if len(set(members)) != len(members):
            raise InputError("an NPU is listed twice", field=key, value=members, file=str(p))
        groups[int(key)] = list(members)
    return groups
