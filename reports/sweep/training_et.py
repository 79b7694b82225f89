"""Chakra execution traces in a spec's ``[[training]]`` tables (:mod:`reports.sweep.training`).

A traces case reads every rank's file once per NPU count (:class:`ETWorkload`), runs
under an :class:`ETConfig` (the system, its splits and the timing), is checked when the
spec is read (what ``themis train`` refuses of the traces, one line) and runs as
``themis train PREFIX`` does (:func:`run_et`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reports.records import Status
from reports.sweep.training_policies import TrainingPolicy
from topologies.errors import InputError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from reports.sweep.training import TrainingTask

#: The timing of a Chakra-trace case in a table without ``timing`` (as ``themis train``).
DEFAULT_ET_TIMING = "astra-sim-2"
#: The ``parallelism`` column of a Chakra-trace case.
ET_PARALLELISM = "chakra-et"


@dataclass(frozen=True, eq=False)
class ETWorkload:
    """Chakra execution traces a ``[[training]]`` table names, read for one network."""

    name: str                     # the prefix's (or file's) stem
    source: str                   # the path read
    traces: dict[int, Any]        # rank -> topologies.chakra.trace.Trace
    files: dict[int, str]         # rank -> its file, for messages
    groups: dict[str, list[int]]  # the comm-group file's groups ({} without one)
    digest: str                   # sha256 of every rank file's bytes and the groups
    parallelism: str = ET_PARALLELISM


@dataclass(frozen=True)
class ETConfig:
    """How a Chakra-trace case runs (the counterpart of a 1.0 workload's
    :class:`~themis.training.TrainingConfig`; ``policy`` and ``intra`` are the task's)."""

    timing: str
    chunks: int
    system: Any  # topologies.system.SystemConfig, its chunks the run's
    policy: str = "baseline"
    intra: str = "fifo"
    passes: int = 1


def et_config_dict(cfg: ETConfig) -> dict[str, Any]:
    system = {k: v for k, v in asdict(cfg.system).items()
              if k not in ("source", "unknown_keys", "defaulted", "file_format")}
    return {"timing": cfg.timing, "chunks": cfg.chunks, "passes": cfg.passes,
            "system": system}


def run_et(task: TrainingTask) -> dict[str, Any]:
    """A Chakra-trace case's task: a policy's run (:func:`~themis.training.et_run.
    simulate_et`) or, for the bound task, the traces' iteration bound (every policy and
    discipline; computed beside 2.x's own baseline / FIFO run)."""
    from themis.training.et_run import simulate_et

    c, cfg = task.case, task.config()
    wl = c.workload
    if task.method is None:
        res = simulate_et(wl.traces, c.network, cfg.system, wl.files, wl.groups, "baseline",
                          "fifo", cfg.timing, bound=True)
        return {"status": str(Status.BOUND), "lower_bound_ns": float(res.iteration_bound_ns
                                                                      or 0)}
    res = simulate_et(wl.traces, c.network, cfg.system, wl.files, wl.groups, cfg.policy,
                      cfg.intra, cfg.timing)
    first = next(nodes for ranks, nodes in res.classes if 0 in ranks)
    return {"status": str(Status.SIMULATED), "end_ns": float(res.end_ns),
            "compute_ns": float(res.compute_ns),
            "exposed_comm_ns": float(res.exposed_comm_ns),
            "collective_bytes": sum(n.size_bytes for n in first if n.kind == "collective")}


def et_source(name: object, folder: Path) -> Path | None:
    """The Chakra traces ``name`` names (relative to the spec first), else ``None``."""
    from reports.sweep.fields import _relative
    from topologies.chakra.ranks import is_et_source

    if not isinstance(name, str) or not name.strip():
        return None
    for candidate in (_relative(name, folder), Path(name)):
        if is_et_source(candidate):
            return candidate
    return None


def read_et(source: Path, network: Any, groups_file: Path | None,
             cache: dict[tuple[str, int], ETWorkload]) -> ETWorkload:
    """The traces of ``source`` for ``network`` (read and checked once per NPU count)."""
    import re

    from topologies.chakra.ranks import read_comm_groups, read_et_source

    key = (str(source), network.npus)
    if key in cache:
        return cache[key]
    traces, files = read_et_source(source, network.npus)
    groups = ({str(k): v for k, v in read_comm_groups(groups_file, network.npus).items()}
              if groups_file is not None else {})
    digest = hashlib.sha256()
    hashed = {0: files[0]} if source.is_file() else files  # one file stands for all ranks
    for rank, path in sorted(hashed.items()):
        digest.update(f"{rank}:".encode())
        digest.update(Path(path).read_bytes())
    if source.is_file():
        digest.update(f"every rank of {network.npus}".encode())
    digest.update(json.dumps(groups, sort_keys=True).encode())
    stem = Path(files[0]).name
    name = re.sub(r"(\.\d+)?\.et$", "", stem)
    wl = ETWorkload(name, str(source), traces, files, groups, digest.hexdigest())
    cache[key] = wl
    return wl


def et_policies(methods: list[TrainingPolicy], fields: list[str], given: bool, g: str,
                 file: str) -> list[TrainingPolicy]:
    """The methods a Chakra-trace case runs: collective policies only (a training-level
    planner is refused when the table names it, left out of the default list)."""
    from reports.methods import is_route
    from themis.training.routing import training_key

    out = []
    for m, f in zip(methods, fields, strict=True):
        if is_route(m.policy) or training_key(m.policy) is None:
            out.append(m)
        elif given:
            raise InputError("a training-level planner runs ASTRA-sim 1.0 workloads only; "
                             "Chakra traces take a collective policy (baseline, themis, "
                             "portfolio, ... or a route)", f, m.given, file)
    if not out:
        raise InputError("names no collective policy for the Chakra traces", f"{g}.policies",
                         [m.given for m in methods], file)
    return out


def check_et_case(wl: ETWorkload, network: Any, cfg: ETConfig, methods: list[TrainingPolicy],
              fields: list[str], wkey: str, file: str, checked: set[tuple]) -> None:
    """What ``themis train`` would refuse on these traces, refused now: every node checked
    (:func:`~themis.training.et_nodes.check_et`), and every method run once on a probe (one
    all-reduce of the network under the case's system and timing)."""
    from themis.training.et_nodes import check_et
    from themis.training.et_run import simulate_et
    from topologies.chakra.et import Attribute, GlobalMetadata, Node
    from topologies.chakra.trace import Trace
    from topologies.chakra.types import CommType, NodeType

    try:
        check_et(wl.traces, network, wl.files, wl.groups, cfg.timing)
    except InputError as err:
        if err.file:
            raise
        raise InputError(f"{err.reason} ({err.field} = {err.value!r}; network "
                         f"{network.shape()})", wkey, wl.source, file) from None
    probe = Trace(GlobalMetadata(), [Node(0, "probe", int(NodeType.COMM_COLL_NODE), attrs=[
        Attribute("comm_type", "int64", int(CommType.ALL_REDUCE)),
        Attribute("comm_size", "int64", cfg.chunks * network.npus * 64)])])
    for m, f in zip(methods, fields, strict=True):
        key = (network.shape(), repr(network), cfg.timing, repr(cfg.system), m.label)
        if key in checked:
            continue
        checked.add(key)
        try:
            simulate_et({r: probe for r in range(network.npus)}, network, cfg.system,
                        None, None, m.policy, m.intra, cfg.timing)
        except InputError as err:
            raise InputError(f"{err.reason.split(': ', 1)[-1]} (network {network.shape()}, "
                             f"Chakra traces)", f, m.given, file) from None


def comm_group(table: dict[str, Any], g: str, folder: Path, file: str, has_et: bool
                ) -> Path | None:
    """The table's ``comm_group`` file (relative to the spec), if it names one."""
    from reports.sweep.fields import _relative

    if "comm_group" not in table:
        return None
    name = table["comm_group"]
    key = f"{g}.comm_group"
    if not isinstance(name, str) or not name.strip():
        raise InputError("must be a file path", key, name, file)
    if not has_et:
        raise InputError("only Chakra traces take communicator groups", key, name, file)
    for candidate in (_relative(name, folder), Path(name)):
        if candidate.is_file():
            return candidate
    raise InputError("no such file", key, name, file)


__all__ = ["DEFAULT_ET_TIMING", "ET_PARALLELISM", "ETConfig", "ETWorkload", "check_et_case",
           "comm_group", "et_config_dict", "et_policies", "et_source", "read_et",
           "run_et"]
