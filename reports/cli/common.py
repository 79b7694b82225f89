"""Argument helpers shared by every CLI command (kept light: no heavy imports).

``NETWORK`` is a file path (``.yml``/``.yaml`` = ASTRA-sim 2.x, ``.json`` = 1.0)
or a preset name. ``--system FILE`` values become defaults that explicit flags
override; a key the file omits means what it means to ASTRA-sim
(:data:`topologies.system.ASTRA_DEFAULTS`: baseline, FIFO, endpoint delay
10 ns, boost mode off, 1 active chunk), and a key ASTRA-sim cannot run without
(``preferred-dataset-splits`` when no ``--chunks`` is given) is refused.
Without ``--system`` each command's own defaults apply (its ``--help`` says them).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from topologies.errors import InputError, shorten
from topologies.network import Network
from topologies.system import DEFAULT_SPLITS, SystemConfig
from topologies.units import MAX_LATENCY_NS, parse_size

DEFAULT_SIZE = "64MiB"
#: The policy ``train --compare`` measures against (1.0 workloads and Chakra traces).
BASELINE: dict[str, Any] = {"policy": "baseline", "intra": "fifo"}
#: The chunk default of every command (:data:`topologies.system.DEFAULT_SPLITS`).
DEFAULT_CHUNKS = DEFAULT_SPLITS
#: What every ``--chunks`` help says about the default.
CHUNKS_DEFAULT_HELP = (f"default: the system file's preferred-dataset-splits, else "
                       f"{DEFAULT_SPLITS}, in every command and timing")


def registry_names() -> dict[str, str]:
    """What the placeholders of a help text become (from the registries and the
    report modules, imported only when help is shown): ``{policies}`` /
    ``{disciplines}`` (``|``-joined), ``{policy_list}`` / ``{discipline_list}``
    (comma-joined, the defaults first, as ``compare`` and ``spec`` run them),
    ``{training_policies}`` (the training-only routers and planners) and
    ``{training_networks}`` (``train-report``'s default networks)."""
    from reports.methods import every_intra, every_policy
    from themis.disciplines import discipline_names
    from themis.policies import policy_names
    from themis.training.routing import training_policy_names

    policies = [n for n in policy_names() if n != "fixed"]
    names = {"{policies}": " | ".join(policies) + " | a fixed route like 2,0,1",
             "{disciplines}": " | ".join(discipline_names(opt_in=True)),
             "{policy_list}": ", ".join(every_policy()),
             "{discipline_list}": ", ".join(every_intra()),
             "{training_policies}": " | ".join(training_policy_names())}
    return names


def _training_networks() -> str:
    from reports.report.training import spec_table

    return ", ".join(spec_table().get("networks", []))


class RegistryHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, with the placeholders of :func:`registry_names` (and
    ``{training_networks}``) in help texts replaced when help is shown."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if text and "{" in text:
            for key, names in registry_names().items():
                text = text.replace(key, names)
            if "{training_networks}" in text:
                text = text.replace("{training_networks}", _training_networks())
        return text


@contextmanager
def user_keys(keys: dict[str, tuple]) -> Iterator[None]:
    """Name the user's own key in errors raised under an internal one.

    ``keys`` maps an internal field (``policy``, ``intra``, ``chunks``...) to
    the (key, file) the value came from: a flag (``--policy``, no file) or a
    system-file key and its file, optionally with the value as the user gave
    it (``(key, file, value)``). Errors that already name a file pass as they are.
    """
    try:
        yield
    except InputError as err:
        if not err.file and err.field in keys:
            err.field, err.file, *value = keys[err.field]
            if value:
                err.value = value[0]
            err.args = (err.message,)
        raise


def source_key(flag_value: object, flag: str, key: str, file: str) -> tuple[str, str]:
    """``(flag, "")`` when the flag was given, else the system file's ``(key, file)``
    (a value from neither is a default, reported under the flag)."""
    if flag_value is not None or not file:
        return flag, ""
    return key, file


def add_network_args(p: argparse.ArgumentParser, system: bool = True) -> None:
    """``NETWORK`` and ``--system``."""
    p.add_argument("network", metavar="NETWORK",
                   help="network file (.yml/.yaml ASTRA-sim 2.x, .json 1.0) or preset name")
    if system:
        p.add_argument("--system", metavar="FILE",
                       help="ASTRA-sim system file (1.0 text or 2.x JSON): its values are "
                            "defaults that explicit flags override; a key it omits gets "
                            "ASTRA-sim's own default (baseline, FIFO, endpoint-delay 10, "
                            "boost-mode 0, active-chunks-per-dimension 1)")


def add_instance_args(p: argparse.ArgumentParser) -> None:
    """NETWORK, --system, --size, --chunks, --endpoint-delay."""
    add_network_args(p)
    p.add_argument("--size", default=None,
                   help=f"collective size, e.g. 1GiB, 64MiB, 512KiB or bytes "
                        f"(default {DEFAULT_SIZE})")
    p.add_argument("--chunks", type=int_arg("--chunks"), default=None,
                   help=f"chunks ({CHUNKS_DEFAULT_HELP})")
    p.add_argument("--endpoint-delay", type=float_arg("--endpoint-delay"), default=None,
                   metavar="NS", help="endpoint delay per message step in ns "
                                      "(default: the system file's, 10 if it omits it as in "
                                      "ASTRA-sim; without --system 0)")


#: The wall-clock limit of a solve with a deterministic budget and no --time-limit:
#: none in effect (a week), so the budget alone decides and the result reproduces.
NO_WALL_LIMIT_S = 7 * 24 * 3600.0


def wall_limit_s(deterministic: bool, default_s: float) -> float:
    """The wall-clock limit when no --time-limit is given: ``default_s``, or in effect
    none (:data:`NO_WALL_LIMIT_S`) when a deterministic budget is set."""
    return NO_WALL_LIMIT_S if deterministic else default_s


def int_arg(flag: str):
    """An argparse type: an integer, with the flag named in the error."""

    def conv(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} = {shorten(repr(text))}: not an "
                                             "integer") from None
    return conv


def add_lb3_nodes_arg(p: argparse.ArgumentParser) -> None:
    """``--lb3-nodes N``: the LB3 MIP's node limit (its deterministic work limit; the
    default, :data:`LB3_NODES_DEFAULT`, is :data:`solvers.params.LB3_NODE_LIMIT`, not
    imported here to keep the CLI's start light: a test checks they agree)."""
    p.add_argument("--lb3-nodes", type=int_arg("--lb3-nodes"), default=LB3_NODES_DEFAULT,
                   metavar="N", help="branch-and-bound nodes of the LB3 MIP (default "
                                     f"{LB3_NODES_DEFAULT}; deterministic): where it stops "
                                     "at this limit, LB3 is the MIP's dual bound, labelled "
                                     "node-limit; more nodes can prove a higher one")


#: ``--lb3-nodes``' default: :data:`solvers.params.LB3_NODE_LIMIT` (tested equal).
LB3_NODES_DEFAULT = 2000


def check_lb3_nodes(args: argparse.Namespace) -> int:
    """``--lb3-nodes``, checked (at least 1)."""
    if args.lb3_nodes < 1:
        raise InputError("must be at least 1", "--lb3-nodes", args.lb3_nodes)
    return int(args.lb3_nodes)


def float_arg(flag: str):
    """An argparse type: a number, with the flag named in the error."""

    def conv(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} = {shorten(repr(text))}: not a "
                                             "number") from None
    return conv


