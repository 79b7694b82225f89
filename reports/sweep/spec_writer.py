"""``themis spec``: write a sweep spec for one or more networks.

Turns a network file (or preset) into a ready TOML spec, so that a network file
becomes a published report in three commands::

    themis spec my_net.yml --chunks 2,4,6,8 --out spec.toml
    themis sweep spec.toml --db results.sqlite
    themis report results.sqlite --out my-report
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reports.records import DEFAULT_TIMING
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


def spec_data(
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
    solver_params: dict[str, Any] | None = None,
    timings: Sequence[str] = (DEFAULT_TIMING,),
) -> dict[str, Any]:
    """The spec as a TOML-ready dict (one ``[[grid]]``; a ``timing`` key when the
    policies run under another timing model than alpha-beta alone)."""
    out_dir = Path(out).parent if out else None
    data: dict[str, Any] = {
        "title": title or "Sweep of " + ", ".join(networks),
        "time_limit_s": float(time_limit_s),
        "ag_order": list(ag_orders),
    }
    if solver_params:
        data["solver_params"] = dict(solver_params)
    data["grid"] = [{
        "networks": [_network_entry(n, out_dir) for n in networks],
        "sizes": list(sizes),
        "chunks": [int(c) for c in chunks],
        "endpoint_delay_ns": [float(e) for e in endpoint_delays_ns],
        "policies": list(policies),
        "intra": list(intra),
        "solvers": list(solvers),
    }]
    if list(timings) != [DEFAULT_TIMING]:
        data["grid"][0]["timing"] = list(timings)
    return data


#: A wall limit this long means none in effect (``reports.cli.common.NO_WALL_LIMIT_S``).
WEEK_S = 7 * 24 * 3600.0


def spec_text(*args: Any, **kwargs: Any) -> str:
    """The TOML text of a one-grid spec (arguments of :func:`spec_data`), written with
    tomli-w and validated by parsing it back like ``themis sweep``."""
    import tomllib

    import tomli_w

    from reports.sweep.spec import parse_spec

    text = tomli_w.dumps(spec_data(*args, **kwargs))
    out = kwargs.get("out")
    where = out or str(Path.cwd() / "spec.toml")
    spec = parse_spec(tomllib.loads(text), text, where)
    counts = ", ".join(f"{n} {kind}" for kind, n in spec.counts().items())
    head = f"# {spec.instances} instances, {len(spec.tasks)} tasks ({counts})\n"
    if spec_data(*args, **kwargs)["time_limit_s"] >= WEEK_S:
        head += ("# time_limit_s is a week: no wall-clock limit in effect, the solvers' "
                 "deterministic budgets decide (the same numbers on any machine)\n")
    return head + text


def write_spec(text: str, out: str) -> None:
    """Write the spec atomically."""
    atomic_write(out, text)
