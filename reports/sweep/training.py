"""A spec's ``[[training]]`` tables: training studies as sweep tasks.

Each table is a grid of *cases*, workloads x networks x systems x timings x
passes x chunk counts, and per case one task per method: every policy x
discipline (:mod:`reports.sweep.training_policies`) simulated with
:func:`themis.training.simulate_training`, and (unless ``bound = false``) the
iteration lower bound of :mod:`themis.training.bound` as its own task
(:func:`themis.training.simulate.iteration_lower_bound`; it depends on neither
policy nor discipline). Keys::

    [[training]]
    workloads = ["vgg16", "wl/mine.txt"]   # bundled names, or files relative to the spec
    networks = ["small-2d", "nets/my.yml"] # presets, or files relative to the spec
    systems = ["sys/lifo.txt"]             # optional: ASTRA-sim system files (default:
                                           # none, the defaults of themis train)
    timing = ["astra-sim-1.0", "alpha-beta"]  # optional (default astra-sim-1.0)
    passes = [1, 2]                        # optional (default 1)
    chunks = [16, 64]                      # optional (default: the system's
                                           # preferred-dataset-splits; without one, 4)
    policies = ["baseline/fifo", "themis", "2,0,1/scf"]  # optional (default:
                                           # DEFAULT_POLICIES, the training report's
                                           # eight); name or name/discipline
    intra = ["fifo", "scf"]                # optional: the disciplines of a policy named
                                           # without one (default fifo, scf)
    bound = true                           # optional (default true)
    comm_group = "groups.json"             # optional: the Chakra traces' communicator
                                           # groups ({"<id>": [npu ids]}), as train's
                                           # --comm-group

A workload may also be Chakra execution traces (a prefix ``<prefix>.<rank>.et``, a
folder of them or one ``.et`` file, relative to the spec), run as ``themis train
PREFIX NETWORK --system S.json`` runs them (:func:`themis.training.et_run.simulate_et`;
without ``systems``, ASTRA-sim 2.x's defaults and 4 splits, as ``train`` without
``--system``), runs under ``astra-sim-2``
unless ``timing`` names others (any registered timing: each collective timed alone
under it), one pass (a trace holds its passes), a collective policy per method (the
training-level planners run 1.0 workloads only; by default the report's
baseline/fifo, themis/fifo, themis/scf and portfolio/scf), and (unless ``bound = false``) a
bound task: the traces' iteration bound (:mod:`themis.training.et_bound`, valid for every
policy and discipline; what ``themis train`` prints). What ``train`` refuses of the
traces' files and nodes is refused when the spec is read, in one line.

A task's key is ``<case key>:<method>`` (``bound`` for the bound task), the case
key a hash of the workload's layers, the network and the run's configuration,
so a case listed twice runs once.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import platform
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from reports.records import Kind, Status
from reports.sweep.fields import check_keys, items, resolve_entry, resolve_network
from reports.sweep.training_et import (
    DEFAULT_ET_TIMING,
    ETConfig,
    ETWorkload,
    check_et_case,
    comm_group,
    et_config_dict,
    et_policies,
    et_source,
    read_et,
    run_et,
)
from reports.sweep.training_policies import TrainingPolicy, check_policies, parse_policies
from topologies.errors import InputError

#: Keys of a ``[[training]]`` table.
TRAINING_KEYS: tuple[str, ...] = ("workloads", "networks", "systems", "timing", "passes",
                                  "chunks", "policies", "intra", "bound", "comm_group")
#: The timing model of a table without ``timing`` (as ``themis train``).
DEFAULT_TRAINING_TIMING = "astra-sim-1.0"
#: The methods of a table without ``policies``: the training report's
#: (``reports/specs/training.toml``); the first is the baseline speed-ups are measured
#: against, ``auto/best`` is auto with its best candidate's discipline.
DEFAULT_POLICIES: tuple[str, ...] = ("baseline/fifo", "themis/fifo", "themis/scf",
                                     "themis-running/scf", "portfolio/scf", "online-mix/feed",
                                     "global-mix/feed", "auto/best")
#: The method name of a bound task.
BOUND = "bound"


@dataclass(frozen=True)
class TrainingCase:
    """A workload on a network under one configuration (every name as the spec gives it)."""

    workload: Any  # topologies.workload.Workload
    workload_name: str
    network: Any   # topologies.network.Network
    network_name: str
    system_name: str
    config: Any    # themis.training.TrainingConfig (its policy and intra are the task's)

    def config_dict(self) -> dict[str, Any]:
        """The run's configuration without policy and discipline (the tasks' own)."""
        if isinstance(self.config, ETConfig):
            return et_config_dict(self.config)
        out = asdict(self.config)
        del out["policy"], out["intra"]
        return out

    @functools.cached_property
    def key(self) -> str:
        """``train-`` and a hash of the workload, the network and the configuration."""
        if isinstance(self.workload, ETWorkload):
            wl: Any = {"chakra_et_sha256": self.workload.digest}
        else:
            wl = {k: v for k, v in asdict(self.workload).items()
                  if k not in ("name", "file", "labels")}
        net = {k: v for k, v in asdict(self.network).items() if k != "name"}
        text = json.dumps({"workload": wl, "network": net, "config": self.config_dict()},
                          sort_keys=True, default=str)
        return "train-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def label(self) -> str:
        """E.g. ``vgg16 on small-2d (astra-sim-1.0, 64 chunks)``."""
        cfg = self.config
        parts = [cfg.timing, f"{cfg.chunks} chunks"]
        if cfg.passes != 1:
            parts.append(f"{cfg.passes} passes")
        if self.system_name:
            parts.append(self.system_name)
        return f"{self.workload.name} on {self.network_name} ({', '.join(parts)})"


@dataclass(frozen=True)
class TrainingTask:
    """One method on one case: a policy / discipline, or (``method`` ``None``) the bound."""

    case: TrainingCase
    method: TrainingPolicy | None

    @property
    def name(self) -> str:
        """``themis/scf``, or ``bound``."""
        return self.method.label if self.method is not None else BOUND

    @property
    def key(self) -> str:
        """``<case key>:<method>``, the row's UNIQUE key."""
        return f"{self.case.key}:{self.name}"

    @property
    def kind(self) -> Kind:
        """``policy`` or ``bound``."""
        return Kind.POLICY if self.method is not None else Kind.BOUND

    def label(self) -> str:
        """E.g. ``themis/scf on vgg16 on small-2d (astra-sim-1.0, 64 chunks)``."""
        return f"{self.name} on {self.case.label()}"

    def config(self) -> Any:
        """The run's :class:`~themis.training.TrainingConfig`."""
        if self.method is None:
            return self.case.config
        return replace(self.case.config, policy=self.method.policy, intra=self.method.intra)

    def row(self, values: dict[str, Any]) -> dict[str, Any]:
        """The database row (``training`` table) with the result ``values``."""
        from reports.db import dumps
        from reports.sweep.tasks import now, versions

        c = self.case
        net = c.network
        return {"task_key": self.key, "case_key": c.key, "workload": c.workload_name,
                "workload_label": c.workload.name, "parallelism": str(c.workload.parallelism),
                "network": c.network_name, "network_label": net.name or net.shape(),
                "shape": net.shape(), "npus": net.npus, "system": c.system_name,
                "timing": c.config.timing, "passes": c.config.passes,
                "chunks": c.config.chunks, "config": dumps(c.config_dict()),
                "method": self.name, "kind": str(self.kind),
                "policy": None if self.method is None else self.method.policy,
                "intra": None if self.method is None else self.method.intra,
                **values, "versions": dumps(versions()), "host": platform.node(),
                "finished_at": now()}


