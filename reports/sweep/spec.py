"""The sweep spec: a TOML grid of instances x methods, validated into tasks.

Spec (read with :mod:`tomllib`; every key is checked before anything runs)::

    title = "Optimality gap on small networks"   # optional, shown by the report
    description = "..."                          # optional, shown by the report
    time_limit_s = 10        # per solver task (required when a grid has solvers)
    ag_order = ["reverse", "free"]   # optional, string or list (default "reverse")
    timing = "astra-sim-1.0" # optional, string or list: the timing models the policies
                             # are simulated with (default "alpha-beta"; solvers and
                             # bounds are of the alpha-beta model)
    threads = 1              # optional, solver threads (default: the solver's)

    [solver_params]          # optional, passed to the solvers (solvers.SolverParams)
    seed = 0                 # keys here go to every solver
    [solver_params.cpsat]    # a sub-table named after a solver goes to that one only
    deterministic_time_s = 15
    [solver_params.highs]
    node_limit = 100000

    [improve]                # optional, the budgets of the solver "improve"
    evaluations = 2000       # simulator runs of its local search (deterministic)
    cpsat_dtime_s = 1.0      # CP-SAT deterministic seconds, one worker (0: no CP-SAT)

    [[grid]]
    networks = ["small-2d", "nets/my.yml"]  # preset names, or paths relative to this file
    sizes = ["64MiB", 1048576]
    chunks = [2, 4, 8]
    endpoint_delay_ns = [0, 10]               # optional (default [0])
    policies = ["baseline", "themis", "portfolio", "2,0,1"]  # optional (default:
                                              # reports.methods.DEFAULT_POLICIES); any
                                              # name simulate accepts
    intra = ["fifo", "scf", "lrw"]            # optional (default: DEFAULT_INTRAS, fifo and scf)
    solvers = ["cpsat", "highs"]              # optional (default: none)
    # time_limit_s, ag_order, threads, solver_params, improve, timing may be repeated here to
    # override; "improve" in solvers runs themis improve (reverse AG orders only)

Tasks (:func:`reports.methods.method_grid`): each ``[[grid]]`` gives the
instances networks x sizes x chunks x endpoint delays; per instance one
``bound`` task per AG variant (reverse, the policies' one, and each of
``ag_order``), one task per policy x intra (``themis/scf``...; policies always
use reverse AG orders) and one per solver x ``ag_order``. So 1 network, 1
size, 1 chunk count, 3 policies x 2 disciplines and 3 solvers x 2 AG orders
make 6 + 6 = 12 method tasks plus 2 bound tasks. A task is identified by its key
``<instance key>:<method>:<ag_order>``; a task listed twice (e.g. the same
network under two names) runs once. A policy under another timing than
alpha-beta is the method ``themis/scf@astra-sim-1.0``, so a spec without a
``timing`` key keeps the keys it always had.

``[[training]]`` tables (training studies; none of the top-level keys apply to
them) are read by :func:`reports.sweep.training.parse_training` into
:attr:`Spec.training`; a spec needs at least one ``[[grid]]`` or
``[[training]]`` table.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reports.methods import (
    DEFAULT_INTRAS,
    DEFAULT_POLICIES,
    canonical_ag_order,
    canonical_intra,
    canonical_policy,
    canonical_solver,
    canonical_timing,
    check_method,
    method_grid,
)
from reports.records import DEFAULT_TIMING, Kind
from reports.sweep.fields import check_keys, items, resolve_network, text_value
from reports.sweep.tasks import Task
from reports.sweep.training import TrainingTask, parse_training
from topologies.errors import InputError

#: Keys allowed at the top level and in each ``[[grid]]`` table (``[[training]]`` tables:
#: :data:`reports.sweep.training.TRAINING_KEYS`).
TOP_KEYS: tuple[str, ...] = ("title", "description", "time_limit_s", "ag_order", "threads",
                             "solver_params", "improve", "timing", "grid", "training")
GRID_KEYS: tuple[str, ...] = ("networks", "sizes", "chunks", "endpoint_delay_ns", "policies",
                              "intra", "solvers", "time_limit_s", "ag_order", "threads",
                              "solver_params", "improve", "timing")


@dataclass
class Spec:
    """A validated sweep spec: its source, its tasks (deduplicated) and labels.

    ``tasks``: the ``[[grid]]`` tables' (one method on one collective instance);
    ``training``: the ``[[training]]`` tables' (:class:`~reports.sweep.training.TrainingTask`,
    one method on one training case), ``cases`` of them."""

    path: str
    text: str
    tasks: list[Task]
    instances: int
    title: str = ""
    description: str = ""
    duplicates: int = 0
    training: list[TrainingTask] = field(default_factory=list)
    cases: int = 0

    def counts(self) -> dict[str, int]:
        """Tasks per kind."""
        out: dict[str, int] = {str(k): 0 for k in Kind}
        for t in self.tasks:
            out[t.method.kind] += 1
        return out


def load_spec(path: str | os.PathLike) -> Spec:
    """Read and validate a TOML spec; every problem is an :class:`InputError`."""
    from topologies.files import read_input_text

    p = Path(path)
    try:
        text = read_input_text(p, "SPEC")
    except InputError as err:
        raise InputError(err.reason, "SPEC", str(p)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"invalid TOML ({err})", "spec", None, str(p)) from None
    return parse_spec(data, text, str(p))


def parse_spec(data: dict[str, Any], text: str = "", path: str = "spec.toml") -> Spec:
    """Validate a parsed spec and expand it into tasks (see the module docstring)."""
    from reports.limits import check_stage_count
    from themis.instance import Instance
    from topologies.units import MAX_LATENCY_NS, parse_size

    file = str(path)
    folder = Path(path).parent

    def fail(reason: str, key: str, value: object) -> InputError:
        return InputError(reason, key, value, file)

    check_keys(data, TOP_KEYS, "", file)
    title = text_value(data, "title", file)
    description = text_value(data, "description", file)
    top = _options(data, "", file)
    grids = data.get("grid")
    if grids is None and data.get("training"):
        grids = []
    if not isinstance(grids, list) or not (grids or data.get("training")) \
            or not all(isinstance(g, dict) for g in grids):
        raise fail("the spec needs at least one [[grid]] table (or [[training]] table)",
                   "grid", None if grids is None else grids)
    networks: dict[str, Any] = {}
    tasks: dict[str, Task] = {}
    duplicates = 0
    instance_keys: set[str] = set()
    for gi, grid in enumerate(grids):
        g = f"grid[{gi}]"
        check_keys(grid, GRID_KEYS, g, file)
        opts = {**top, **{k: v for k, v in _options(grid, g, file).items() if v is not None}}
        nets = items(grid, "networks", g, file, required=True)
        sizes = items(grid, "sizes", g, file, required=True)
        chunks = items(grid, "chunks", g, file, required=True)
        delays = items(grid, "endpoint_delay_ns", g, file, default=[0])
        policies = _names(grid, "policies", g, file, canonical_policy, DEFAULT_POLICIES)
        intras = _names(grid, "intra", g, file, canonical_intra, DEFAULT_INTRAS)
        solvers = _names(grid, "solvers", g, file, canonical_solver, ())
        if policies and not intras:
            raise fail("policies need at least one intra-dimension discipline", f"{g}.intra",
                       [])
        if solvers and opts["time_limit_s"] is None:
            raise fail("solvers need a time limit (seconds per solver task)", "time_limit_s",
                       None)
        if solvers:
            _check_solver_options(opts, list(solvers), g, file)
        methods = method_grid(policies, intras, solvers, opts["ag_order"],
                              opts["time_limit_s"], opts["threads"], opts["solver_params"],
                              opts["improve"], opts["timing"])
        resolved = []
        for i, name in enumerate(nets):
            key = f"{g}.networks[{i}]"
            if not isinstance(name, str) or not name.strip():
                raise fail("must be a preset name or a network file path", key, name)
            if name not in networks:
                networks[name] = resolve_network(name, folder, key, file)
            resolved.append((name, networks[name]))
        size_values = []
        for i, v in enumerate(sizes):
            try:
                size_values.append(parse_size(v, f"{g}.sizes[{i}]"))
            except InputError as err:
                raise err.in_file(file) from None
        for i, c in enumerate(chunks):
            if isinstance(c, bool) or not isinstance(c, int) or c < 1:
                raise fail("chunks must be a positive integer", f"{g}.chunks[{i}]", c)
        if not delays:
            raise fail("must not be empty (no instance would run)", f"{g}.endpoint_delay_ns",
                       delays)
        for i, d in enumerate(delays):
            if isinstance(d, bool) or not isinstance(d, int | float) or not math.isfinite(d) \
                    or not 0 <= d <= MAX_LATENCY_NS:
                raise fail(f"endpoint delay must be a number of ns from 0 to {MAX_LATENCY_NS:g}",
                           f"{g}.endpoint_delay_ns[{i}]", d)
        for name, net in resolved:
            for size in size_values:
                for ci, c in enumerate(chunks):
                    for d in delays:
                        try:
                            inst = Instance(net, size, c, float(d))
                        except InputError as err:
                            raise fail(f"invalid instance ({err})", g,
                                       f"{name} {size} bytes C={c}") from None
                        check_stage_count(inst.collective.chunk_count,
                                          2 * max(len(inst.dims), 1), f"{g}.chunks[{ci}]", c,
                                          file, escape="use fewer chunks")
                        instance_keys.add(inst.key())
                        for m in methods:
                            _check_method(inst, m, policies, intras, g, file)
                            t = Task(inst, name, m)
                            if t.key in tasks:
                                duplicates += 1
                            else:
                                tasks[t.key] = t
    training: list[TrainingTask] = []
    cases = repeated = 0
    if "training" in data:
        training, cases, repeated = parse_training(data["training"], folder, file)
    return Spec(file, text, list(tasks.values()), len(instance_keys), title, description,
                duplicates + repeated, training, cases)


def _check_method(inst: Any, m: Any, policies: list[str], intras: list[str], g: str,
                  file: str) -> None:
    try:
        check_method(inst, m)
    except InputError as err:
        if err.field == "intra":
            raise InputError(err.reason, f"{g}.intra[{intras.index(m.intra)}]", m.intra,
                             file) from None
        i = policies.index(m.name)
        raise InputError(f"{err.reason} (network {inst.network.shape()})",
                         f"{g}.policies[{i}]", m.name, file) from None


def _names(grid: dict[str, Any], key: str, g: str, file: str, canon: Any,
           default: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i, v in enumerate(items(grid, key, g, file, default=list(default))):
        name = canon(v, f"{g}.{key}[{i}]", file)
        if name not in out:
            out.append(name)
    return out


def _options(table: dict[str, Any], prefix: str, file: str) -> dict[str, Any]:
    """``time_limit_s``, ``ag_order`` (a list), ``threads``, ``solver_params`` of a table
    (``None`` if absent)."""
    def key(k: str) -> str:
        return f"{prefix}.{k}" if prefix else k

    out: dict[str, Any] = {"time_limit_s": None, "ag_order": None, "threads": None,
                           "solver_params": None, "improve": None, "timing": None}
    if "timing" in table:
        v = table["timing"]
        values = v if isinstance(v, list) else [v]
        if not values:
            raise InputError("must name at least one timing model", key("timing"), v, file)
        timings: list[str] = []
        for i, t in enumerate(values):
            name = canonical_timing(t, key("timing") + (f"[{i}]" if isinstance(v, list)
                                                         else ""), file)
            if name not in timings:
                timings.append(name)
        out["timing"] = timings
    elif not prefix:
        out["timing"] = [DEFAULT_TIMING]
    if "improve" in table:
        from solvers.improve import check_params

        out["improve"] = check_params(table["improve"], key("improve"), file)
    if "time_limit_s" in table:
        v = table["time_limit_s"]
        if isinstance(v, bool) or not isinstance(v, int | float) or not (0 < v < math.inf):
            raise InputError("must be a positive number of seconds", key("time_limit_s"), v,
                             file)
        out["time_limit_s"] = float(v)
    if "threads" in table:
        v = table["threads"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError("must be a positive integer", key("threads"), v, file)
        out["threads"] = v
    if "solver_params" in table:
        out["solver_params"] = check_solver_params(table["solver_params"],
                                                   key("solver_params"), file)
    if "ag_order" in table:
        v = table["ag_order"]
        values = v if isinstance(v, list) else [v]
        if not values:
            raise InputError("must name at least one of reverse, free", key("ag_order"), v,
                             file)
        orders: list[str] = []
        for i, a in enumerate(values):
            name = canonical_ag_order(
                a, key("ag_order") + (f"[{i}]" if isinstance(v, list) else ""), file)
            if name not in orders:
                orders.append(name)
        out["ag_order"] = orders
    elif not prefix:
        out["ag_order"] = ["reverse"]
    return out


#: Solver settings that are keys of the spec itself, not of ``solver_params``.
OWN_KEYS: tuple[str, ...] = ("time_limit_s", "threads", "ag_order")


def check_solver_params(value: object, where: str, file: str) -> dict[str, Any]:
    """A ``solver_params`` table: keys and values :class:`solvers.SolverParams` accepts
    (its fields, or CP-SAT parameters by name), except the spec's own keys, and
    sub-tables named after a solver, for that solver only."""
    from solvers import backend_names

    if not isinstance(value, dict):
        raise InputError("must be a table of solver parameters", where, value, file)
    names = backend_names()
    shared = {k: v for k, v in value.items() if k not in names}
    _check_params_table(shared, where, file)
    for name in names:
        if name in value:
            sub = value[name]
            if not isinstance(sub, dict):
                raise InputError(f"must be a table of the {name} solver's parameters",
                                 f"{where}.{name}", sub, file)
            _check_params_table({**shared, **sub}, where, file, sub, f"{where}.{name}")
    return dict(value)


def _check_params_table(values: dict[str, Any], where: str, file: str,
                        own: dict[str, Any] | None = None, own_where: str = "") -> None:
    """One solver's parameters; errors name the key in ``own`` (a sub-table) if it is there."""
    for k, v in values.items():
        at = own_where if own is not None and k in own else where
        if k in OWN_KEYS:
            raise InputError(f"set {k} as a key of the spec, not in solver_params",
                             f"{at}.{k}", v, file)
        if isinstance(v, list) or v is None:
            raise InputError("must be a number, a string, a boolean or a table",
                             f"{at}.{k}", v, file)
    from solvers import SolverParams

    try:
        SolverParams().with_overrides(values)
    except InputError as err:
        at = own_where if own is not None and err.field in own else where
        raise InputError(err.reason, f"{at}.{err.field}", err.value, file) from None


def _check_solver_options(opts: dict[str, Any], solvers_used: list[str], g: str,
                          file: str) -> None:
    """The grid's time limit, threads and each solver's parameters together (e.g. a
    limit given to a solver that has no such limit)."""
    from reports.methods import IMPROVE, params_for
    from solvers.solve import check_params

    for name in solvers_used:
        if name == IMPROVE:
            continue
        values = {**params_for(opts["solver_params"], name),
                  "time_limit_s": opts["time_limit_s"]}
        if opts["threads"] is not None:
            values["threads"] = opts["threads"]
        try:
            check_params(name, overrides=values)
        except InputError as err:
            key = err.field if err.field in OWN_KEYS else f"solver_params.{err.field}"
            raise InputError(f"{err.reason} (in {g}, solver {name})", key, err.value,
                             file) from None


__all__ = ["GRID_KEYS", "TOP_KEYS", "Spec", "check_solver_params", "load_spec", "parse_spec"]