def positive_arg(flag: str, unit: str = ""):
    """An argparse type: a positive finite number (``unit``, e.g. ``" of seconds"``, ends
    the message), with the flag and the value named in the one-line error. The one check
    of every time limit, budget and scale flag."""

    def conv(text: str) -> float:
        value = float_arg(flag)(text)
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"{flag} = {value!r}: must be a "
                                             f"positive number{unit}")
        return value
    return conv


#: The command's input files (resolved), which no output of the same command may name.
_INPUT_FILES: set[str] = set()
#: The arguments that name a command's input files.
INPUT_ARGS = ("network", "networks", "workload", "system", "spec", "schedule", "comm_group",
              "cost", "communicator")


def sweep_exit(outcome: Any, db: str, resume: str, noun: str = "tasks") -> int:
    """The exit code of a sweep run (a :class:`reports.sweep.run.SweepOutcome`), saying on
    stderr what is kept in ``db`` and the command ``resume`` that resumes or retries it:
    130 when interrupted, 1 when aborted or a task failed, else 0. ``noun`` names the
    tasks (``runs`` for a training report)."""
    import sys

    if outcome.interrupted or outcome.aborted:
        why = "interrupted" if outcome.interrupted else outcome.aborted
        sys.stderr.write(f"themis: {why}: finished {noun} are kept in {db}; resume with:\n"
                         f"  {resume}\n")
        return 130 if outcome.interrupted else 1
    if outcome.failed:
        sys.stderr.write(f"themis: {outcome.failed} {noun} failed (status 'error' in {db}); "
                         f"rerun to retry them:\n  {resume}\n")
        return 1
    return 0