def run_training_task(task: TrainingTask) -> dict[str, Any]:
    """Run one training task and return its row (a failure is an ``error`` row)."""
    import time

    from reports.db import dumps
    from themis.training import simulate_training
    from themis.training.simulate import iteration_lower_bound

    t0 = time.perf_counter()
    c = task.case
    values: dict[str, Any]
    try:
        if isinstance(c.workload, ETWorkload):
            values = run_et(task)
        elif task.method is None:
            values = {"status": str(Status.BOUND),
                      "lower_bound_ns": iteration_lower_bound(c.workload, c.network,
                                                              task.config())}
        else:
            res = simulate_training(c.workload, c.network, task.config(), bound=False)
            values = {"status": str(Status.SIMULATED), "end_ns": float(res.end_ns),
                      "compute_ns": float(res.compute_ns),
                      "exposed_comm_ns": float(res.exposed_comm_ns),
                      "collective_bytes": sum(r.size_bytes for r in res.collectives),
                      "dim_utilization": dumps([d.utilization for d in res.dims])}
    except Exception as err:  # recorded, retried on the next run
        values = {"status": str(Status.ERROR), "error": f"{type(err).__name__}: {err}"[:4000]}
    values["runtime_s"] = time.perf_counter() - t0
    return task.row(values)


