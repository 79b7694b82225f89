"""``themis spec``: write a sweep spec for one or more networks.

Turns a network file (or preset) into a ready TOML spec, so that a network file
becomes a published report in three commands::

    themis spec my_net.yml --chunks 2,4,6,8 --out spec.toml
    themis sweep spec.toml --db results.sqlite
    themis report results.sqlite --out my-report
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from topologies.errors import InputError
from topologies.files import atomic_write


def _network_entry(spec: str, out_dir: Path | None) -> str:
    """A preset name as it is; a file path relative to the spec's folder (else absolute)."""
    p = Path(spec)
    if p.suffix.lower() in (".yml", ".yaml", ".json") or p.exists():
        if not p.is_file():
            raise InputError("no such file", "NETWORK", spec)
        if out_dir is None:
            return str(p.resolve())
        return os.path.relpath(p.resolve(), out_dir.resolve())
    return spec


def _toml_list(values: Sequence[object]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def spec_text(
    networks: Sequence[str],
    sizes: Sequence[str],
    chunks: Sequence[int],
    policies: Sequence[str],
    intra: Sequence[str],
    solvers: Sequence[str],
    time_limit_s: float,
    ag_orders: Sequence[str] = ("reverse",),
    endpoint_delays_ns: Sequence[float] = (0.0,),
    out: str | None = None,
    title: str = "",
) -> str:
    """The TOML text of a one-grid spec; validated by parsing it like ``themis sweep``."""
    from reports.sweep import parse_spec

    out_dir = Path(out).parent if out else None
    entries = [_network_entry(n, out_dir) for n in networks]
    lines = [
        f"title = {json.dumps(title or 'Sweep of ' + ', '.join(networks))}",
        f"time_limit_s = {float(time_limit_s)!r}",
        f"ag_order = {_toml_list(list(ag_orders))}",
        "",
        "[[grid]]",
        f"networks = {_toml_list(entries)}",
        f"sizes = {_toml_list(list(sizes))}",
        f"chunks = {_toml_list([int(c) for c in chunks])}",
        f"endpoint_delay_ns = {_toml_list([float(e) for e in endpoint_delays_ns])}",
        f"policies = {_toml_list(list(policies))}",
        f"intra = {_toml_list(list(intra))}",
        f"solvers = {_toml_list(list(solvers))}",
        "",
    ]
    text = "\n".join(lines)
    import tomllib

    where = out or str(Path.cwd() / "spec.toml")
    spec = parse_spec(tomllib.loads(text), text, where)
    counts = ", ".join(f"{n} {kind}" for kind, n in spec.counts().items())
    note = f"# {spec.instances} instances, {len(spec.tasks)} tasks ({counts})\n[[grid]]"
    return text.replace("[[grid]]", note, 1)


def write_spec(text: str, out: str) -> None:
    """Write the spec atomically."""
    atomic_write(out, text)