def note_inputs(args: object) -> None:
    """Remember the input files a command was given (:data:`INPUT_ARGS` naming an
    existing file), so that :func:`check_output` refuses to overwrite one."""
    import os

    _INPUT_FILES.clear()
    for name in INPUT_ARGS:
        value = getattr(args, name, None)
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, str) and one and os.path.isfile(one):
                _INPUT_FILES.add(os.path.realpath(one))


def check_output(path: str | None, flag: str, figure: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written.

    A figure must end in ``.png``, ``.pdf`` or ``.svg``; every output needs an
    existing parent folder and must not be a folder (see
    :func:`topologies.files.check_output_file`); no output may be an input file of
    the same command (after links: it would be destroyed).
    """
    if not path:
        return
    import os

    if os.path.realpath(path) in _INPUT_FILES:
        raise InputError("is an input of this command: refusing to overwrite it", flag, path)
    from topologies.files import check_output_file

    suffixes = None
    if figure:
        from themis.plots import FIGURE_FORMATS

        suffixes = tuple(FIGURE_FORMATS)
    check_output_file(path, flag, suffixes)


GANTT_HELP = "draw a Gantt chart (.png, .pdf or .svg by the file name)"


def load_network(spec: str) -> Network:
    """A network from a file path or a preset name."""
    from topologies.presets import resolve_network

    return resolve_network(spec)


def load_system(spec: str | None) -> SystemConfig:
    """The system file's configuration with ASTRA-sim's defaults for what it omits.

    Without ``spec``, an empty configuration (the command's own defaults apply).
    """
    if not spec:
        return SystemConfig()
    from topologies.presets import resolve_system

    return resolve_system(spec).with_astra_defaults()


def defaults_note(system: SystemConfig) -> str | None:
    """One line naming the keys a system file omitted and the ASTRA-sim defaults run."""
    if not system.defaulted:
        return None
    shown = {"inter-dimension-scheduling": "ascending (baseline)",
             "intra-dimension-scheduling": "FIFO", "endpoint-delay": "10",
             "boost-mode": "0", "active-chunks-per-dimension": "1"}
    parts = [f"{k} {shown.get(k, '')}".strip() for k in system.defaulted]
    return f"{system.source} omits: ASTRA-sim's defaults run: {', '.join(parts)}"


@dataclass
class Inputs:
    """What the instance arguments resolve to."""

    network: Network
    system: SystemConfig
    size_bytes: int
    chunks: int
    endpoint_delay_ns: float

    def algorithms(self, collective: str = "all-reduce") -> tuple[str, ...] | None:
        """The system file's algorithms for that collective, checked against the network.

        A bad one is an :class:`InputError` naming the system file and the key
        (e.g. ``all-reduce-implementation[1]``).
        """
        from themis.timing import resolve_algorithms

        algos = self.system.algorithms_for(collective)
        if algos is None:
            return None
        return resolve_algorithms(self.network, algos, f"{collective}-implementation",
                                  self.system.source)

    chunks_key: tuple[str, str] = ("--chunks", "")

    @property
    def keys(self) -> dict[str, tuple]:
        """For :func:`user_keys`: where the chunk count came from, and its value."""
        return {"chunks": (*self.chunks_key, self.chunks)}

    def instance(self):
        """The :class:`themis.instance.Instance` (all-reduce, alpha-beta, k = 1)."""
        from themis.instance import Instance

        with user_keys(self.keys):
            return Instance(self.network, self.size_bytes, self.chunks, self.endpoint_delay_ns,
                            self.algorithms("all-reduce"))


def resolve_inputs(args: argparse.Namespace) -> Inputs:
    """Resolve NETWORK, --system, --size, --chunks, --endpoint-delay with defaults."""
    network = load_network(args.network)
    system = load_system(getattr(args, "system", None))
    size = parse_size(args.size if args.size is not None else DEFAULT_SIZE, "--size")
    if args.chunks is None:
        system.require("preferred-dataset-splits")
    chunks = args.chunks if args.chunks is not None else (system.chunks or DEFAULT_CHUNKS)
    if chunks < 1:
        raise InputError("chunks must be at least 1", "--chunks", chunks)
    delay = args.endpoint_delay
    if delay is None:
        delay = system.endpoint_delay_ns if system.endpoint_delay_ns is not None else 0.0
    if not 0 <= delay <= MAX_LATENCY_NS:  # also refuses nan
        flag = "--endpoint-delay" if args.endpoint_delay is not None else "endpoint-delay"
        where = "" if args.endpoint_delay is not None else system.source
        raise InputError(f"endpoint delay must be 0 to {MAX_LATENCY_NS:g} ns", flag, delay,
                         where)
    chunks_key = source_key(args.chunks, "--chunks", "preferred-dataset-splits",
                            system.source if system.chunks is not None else "")
    return Inputs(network, system, size, chunks, float(delay), chunks_key)


def print_solved(end_ns: float, solved: Any, unit: str = "us") -> None:
    """The exact iteration (``--solve``) beside the policy's run that ended at ``end_ns``,
    times in ``unit`` (``us`` for 1.0 workloads, ``ns`` for Chakra traces)."""
    from reports.formatting import format_table

    print()
    best = solved.makespan_ns

    def t(ns: float) -> object:
        return ns / 1e3 if unit == "us" else f"{ns:,.0f}"

    status = str(solved.status) + (f" ({solved.reason})" if solved.reason else "")
    rows: list[list[object]] = [
            ["status", status],
            [f"exact model end ({unit})" if str(solved.status) == "optimal" else
             f"best schedule found ({unit})", "-" if best is None else t(best)],
            [f"proven lower bound ({unit})", t(solved.lower_bound_ns)],
            [f"{'window' if unit == 'us' else 'iteration'} bound ({unit})",
             t(solved.iteration_bound_ns)]]
    if solved.scaling_error_ns:
        rows.append(["scaling error (ns)", f"{solved.scaling_error_ns:.3f}"])
    if best:
        rows.append(["policy end / exact" if str(solved.status) == "optimal" else
                     "policy end / best found", f"{end_ns / best:.4f}"])
    rows.append(["model size", f"{solved.collectives} collectives, {solved.chunks} chunks, "
                               f"{solved.intervals} optional stage intervals"])
    rows.append(["solve wall time (s)", f"{solved.runtime_s:.2f}"])
    print(format_table(["exact iteration (--solve)", "value"], rows))