def training_error_row(task: TrainingTask, err: BaseException) -> dict[str, Any]:
    """The row of a training task whose worker failed (the task itself did not report)."""
    return task.row({"status": str(Status.ERROR),
                     "error": f"{type(err).__name__}: {err}"[:4000]})


def _positive_ints(table: dict[str, Any], key: str, g: str, file: str,
                   default: list[Any]) -> list[Any]:
    values = items(table, key, g, file, default=default)
    if not values:
        raise InputError("must not be empty (no case would run)", f"{g}.{key}", values, file)
    for i, v in enumerate(values):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise InputError("must be a positive integer", f"{g}.{key}[{i}]", v, file)
    return values


def _timings(table: dict[str, Any], g: str, file: str, training: bool
             ) -> list[str] | None:
    """The table's timings (``None`` when it names none: each case takes its own default);
    with ``training`` (a 1.0 workload in the table) each must model training iterations."""
    from reports.methods import canonical_timing
    from themis.timing import timing_meaning, timing_names

    if "timing" not in table:
        return None
    out: list[str] = []
    given = items(table, "timing", g, file, scalar=True)
    if not given:
        raise InputError("must not be empty (no case would run)", f"{g}.timing", given, file)
    for i, v in enumerate(given):
        key = f"{g}.timing[{i}]"
        name = canonical_timing(v, key, file)
        if training and not timing_meaning(name).training:
            ok = ", ".join(t for t in timing_names() if timing_meaning(t).training)
            raise InputError(f"training iterations of 1.0 workloads run under {ok} (as "
                             "themis train; Chakra traces take any timing)", key, v, file)
        if name not in out:
            out.append(name)
    return out


def _system(name: str, folder: Path, key: str, file: str) -> Any:
    from topologies.presets import resolve_system

    return resolve_entry(name, folder, key, file,
                         lambda n: resolve_system(n).with_astra_defaults(), "SYSTEM")


def _or_none(values: list[str] | None) -> list[str | None]:
    return list(values) if values else [None]


def _fields(methods: list[TrainingPolicy], values: list[Any], where: str) -> list[str]:
    given = [v.strip() if isinstance(v, str) else v for v in values]
    return [f"{where}[{given.index(m.given)}]" if m.given in given else where
            for m in methods]


def parse_training(tables: object, folder: Path, file: str
                   ) -> tuple[list[TrainingTask], int, int]:
    """The tasks of a spec's ``[[training]]`` tables (deduplicated), the number of
    distinct cases and of duplicate tasks; every value is checked first."""
    from reports.methods import DEFAULT_INTRAS, canonical_intra
    from themis.training import TrainingConfig
    from themis.training.dims import TRANSFORMERS
    from themis.training.simulate import check_size
    from topologies.astra.algorithms import validate_system
    from topologies.system import DEFAULT_SPLITS, SystemConfig
    from topologies.workload import load_workload

    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise InputError("must be [[training]] tables", "training", None, file)
    tasks: dict[str, TrainingTask] = {}
    cases: set[str] = set()
    duplicates = 0
    checked: set[tuple] = set()
    et_cache: dict[tuple[str, int], ETWorkload] = {}
    for ti, table in enumerate(tables):
        g = f"training[{ti}]"
        check_keys(table, TRAINING_KEYS, g, file)
        loaded: list[list[tuple[str, str, Any]]] = []
        for key_name, resolve in (("workloads", lambda n, k: et_source(n, folder) or
                                   resolve_entry(n, folder, k, file, load_workload,
                                                 "WORKLOAD")),
                ("networks", lambda n, k: resolve_network(n, folder, k, file)),
                ("systems", lambda n, k: _system(n, folder, k, file))):
            entries = []
            for i, name in enumerate(items(table, key_name, g, file,
                                           required=key_name != "systems")):
                key = f"{g}.{key_name}[{i}]"
                if not isinstance(name, str) or not name.strip():
                    raise InputError("must be a name or a file path", key, name, file)
                entries.append((name, key, resolve(name, key)))
            loaded.append(entries)
        workloads, networks, systems = loaded
        has_10 = any(not isinstance(w, Path) for _, _, w in workloads)
        has_et = any(isinstance(w, Path) for _, _, w in workloads)
        timings: list[str] | None = _timings(table, g, file, has_10)
        passes = _positive_ints(table, "passes", g, file, [1])
        chunks = _positive_ints(table, "chunks", g, file, [None])
        bound = table.get("bound", True)
        if not isinstance(bound, bool):
            raise InputError("must be true or false", f"{g}.bound", bound, file)
        groups_file = comm_group(table, g, folder, file, has_et)
        if has_et and passes != [1]:
            raise InputError("Chakra traces hold their passes (give 1, or leave passes "
                             "out)", f"{g}.passes", passes, file)
        intras = [canonical_intra(v, f"{g}.intra[{i}]", file)
                  for i, v in enumerate(items(table, "intra", g, file,
                                              default=list(DEFAULT_INTRAS)))]
        values = items(table, "policies", g, file,
                       default=list(DEFAULT_POLICIES))
        methods = parse_policies(values, list(dict.fromkeys(intras)), f"{g}.policies", file)
        fields = _fields(methods, values, f"{g}.policies")
        if has_et:
            et_methods = et_policies(methods, fields, "policies" in table, g, file)
            et_fields = [f for m, f in zip(methods, fields, strict=True) if m in et_methods]
        combos = itertools.product(systems or [("", g, SystemConfig())], networks,
                                   _or_none(timings), passes, chunks, workloads)
        for (sname, skey, system), (nname, _, network), timing, p, c, (wname, wkey, wl) \
                in combos:
            case_methods: list[TrainingPolicy | None]
            if isinstance(wl, Path):  # Chakra traces
                try:
                    ets = read_et(wl, network, groups_file, et_cache)
                except InputError as err:
                    raise replace(
                        err, reason=f"{err.reason} (on network {nname}, {network.npus} "
                                    "NPUs)") from None
                et_system = replace(system, chunks=c or system.chunks or DEFAULT_SPLITS)
                ecfg = ETConfig(timing or DEFAULT_ET_TIMING, et_system.chunks, et_system)
                check_et_case(ets, network, ecfg, et_methods, et_fields, wkey, file, checked)
                case = TrainingCase(ets, wname, network, nname, sname, ecfg)
                case_methods = [*et_methods, *([None] if bound else [])]
            else:
                if system.from_file:
                    validate_system(network, system)
                try:
                    cfg = TrainingConfig.from_system(system, timing=timing or
                                                     DEFAULT_TRAINING_TIMING, passes=p,
                                                     chunks=c)
                except InputError as err:
                    if err.file:
                        raise
                    raise InputError(err.reason, skey, sname or None, file) from None
                check_size(wl, network, cfg, (f"{g}.passes", f"{g}.chunks"), file)
                group = wl.model_parallel_npu_group if wl.parallelism in TRANSFORMERS \
                    else None
                for probe in ((nname, cfg, None), (nname, cfg, group)):
                    if probe not in checked:
                        _check(network, cfg, methods, fields, file, probe[2], wkey, wname)
                        checked.add(probe)
                case = TrainingCase(wl, wname, network, nname, sname, cfg)
                case_methods = [*methods, *([None] if bound else [])]
            cases.add(case.key)
            for m in case_methods:
                t = TrainingTask(case, m)
                if t.key in tasks:
                    duplicates += 1
                else:
                    tasks[t.key] = t
    return list(tasks.values()), len(cases), duplicates


def _check(network: Any, cfg: Any, methods: list[TrainingPolicy], fields: list[str],
           file: str, group: int | None, wkey: str, wname: str) -> None:
    """:func:`check_policies` on the network (``group`` ``None``: every method) or on
    its split by a workload's model-parallel group (the fixed routes: only they depend on
    the dimensions); a group that does not fit the network names the workload's key."""
    from reports.methods import is_route
    from themis.training.dims import logical_network

    if group is None:
        check_policies(network, cfg, methods, fields, file)
        return
    try:
        logical_network(network, group)
    except InputError as err:
        raise InputError(f"{err.reason} (on network {network.shape()})", wkey, wname,
                         file) from None
    routes = [(m, f) for m, f in zip(methods, fields, strict=True) if is_route(m.policy)]
    check_policies(network, cfg, [m for m, _ in routes], [f for _, f in routes], file, group)


__all__ = ["BOUND", "DEFAULT_POLICIES", "DEFAULT_TRAINING_TIMING", "TRAINING_KEYS",
           "TrainingCase", "TrainingTask", "parse_training",
           "run_training_task", "training_error_row"]
